//! TODO: isa

use super::Sysroot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Isa {}

pub fn read(sys: &Sysroot) -> Isa {
    let _ = sys;
    Isa::default()
}
