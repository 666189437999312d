//! The renderers of the built-in experiments' records, text and HTML. Each
//! experiment names its own in its `Experiment` impl (`summary_text`,
//! `report_html`); the stand-alone commands print through the same
//! functions. Pure functions of records (and of the experiments' own plan
//! types): they never measure.

pub mod c2c_html;
pub mod c2c_text;
pub mod compute_html;
pub mod compute_text;
pub mod memory_html;
pub mod memory_text;
