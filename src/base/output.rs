//! The one way cpuscope writes what a user asked for: files named on the
//! command line (`export -o`, `stat -o`, every `--html`, the fallback copy
//! of a run the store could not take), standard output, and the lines on
//! standard error.
//!
//! A named output is checked by [`Output::check`] before any work is done
//! (before measuring), and written by [`Output::write`]:
//! - `-` is standard output;
//! - a FIFO is written in place (the user named it on purpose), opened
//!   without blocking: no reader is an error, not a hang, and a reader that
//!   stops reading is waited for with a timeout and Ctrl-C;
//! - a regular file is replaced atomically: a temporary file with an
//!   unpredictable name is created beside it (`O_CREAT|O_EXCL|O_NOFOLLOW`,
//!   so nothing planted there is followed or reused), written, given the
//!   target's mode, `fsync`ed, renamed over the target, and the directory
//!   `fsync`ed; on any failure the temporary file is removed and the target
//!   is left as it was; a SIGINT, SIGTERM or SIGHUP while it exists removes
//!   it from the signal handler ([`super::stop::remove_on_signal`]), before
//!   the process ends, and the write stops there;
//! - anything else is refused: a symbolic link (never written through), a
//!   device, a socket, a directory, a file of another user (it would change
//!   owner), a file with other hard links (they would be cut off), a file
//!   the user may not write, one of the `protect`ed files (the open store,
//!   compared by device and inode, not by name), a path whose directory
//!   does not exist (no command creates directories for a named output).
//!
//! Standard error never stops a command ([`err_line`] ignores a failed
//! write). A failed write to standard output is an error for the command
//! ([`stdout`]); a closed pipe is [`ClosedPipe`], which `main` turns into a
//! quiet exit, as other Unix tools die of SIGPIPE.

use anyhow::{anyhow, bail, Result};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a FIFO's reader may leave a write waiting.
const FIFO_STALL: Duration = Duration::from_secs(60);

/// Standard output went to a pipe that is closed (`cpuscope … | head`).
#[derive(Debug)]
pub struct ClosedPipe;

impl std::fmt::Display for ClosedPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output is a closed pipe")
    }
}

impl std::error::Error for ClosedPipe {}

/// Write `text` to standard output and flush it: a closed pipe is
/// [`ClosedPipe`], any other failure a one-line error.
pub fn stdout(text: &str) -> Result<()> {
    stdout_bytes(text.as_bytes())
}

fn stdout_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(ClosedPipe.into()),
        Err(e) => Err(anyhow!("cannot write to standard output: {}", io_text(&e))),
    }
}

/// One line on standard error; a failed write is ignored (stderr gone, a
/// closed pipe, a full disk): losing a progress line must never cost a run.
pub fn err_line(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// A path the user named for output, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// `-`: standard output.
    Stdout,
    /// A FIFO that exists: written in place.
    Fifo(PathBuf),
    /// A regular file (existing or to be created): replaced atomically.
    File(PathBuf),
}

impl Output {
    /// Check `path` as an output before any work: see the module's rules.
    /// `protect`: files that must never be written (the store and its
    /// journal files); compared by device and inode.
    pub fn check(path: &Path, protect: &[PathBuf]) -> Result<Output> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        let shown = shown(path);
        if path.as_os_str().is_empty() {
            bail!("cannot write '': an empty path");
        }
        if path.file_name().is_none() || path.as_os_str().to_string_lossy().ends_with('/') {
            bail!("cannot write '{shown}': it names a directory, not a file");
        }
        match std::fs::symlink_metadata(path) {
            Ok(m) => check_existing(path, &m, protect)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => bail!("cannot write '{shown}': {}", io_text(&e)),
        }
        let m = std::fs::symlink_metadata(path).ok();
        if m.as_ref().is_some_and(|m| m.file_type().is_fifo()) {
            return Ok(Output::Fifo(path.to_path_buf()));
        }
        check_dir(path)?;
        Ok(Output::File(path.to_path_buf()))
    }

    /// The path as shown in messages (`-` for standard output).
    pub fn shown(&self) -> String {
        match self {
            Output::Stdout => "-".into(),
            Output::Fifo(p) | Output::File(p) => shown(p),
        }
    }

    /// Whether this is standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self, Output::Stdout)
    }

    /// Write `bytes`, checking the target again first (it may have changed
    /// since [`Output::check`]). On error the target is as it was.
    pub fn write(&self, bytes: &[u8], protect: &[PathBuf]) -> Result<()> {
        match self {
            Output::Stdout => stdout_bytes(bytes),
            Output::Fifo(p) => {
                Output::check(p, protect)?;
                write_fifo(p, bytes)
            }
            Output::File(p) => match Output::check(p, protect)? {
                Output::Fifo(p) => write_fifo(&p, bytes),
                _ => replace_file(p, bytes),
            },
        }
    }

    /// Create a new file that must not exist yet (the fallback copy of a
    /// run): `O_CREAT|O_EXCL|O_NOFOLLOW`, written and `fsync`ed.
    pub fn create_new(path: &Path, bytes: &[u8]) -> Result<()> {
        let shown = shown(path);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| anyhow!("cannot create '{shown}': {}", io_text(&e)))?;
        if let Err(e) = f.write_all(bytes).and_then(|_| f.sync_all()) {
            drop(f);
            let _ = std::fs::remove_file(path);
            bail!("cannot write '{shown}': {}", io_text(&e));
        }
        sync_dir(path);
        Ok(())
    }
}

/// Write `bytes` to `path` through [`Output`]: check, then write.
pub fn write_file(path: &Path, bytes: &[u8], protect: &[PathBuf]) -> Result<()> {
    Output::check(path, protect)?.write(bytes, protect)
}

/// A path for messages: control characters escaped.
fn shown(p: &Path) -> String {
    super::fmt::for_terminal(&p.to_string_lossy()).into_owned()
}

/// An I/O error's text without Rust's " (os error N)" tail.
pub fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn check_existing(path: &Path, m: &Metadata, protect: &[PathBuf]) -> Result<()> {
    let shown = shown(path);
    let ft = m.file_type();
    if ft.is_symlink() {
        bail!(
            "cannot write '{shown}': it is a symbolic link, and cpuscope does not write through links (name the file it points to)"
        );
    }
    if protect.iter().any(|p| same_file(p, m)) {
        bail!("cannot write '{shown}': it is the store cpuscope keeps its runs in");
    }
    if ft.is_fifo() {
        return Ok(());
    }
    let what = if ft.is_dir() {
        Some("a directory")
    } else if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_block_device() {
        Some("a block device")
    } else if ft.is_socket() {
        Some("a socket")
    } else if !ft.is_file() {
        Some("not a regular file")
    } else {
        None
    };
    if let Some(what) = what {
        bail!(
            "cannot write '{shown}': it is {what}; cpuscope writes regular files, FIFOs and `-` (standard output, which a shell can redirect anywhere)"
        );
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        bail!(
            "cannot write '{shown}': it belongs to another user (uid {}); replacing it would take it over",
            m.uid()
        );
    }
    if m.nlink() > 1 {
        bail!(
            "cannot write '{shown}': it has {} hard links, which replacing it would cut off; write to another name",
            m.nlink()
        );
    }
    if me != 0 && m.permissions().mode() & 0o200 == 0 {
        bail!(
            "cannot write '{shown}': it is read-only (mode {:o})",
            m.permissions().mode() & 0o7777
        );
    }
    if is_sqlite(path) {
        bail!(
            "cannot write '{shown}': it is a SQLite database (another store of runs, perhaps); cpuscope never replaces one: write to another name"
        );
    }
    Ok(())
}

/// Whether the file at `path` starts with SQLite's header: a store other
/// than the one in use is as sacred as that one.
fn is_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|_| &head == b"SQLite format 3\0")
}

/// Whether `p` exists and is the file `m` describes (device and inode).
fn same_file(p: &Path, m: &Metadata) -> bool {
    std::fs::metadata(p).is_ok_and(|pm| pm.dev() == m.dev() && pm.ino() == m.ino())
}

/// The directory a file is replaced in: it must exist and take a new file.
fn check_dir(path: &Path) -> Result<()> {
    let shown = shown(path);
    let dir = parent(path);
    let md = std::fs::metadata(&dir).map_err(|e| {
        anyhow!(
            "cannot write '{shown}': directory '{}': {}",
            dir.display(),
            io_text(&e)
        )
    })?;
    if !md.is_dir() {
        bail!(
            "cannot write '{shown}': '{}' is not a directory",
            dir.display()
        );
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| anyhow!("cannot write '{shown}': a NUL byte in the path"))?;
    // SAFETY: a valid C string; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        bail!(
            "cannot write '{shown}': directory '{}' is not writable (cpuscope replaces a file through a temporary file beside it)",
            dir.display()
        );
    }
    Ok(())
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// 16 hex digits nobody can guess: /dev/urandom, else time and pid mixed.
pub(crate) fn random_suffix() -> String {
    let mut b = [0u8; 8];
    let ok = File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .is_ok();
    let n = if ok {
        u64::from_ne_bytes(b)
    } else {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        (t ^ (u64::from(std::process::id()) << 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    };
    format!("{n:016x}")
}

fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let shown = shown(path);
    let dir = parent(path);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // Keep the target's permission bits; a new file gets 0666 less the umask.
    let keep = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| m.permissions().mode() & 0o7777);
    let mut last = None;
    for _ in 0..8 {
        let tmp = dir.join(format!(".{name}.cpuscope-{}", random_suffix()));
        // Before the file exists: a signal from here on removes it.
        let doomed = super::stop::remove_on_signal(&tmp)
            .map_err(|e| anyhow!("cannot write '{shown}': {e:#}"))?;
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(keep.unwrap_or(0o666))
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp);
        let mut f = match f {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                last = Some(e);
                continue;
            }
            Err(e) => bail!(
                "cannot write '{shown}': cannot create a temporary file in '{}': {}",
                dir.display(),
                io_text(&e)
            ),
        };
        let res = (|| -> std::io::Result<()> {
            if let Some(mode) = keep {
                // The umask applied at creation: set the bits exactly.
                f.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            f.write_all(bytes)?;
            f.sync_all()?;
            if doomed.signalled() {
                return Err(std::io::Error::from(ErrorKind::Interrupted));
            }
            std::fs::rename(&tmp, path)
        })();
        drop(f);
        if let Err(e) = res {
            let _ = std::fs::remove_file(&tmp);
            if doomed.signalled() {
                bail!("cannot write '{shown}': interrupted by a signal (it is unchanged)");
            }
            bail!("cannot write '{shown}': {} (it is unchanged)", io_text(&e));
        }
        drop(doomed);
        sync_dir(path);
        return Ok(());
    }
    bail!(
        "cannot write '{shown}': no free temporary name in '{}' ({})",
        dir.display(),
        last.map(|e| io_text(&e)).unwrap_or_default()
    )
}

/// `fsync` the directory holding `path`, so the rename survives a crash.
fn sync_dir(path: &Path) {
    if let Ok(d) = File::open(parent(path)) {
        let _ = d.sync_all();
    }
}

fn write_fifo(path: &Path, bytes: &[u8]) -> Result<()> {
    let shown = shown(path);
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => anyhow!("cannot write '{shown}': the FIFO has no reader"),
            _ => anyhow!("cannot write '{shown}': {}", io_text(&e)),
        })?;
    let fd = f.as_raw_fd();
    let mut rest = bytes;
    let mut last_progress = Instant::now();
    while !rest.is_empty() {
        match f.write(rest) {
            Ok(n) => {
                rest = &rest[n..];
                last_progress = Instant::now();
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                if super::stop::requested() {
                    bail!("cannot write '{shown}': interrupted while the FIFO's reader was not reading");
                }
                if last_progress.elapsed() > FIFO_STALL {
                    bail!(
                        "cannot write '{shown}': the FIFO's reader took nothing for {} s",
                        FIFO_STALL.as_secs()
                    );
                }
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd for the duration of the call.
                unsafe { libc::poll(&mut p, 1, 100) };
            }
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                bail!("cannot write '{shown}': the FIFO's reader went away")
            }
            Err(e) => bail!("cannot write '{shown}': {}", io_text(&e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_atomically_and_keeps_the_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_file(&p, b"new", &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_links_devices_protected_and_missing_dirs() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t");
        std::fs::write(&target, "keep").unwrap();
        let link = d.path().join("l");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write_file(&link, b"x", &[]).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");

        let e = write_file(Path::new("/dev/null"), b"x", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");

        let store = d.path().join("runs.db");
        std::fs::write(&store, "db").unwrap();
        let alias = d.path().join(".").join("runs.db");
        let e = write_file(&alias, b"x", std::slice::from_ref(&store))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the store"), "{e}");
        let hard = d.path().join("hard");
        std::fs::hard_link(&store, &hard).unwrap();
        let e = write_file(&hard, b"x", std::slice::from_ref(&store))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the store"), "{e}");
        assert_eq!(std::fs::read_to_string(&store).unwrap(), "db");

        let e = write_file(&d.path().join("no/such/x.html"), b"x", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("No such file"), "{e}");
        let e = write_file(d.path(), b"x", &[]).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
    }

    #[test]
    fn fifo_without_reader_is_an_error_not_a_hang() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("fifo");
        let c = std::ffi::CString::new(f.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let out = Output::check(&f, &[]).unwrap();
        assert_eq!(out, Output::Fifo(f.clone()));
        let e = out.write(b"x", &[]).unwrap_err().to_string();
        assert!(e.contains("no reader"), "{e}");
    }

    #[test]
    fn create_new_never_reuses_a_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("run.json");
        Output::create_new(&p, b"one").unwrap();
        assert!(Output::create_new(&p, b"two").is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
    }
}
