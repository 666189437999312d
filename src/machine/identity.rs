//! TODO: identity

use super::Sysroot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Identity {}

pub fn read(sys: &Sysroot) -> Identity {
    let _ = sys;
    Identity::default()
}
