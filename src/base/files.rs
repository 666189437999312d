//! Reading one file from outside safely (sysfs, procfs, a recorded copy, a
//! user's score file): only regular files (a FIFO, socket or device is
//! refused before opening, and again on the open file, opened with
//! `O_NONBLOCK`), at most a cap of bytes, text read lossily. The leaf under
//! `sysroot` and `archive`.

use std::io::{self, Read as _};
use std::path::Path;

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
pub fn read_file_bytes_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
    if let Some(why) = not_regular(&std::fs::metadata(path)?) {
        return Err(refuse(why));
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    // The path may have been replaced between the check and the open.
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
}
