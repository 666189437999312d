//! What this binary is: its version, the git commit it was built from (and
//! whether the files it is built from differed from it), the build date, the target, the
//! profile and the oldest glibc it is made to start on. `build.rs` reads
//! these when it builds; `--version` prints them and every stored run keeps
//! them (`environment.build`), with the glibc of the machine it ran on.

use serde::{Deserialize, Serialize};

/// The facts of one build, as a run records them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildInfo {
    /// The package version (Cargo.toml).
    pub version: String,
    /// The git commit (12 hex digits); None when built outside a checkout.
    pub commit: Option<String>,
    /// Whether the files it is built from (src/, data/, Cargo.toml,
    /// Cargo.lock, build.rs) differed from the commit; None when unknown.
    pub dirty: Option<bool>,
    /// When it was built, UTC (`SOURCE_DATE_EPOCH` when the build set it).
    pub build_date: String,
    /// The Rust target triple, e.g. `aarch64-unknown-linux-gnu`.
    pub target: String,
    /// `release` or `debug`.
    pub profile: String,
    /// The oldest glibc the binary starts on, e.g. "2.17"; None when not known.
    pub glibc_floor: Option<String>,
    /// How the floor is known (declared by the portable build, or the build
    /// machine's glibc), or why it is not.
    pub glibc_floor_source: String,
    /// The glibc of the machine the binary ran on (`gnu_get_libc_version`);
    /// None where the C library is not glibc.
    #[serde(default)]
    pub glibc_running: Option<String>,
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

impl BuildInfo {
    /// This binary, on this machine.
    pub fn this() -> BuildInfo {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: non_empty(env!("CPUSCOPE_BUILD_COMMIT")),
            dirty: match env!("CPUSCOPE_BUILD_DIRTY") {
                "dirty" => Some(true),
                "clean" => Some(false),
                _ => None,
            },
            build_date: env!("CPUSCOPE_BUILD_DATE").to_string(),
            target: env!("CPUSCOPE_BUILD_TARGET").to_string(),
            profile: env!("CPUSCOPE_BUILD_PROFILE").to_string(),
            glibc_floor: non_empty(env!("CPUSCOPE_GLIBC_FLOOR_VALUE")),
            glibc_floor_source: env!("CPUSCOPE_GLIBC_FLOOR_SOURCE").to_string(),
            glibc_running: running_glibc(),
        }
    }

    /// `9f57c04a1b2c`, `9f57c04a1b2c-dirty`, or `unknown commit`.
    pub fn commit_text(&self) -> String {
        match (&self.commit, self.dirty) {
            (Some(c), Some(true)) => format!("{c}-dirty"),
            (Some(c), _) => c.clone(),
            (None, _) => "unknown commit".into(),
        }
    }

    /// One line: `0.1.0 (9f57c04a1b2c, 2026-11-26T17:02:11Z, x86_64-unknown-linux-gnu, glibc >= 2.17)`.
    pub fn line(&self) -> String {
        let floor = match &self.glibc_floor {
            Some(f) => format!("glibc >= {f}"),
            None => "glibc floor unknown".into(),
        };
        format!(
            "{} ({}, {}, {}, {floor})",
            self.version,
            self.commit_text(),
            self.build_date,
            self.target
        )
    }

    /// What `--version` prints after the name: the line, then each fact.
    pub fn long_text(&self) -> String {
        let commit = match (&self.commit, self.dirty) {
            (Some(c), Some(true)) => format!("{c} (its sources differed from it: dirty)"),
            (Some(c), Some(false)) => format!("{c} (clean)"),
            (Some(c), None) => c.clone(),
            (None, _) => "unknown (built outside a git checkout)".into(),
        };
        let floor = match &self.glibc_floor {
            Some(f) => format!("{f}: {}", self.glibc_floor_source),
            None => self.glibc_floor_source.clone(),
        };
        let running = self
            .glibc_running
            .as_deref()
            .unwrap_or("not glibc, or not known");
        format!(
            "{}\ncommit:        {commit}\nbuilt:         {}\ntarget:        {} ({})\nglibc floor:   {floor}\nglibc here:    {running}",
            self.version, self.build_date, self.target, self.profile
        )
    }
}

/// `--version`'s one line (`-V`), built once.
pub fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| BuildInfo::this().line())
}

/// `--version`'s long text, built once.
pub fn version_long() -> &'static str {
    static LONG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LONG.get_or_init(|| BuildInfo::this().long_text())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn running_glibc() -> Option<String> {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let p = unsafe { libc::gnu_get_libc_version() };
    if p.is_null() {
        return None;
    }
    let s = unsafe { std::ffi::CStr::from_ptr(p) };
    Some(s.to_string_lossy().into_owned())
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn running_glibc() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_says_what_it_is() {
        let b = BuildInfo::this();
        assert_eq!(b.version, env!("CARGO_PKG_VERSION"));
        assert!(!b.target.is_empty());
        assert!(
            b.build_date.ends_with('Z') && b.build_date.len() == 20,
            "{}",
            b.build_date
        );
        assert!(!b.glibc_floor_source.is_empty());
        if let Some(c) = &b.commit {
            assert_eq!(c.len(), 12);
            assert!(c.chars().all(|ch| ch.is_ascii_hexdigit()));
        }
        let long = b.long_text();
        assert!(
            long.contains("commit:") && long.contains("glibc floor:"),
            "{long}"
        );
        #[cfg(target_env = "gnu")]
        {
            let running = b.glibc_running.expect("glibc version");
            assert!(running.starts_with("2."), "{running}");
        }
    }
}
