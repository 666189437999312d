//! Where temporary things go, by one rule: `$TMPDIR` when it is set, then
//! `/tmp`, then (where a file the user keeps is being saved: the fallback
//! copy of a run) the current directory. Each place is tried in turn; when
//! none works, the one-line error names every place tried and why it failed
//! (`TMPDIR '/nonexistent': No such file or directory; /tmp: Read-only file
//! system`), so an unusable `TMPDIR` is never silently passed over nor
//! silently the only place tried.
//!
//! Used by the sysroot archive's private directory (`archive::TempTree`),
//! the fallback copy of a run the store could not take (`app/session.rs`)
//! and a command's kept output where the kernel has no memfd
//! (`harness/child.rs`).

use std::path::{Path, PathBuf};

/// One place to try, with how messages name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub dir: PathBuf,
    /// `TMPDIR '/x'`, `/tmp`, `the current directory`.
    pub named: String,
}

/// The places to try, in order: `$TMPDIR` (when set and not empty; a
/// relative value is tried as it is, relative to the current directory),
/// `/tmp` (unless `$TMPDIR` is it), and with `with_cwd` the current
/// directory.
pub fn temp_dirs(with_cwd: bool) -> Vec<Place> {
    places(std::env::var_os("TMPDIR").map(PathBuf::from), with_cwd)
}

fn places(tmpdir: Option<PathBuf>, with_cwd: bool) -> Vec<Place> {
    let mut out = Vec::new();
    if let Some(t) = tmpdir.filter(|t| !t.as_os_str().is_empty()) {
        out.push(Place {
            named: format!(
                "TMPDIR '{}'",
                super::fmt::for_terminal(&t.to_string_lossy())
            ),
            dir: t,
        });
    }
    let tmp = Path::new("/tmp");
    if !out.iter().any(|p| same_dir(&p.dir, tmp)) {
        out.push(Place {
            dir: tmp.to_path_buf(),
            named: "/tmp".into(),
        });
    }
    if with_cwd {
        out.push(Place {
            dir: PathBuf::from("."),
            named: "the current directory".into(),
        });
    }
    out
}

/// `a` and `b` name the same directory (`/tmp/` and `/tmp` do).
fn same_dir(a: &Path, b: &Path) -> bool {
    a.components().eq(b.components())
}

/// `make` tried in each place of [`temp_dirs`] in turn: the first success,
/// or one line naming every place tried with its error
/// (`TMPDIR '/nonexistent': No such file or directory; /tmp: …`).
pub fn first_usable<T>(
    with_cwd: bool,
    make: impl FnMut(&Path) -> Result<T, String>,
) -> Result<T, String> {
    try_places(&temp_dirs(with_cwd), make)
}

fn try_places<T>(
    places: &[Place],
    mut make: impl FnMut(&Path) -> Result<T, String>,
) -> Result<T, String> {
    let mut failed = Vec::new();
    for p in places {
        match make(&p.dir) {
            Ok(v) => return Ok(v),
            Err(why) => failed.push(format!("{}: {why}", p.named)),
        }
    }
    Err(failed.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &[Place]) -> Vec<&str> {
        p.iter().map(|p| p.named.as_str()).collect()
    }

    #[test]
    fn tmpdir_then_tmp_then_cwd() {
        let p = places(Some("/nonexistent".into()), true);
        assert_eq!(
            names(&p),
            ["TMPDIR '/nonexistent'", "/tmp", "the current directory"]
        );
        assert_eq!(p[0].dir, PathBuf::from("/nonexistent"));
        assert_eq!(names(&places(None, false)), ["/tmp"]);
        assert_eq!(names(&places(Some("".into()), false)), ["/tmp"]);
        // TMPDIR=/tmp/ is /tmp: tried once.
        assert_eq!(
            names(&places(Some("/tmp/".into()), false)),
            ["TMPDIR '/tmp/'"]
        );
        // A control character in TMPDIR is shown escaped.
        assert_eq!(
            names(&places(Some("/x\ny".into()), false)),
            ["TMPDIR '/x\\ny'", "/tmp"]
        );
    }

    #[test]
    fn every_failure_is_named_in_one_line() {
        let p = places(Some("/nonexistent".into()), true);
        let mut tried = Vec::new();
        let e = try_places(&p, |d| -> Result<(), String> {
            tried.push(d.to_path_buf());
            Err(format!("no ({})", d.display()))
        })
        .unwrap_err();
        assert_eq!(
            e,
            "TMPDIR '/nonexistent': no (/nonexistent); /tmp: no (/tmp); \
             the current directory: no (.)"
        );
        assert_eq!(tried.len(), 3);
        // The first that works wins; the later ones are not tried.
        let got = try_places(&p, |d| {
            if d == Path::new("/tmp") {
                Ok(d.to_path_buf())
            } else {
                Err("x".into())
            }
        })
        .unwrap();
        assert_eq!(got, PathBuf::from("/tmp"));
    }
}
