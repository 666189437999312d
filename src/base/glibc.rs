//! Whether this process can start threads safely: its dynamic loader and
//! its C library must be one glibc build.
//!
//! Since glibc 2.34 the lists of thread stacks (which `pthread_create`
//! walks for a cached stack to reuse) live in the loader's private data,
//! which the C library reads at the offsets of its own build. A loader of
//! one build with a C library of another (the private layout differs) makes
//! the first `pthread_create` walk a list that never ends: the calling
//! thread spins for ever, before any code of ours can look at a flag. It
//! happens under qemu-user with `QEMU_LD_PREFIX` (or `-L`) naming a cross
//! sysroot while the host also has the target's multiarch C library: the
//! loader comes from the prefix, and the C library, found through the
//! host's `/etc/ld.so.cache`, from the host (seen on Debian 12: the loader
//! of `libc6-arm64-cross` 2.36-8 with `libc6:arm64` 2.36-9+deb12u14; `simd`
//! hung in its first team's `pthread_create`).
//!
//! [`thread_hazard`] reads which loader and C library are mapped
//! (`/proc/self/maps`) and compares the build each names in its banner
//! ("(Debian GLIBC 2.36-8) stable release version 2.36"). Teams refuse to
//! start when they differ, so every team figure is *not available* with
//! this reason instead of a hang; the Ctrl-C backstop thread
//! (`base::stop`) is not started.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The most bytes read of a loader or a C library (glibc's is ~2 MiB).
const MAX_LIBRARY_BYTES: u64 = 64 << 20;

/// Why this process must not start threads, if it must not: the reason
/// line (checked once, then cached).
pub fn thread_hazard() -> Option<String> {
    static HAZARD: OnceLock<Option<String>> = OnceLock::new();
    HAZARD
        .get_or_init(|| {
            let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
            let (loader, libc) = mapped_pair(&maps)?;
            mismatch(&loader, &libc)
        })
        .clone()
}

/// The mapped dynamic loader and C library, from `/proc/self/maps` text.
pub fn mapped_pair(maps: &str) -> Option<(PathBuf, PathBuf)> {
    let mut loader = None;
    let mut libc = None;
    for line in maps.lines() {
        // address perms offset dev inode path
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let Some(name) = Path::new(path).file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if loader.is_none() && name.starts_with("ld-") && name.contains(".so") {
            loader = Some(PathBuf::from(path));
        } else if libc.is_none() && (name == "libc.so.6" || name.starts_with("libc-2.")) {
            libc = Some(PathBuf::from(path));
        }
    }
    Some((loader?, libc?))
}

/// The reason when `loader` and `libc` name different glibc builds; None
/// when they are one build or a banner cannot be read (no verdict).
pub fn mismatch(loader: &Path, libc: &Path) -> Option<String> {
    let read = |p: &Path| crate::base::files::read_file_bytes_capped(p, MAX_LIBRARY_BYTES).ok();
    let l = banner(&read(loader)?, b"ld.so (")?;
    let c = banner(&read(libc)?, b"GNU C Library (")?;
    (l != c).then(|| {
        format!(
            "threads cannot be started safely: the dynamic loader {} is glibc {l} and the C library {} is glibc {c} (two builds, as with an emulator's QEMU_LD_PREFIX naming a cross sysroot while the host has the target's own C library): pthread_create would hang",
            loader.display(),
            libc.display()
        )
    })
}

/// The build a glibc banner names, from its "(": "(Debian GLIBC 2.36-8)
/// stable release version 2.36".
pub fn banner(bytes: &[u8], prefix: &[u8]) -> Option<String> {
    let at = bytes.windows(prefix.len()).position(|w| w == prefix)?;
    let from = at + prefix.len() - 1;
    let rest = &bytes[from..bytes.len().min(from + 200)];
    let end = rest
        .iter()
        .position(|&b| b == 0 || b == b'\n')
        .unwrap_or(rest.len());
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    Some(text.trim().trim_end_matches('.').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_name_the_build() {
        let ld = b"\x00ld.so (Debian GLIBC 2.36-8) stable release version 2.36.\nCopyright";
        let libc =
            b"xxGNU C Library (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36.\x00";
        assert_eq!(
            banner(ld, b"ld.so (").as_deref(),
            Some("(Debian GLIBC 2.36-8) stable release version 2.36")
        );
        assert_eq!(
            banner(libc, b"GNU C Library (").as_deref(),
            Some("(Debian GLIBC 2.36-9+deb12u14) stable release version 2.36")
        );
        assert_eq!(banner(b"nothing here", b"ld.so ("), None);
    }

    #[test]
    fn the_mapped_pair_is_found_in_maps() {
        let maps = "\
5500000000-5500001000 r-xp 00000000 08:01 1 /usr/bin/cpuscope
5502000000-5502100000 r-xp 00000000 08:01 2 /usr/lib/aarch64-linux-gnu/libc.so.6
5503000000-5503020000 r-xp 00000000 08:01 3 /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1
7ffd000000-7ffd021000 rw-p 00000000 00:00 0 [stack]
";
        let (l, c) = mapped_pair(maps).unwrap();
        assert_eq!(
            l,
            Path::new("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")
        );
        assert_eq!(c, Path::new("/usr/lib/aarch64-linux-gnu/libc.so.6"));
        assert_eq!(
            mapped_pair("5500000000-5500001000 r-xp 0 0 0 /bin/x\n"),
            None
        );
    }

    #[test]
    fn this_process_can_start_threads() {
        // The test binary runs with one glibc build (natively, and under
        // scripts/cargo-aarch64.sh, which sets QEMU_LD_PREFIX only where the
        // host has no aarch64 C library of its own).
        assert_eq!(thread_hazard(), None);
    }
}
