//! A check of the repository written in Python (`scripts/check-*.py`, standard
//! library only), run on src/: it must exit 0 and print its `ok` summary.
//! Without `python3` it cannot run: `skip::skip_or_fail` (a failure under CI,
//! a visible `SKIP:` line elsewhere). Include `common/skip.rs` as `skip` too.

use std::path::Path;
use std::process::Command;

/// Run `script` (relative to the repository root) on src/; panic with its
/// output unless it succeeds and its output starts with `ok_prefix`.
pub fn assert_passes(script: &str, ok_prefix: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(out) = run_on(script, &root.join("src")) else {
        return;
    };
    let script = root.join(script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let name = script.file_name().unwrap_or_default().to_string_lossy();
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{stdout}{stderr}",
        out.status
    );
    assert!(
        stdout.starts_with(ok_prefix),
        "unexpected output:\n{stdout}{stderr}"
    );
}

/// Run `script` (relative to the repository root) on the source tree `src`;
/// None (after `skip::skip_or_fail`) when python3 is missing.
#[allow(dead_code)] // not every test file that includes this runs a tree of its own
pub fn run_on(script: &str, src: &Path) -> Option<std::process::Output> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join(script);
    match Command::new("python3").arg(&script).arg(src).output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::skip::skip_or_fail(&format!(
                "python3 missing, cannot run {}: {e}",
                script.display()
            ));
            None
        }
        Err(e) => panic!("cannot run python3 {}: {e}", script.display()),
    }
}
