//! Human-readable rendering of `cpuscope info`.

use crate::machine::MachineInfo;

pub fn render(info: &MachineInfo) -> String {
    format!("{info:#?}\n")
}
