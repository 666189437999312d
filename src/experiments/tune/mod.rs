//! The tune family: the user's own command under each placement (`study`),
//! rendered by `text` and `html`.

pub mod html;
pub mod study;
pub mod text;
