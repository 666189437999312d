//! Reading one file from outside safely (sysfs, procfs, a recorded copy, a
//! user's score file): only regular files (a FIFO, socket or device is
//! refused before opening, and again on the open file, opened with
//! `O_NONBLOCK`), at most a cap of bytes, text read lossily. The leaf under
//! `sysroot` and `archive`.
//!
//! Under a recorded root (`--sysroot DIR`), every path is resolved within
//! the root ([`Root::at`]): one component at a time, each opened with
//! `O_NOFOLLOW` relative to the directory reached so far, every symbolic
//! link followed by hand, so that a link whose target is absolute, or that
//! climbs above the root with `..`, is refused with one line, as
//! `base::archive` refuses it inside an archive (`RESOLVE_BENEATH`'s
//! rule). The live root `/` is the kernel's own: nothing lies outside it.
use std::collections::VecDeque;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::io::{self, Read as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, FromRawFd as _, IntoRawFd as _, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Component, Path, PathBuf};

/// The most bytes read from one sysfs/procfs file (or a recorded copy).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A file size in words: `16 MiB`, `1 GiB`, `4096 bytes`.
fn size_words(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// Why `md` is not something to read as a file (`not a regular file (a
/// FIFO)`); None for a regular file.
pub fn not_regular(md: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = md.file_type();
    if t.is_file() {
        None
    } else if t.is_fifo() {
        Some("not a regular file (a FIFO)")
    } else if t.is_socket() {
        Some("not a regular file (a socket)")
    } else if t.is_char_device() {
        Some("not a regular file (a character device)")
    } else if t.is_block_device() {
        Some("not a regular file (a block device)")
    } else if t.is_dir() {
        Some("not a regular file (a directory)")
    } else {
        Some("not a regular file")
    }
}

/// The bytes of the regular file at `path` (symlinks followed), at most
/// `cap` of them. Never blocks on a FIFO and never reads a device: those are
/// refused before opening (and again on the open file, with `O_NONBLOCK`
/// set in between). More than `cap` bytes is an error (`InvalidData`).
/// For a file the user named; a file under a `Sysroot` is read within its
/// root ([`Entry::read_capped`]).
pub fn read_file_bytes_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(why) = not_regular(&std::fs::metadata(path)?) {
        return Err(refuse(why));
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    read_open_capped(f, cap)
}

fn refuse(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why.to_string())
}

/// At most `cap` bytes of a file just opened, refused unless it is a
/// regular file (it may have been replaced between a check and the open).
fn read_open_capped(f: std::fs::File, cap: u64) -> io::Result<Vec<u8>> {
    if let Some(why) = not_regular(&f.metadata()?) {
        return Err(refuse(why));
    }
    let mut buf = Vec::new();
    f.take(cap.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {}: not a sysfs/procfs file", size_words(cap)),
        ));
    }
    Ok(buf)
}

/// [`read_file_bytes_capped`] with [`MAX_FILE_BYTES`].
pub fn read_file_bytes(path: &Path) -> io::Result<Vec<u8>> {
    read_file_bytes_capped(path, MAX_FILE_BYTES)
}

/// Text of a file read with [`read_file_bytes_capped`]; non-UTF-8 bytes are
/// replaced by U+FFFD, and the flag says whether any were.
pub fn read_file_text_capped(path: &Path, cap: u64) -> io::Result<(String, bool)> {
    let bytes = read_file_bytes_capped(path, cap)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    })
}

/// [`read_file_text_capped`] with [`MAX_FILE_BYTES`].
pub fn read_file_text(path: &Path) -> io::Result<(String, bool)> {
    read_file_text_capped(path, MAX_FILE_BYTES)
}

/// The note for a file read with replaced bytes.
pub fn lossy_note(shown: &str) -> String {
    format!("{shown}: non-UTF-8 bytes replaced by U+FFFD")
}

/// Links followed in one path before it counts as a loop (Linux's
/// MAXSYMLINKS, as `base::archive` counts them).
pub const MAX_LINK_HOPS: u32 = 40;
/// The most names read from one directory (sysfs's largest, a CPU or IRQ
/// list, holds some thousands).
pub const MAX_DIR_ENTRIES: usize = 1 << 20;

/// A read refused because a path leaves the tree (a symbolic link with an
/// absolute target, or more `..` than the tree is deep) or goes through a
/// loop of links: the words name the link.
#[derive(Debug)]
pub struct Refusal(String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// Whether `e` is a [`Refusal`] (its words name the link, not the file read).
pub fn is_refusal(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<Refusal>())
}

fn refusal(words: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, Refusal(words))
}

fn c_name(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| refuse("a NUL byte in a path"))
}

fn fd_result(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: a descriptor the kernel just gave us, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

fn open_at(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: a valid descriptor and a NUL-terminated name.
    fd_result(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC) })
}

fn open_path(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let p = c_name(path.as_os_str())?;
    // SAFETY: a NUL-terminated path.
    fd_result(unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC) })
}

/// `name` in `dir` opened as itself (`O_PATH`, a link not followed), with
/// its type. (Through the standard library's `metadata`, not `fstatat`,
/// which glibc exports only from 2.33 on.)
fn entry_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<(OwnedFd, std::fs::FileType)> {
    let f = std::fs::File::from(open_at(dir, name, libc::O_PATH | libc::O_NOFOLLOW)?);
    let kind = f.metadata()?.file_type();
    Ok((OwnedFd::from(f), kind))
}

/// The target of the link `name` in `dir`.
fn link_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: a valid descriptor, a NUL-terminated name, a buffer of buf.len() bytes.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    if n >= buf.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    buf.truncate(n);
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

/// The names in the directory open at `fd` (`.` and `..` left out), at
/// most [`MAX_DIR_ENTRIES`].
fn names_in(fd: OwnedFd) -> io::Result<Vec<OsString>> {
    struct Dir(*mut libc::DIR);
    impl Drop for Dir {
        fn drop(&mut self) {
            // SAFETY: a stream fdopendir gave, closed once.
            unsafe { libc::closedir(self.0) };
        }
    }
    let raw = fd.into_raw_fd();
    // SAFETY: a directory descriptor we own; the stream owns it from here.
    let dirp = unsafe { libc::fdopendir(raw) };
    if dirp.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so the descriptor is still ours.
        unsafe { libc::close(raw) };
        return Err(e);
    }
    let d = Dir(dirp);
    let mut v = Vec::new();
    loop {
        // SAFETY: errno is this thread's; readdir on a stream of ours.
        let ent = unsafe {
            *libc::__errno_location() = 0;
            libc::readdir(d.0)
        };
        if ent.is_null() {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(0) | None => Ok(v),
                Some(_) => Err(e),
            };
        }
        // SAFETY: readdir gives a NUL-terminated name, valid until the next call.
        let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if v.len() >= MAX_DIR_ENTRIES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {MAX_DIR_ENTRIES} entries: not a sysfs/procfs directory"),
            ));
        }
        v.push(OsString::from_vec(name.to_vec()));
    }
}

/// `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: `rel`
/// opened from `dir`, every link followed by the kernel, refused (`EXDEV`)
/// when the path leaves `dir`, `ELOOP` through a loop or a magic link;
/// `ENOSYS` before Linux 5.6 (or under an emulator or a seccomp filter
/// that lacks it; some answer `EPERM`).
fn open_beneath(dir: BorrowedFd<'_>, rel: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    /// `struct open_how` (linux/openat2.h).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    // EAGAIN: a `..` was walked while a rename or a mount happened anywhere
    // on the machine, and the kernel could not prove it stayed beneath
    // (openat2(2): "the caller may choose to retry"). Seen under a busy test
    // suite; retried a bounded number of times.
    let mut tries = 0;
    loop {
        // SAFETY: a valid descriptor, a NUL-terminated path, an open_how of the size given.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                rel.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        let res = fd_result(r as libc::c_int);
        match &res {
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && tries < 100 => {
                tries += 1;
                std::thread::yield_now();
            }
            _ => return res,
        }
    }
}

/// A directory that paths are resolved within: a recorded tree, where a
/// symbolic link that leaves it is refused, or the live root `/`.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The live root: the kernel resolves paths, as for any program
    /// (nothing lies outside `/`).
    live: bool,
    /// The kernel resolves within the tree (`openat2`, Linux 5.6 and later);
    /// otherwise [`Root::walk`] does, by hand, with the same rule.
    beneath: bool,
}

/// One step of a path being resolved: a name, or `..`; with the link whose
/// target it came from (an index into the links met), for the words.
type Step = (OsString, Option<usize>);

impl Root {
    /// The directory `dir` (the live root when it is `/`).
    pub fn open(dir: &Path) -> io::Result<Root> {
        let fd = open_path(dir, libc::O_PATH | libc::O_DIRECTORY)?;
        let live = dir == Path::new("/");
        let beneath = !live && open_beneath(fd.as_fd(), c".", libc::O_PATH).is_ok();
        Ok(Root { fd, live, beneath })
    }

    pub fn is_live(&self) -> bool {
        self.live
    }

    /// What the path `rel` (from the root; a leading `/` or not) names,
    /// with its last link followed or not. Under a recorded tree, a link
    /// with an absolute target or a `..` above the root is refused
    /// ([`Refusal`], with words naming the link), and so is a path through
    /// more than [`MAX_LINK_HOPS`] links (a loop): by the kernel where it
    /// has `openat2` (`RESOLVE_BENEATH`), else by [`Root::walk`]; the words
    /// always come from the walk.
    pub fn at(&self, rel: &Path, follow: bool) -> io::Result<Entry<'_>> {
        if self.live {
            return self.at_live(rel, follow);
        }
        if !self.beneath {
            return self.walk(rel, follow);
        }
        let path = beneath_path(rel)?;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        match open_beneath(self.fd.as_fd(), &path, libc::O_PATH | nofollow) {
            Ok(fd) => Ok(Entry {
                place: Place::Beneath {
                    root: self.fd.as_fd(),
                    path,
                    nofollow,
                    fd,
                },
            }),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EXDEV | libc::ELOOP)) => {
                // The walk says which link; should it find none (the tree
                // changed in between), the kernel's answer stands.
                self.walk(rel, follow)?;
                Err(refusal(format!(
                    "'{}' leads out of the tree through a symbolic link: refused",
                    rel.display()
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// [`Root::at`] resolved by hand (where the kernel has no `openat2`, and
    /// for the words and the real path): every component opened with
    /// `O_NOFOLLOW` from the real directory reached so far, every link
    /// followed here: `..` from that real directory, an absolute target or
    /// a `..` above the root refused, more than [`MAX_LINK_HOPS`] links
    /// refused as a loop.
    pub fn walk(&self, rel: &Path, follow: bool) -> io::Result<Entry<'_>> {
        let mut todo: VecDeque<Step> = steps(rel, None).collect();
        let mut links: Vec<(String, PathBuf)> = Vec::new();
        let mut stack: Vec<(OwnedFd, OsString)> = Vec::new();
        while let Some((c, from)) = todo.pop_front() {
            if c == ".." {
                if stack.pop().is_none() {
                    return Err(refusal(match from {
                        Some(i) => out_words(&links[i]),
                        None => {
                            format!("'{}' climbs above the tree's root: refused", rel.display())
                        }
                    }));
                }
                continue;
            }
            let dir = stack.last().map_or(self.fd.as_fd(), |d| d.0.as_fd());
            let name = c_name(&c)?;
            let last = todo.is_empty();
            let (fd, kind) = entry_at(dir, &name)?;
            if kind.is_symlink() && (follow || !last) {
                let link = (shown(&stack, &c), link_at(dir, &name)?);
                if links.len() as u32 >= MAX_LINK_HOPS {
                    return Err(refusal(format!(
                        "symbolic link '{}' -> '{}' is a loop of links (more than {MAX_LINK_HOPS} followed): refused",
                        link.0,
                        link.1.display()
                    )));
                }
                if link.1.is_absolute() {
                    return Err(refusal(out_words(&link)));
                }
                if link.1.as_os_str().is_empty() {
                    return Err(io::Error::from_raw_os_error(libc::ENOENT));
                }
                let new: Vec<Step> = steps(&link.1, Some(links.len())).collect();
                links.push(link);
                for s in new.into_iter().rev() {
                    todo.push_front(s);
                }
                continue;
            }
            if last {
                let mut real: Vec<OsString> = stack.iter().map(|d| d.1.clone()).collect();
                real.push(c);
                return Ok(Entry::at(dir.try_clone_to_owned()?, name, true, Some(real)));
            }
            if !kind.is_dir() {
                return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
            }
            stack.push((fd, c));
        }
        // The path ends on a directory reached through `..` or a link (or is the root).
        let dir = stack.last().map_or(self.fd.as_fd(), |d| d.0.as_fd());
        let real = stack.iter().map(|d| d.1.clone()).collect();
        Ok(Entry::at(
            dir.try_clone_to_owned()?,
            c".".to_owned(),
            true,
            Some(real),
        ))
    }

    /// [`Root::at`] under the live root: the kernel's own resolution.
    fn at_live(&self, rel: &Path, follow: bool) -> io::Result<Entry<'_>> {
        let full = Path::new("/").join(rel);
        let (dir, name) = match (full.parent(), full.file_name()) {
            (Some(p), Some(n)) => (open_path(p, libc::O_PATH | libc::O_DIRECTORY)?, c_name(n)?),
            _ => (
                open_path(&full, libc::O_PATH | libc::O_DIRECTORY)?,
                c".".to_owned(),
            ),
        };
        Ok(Entry::at(dir, name, !follow, None))
    }
}

/// `rel` as `openat2` takes it from the root: relative (`.` for the root).
fn beneath_path(rel: &Path) -> io::Result<CString> {
    let mut p = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => p.push(n),
            Component::ParentDir => p.push(".."),
            _ => {}
        }
    }
    if p.as_os_str().is_empty() {
        p.push(".");
    }
    c_name(p.as_os_str())
}

/// The path of `name` in the real directory `stack`, as the machine names it.
fn shown(stack: &[(OwnedFd, OsString)], name: &OsStr) -> String {
    let mut s = String::new();
    for (_, n) in stack {
        s.push('/');
        s.push_str(&n.to_string_lossy());
    }
    format!("{s}/{}", name.to_string_lossy())
}

/// The words for a link that leaves the tree, as `base::archive` says them.
fn out_words(link: &(String, PathBuf)) -> String {
    format!(
        "symbolic link '{}' -> '{}' leads out of the tree: refused",
        link.0,
        link.1.display()
    )
}

/// The names and `..` of `p` (a leading `/` and `.` dropped).
fn steps(p: &Path, from: Option<usize>) -> impl Iterator<Item = Step> + '_ {
    p.components().filter_map(move |c| match c {
        Component::Normal(n) => Some((n.to_os_string(), from)),
        Component::ParentDir => Some((OsString::from(".."), from)),
        _ => None,
    })
}

/// How an [`Entry`] is reached again to be opened.
#[derive(Debug)]
enum Place<'a> {
    /// By its name in the real directory holding it (`.` for a directory
    /// reached whole): resolved by hand, or by the kernel under `/`.
    At {
        dir: OwnedFd,
        name: CString,
        /// Open the name without following a link: always under a recorded
        /// tree (links were followed by hand), and for a link asked for itself.
        nofollow: bool,
        /// The real path's components (resolved by hand).
        real: Option<Vec<OsString>>,
    },
    /// By its path from the root, each open resolved beneath it by the
    /// kernel (`openat2`); `fd` is the entry itself, opened with `O_PATH`.
    Beneath {
        root: BorrowedFd<'a>,
        path: CString,
        nofollow: libc::c_int,
        fd: OwnedFd,
    },
}

/// What a path names once resolved within a [`Root`].
#[derive(Debug)]
pub struct Entry<'a> {
    place: Place<'a>,
}

impl Entry<'_> {
    fn at(dir: OwnedFd, name: CString, nofollow: bool, real: Option<Vec<OsString>>) -> Self {
        Entry {
            place: Place::At {
                dir,
                name,
                nofollow,
                real,
            },
        }
    }

    fn open(&self, flags: libc::c_int) -> io::Result<OwnedFd> {
        match &self.place {
            Place::At {
                dir,
                name,
                nofollow,
                ..
            } => {
                let nofollow = if *nofollow { libc::O_NOFOLLOW } else { 0 };
                open_at(dir.as_fd(), name, flags | nofollow)
            }
            Place::Beneath {
                root,
                path,
                nofollow,
                ..
            } => open_beneath(*root, path, flags | nofollow).map_err(|e| {
                if matches!(e.raw_os_error(), Some(libc::EXDEV | libc::ELOOP)) {
                    refusal(format!(
                        "'{}' leads out of the tree through a symbolic link: refused",
                        path.to_string_lossy()
                    ))
                } else {
                    e
                }
            }),
        }
    }

    /// Its metadata (of the link itself when it was asked for unfollowed).
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        match &self.place {
            Place::Beneath { fd, .. } => {
                // SAFETY: the descriptor stays open, owned by `fd`; the File
                // borrowing it is never dropped.
                let f = std::mem::ManuallyDrop::new(unsafe {
                    std::fs::File::from_raw_fd(fd.as_raw_fd())
                });
                f.metadata()
            }
            Place::At { .. } => std::fs::File::from(self.open(libc::O_PATH)?).metadata(),
        }
    }

    /// At most `cap` bytes of it, as [`read_file_bytes_capped`] reads them:
    /// anything but a regular file refused before opening and after.
    pub fn read_capped(&self, cap: u64) -> io::Result<Vec<u8>> {
        if let Some(why) = not_regular(&self.metadata()?) {
            return Err(refuse(why));
        }
        let fd = self.open(libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY)?;
        read_open_capped(std::fs::File::from(fd), cap)
    }

    /// The names in it (a directory), unsorted.
    pub fn read_dir(&self) -> io::Result<Vec<OsString>> {
        names_in(self.open(libc::O_RDONLY | libc::O_DIRECTORY)?)
    }

    /// Its target (a symbolic link asked for unfollowed).
    pub fn read_link(&self) -> io::Result<PathBuf> {
        match &self.place {
            Place::At { dir, name, .. } => link_at(dir.as_fd(), name),
            Place::Beneath { fd, .. } => link_at(fd.as_fd(), c""),
        }
    }

    /// Its real path, as components, where it was resolved by hand
    /// ([`Root::walk`]); None otherwise.
    pub fn real(&self) -> Option<&[OsString]> {
        match &self.place {
            Place::At { real, .. } => real.as_deref(),
            Place::Beneath { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_capped_by_bytes_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(4097).unwrap();
        let e = read_file_bytes_capped(&p, 4096).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "larger than 4096 bytes: not a sysfs/procfs file"
        );
        f.set_len(4096).unwrap();
        assert_eq!(read_file_bytes_capped(&p, 4096).unwrap().len(), 4096);
        // The default cap, as the message words it.
        f.set_len(MAX_FILE_BYTES + 1).unwrap();
        let e = read_file_bytes(&p).unwrap_err();
        assert_eq!(e.to_string(), "larger than 16 MiB: not a sysfs/procfs file");
    }

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    /// What a path replaced between the check and the open gives: the file
    /// opened is checked again, so a FIFO or a directory opened is refused
    /// (a FIFO opened with O_NONBLOCK and no writer would read as empty).
    #[test]
    fn the_opened_file_is_checked_again() {
        use std::os::unix::fs::OpenOptionsExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let e = read_open_capped(f, 16).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        let e = read_open_capped(std::fs::File::open(d.path()).unwrap(), 16).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
    }

    /// A path swapped between a regular file and a FIFO as fast as rename
    /// allows, read meanwhile: every read is the file's bytes or a refusal,
    /// never the empty read of a FIFO, never a hang.
    #[test]
    fn a_path_swapped_for_a_fifo_is_never_read_as_the_fifo() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let d = tempfile::tempdir().unwrap();
        let (reg, fifo, path) = (d.path().join("r"), d.path().join("f"), d.path().join("x"));
        std::fs::write(&reg, "42\n").unwrap();
        mkfifo(&fifo);
        std::fs::hard_link(&reg, &path).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, dir) = (stop.clone(), d.path().to_path_buf());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let (src, tmp) = if n.is_multiple_of(2) {
                        ("f", "tf")
                    } else {
                        ("r", "tr")
                    };
                    std::fs::hard_link(dir.join(src), dir.join(tmp)).unwrap();
                    std::fs::rename(dir.join(tmp), dir.join("x")).unwrap();
                    n += 1;
                }
                n
            })
        };
        let (mut read, mut refused) = (0, 0);
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_millis(500) || read == 0 || refused == 0 {
            assert!(
                t0.elapsed().as_secs() < 20,
                "{read} reads, {refused} refusals"
            );
            match read_file_bytes_capped(&path, 16) {
                Ok(b) => {
                    assert_eq!(b, b"42\n", "a read that is not the file's");
                    read += 1;
                }
                Err(e) => {
                    assert_eq!(e.to_string(), "not a regular file (a FIFO)");
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = swapper.join().unwrap();
        assert!(swaps > 2, "{swaps} swaps");
    }

    /// A tree with links of every kind, and a secret beside it.
    fn linked_tree() -> (tempfile::TempDir, PathBuf) {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        std::fs::write(root.join("a/b/file"), "inside").unwrap();
        std::fs::write(d.path().join("outside/secret"), "SECRET").unwrap();
        let a = root.join("a");
        for (name, target) in [
            ("up", ".."),
            ("top", "../.."),
            ("abs", "/etc"),
            ("outdir", d.path().join("outside").to_str().unwrap()),
            ("loop1", "loop2"),
            ("loop2", "loop1"),
            ("self", "self"),
            ("dang", "nowhere"),
            ("tofile", "b/file"),
            ("viaup", "up/a/b/file"),
            ("deep", "../a/../a/b"),
            ("climb", "../../outside/secret"),
            ("chain", "up/a/viaup"),
        ] {
            symlink(target, a.join(name)).unwrap();
        }
        (d, root)
    }

    const PROBES: &[&str] = &[
        "",
        "a",
        "a/b/file",
        "a/up/a/b/file",
        "a/top",
        "a/top/outside/secret",
        "a/abs",
        "a/abs/passwd",
        "a/outdir",
        "a/outdir/secret",
        "a/loop1",
        "a/self",
        "a/dang",
        "a/tofile",
        "a/viaup",
        "a/deep/file",
        "a/climb",
        "a/chain",
        "../outside/secret",
        "a/b/file/x",
        "a/b/../b/file",
        "a/nothing",
    ];

    /// What became of a path: a kind, or why not.
    fn outcome(r: io::Result<std::fs::Metadata>) -> String {
        match r {
            Ok(m) if m.file_type().is_symlink() => "link".into(),
            Ok(m) if m.is_dir() => "dir".into(),
            Ok(_) => "file".into(),
            Err(e) if is_refusal(&e) && e.to_string().contains("loop") => "loop".into(),
            Err(e) if is_refusal(&e) => "out".into(),
            Err(e) => match e.raw_os_error() {
                Some(libc::EXDEV) => "out".into(),
                Some(libc::ELOOP) => "loop".into(),
                Some(libc::ENOENT) => "missing".into(),
                Some(libc::ENOTDIR) => "notdir".into(),
                _ => format!("{e}"),
            },
        }
    }

    /// The walk by hand decides every path as the kernel's `openat2`
    /// (`RESOLVE_BENEATH`) does, the kernel's own answer and the walk's
    /// words agree under both ways of resolving, and nothing outside is read.
    #[test]
    fn the_walk_resolves_as_the_kernel_does() {
        let (_d, root) = linked_tree();
        let kernel = Root::open(&root).unwrap();
        let by_hand = Root {
            fd: open_path(&root, libc::O_PATH | libc::O_DIRECTORY).unwrap(),
            live: false,
            beneath: false,
        };
        if !kernel.beneath {
            note_the_kernel_check_is_skipped(&kernel);
        }
        for follow in [true, false] {
            for p in PROBES {
                check_probe(&kernel, &by_hand, p, follow);
            }
        }
        let hand = |p: &str| outcome(by_hand.at(Path::new(p), true).and_then(|e| e.metadata()));
        assert_eq!(hand("a/viaup"), "file");
        assert_eq!(hand("a/chain"), "file");
        assert_eq!(hand("a/climb"), "out");
        assert_eq!(hand("a/outdir/secret"), "out");
        assert_eq!(hand("a/loop1"), "loop");
        let e = by_hand.at(Path::new("a/chain"), true).unwrap();
        let real: Vec<_> = e
            .real()
            .unwrap()
            .iter()
            .map(|c| c.to_str().unwrap())
            .collect();
        assert_eq!(real, ["a", "b", "file"]);
        let words = by_hand
            .at(Path::new("a/top/outside/secret"), true)
            .unwrap_err();
        assert_eq!(
            words.to_string(),
            "symbolic link '/a/top' -> '../..' leads out of the tree: refused"
        );
        let words = by_hand
            .at(Path::new("../outside/secret"), true)
            .unwrap_err();
        assert_eq!(
            words.to_string(),
            "'../outside/secret' climbs above the tree's root: refused"
        );
    }

    /// Without openat2 (old kernel, emulator, seccomp) only the walk is
    /// checked: allowed outside CI, or under a declared emulator that lacks
    /// the call; the skip is said on stderr.
    fn note_the_kernel_check_is_skipped(kernel: &Root) {
        let errno = open_beneath(kernel.fd.as_fd(), c".", libc::O_PATH)
            .err()
            .and_then(|e| e.raw_os_error());
        let emulated = std::env::var_os("CPUSCOPE_TEST_EMULATOR").is_some_and(|v| !v.is_empty());
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        let why = format!(
            "the_walk_resolves_as_the_kernel_does: openat2 answers errno {errno:?} here \
             (Linux < 5.6, qemu-user or a seccomp filter): only the walk is checked"
        );
        // Under a declared emulator that lacks the call, as tests/common/emulator.rs skips.
        assert!(!ci || (emulated && errno == Some(libc::ENOSYS)), "{why}");
        // Past the harness's capture, as tests/common/skip.rs writes.
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), format!("SKIP: {why}\n").as_bytes());
    }

    /// Probe `p`: the walk by hand and the kernel agree (when it has openat2),
    /// and what the walk opens inside reads as inside.
    fn check_probe(kernel: &Root, by_hand: &Root, p: &str, follow: bool) {
        let rel = Path::new(p);
        let hand = by_hand.at(rel, follow);
        let mine = outcome(hand.as_ref().map_err(clone_err).and_then(|e| e.metadata()));
        if kernel.beneath {
            let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
            let k = open_beneath(
                kernel.fd.as_fd(),
                &beneath_path(rel).unwrap(),
                libc::O_PATH | nofollow,
            )
            .and_then(|fd| std::fs::File::from(fd).metadata());
            assert_eq!(mine, outcome(k), "{p} (follow {follow})");
            let via = kernel.at(rel, follow);
            assert_eq!(
                via.as_ref().err().map(|e| e.to_string()),
                hand.as_ref().err().map(|e| e.to_string()),
                "{p} (follow {follow})"
            );
        }
        if let Ok(e) = &hand {
            if let Ok(b) = e.read_capped(64) {
                assert_eq!(b, b"inside", "{p}");
            }
        }
    }

    fn clone_err(e: &io::Error) -> io::Error {
        if is_refusal(e) {
            refusal(e.to_string())
        } else {
            e.raw_os_error().map_or_else(
                || io::Error::new(e.kind(), e.to_string()),
                io::Error::from_raw_os_error,
            )
        }
    }

    /// Listing leaves `.` and `..` out; the live root reads `/proc` and its
    /// links as the kernel resolves them.
    #[test]
    fn names_in_a_directory_are_listed_and_dots_left_out() {
        let (_d, root) = linked_tree();
        let r = Root::open(&root).unwrap();
        let mut n = r.at(Path::new("a/b"), true).unwrap().read_dir().unwrap();
        n.sort();
        assert_eq!(n, [OsString::from("file")]);
        let live = Root::open(Path::new("/")).unwrap();
        assert!(live.is_live());
        let e = live.at(Path::new("/proc/self/status"), true).unwrap();
        assert!(String::from_utf8(e.read_capped(1 << 20).unwrap())
            .unwrap()
            .contains("Pid:"));
        let l = live.at(Path::new("/proc/self"), false).unwrap();
        assert!(l.metadata().unwrap().file_type().is_symlink());
        assert!(l.read_link().is_ok());
    }
}
