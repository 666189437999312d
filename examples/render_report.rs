//! Print the HTML report of a run document (as `cpuscope export` writes
//! it) on standard output: the page `cpuscope run` writes, for a stored
//! run. Used by `scripts/snapshot-views.sh`, which snapshots every view of
//! the fixture runs before and after a change to the report code.
//!
//!     render_report RUN.json > RUN.html

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = args.as_slice() else {
        eprintln!("render_report: error: usage: render_report RUN.json");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("render_report: error: cannot read '{path}': {e}");
            return ExitCode::FAILURE;
        }
    };
    let run: cpuscope::results::Run = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("render_report: error: '{path}' is not a run document: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", cpuscope::report::html::render_run(&run));
    ExitCode::SUCCESS
}
