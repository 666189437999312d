//! Text, JSON, HTML rendering, comparison and advice. Never measures.

pub mod advice;
pub mod c2c_html;
pub mod c2c_text;
pub mod compare;
pub mod compute_html;
pub mod compute_text;
pub mod html;
pub mod info_sections;
pub mod info_text;
pub mod memory_html;
pub mod memory_text;
pub mod numa_maps;
pub mod run_text;
pub mod stat_text;
pub mod summary;
