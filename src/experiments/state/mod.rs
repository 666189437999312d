//! The machine-state family: effective frequency and network softirqs;
//! `text` and `html` render them.

pub mod frequency;
pub mod html;
pub mod payload;
pub mod softirq;
pub mod text;
