//! Gzip'd tar archives of a recorded machine: what `cpuscope record` writes
//! ([`Writer`], with caps on entries and bytes) and what `--sysroot
//! FILE.tar.gz` reads ([`extract`]: into a private temporary directory,
//! mode 0700, removed when the last user is gone).
//!
//! Extraction refuses, with one line, anything that could put a file outside
//! that directory or is not what a recorded tree holds: an entry with an
//! absolute path or a `..` component, an entry under a symbolic link, a
//! hard link, a device or FIFO, the same path twice, a symbolic link whose
//! target is absolute or leads out of the tree (followed as the kernel
//! would, through the other links of the tree), more than the caps. The
//! caps count headers as well as content: a GNU long name or link target
//! holds at most [`MAX_NAME_BYTES`], a PAX header [`MAX_PAX_BYTES`], all of
//! them together [`MAX_HEADER_BYTES`], each checked from the header's size
//! before anything of it is read. Files are created with
//! `O_EXCL|O_NOFOLLOW` and directories one at a time, so nothing is ever
//! written through a link.

use anyhow::{anyhow, bail, Result};
use std::ffi::OsString;
use std::io::{self, Read as _, Seek as _};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The most entries (files, directories, links) an archive may hold.
pub const MAX_ENTRIES: usize = 200_000;
/// The most bytes of file content an archive may hold (before compression).
pub const MAX_BYTES: u64 = 256 << 20;
/// The most bytes one file may hold: what cpuscope reads of a sysfs/procfs file.
pub const MAX_FILE_BYTES: u64 = super::files::MAX_FILE_BYTES;
/// The most bytes a GNU long name or long link target may hold (PATH_MAX).
pub const MAX_NAME_BYTES: u64 = 4096;
/// The most bytes one PAX extended (or global) header may hold.
pub const MAX_PAX_BYTES: u64 = 1 << 20;
/// The most bytes of long names and extended headers an archive may hold in all.
pub const MAX_HEADER_BYTES: u64 = 64 << 20;
/// Links followed in one path before it counts as a loop (Linux's MAXSYMLINKS).
const MAX_HOPS: u32 = 40;

/// Why the writer took no more.
#[derive(Debug)]
pub enum Refused {
    /// A cap was reached (the words say which).
    Full(String),
    /// The archive could not take the entry (a path tar cannot hold).
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Full(s) => f.write_str(s),
            Refused::Io(e) => write!(f, "{}", super::output::io_text(e)),
        }
    }
}

/// A gzip'd tar archive built in memory: directories, files (content as
/// read, so the length in the header is the length read) and symbolic links.
pub struct Writer {
    tar: tar::Builder<flate2::write::GzEncoder<Vec<u8>>>,
    entries: usize,
    bytes: u64,
    /// Bytes of GNU long names and link targets written (what [`extract`] caps).
    header_bytes: u64,
    max_entries: usize,
    max_bytes: u64,
    mtime: u64,
}

impl Default for Writer {
    fn default() -> Self {
        Self::with_caps(MAX_ENTRIES, MAX_BYTES)
    }
}

impl Writer {
    /// A writer that refuses more than `max_entries` entries or
    /// `max_bytes` bytes of content ([`Refused::Full`]).
    pub fn with_caps(max_entries: usize, max_bytes: u64) -> Self {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mtime = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Writer {
            tar: tar::Builder::new(gz),
            entries: 0,
            bytes: 0,
            header_bytes: 0,
            max_entries,
            max_bytes,
            mtime,
        }
    }

    /// Entries written so far.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Bytes of file content written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    fn header(&self, kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(size);
        h.set_mtime(self.mtime);
        h.set_uid(0);
        h.set_gid(0);
        h
    }

    /// The bytes of long-name entries the builder writes for `path` (and a
    /// link's `target`): a GNU header holds 100 bytes of name. A name
    /// [`extract`] would refuse (longer than PATH_MAX) is refused here.
    fn long_names(path: &Path, target: Option<&Path>) -> Result<u64, Refused> {
        let mut n = 0;
        for p in std::iter::once(path).chain(target) {
            let len = p.as_os_str().len() as u64;
            if len + 1 > MAX_NAME_BYTES {
                return Err(Refused::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("a name of {len} bytes, longer than PATH_MAX ({MAX_NAME_BYTES})"),
                )));
            }
            if len > 100 {
                n += len + 1;
            }
        }
        Ok(n)
    }

    fn room(&self, bytes: u64, names: u64) -> Result<(), Refused> {
        if self.header_bytes + names > MAX_HEADER_BYTES {
            return Err(Refused::Full(format!(
                "the cap of {} MiB of long names was reached",
                MAX_HEADER_BYTES >> 20
            )));
        }
        if self.entries >= self.max_entries {
            return Err(Refused::Full(format!(
                "the cap of {} entries was reached",
                self.max_entries
            )));
        }
        if self.bytes.saturating_add(bytes) > self.max_bytes {
            let cap = if self.max_bytes >= 1 << 20 {
                format!("{} MiB", self.max_bytes >> 20)
            } else {
                format!("{} bytes", self.max_bytes)
            };
            return Err(Refused::Full(format!(
                "the cap of {cap} of file content was reached"
            )));
        }
        Ok(())
    }

    /// A directory at `path` (relative).
    pub fn dir(&mut self, path: &Path) -> Result<(), Refused> {
        let names = Self::long_names(path, None)?;
        self.room(0, names)?;
        let mut h = self.header(tar::EntryType::Directory, 0o755, 0);
        self.tar
            .append_data(&mut h, path, io::empty())
            .map_err(Refused::Io)?;
        self.entries += 1;
        self.header_bytes += names;
        Ok(())
    }

    /// A regular file at `path` (relative) holding `data`.
    pub fn file(&mut self, path: &Path, data: &[u8]) -> Result<(), Refused> {
        let names = Self::long_names(path, None)?;
        self.room(data.len() as u64, names)?;
        let mut h = self.header(tar::EntryType::Regular, 0o644, data.len() as u64);
        self.tar
            .append_data(&mut h, path, data)
            .map_err(Refused::Io)?;
        self.entries += 1;
        self.header_bytes += names;
        self.bytes += data.len() as u64;
        Ok(())
    }

    /// A symbolic link at `path` (relative) to `target` (relative to the link's directory).
    pub fn link(&mut self, path: &Path, target: &Path) -> Result<(), Refused> {
        let names = Self::long_names(path, Some(target))?;
        self.room(0, names)?;
        let mut h = self.header(tar::EntryType::Symlink, 0o777, 0);
        self.tar
            .append_link(&mut h, path, target)
            .map_err(Refused::Io)?;
        self.entries += 1;
        self.header_bytes += names;
        Ok(())
    }

    /// Write `last` (the manifest: not counted against the caps) as the
    /// final file and give the compressed archive.
    pub fn finish(mut self, name: &Path, last: &[u8]) -> io::Result<Vec<u8>> {
        let mut h = self.header(tar::EntryType::Regular, 0o644, last.len() as u64);
        self.tar.append_data(&mut h, name, last)?;
        self.tar.into_inner()?.finish()
    }
}

/// How a symbolic link resolves under a root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// To these components under the root (which may not exist).
    Inside(Vec<OsString>),
    /// Out of the root (an absolute target under a root that is not `/`,
    /// or more `..` than the root is deep).
    Outside,
    /// Through more than 40 links.
    Loop,
}

/// `root` joined with `comps`.
pub fn join(root: &Path, comps: &[OsString]) -> PathBuf {
    let mut p = root.to_path_buf();
    p.extend(comps);
    p
}

/// Follow the symbolic link at `link` (components under `root`) as the
/// kernel would: `..` from the link's real directory, through any further
/// links met (each reported to `met` with its own target once it resolves
/// inside, innermost first, then this one), a missing component taken as
/// it is. An absolute target counts from `root` when `root` is `/`, and
/// leaves it otherwise. `hops` counts the links followed so far.
pub fn follow_link(
    root: &Path,
    link: &[OsString],
    hops: &mut u32,
    met: &mut dyn FnMut(&[OsString], &Path),
) -> io::Result<Resolved> {
    let fs_root = root == Path::new("/");
    let target = std::fs::read_link(join(root, link))?;
    let mut cur: Vec<OsString> = link[..link.len().saturating_sub(1)].to_vec();
    for c in target.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {
                if !fs_root {
                    return Ok(Resolved::Outside);
                }
                cur.clear();
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if cur.pop().is_none() && !fs_root {
                    return Ok(Resolved::Outside);
                }
            }
            Component::Normal(n) => {
                cur.push(n.to_os_string());
                let is_link = std::fs::symlink_metadata(join(root, &cur))
                    .is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    *hops += 1;
                    if *hops > MAX_HOPS {
                        return Ok(Resolved::Loop);
                    }
                    match follow_link(root, &cur, hops, met)? {
                        Resolved::Inside(real) => cur = real,
                        other => return Ok(other),
                    }
                }
            }
        }
    }
    met(link, &target);
    Ok(Resolved::Inside(cur))
}

/// A private directory (mode 0700) in the temporary directory, removed with
/// everything in it when dropped.
#[derive(Debug)]
pub struct TempTree {
    path: PathBuf,
}

impl TempTree {
    /// A new directory `PREFIX<16 random hex digits>` in `$TMPDIR`, else
    /// `/tmp` (`tempdir::first_usable`: the error names each place tried
    /// and why it failed).
    pub fn new(prefix: &str) -> io::Result<TempTree> {
        super::tempdir::first_usable(false, |base| {
            TempTree::new_in(base, prefix).map_err(|e| super::output::io_text(&e))
        })
        .map_err(io::Error::other)
    }

    /// A new directory `PREFIX<16 random hex digits>` in `base`, mode 0700.
    fn new_in(base: &Path, prefix: &str) -> io::Result<TempTree> {
        let mut last = None;
        for _ in 0..8 {
            let path = base.join(format!("{prefix}{}", random_hex()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    // The umask may only have taken bits away; set them exactly.
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
                    return Ok(TempTree { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// 16 hex digits nobody can guess (the careful writer's temporary names).
fn random_hex() -> String {
    super::output::random_suffix()
}

/// Whether the regular file at `path` starts like gzip (bytes 1f 8b).
pub fn looks_gzip(path: &Path) -> bool {
    let mut b = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok()
        && b == [0x1f, 0x8b]
}

/// An entry's path as components, refusing absolute paths and `..`.
fn safe_relative(p: &Path) -> Result<Vec<OsString>, &'static str> {
    let mut out = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n.to_os_string()),
            Component::CurDir => {}
            Component::ParentDir => return Err("has a '..' component"),
            Component::RootDir | Component::Prefix(_) => return Err("has an absolute path"),
        }
    }
    Ok(out)
}

fn shown(comps: &[OsString]) -> String {
    comps
        .iter()
        .map(|c| c.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Create the directories above `rel` under `root`, one at a time; each
/// one that exists must be a real directory (never a link).
fn make_parents(root: &Path, rel: &[OsString]) -> Result<(), String> {
    let mut cur = root.to_path_buf();
    for (i, c) in rel[..rel.len().saturating_sub(1)].iter().enumerate() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "entry '{}' lies under '{}', which is not a directory in the archive: refused",
                    shown(rel),
                    shown(&rel[..=i])
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&cur)
                .map_err(|e| write_error(root, &e))?,
            Err(e) => return Err(write_error(root, &e)),
        }
    }
    Ok(())
}

fn write_error(root: &Path, e: &io::Error) -> String {
    format!(
        "cannot unpack into '{}': {}",
        root.display(),
        super::output::io_text(e)
    )
}

fn kind_words(t: tar::EntryType) -> &'static str {
    match t {
        tar::EntryType::Link => "a hard link",
        tar::EntryType::Char => "a character device",
        tar::EntryType::Block => "a block device",
        tar::EntryType::Fifo => "a FIFO",
        tar::EntryType::GNUSparse => "a sparse file",
        _ => "an entry of an unknown kind",
    }
}

/// Unpack the gzip'd tar archive at `archive` into a new [`TempTree`]
/// (see the module's rules). Errors are one line naming the archive.
pub fn extract(archive: &Path) -> Result<TempTree> {
    let name = archive.display().to_string();
    let fail = |why: String| anyhow!("sysroot archive '{name}': {why}");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(archive)
        .map_err(|e| fail(super::output::io_text(&e)))?;
    if let Some(why) = f
        .metadata()
        .ok()
        .as_ref()
        .and_then(super::files::not_regular)
    {
        return Err(fail(why.to_string()));
    }
    let mut magic = [0u8; 2];
    if f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        bail!(
            "sysroot '{name}' is a file but not a gzip'd tar archive (`cpuscope record` writes one; \
             or give the directory of an unpacked tree)"
        );
    }
    f.rewind().map_err(|e| fail(super::output::io_text(&e)))?;
    let tree = TempTree::new("cpuscope-sysroot-").map_err(|e| {
        fail(format!(
            "cannot make a temporary directory: {}",
            super::output::io_text(&e)
        ))
    })?;
    unpack(f, tree.path()).map_err(fail)?;
    check_links(tree.path()).map_err(fail)?;
    Ok(tree)
}

/// The extension headers an archive may carry before an entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ext {
    /// GNU `L`: the next entry's name.
    LongName,
    /// GNU `K`: the next entry's link target.
    LongLink,
    /// PAX `x`: records for the next entry.
    Pax,
    /// PAX `g`: records for every entry after it (read by no one here).
    GlobalPax,
}

impl Ext {
    fn of(kind: tar::EntryType) -> Option<Ext> {
        if kind.is_gnu_longname() {
            Some(Ext::LongName)
        } else if kind.is_gnu_longlink() {
            Some(Ext::LongLink)
        } else if kind.is_pax_local_extensions() {
            Some(Ext::Pax)
        } else if kind.is_pax_global_extensions() {
            Some(Ext::GlobalPax)
        } else {
            None
        }
    }

    fn words(self) -> &'static str {
        match self {
            Ext::LongName => "a GNU long name",
            Ext::LongLink => "a GNU long link target",
            Ext::Pax => "a PAX extended header",
            Ext::GlobalPax => "a PAX global header",
        }
    }

    /// The most bytes one such header may hold, and the cap in words.
    fn cap(self) -> (u64, String) {
        match self {
            Ext::LongName | Ext::LongLink => {
                (MAX_NAME_BYTES, format!("{MAX_NAME_BYTES} bytes (PATH_MAX)"))
            }
            Ext::Pax | Ext::GlobalPax => (MAX_PAX_BYTES, format!("{} MiB", MAX_PAX_BYTES >> 20)),
        }
    }
}

/// What the extension headers read so far say of the next entry.
#[derive(Default)]
struct Pending {
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    pax: bool,
    pax_path: Option<Vec<u8>>,
    pax_link: Option<Vec<u8>>,
    pax_size: Option<u64>,
}

impl Pending {
    fn any(&self) -> bool {
        self.long_name.is_some() || self.long_link.is_some() || self.pax
    }
}

/// What the archive has held so far, against the caps.
#[derive(Default)]
struct Tally {
    /// Headers read (each one, extensions included), for messages.
    headers: u64,
    /// Entries (and PAX global headers).
    entries: usize,
    /// Bytes of entry data (file content, and any data another kind declares).
    bytes: u64,
    /// Bytes of long names and extended headers.
    header_bytes: u64,
}

/// A header as named in a message: its number and its own name field.
fn header_label(n: u64, h: &tar::Header, ext: Ext) -> String {
    let name = String::from_utf8_lossy(&h.path_bytes()).into_owned();
    format!(
        "header #{n} ('{}', {})",
        super::fmt::quote_short(&name, 60),
        ext.words()
    )
}

/// Read one extension header into `p`, after checking its size against its
/// cap and the archive's total: nothing is read (or allocated) for a header
/// over a cap.
fn read_extension<R: io::Read>(
    e: &mut tar::Entry<R>,
    ext: Ext,
    tally: &mut Tally,
    p: &mut Pending,
) -> Result<(), String> {
    let label = header_label(tally.headers, e.header(), ext);
    let size = e.size();
    let (cap, cap_words) = ext.cap();
    if size > cap {
        return Err(format!(
            "{label} holds {size} bytes, more than {cap_words}: refused"
        ));
    }
    tally.header_bytes += size;
    if tally.header_bytes > MAX_HEADER_BYTES {
        return Err(format!(
            "{label}: more than {} MiB of long names and extended headers in all: refused",
            MAX_HEADER_BYTES >> 20
        ));
    }
    let twice = match ext {
        Ext::LongName => p.long_name.is_some(),
        Ext::LongLink => p.long_link.is_some(),
        Ext::Pax => p.pax,
        Ext::GlobalPax => false,
    };
    if twice {
        return Err(format!("{label}: a second one for the same entry: refused"));
    }
    if ext == Ext::GlobalPax {
        tally.entries += 1;
        return Ok(()); // Not read: the next header skips its data.
    }
    let mut data = Vec::with_capacity(size as usize);
    e.take(size)
        .read_to_end(&mut data)
        .map_err(|err| format!("{label}: {}", super::output::io_text(&err)))?;
    if data.len() as u64 != size {
        return Err(format!("{label} is cut short"));
    }
    match ext {
        Ext::LongName | Ext::LongLink => {
            // GNU tar ends the name with a NUL.
            while data.last() == Some(&0) {
                data.pop();
            }
            if ext == Ext::LongName {
                p.long_name = Some(data);
            } else {
                p.long_link = Some(data);
            }
        }
        _ => read_pax(&label, &data, p)?,
    }
    Ok(())
}

/// The records of a PAX extended header: `path` and `linkpath` are taken,
/// a `size` must agree with the entry's header (record never writes one:
/// it is for files of more than 8 GiB), sparse files are refused, the rest
/// (times, owners, attributes) is ignored.
fn read_pax(label: &str, data: &[u8], p: &mut Pending) -> Result<(), String> {
    p.pax = true;
    for rec in tar::PaxExtensions::new(data) {
        let rec = rec.map_err(|_| format!("{label} holds a malformed record: refused"))?;
        let key = rec.key_bytes();
        if key == b"path" {
            p.pax_path = Some(rec.value_bytes().to_vec());
        } else if key == b"linkpath" {
            p.pax_link = Some(rec.value_bytes().to_vec());
        } else if key == b"size" {
            let v = std::str::from_utf8(rec.value_bytes())
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| format!("{label} holds a size that is not a number: refused"))?;
            p.pax_size = Some(v);
        } else if key.starts_with(b"GNU.sparse.") {
            return Err(format!(
                "{label} describes a sparse file, and a recorded tree holds none: refused"
            ));
        }
    }
    Ok(())
}

fn unpack(f: std::fs::File, root: &Path) -> Result<(), String> {
    let bad = |e: io::Error| {
        format!(
            "not a readable tar.gz archive: {}",
            super::output::io_text(&e)
        )
    };
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(io::BufReader::new(f)));
    let mut tally = Tally::default();
    let mut pending = Pending::default();
    // Raw: the crate would read a long name or a PAX header whole, whatever
    // its size, before giving the entry; here each is checked first.
    for e in ar.entries().map_err(bad)?.raw(true) {
        let mut e = e.map_err(bad)?;
        tally.headers += 1;
        let kind = e.header().entry_type();
        if let Some(ext) = Ext::of(kind) {
            read_extension(&mut e, ext, &mut tally, &mut pending)?;
        } else {
            tally.entries += 1;
            let p = std::mem::take(&mut pending);
            unpack_entry(&mut e, kind, p, &mut tally, root)?;
        }
        if tally.entries > MAX_ENTRIES + 1 {
            return Err(format!(
                "more than {MAX_ENTRIES} entries: not an archive `cpuscope record` writes"
            ));
        }
    }
    if pending.any() {
        return Err(format!(
            "the archive ends after header #{}, which describes an entry that is not there",
            tally.headers
        ));
    }
    Ok(())
}

/// One entry (not an extension header), with what its extension headers said.
fn unpack_entry<R: io::Read>(
    e: &mut tar::Entry<R>,
    kind: tar::EntryType,
    p: Pending,
    tally: &mut Tally,
    root: &Path,
) -> Result<(), String> {
    let name: Vec<u8> = match p.pax_path.or(p.long_name) {
        Some(n) => n,
        None => e.header().path_bytes().into_owned(),
    };
    let size = e.size();
    let Some(rel) = entry_relative_path(&name, kind, size, p.pax_size)? else {
        return Ok(());
    };
    count_entry_bytes(&rel, kind, size, tally)?;
    make_parents(root, &rel)?;
    let dst = join(root, &rel);
    if kind.is_file() {
        write_entry_file(e, size, root, &rel, &dst)?;
    } else if kind.is_dir() {
        make_entry_dir(root, &rel, &dst)?;
    } else if kind.is_symlink() {
        let target = p
            .pax_link
            .or(p.long_link)
            .or_else(|| e.header().link_name_bytes().map(|c| c.into_owned()))
            .unwrap_or_default();
        make_link(root, &rel, &dst, &target)?;
    } else {
        return Err(format!(
            "entry '{}' is {}, and a recorded tree holds only files, directories and symbolic links: refused",
            shown(&rel),
            kind_words(kind)
        ));
    }
    Ok(())
}

/// The checked relative path of entry `name` (`size` bytes by its header,
/// `pax_size` by a PAX header); None for the root directory itself, which
/// is skipped.
fn entry_relative_path(
    name: &[u8],
    kind: tar::EntryType,
    size: u64,
    pax_size: Option<u64>,
) -> Result<Option<Vec<OsString>>, String> {
    use std::os::unix::ffi::OsStrExt;
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(name));
    if name.contains(&0) {
        return Err(format!(
            "entry '{}' has a NUL byte in its name: refused",
            path.display()
        ));
    }
    if let Some(s) = pax_size.filter(|&s| s != size) {
        return Err(format!(
            "entry '{}' has a PAX size ({s} bytes) that is not its header's ({size}): refused",
            path.display()
        ));
    }
    let rel =
        safe_relative(&path).map_err(|why| format!("entry '{}' {why}: refused", path.display()))?;
    if rel.is_empty() {
        if kind.is_dir() {
            return Ok(None);
        }
        return Err(format!(
            "entry '{}' has an empty path: refused",
            path.display()
        ));
    }
    Ok(Some(rel))
}

/// Count the entry's `size` bytes in `tally`, refusing a file larger than a
/// sysfs/procfs file or an archive larger than `cpuscope record` writes.
fn count_entry_bytes(
    rel: &[OsString],
    kind: tar::EntryType,
    size: u64,
    tally: &mut Tally,
) -> Result<(), String> {
    if kind.is_file() && size > MAX_FILE_BYTES {
        return Err(format!(
            "entry '{}' holds {size} bytes, more than a sysfs/procfs file ({} MiB): refused",
            shown(rel),
            MAX_FILE_BYTES >> 20
        ));
    }
    // Every kind's data counts: what is not read is still decompressed to skip it.
    tally.bytes += size;
    if tally.bytes > MAX_BYTES + MAX_FILE_BYTES {
        return Err(format!(
            "more than {} MiB of files: not an archive `cpuscope record` writes",
            MAX_BYTES >> 20
        ));
    }
    Ok(())
}

/// Write the `size` bytes of a file entry to a new file `dst` (never over
/// an existing one, never through a link).
fn write_entry_file<R: io::Read>(
    e: &mut tar::Entry<R>,
    size: u64,
    root: &Path,
    rel: &[OsString],
    dst: &Path,
) -> Result<(), String> {
    let bad = |e: io::Error| {
        format!(
            "not a readable tar.gz archive: {}",
            super::output::io_text(&e)
        )
    };
    let mut data = Vec::with_capacity(size as usize);
    e.take(size).read_to_end(&mut data).map_err(bad)?;
    if data.len() as u64 != size {
        return Err(format!("entry '{}' is cut short", shown(rel)));
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dst)
        .map_err(|err| {
            if err.kind() == io::ErrorKind::AlreadyExists {
                appears_twice(rel)
            } else {
                write_error(root, &err)
            }
        })?;
    io::Write::write_all(&mut out, &data).map_err(|err| write_error(root, &err))?;
    Ok(())
}

/// The directory of a directory entry at `dst`, unless it is already there
/// (a file there is an entry that appears twice).
fn make_entry_dir(root: &Path, rel: &[OsString], dst: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dst) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(appears_twice(rel)),
        Err(_) => std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dst)
            .map_err(|err| write_error(root, &err))?,
    }
    Ok(())
}

/// The refusal of an entry that appears twice.
fn appears_twice(rel: &[OsString]) -> String {
    format!("entry '{}' appears twice: refused", shown(rel))
}

/// The symbolic link `rel` (at `dst`) to `target`: not empty, not absolute
/// (where it leads is checked once the whole tree is out: [`check_links`]).
fn make_link(root: &Path, rel: &[OsString], dst: &Path, target: &[u8]) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let target = Path::new(std::ffi::OsStr::from_bytes(target));
    if target.as_os_str().is_empty() {
        return Err(format!(
            "symbolic link '{}' has no target: refused",
            shown(rel)
        ));
    }
    if target.as_os_str().as_bytes().contains(&0) {
        return Err(format!(
            "symbolic link '{}' has a NUL byte in its target: refused",
            shown(rel)
        ));
    }
    if target.is_absolute() {
        return Err(format!(
            "symbolic link '{}' points to an absolute path '{}': refused",
            shown(rel),
            target.display()
        ));
    }
    std::os::unix::fs::symlink(target, dst).map_err(|err| {
        if err.kind() == io::ErrorKind::AlreadyExists {
            format!("entry '{}' appears twice: refused", shown(rel))
        } else {
            write_error(root, &err)
        }
    })
}

/// Every symbolic link of the unpacked tree must resolve inside it.
fn check_links(root: &Path) -> Result<(), String> {
    let mut stack: Vec<Vec<OsString>> = vec![Vec::new()];
    while let Some(dir) = stack.pop() {
        let rd = std::fs::read_dir(join(root, &dir)).map_err(|e| write_error(root, &e))?;
        for ent in rd {
            let ent = ent.map_err(|e| write_error(root, &e))?;
            let mut c = dir.clone();
            c.push(ent.file_name());
            let ft = ent.file_type().map_err(|e| write_error(root, &e))?;
            if ft.is_dir() {
                stack.push(c);
            } else if ft.is_symlink() {
                let mut hops = 0;
                let r = follow_link(root, &c, &mut hops, &mut |_, _| {})
                    .map_err(|e| write_error(root, &e))?;
                let target = std::fs::read_link(join(root, &c)).unwrap_or_default();
                match r {
                    Resolved::Inside(_) => {}
                    Resolved::Outside => {
                        return Err(format!(
                            "symbolic link '{}' -> '{}' leads out of the archive's tree: refused",
                            shown(&c),
                            target.display()
                        ))
                    }
                    Resolved::Loop => {
                        return Err(format!(
                            "symbolic link '{}' -> '{}' is a loop of links: refused",
                            shown(&c),
                            target.display()
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
