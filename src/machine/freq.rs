//! TODO: freq

use super::Sysroot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Frequency {}

pub fn read(sys: &Sysroot) -> Frequency {
    let _ = sys;
    Frequency::default()
}
