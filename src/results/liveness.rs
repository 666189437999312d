//! Whether a run's writer is still writing it: a lock the writer holds for
//! as long as it writes, which the kernel (SQLite) or the server
//! (PostgreSQL) drops when the writer ends, however it ends (SIGKILL, the
//! OOM killer, a container stopped) and whatever namespace or host it ran
//! in. A reader tests the lock without taking it.
//!
//! - **SQLite**: a one-byte open file description lock (`F_OFD_SETLK`,
//!   Linux 3.15) in a side file beside the store, `STORE-writers` (beside
//!   the file the store path resolves to, as SQLite puts its `-wal`), at an
//!   offset derived from the run id ([`lock_offset`]). The writer holds a
//!   read lock (several writers may share a byte); a reader asks
//!   `F_OFD_GETLK` whether a write lock there would conflict. Not the store
//!   file's own bytes: SQLite locks those with POSIX locks, which the
//!   kernel drops for the whole process when any descriptor of the file is
//!   closed. OFD locks belong to the open file description, not the
//!   process, so a reader in the writer's own process tests them like any
//!   other, and closing another descriptor of the side file drops nothing.
//! - **PostgreSQL**: a session advisory lock (`pg_advisory_lock_shared` on
//!   the two keys of [`pg_keys`]) held by the writer's connection, which the
//!   server drops when the connection ends; a reader looks for it in
//!   `pg_locks`.
//!
//! The run's row records which lock its writer holds (`writer_lock`, table
//! layout 3: [`SQLITE_LOCK`] or [`PG_LOCK`]). A row without one was written
//! by an older cpuscope, or where no lock could be taken: the process rule
//! of `store::Writer` (pid, start time, boot id, host) decides for it.

use std::fs::File;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::os::unix::io::AsRawFd as _;
use std::path::{Path, PathBuf};

/// `writer_lock` of a run whose writer holds a byte of `STORE-writers`.
pub const SQLITE_LOCK: &str = "ofd";

/// `writer_lock` of a run whose writer's connection holds its advisory lock.
pub const PG_LOCK: &str = "pg-advisory";

/// The first advisory lock key of every run's writer lock ("CPUS"); the
/// second is derived from the run id.
pub const PG_LOCK_CLASS: i64 = 0x4350_5553;

/// What a test of a writer lock found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// A live process holds it: the run is being written.
    Yes,
    /// Nobody holds it: the writer is gone.
    No,
    /// The lock cannot be tested here, and why.
    Unknown(String),
}

/// FNV-1a, 64 bits, of `s`.
fn fnv64(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The byte of `STORE-writers` that run `id`'s writer locks: below 2^62
/// (so that it fits an `off_t` with room after it); two runs that share
/// one only make a gone writer's run look written while the other lives.
pub fn lock_offset(id: &str) -> i64 {
    (fnv64(id) >> 2) as i64
}

/// The advisory lock keys of run `id`'s writer: ([`PG_LOCK_CLASS`], 31 bits
/// of the id's hash).
pub fn pg_keys(id: &str) -> (i64, i64) {
    (PG_LOCK_CLASS, (fnv64(id) & 0x7fff_ffff) as i64)
}

/// The side file of the SQLite store at `store`: `STORE-writers` beside the
/// file the path resolves to (links followed, as SQLite does for its `-wal`),
/// so that every path to one store names one side file.
pub fn side_path(store: &Path) -> PathBuf {
    let real = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
    let mut p = real.into_os_string();
    p.push("-writers");
    PathBuf::from(p)
}

fn flock(l_type: libc::c_int, offset: i64) -> libc::flock {
    // SAFETY: a plain C struct; all-zero is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = l_type as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = libc::off_t::try_from(offset).unwrap_or((offset & 0x7fff_ffff) as libc::off_t);
    fl.l_len = 1;
    fl
}

/// `fcntl(fd, cmd, fl)`, with the system's error.
fn fcntl_lock(f: &File, cmd: libc::c_int, fl: &mut libc::flock) -> std::io::Result<()> {
    // SAFETY: a descriptor this File owns and a flock the kernel fills.
    if unsafe { libc::fcntl(f.as_raw_fd(), cmd, fl as *mut libc::flock) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Why an OFD lock call failed, for messages.
fn lock_error(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(libc::EINVAL) {
        "this kernel has no open file description locks (F_OFD_*, Linux 3.15)".into()
    } else {
        crate::base::output::io_text(e)
    }
}

/// Whether a writer holds run `id`'s lock in the side file of the SQLite
/// store at `store`. Opens the side file read-only and changes nothing.
pub fn test_sqlite(store: &Path, id: &str) -> Held {
    let side = side_path(store);
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&side)
    {
        Ok(f) => f,
        // No side file: no writer ever held a lock in it, or it was
        // removed; no lock is held in it either way.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Held::No,
        Err(e) => {
            return Held::Unknown(format!(
                "cannot open '{}': {}",
                side.display(),
                crate::base::output::io_text(&e)
            ))
        }
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Held::Unknown(format!("'{}' is not a regular file", side.display()));
    }
    let mut fl = flock(libc::F_WRLCK, lock_offset(id));
    match fcntl_lock(&f, libc::F_OFD_GETLK, &mut fl) {
        Ok(()) if i32::from(fl.l_type) == libc::F_UNLCK => Held::No,
        Ok(()) => Held::Yes,
        Err(e) => Held::Unknown(lock_error(&e)),
    }
}

/// The side file a writer holds open, and which file it is.
struct Side {
    file: File,
    path: PathBuf,
    id: (u64, u64),
}

/// The writer locks one SQLite store holds: the side file, opened (and
/// made, with the store's owner and modes) on the first lock, and the runs
/// whose bytes are locked. Dropping it (closing the file) releases them all.
pub struct SideLocks {
    store: PathBuf,
    side: Option<Side>,
    held: Vec<String>,
}

impl SideLocks {
    pub fn new(store: &Path) -> SideLocks {
        SideLocks {
            store: store.to_path_buf(),
            side: None,
            held: Vec::new(),
        }
    }

    /// Take run `id`'s lock (a read lock on its byte), or say why not.
    pub fn hold(&mut self, id: &str) -> Result<(), String> {
        if self.side.is_none() {
            self.side = Some(open_side(&self.store)?);
        }
        let side = self.side.as_ref().expect("opened above");
        let mut fl = flock(libc::F_RDLCK, lock_offset(id));
        fcntl_lock(&side.file, libc::F_OFD_SETLK, &mut fl).map_err(|e| {
            format!(
                "cannot lock a byte of '{}': {}",
                side.path.display(),
                lock_error(&e)
            )
        })?;
        self.held.push(id.to_string());
        Ok(())
    }

    /// Let go of run `id`'s lock (its run is finished).
    pub fn release(&mut self, id: &str) {
        let Some(i) = self.held.iter().position(|h| h == id) else {
            return;
        };
        self.held.remove(i);
        // Another run of this store may share the byte.
        if self.held.iter().any(|h| lock_offset(h) == lock_offset(id)) {
            return;
        }
        if let Some(side) = &self.side {
            let mut fl = flock(libc::F_UNLCK, lock_offset(id));
            let _ = fcntl_lock(&side.file, libc::F_OFD_SETLK, &mut fl);
        }
    }

    /// When the side file this store holds is no longer the one at its path
    /// (removed or replaced by hand while runs are written), make a new one
    /// and take every held lock again, so that readers still see them.
    pub fn keep(&mut self) -> Result<(), String> {
        let Some(side) = &self.side else {
            return Ok(());
        };
        let now = std::fs::symlink_metadata(&side.path).ok();
        if now.is_some_and(|m| (m.dev(), m.ino()) == side.id) {
            return Ok(());
        }
        self.side = None;
        for id in std::mem::take(&mut self.held) {
            self.hold(&id)?;
        }
        Ok(())
    }
}

/// Open (or make) the side file of the store at `store` to hold locks in.
/// Made with the store's permission bits and, when root makes it, the
/// store's owner (so that its other writers can open it too); opened
/// read-only where this user may not write it (a read lock needs no more).
fn open_side(store: &Path) -> Result<Side, String> {
    let path = side_path(store);
    let shown = || path.display().to_string();
    let fail = |e: std::io::Error| {
        format!(
            "cannot open '{}': {}",
            shown(),
            crate::base::output::io_text(&e)
        )
    };
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    let store_meta = std::fs::metadata(store).ok();
    let mode = store_meta.as_ref().map_or(0o644, |m| m.mode() & 0o666);
    let made = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(flags)
        .open(&path);
    let file = match made {
        Ok(f) => {
            // The umask may have taken bits away: the store's, exactly.
            let _ = f.set_permissions(std::fs::Permissions::from_mode(mode));
            // SAFETY: geteuid has no memory effects.
            if unsafe { libc::geteuid() } == 0 {
                if let Some(m) = &store_meta {
                    let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
                }
            }
            f
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let open = |write: bool| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(write)
                    .custom_flags(flags)
                    .open(&path)
            };
            open(true).or_else(|_| open(false)).map_err(fail)?
        }
        Err(e) => return Err(fail(e)),
    };
    let m = file.metadata().map_err(fail)?;
    if !m.is_file() {
        return Err(format!("'{}' is not a regular file", shown()));
    }
    Ok(Side {
        file,
        id: (m.dev(), m.ino()),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_keys_are_stable_and_in_range() {
        // Fixed: writers and readers of every build must agree.
        assert_eq!(fnv64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv64("a"), 0xaf63_dc4c_8601_ec8c);
        for id in ["", "a", "20260101T000000Z-host-0001", &"x".repeat(300)] {
            let o = lock_offset(id);
            assert!((0..1 << 62).contains(&o), "{id}: {o}");
            let (class, key) = pg_keys(id);
            assert_eq!(class, PG_LOCK_CLASS);
            assert!((0..=i64::from(i32::MAX)).contains(&key));
        }
        assert_ne!(lock_offset("run-a"), lock_offset("run-b"));
    }

    #[test]
    fn a_held_lock_is_seen_from_another_descriptor_and_released() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.db");
        std::fs::write(&store, b"").unwrap();
        // No side file yet: nobody holds anything.
        assert_eq!(test_sqlite(&store, "r1"), Held::No);
        let mut locks = SideLocks::new(&store);
        if let Err(e) = locks.hold("r1") {
            // Only where the kernel (or an emulator) has no OFD locks.
            assert!(e.contains("F_OFD_"), "{e}");
            return;
        }
        assert!(side_path(&store).is_file());
        // Seen from this very process (another open file description).
        assert_eq!(test_sqlite(&store, "r1"), Held::Yes);
        assert_eq!(test_sqlite(&store, "r2"), Held::No);
        // Through a link to the store: the same side file.
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&store, &link).unwrap();
        assert_eq!(test_sqlite(&link, "r1"), Held::Yes);
        // The side file removed by hand: made again, the lock taken again.
        std::fs::remove_file(side_path(&store)).unwrap();
        assert_eq!(test_sqlite(&store, "r1"), Held::No);
        locks.keep().unwrap();
        assert_eq!(test_sqlite(&store, "r1"), Held::Yes);
        locks.release("r1");
        assert_eq!(test_sqlite(&store, "r1"), Held::No);
        locks.hold("r2").unwrap();
        drop(locks);
        assert_eq!(test_sqlite(&store, "r2"), Held::No);
    }
}
