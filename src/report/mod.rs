//! Text, JSON, HTML rendering, comparison and advice. Never measures.

pub mod advice;
pub mod compare;
pub mod fleet;
pub mod html;
pub mod info_limits;
pub mod info_sections;
pub mod info_text;
pub mod numa_maps;
pub mod openmetrics;
pub mod published_text;
pub mod run_text;
pub mod stat_text;
pub mod summary;
pub mod uarch_text;
pub mod unreadable;
pub mod verdict;
