//! TODO: knobs

use super::Sysroot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Knobs {}

pub fn read(sys: &Sysroot) -> Knobs {
    let _ = sys;
    Knobs::default()
}
