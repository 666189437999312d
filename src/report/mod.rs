//! Text, JSON, HTML rendering, comparison and advice. Never measures.

pub mod html;
pub mod info_sections;
pub mod info_text;
pub mod memory_html;
pub mod memory_text;
pub mod run_text;
