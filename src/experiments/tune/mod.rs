//! The tune family: the user's own command under each placement (`study`),
//! its record payloads (`payload`), shown by `text` and `report_view`.

pub mod view;

mod analysis;
mod candidates;
pub mod payload;
mod report_view;
mod score;
pub mod study;
pub mod text;
