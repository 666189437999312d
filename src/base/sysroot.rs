//! `Sysroot`: a filesystem root holding `sys/` and `proc/` (normally `/`,
//! or a recorded tree given by `--sysroot`: a directory, or an archive
//! `cpuscope record` wrote, unpacked by `base::archive`), and typed reads
//! under it.
//!
//! Every access under the root (a file read, a directory listed, a link
//! read, a path made real, a test for a file or directory) goes through
//! one resolver, `base::files::Root::at`: under a recorded tree each
//! component is opened with `O_NOFOLLOW` and each symbolic link followed
//! by hand, so a link that leaves the tree (an absolute target, or more
//! `..` than the tree is deep) or a loop of links is refused, with one line
//! naming the link, as an archive's is (`base::archive`); under the live
//! root `/` the kernel resolves the path. A file read refuses anything but
//! a regular file (a FIFO, socket or device, so never opened in a way that
//! can block or read forever), opens with `O_NONBLOCK` as a second guard,
//! and reads at most a cap (16 MiB for sysfs/procfs files, which the
//! kernel reports as size 0 or 4096, so the cap is on bytes read). Text is
//! read lossily: a non-UTF-8 byte becomes U+FFFD instead of losing the file.

use crate::base::cpuset::CpuSet;
use crate::base::files::{is_refusal, lossy_note, Entry, Root, MAX_FILE_BYTES};
use anyhow::{bail, Result};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A filesystem root holding `sys/` and `proc/` (normally `/`).
#[derive(Clone, Debug)]
pub struct Sysroot {
    root: PathBuf,
    /// The root, open: every path under it is resolved from here.
    fs: Arc<Root>,
    /// What the reads met that a caller may want to show (files refused,
    /// bytes replaced); shared by clones.
    notes: Arc<Mutex<Vec<String>>>,
    /// The archive the root was unpacked from (`--sysroot FILE.tar.gz`),
    /// with its private directory, removed when the last clone is dropped.
    archive: Option<(PathBuf, Arc<super::archive::TempTree>)>,
}

impl Sysroot {
    /// Open a root: a directory, or a gzip'd tar archive `cpuscope record`
    /// wrote (unpacked into a private temporary directory, see
    /// `base::archive::extract`, removed when the last clone is dropped).
    /// Fails with a one-line error if it holds no sysfs CPU tree.
    pub fn new(root: impl AsRef<Path>) -> Result<Self> {
        let given = root.as_ref();
        if std::fs::metadata(given).is_ok_and(|m| m.is_file()) {
            let tree = super::archive::extract(given)?;
            let mut s = Self::open_dir(tree.path(), given)?;
            s.archive = Some((given.to_path_buf(), Arc::new(tree)));
            return Ok(s);
        }
        Self::open_dir(given, given)
    }

    fn open_dir(root: &Path, shown: &Path) -> Result<Self> {
        let live = root == Path::new("/");
        let fs = match Root::open(root) {
            Ok(fs) => fs,
            Err(_) if !root.is_dir() => bail!("sysroot '{}' is not a directory", shown.display()),
            Err(e) => bail!(
                "sysroot '{}': cannot open: {}",
                shown.display(),
                crate::base::output::io_text(&e)
            ),
        };
        let cpu = fs
            .at(Path::new("sys/devices/system/cpu"), true)
            .and_then(|e| e.metadata());
        match cpu {
            Ok(m) if m.is_dir() => {}
            _ if live => bail!(
                "/sys is not mounted here (no /sys/devices/system/cpu): mount sysfs \
                 (mount -t sysfs sysfs /sys), or give --sysroot"
            ),
            Err(e) if is_refusal(&e) => bail!(
                "sysroot '{}' is not a sysfs root: sys/devices/system/cpu: {e}",
                shown.display()
            ),
            _ => bail!(
                "sysroot '{}' is not a sysfs root: it has no sys/devices/system/cpu",
                shown.display()
            ),
        }
        Ok(Sysroot {
            root: root.to_path_buf(),
            fs: Arc::new(fs),
            notes: Arc::default(),
            archive: None,
        })
    }

    /// The root as the user named it: the directory, or the archive it was
    /// unpacked from.
    pub fn shown(&self) -> String {
        match &self.archive {
            Some((a, _)) => a.display().to_string(),
            None => self.root.display().to_string(),
        }
    }

    /// True when this is the running system (root `/`), so live-only facts
    /// (own affinity, cpuid) may be consulted.
    pub fn is_live(&self) -> bool {
        self.fs.is_live()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of an absolute system path (e.g. `/sys/devices/system/cpu`) under
    /// the root: for the words of a message and for writing a knob of the
    /// live machine. Never read through it: the methods here resolve a path
    /// within the root ([`Sysroot::at`]).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// What the reads so far met, one line each, in order, without repeats:
    /// `/proc/cpuinfo: non-UTF-8 bytes replaced by U+FFFD`, or a file
    /// refused (`/proc/cpuinfo: not a regular file (a FIFO): read as missing`).
    /// A missing or unreadable (permission) file makes no note.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn note(&self, line: String) {
        let mut n = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        if !n.contains(&line) {
            n.push(line);
        }
    }

    /// What the path `rel` (from the root) names, resolved within the root
    /// (`base::files::Root::at`), its last link followed or not. The one
    /// way every method here reaches a file.
    pub fn at(&self, rel: impl AsRef<Path>, follow: bool) -> io::Result<Entry<'_>> {
        self.fs.at(rel.as_ref(), follow)
    }

    /// `r`, with a note when it is a link refused (the words name the link,
    /// so the files under one link make one note).
    fn noted<T>(&self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if is_refusal(e) {
                self.note(format!("{e}, read as missing"));
            }
        }
        r
    }

    /// The bytes of the regular file at `rel`, at most `cap` of them
    /// (`base::files::Entry::read_capped`); a link refused makes a note.
    pub fn read_bytes_capped(&self, rel: &str, cap: u64) -> io::Result<Vec<u8>> {
        self.noted(self.at(rel, true).and_then(|e| e.read_capped(cap)))
    }

    /// [`Sysroot::read_bytes_capped`] with the sysfs/procfs cap (16 MiB).
    pub fn read_bytes(&self, rel: &str) -> io::Result<Vec<u8>> {
        self.read_bytes_capped(rel, MAX_FILE_BYTES)
    }

    /// The text of `rel` read lossily, at most `cap` bytes, and whether a
    /// byte was replaced.
    pub fn read_text_capped(&self, rel: &str, cap: u64) -> io::Result<(String, bool)> {
        let bytes = self.read_bytes_capped(rel, cap)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => (s, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        })
    }

    /// The text of an absolute system path under the root (read lossily, at
    /// most 16 MiB); a refused file or replaced bytes make a note
    /// ([`Sysroot::notes`]).
    pub fn read_text(&self, rel: &str) -> io::Result<String> {
        let shown = format!("/{}", rel.trim_start_matches('/'));
        match self.read_text_capped(rel, MAX_FILE_BYTES) {
            Ok((s, lossy)) => {
                if lossy {
                    self.note(lossy_note(&shown));
                }
                Ok(s)
            }
            Err(e) => {
                if !is_refusal(&e)
                    && matches!(
                        e.kind(),
                        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
                    )
                {
                    self.note(format!("{shown}: {e}: read as missing"));
                }
                Err(e)
            }
        }
    }

    /// The metadata of `rel` (its last link followed or not), resolved
    /// within the root.
    pub fn metadata(&self, rel: impl AsRef<Path>, follow: bool) -> io::Result<std::fs::Metadata> {
        self.noted(self.at(rel, follow).and_then(|e| e.metadata()))
    }

    /// Whether `rel` is a directory (links followed within the root).
    pub fn is_dir(&self, rel: &str) -> bool {
        self.metadata(rel, true).is_ok_and(|m| m.is_dir())
    }

    /// The target of the symbolic link `rel` (as written in the link).
    pub fn read_link(&self, rel: &str) -> io::Result<PathBuf> {
        self.noted(self.at(rel, false).and_then(|e| e.read_link()))
    }

    /// The real path `rel` leads to, every link followed (as
    /// `std::fs::canonicalize` gives it, but from the root: `/sys/devices/...`);
    /// it must exist.
    pub fn canonicalize(&self, rel: &str) -> io::Result<PathBuf> {
        if self.is_live() {
            return std::fs::canonicalize(self.path(rel));
        }
        let e = self.noted(self.fs.walk(Path::new(rel), true))?;
        e.metadata()?;
        let mut p = PathBuf::from("/");
        p.extend(e.real().unwrap_or_default());
        Ok(p)
    }

    /// The names in the directory `rel`, unsorted; at most
    /// `base::files::MAX_DIR_ENTRIES`.
    pub fn read_dir(&self, rel: impl AsRef<Path>) -> io::Result<Vec<OsString>> {
        self.noted(self.at(rel, true).and_then(|e| e.read_dir()))
    }

    /// The cheap signs of a virtual machine under this root: the x86
    /// `hypervisor` flag in /proc/cpuinfo, or a /sys/hypervisor/type file.
    /// (`machine::identity` adds CPUID and names the hypervisor.)
    pub fn has_hypervisor_sign(&self) -> bool {
        let flag = self.read_raw("/proc/cpuinfo").is_some_and(|ci| {
            ci.lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
        });
        flag || self.exists("/sys/hypervisor/type")
    }

    /// Whether `rel` exists (links followed within the root).
    pub fn exists(&self, rel: &str) -> bool {
        self.metadata(rel, true).is_ok()
    }

    /// File contents, trimmed of whitespace and NUL bytes (some recorded trees
    /// end sysfs files with `\n\0`); None if missing, unreadable or refused
    /// ([`Sysroot::read_text`]).
    pub fn read_string(&self, rel: &str) -> Option<String> {
        self.read_text(rel).ok().map(|s| {
            s.trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .to_string()
        })
    }

    /// File contents as they are (not trimmed).
    pub fn read_raw(&self, rel: &str) -> Option<String> {
        self.read_text(rel).ok()
    }

    pub fn read_u64(&self, rel: &str) -> Option<u64> {
        self.read_string(rel)?.parse().ok()
    }

    pub fn read_i64(&self, rel: &str) -> Option<i64> {
        self.read_string(rel)?.parse().ok()
    }

    /// A file holding a CPU list (`0-3,8`).
    pub fn read_cpulist(&self, rel: &str) -> Option<CpuSet> {
        CpuSet::parse(&self.read_string(rel)?).ok()
    }

    /// A file holding a kernel hex CPU mask (`00000000,0000000f`).
    pub fn read_cpumask(&self, rel: &str) -> Option<CpuSet> {
        CpuSet::parse_mask(&self.read_string(rel)?).ok()
    }

    /// A CPU set from `<base>_list` (a list) or, on old kernels, `<base>` (a mask).
    /// `base` is e.g. `/sys/devices/system/cpu/cpu0/topology/thread_siblings`.
    pub fn read_cpulist_or_mask(&self, base: &str) -> Option<CpuSet> {
        self.read_cpulist(&format!("{base}_list"))
            .or_else(|| self.read_cpumask(base))
    }

    /// Names of the entries of a directory, sorted; empty if missing.
    pub fn list_dir(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = match self.read_dir(rel) {
            Ok(names) => names
                .into_iter()
                .map(|n| n.to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// Entries `prefixN` of a directory (e.g. `cpu0`, `node3`), as sorted ids.
    pub fn list_numbered(&self, rel: &str, prefix: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .list_dir(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
            .collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::files::{read_file_bytes, read_file_text};
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn mkfifo(p: &Path) {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    }

    /// A minimal root: `sys/devices/system/cpu` and `proc/`.
    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sys/devices/system/cpu")).unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        d
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tree();
        let p = d.path().join("proc/cpuinfo");
        mkfifo(&p);
        let e = read_file_bytes(&p).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("FIFO"), "{e}");
        let sys = Sysroot::new(d.path()).unwrap();
        assert_eq!(sys.read_raw("/proc/cpuinfo"), None);
        assert!(!sys.has_hypervisor_sign());
        assert_eq!(
            sys.notes(),
            vec!["/proc/cpuinfo: not a regular file (a FIFO): read as missing".to_string()]
        );
    }

    #[test]
    fn a_symlink_to_dev_zero_is_refused() {
        let d = tree();
        let p = d.path().join("proc/cpuinfo");
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let e = read_file_bytes(&p).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let sys = Sysroot::new(d.path()).unwrap();
        assert_eq!(sys.read_string("/proc/cpuinfo"), None);
        assert_eq!(sys.read_u64("proc/cpuinfo"), None);
    }

    #[test]
    fn a_symlink_inside_the_tree_is_followed() {
        let d = tree();
        let cpu = d.path().join("sys/devices/system/cpu");
        std::fs::create_dir_all(d.path().join("sys/devices/x")).unwrap();
        std::fs::write(d.path().join("sys/devices/x/online"), "0-3\n").unwrap();
        std::os::unix::fs::symlink("../../x/online", cpu.join("online")).unwrap();
        std::os::unix::fs::symlink("../../x", cpu.join("dirlink")).unwrap();
        let sys = Sysroot::new(d.path()).unwrap();
        assert_eq!(
            sys.read_string("/sys/devices/system/cpu/online").as_deref(),
            Some("0-3")
        );
        assert_eq!(
            sys.read_string("/sys/devices/system/cpu/dirlink/online")
                .as_deref(),
            Some("0-3")
        );
        assert_eq!(
            sys.canonicalize("/sys/devices/system/cpu/dirlink/online")
                .unwrap(),
            PathBuf::from("/sys/devices/x/online")
        );
        assert_eq!(
            sys.read_link("/sys/devices/system/cpu/dirlink").unwrap(),
            PathBuf::from("../../x")
        );
        assert_eq!(sys.list_dir("/sys/devices/system/cpu/dirlink"), ["online"]);
        assert!(sys.is_dir("/sys/devices/system/cpu/dirlink"));
        assert!(sys.notes().is_empty());
    }

    #[test]
    fn a_symlink_out_of_the_tree_is_refused_with_a_note() {
        let d = tree();
        let secret = d.path().join("secret");
        std::fs::write(&secret, "0-3\n").unwrap();
        let cpu = d.path().join("sys/devices/system/cpu");
        std::os::unix::fs::symlink(&secret, cpu.join("online")).unwrap();
        std::os::unix::fs::symlink("../../../../../secret", cpu.join("possible")).unwrap();
        std::os::unix::fs::symlink(d.path(), cpu.join("up")).unwrap();
        std::os::unix::fs::symlink("loop", cpu.join("loop")).unwrap();
        let root = tempfile::tempdir().unwrap();
        let sys = Sysroot::new(d.path()).unwrap();
        for f in ["online", "possible", "up/secret", "loop"] {
            let rel = format!("/sys/devices/system/cpu/{f}");
            assert_eq!(sys.read_string(&rel), None, "{f}");
            assert!(!sys.exists(&rel), "{f}");
            let e = sys.read_bytes(&rel).unwrap_err();
            assert!(crate::base::files::is_refusal(&e), "{f}: {e}");
        }
        assert!(sys.list_dir("/sys/devices/system/cpu/up").is_empty());
        assert!(sys.canonicalize("/sys/devices/system/cpu/up").is_err());
        let n = sys.notes();
        let want = [
            format!(
                "symbolic link '/sys/devices/system/cpu/online' -> '{}' leads out of the tree: refused, read as missing",
                secret.display()
            ),
            "symbolic link '/sys/devices/system/cpu/possible' -> '../../../../../secret' leads out of the tree: refused, read as missing".to_string(),
            format!(
                "symbolic link '/sys/devices/system/cpu/up' -> '{}' leads out of the tree: refused, read as missing",
                d.path().display()
            ),
            "symbolic link '/sys/devices/system/cpu/loop' -> 'loop' is a loop of links (more than 40 followed): refused, read as missing".to_string(),
        ];
        assert_eq!(n, want);
        drop(root);
    }

    #[test]
    fn non_utf8_bytes_are_replaced_and_noted() {
        let d = tree();
        std::fs::write(
            d.path().join("proc/cpuinfo"),
            b"processor\t: 0\nmodel name\t: Intel \xff Xeon\nflags\t: fpu hypervisor\n",
        )
        .unwrap();
        let sys = Sysroot::new(d.path()).unwrap();
        let ci = sys.read_raw("/proc/cpuinfo").expect("read lossily");
        assert!(ci.contains("model name\t: Intel \u{fffd} Xeon"), "{ci}");
        assert!(sys.has_hypervisor_sign());
        // Clones share the notes; a note is kept once.
        let again = sys.clone();
        assert!(again.read_raw("proc/cpuinfo").is_some());
        assert_eq!(
            sys.notes(),
            vec!["/proc/cpuinfo: non-UTF-8 bytes replaced by U+FFFD".to_string()]
        );
    }

    #[test]
    fn a_missing_file_makes_no_note() {
        let d = tree();
        let sys = Sysroot::new(d.path()).unwrap();
        assert_eq!(sys.read_raw("/proc/cpuinfo"), None);
        assert!(sys.notes().is_empty());
    }

    #[test]
    fn live_procfs_files_of_size_zero_still_read() {
        // /proc files are regular files that report size 0.
        let md = std::fs::metadata("/proc/self/status").unwrap();
        assert!(md.is_file());
        let (s, lossy) = read_file_text(Path::new("/proc/self/status")).unwrap();
        assert!(s.contains("Pid:"), "{s}");
        assert!(!lossy);
        let sys = Sysroot {
            root: PathBuf::from("/"),
            fs: Arc::new(Root::open(Path::new("/")).unwrap()),
            notes: Arc::default(),
            archive: None,
        };
        assert!(sys.is_live());
        assert!(sys.read_raw("/proc/self/status").is_some());
        if Path::new("/sys/devices/system/cpu/online").exists() {
            assert!(sys.read_cpulist("/sys/devices/system/cpu/online").is_some());
        }
    }
}
