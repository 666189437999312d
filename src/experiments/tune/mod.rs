//! The tune family: the user's own command under each placement (`study`),
//! its record payloads (`payload`), rendered by `text` and `html`.

pub mod view;

mod analysis;
mod candidates;
pub mod html;
pub mod payload;
mod score;
pub mod study;
pub mod text;
