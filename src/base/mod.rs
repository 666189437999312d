//! The bottom floor: the shared vocabulary every room may use and that
//! imports no other room of the crate. CPU sets (`CpuSet`), summary
//! statistics (`Stats`), the filesystem root facts are read under
//! (`Sysroot`) and the archives of recorded roots (`archive`), the calibrated clock (`Timer`), and the formatting of
//! numbers and bytes (`fmt`), HTML escaping and inline SVG charts (`html`), the meminfo parser (`meminfo`),
//! rank statistics for comparing two sample sets (`mann_whitney`), a small
//! regular-expression engine (`pattern`), the process's stop request
//! (`stop`), a command's arguments as bytes (`args`), the terminal's
//! colour, cursor and width (`term`), the one careful writer of every output (`output`), where
//! temporary things go (`tempdir`: `$TMPDIR`, then `/tmp`) and what
//! this binary is (`build`: version, commit, date, target, glibc floor).

pub mod archive;
pub mod args;
pub mod build;
pub mod cpuset;
pub mod files;
pub mod fmt;
pub mod glibc;
pub mod html;
pub mod mann_whitney;
pub mod meminfo;
pub mod output;
pub mod pattern;
pub mod stats;
pub mod stop;
pub mod sysroot;
pub mod tempdir;
pub mod term;
pub mod timer;

pub use cpuset::CpuSet;
pub use stats::Stats;
pub use sysroot::Sysroot;
pub use timer::{Tick, Timer, TimerInfo, TimerSource};
