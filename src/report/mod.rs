//! Text, JSON, HTML rendering, comparison and advice. Never measures.

pub mod info_sections;
pub mod info_text;
pub mod numa_maps;
