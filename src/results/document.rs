//! Run documents on disk (what `export` writes and `import` and `compare`
//! read) and the choice of runs by an argument: a stored run's id, prefix or
//! `latest`, or a document's path; stored runs picked by host, CPU and tag
//! (and, for `fleet`, by start time: the latest run of each host).

use super::open::open_store_read;
use super::schema::{parse_run, validate_run, Run, RunStatus};
use super::store::{RunSummary, Store};
use anyhow::{anyhow, bail, Context as _, Result};
use chrono::{DateTime, NaiveDate, Utc};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// The exported form of a run: pretty JSON and a final newline. Export
/// writes exactly the documents import takes: a run that import would
/// refuse (one still being written, one whose stored fields fail the
/// document's checks) is an error here, with import's reason, and the text
/// is read back as import reads it before it is given out.
pub fn export_text(run: &Run) -> Result<String> {
    if run.status == RunStatus::Running {
        bail!(
            "run {} is still running; export it once it has finished (import takes only finished runs)",
            run.id
        );
    }
    validate_run(run).context("import would refuse it")?;
    let mut s = serde_json::to_string_pretty(run).context("cannot serialise the run")?;
    s.push('\n');
    check_document(&s).context("import would refuse it")?;
    Ok(s)
}

/// The largest run document `import` (and `compare`) reads unless told
/// otherwise (`import --max-size`): the exported runs measured here hold
/// 0.2 to 0.5 MB, so this is more than a hundred times the largest.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// Bytes of the size cap per JSON value (`[`, `{`, `,`, `:`) a document may
/// hold: a value costs serde_json 32 bytes or more (an object's member more
/// than twice that), so `[0,0,…]` would take 16 times its size; with one
/// value per 32 bytes of the cap, memory stays within a few times the cap.
/// Exported documents hold one per 14 to 24 bytes.
const BYTES_PER_VALUE: u64 = 32;

/// How long a FIFO or standard input may send nothing (no writer yet
/// included) before the read gives up.
const STREAM_STALL: Duration = Duration::from_secs(60);

/// What import checks of a run document's text: the document itself
/// (`parse_run`), that the run has finished, that no string in it holds a
/// NUL (PostgreSQL stores none, so no store takes one), and that its tags
/// and host name keep the rules `run` applies to them.
fn check_document(text: &str) -> Result<Run> {
    let run = parse_run(text)?;
    if run.status == RunStatus::Running {
        bail!(
            "run {} is still running; export it again once it has finished",
            run.id
        );
    }
    if text.contains("\\u0000") {
        if let Some(field) = nul_field(&serde_json::to_value(&run)?, "") {
            bail!(
                "run {}: {field} holds a NUL character, which no store takes (PostgreSQL refuses it): remove it",
                run.id
            );
        }
    }
    if let (_, Some(e)) = crate::base::fmt::screen_tags(run.tags.clone()) {
        bail!("run {}: a tag that `run` refuses: {e}", run.id);
    }
    if let Err(e) = crate::base::fmt::check_host(&run.host) {
        bail!("run {}: a host that `run` refuses: {e}", run.id);
    }
    Ok(run)
}

/// The first field (a JSON path: `host`, `tags[1]`, `machine.identity`)
/// whose text or key holds a NUL.
fn nul_field(v: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    match v {
        Value::String(s) if s.contains('\0') => Some(if at.is_empty() {
            "the document".into()
        } else {
            at.to_string()
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| nul_field(x, &format!("{at}[{i}]"))),
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            let shown = crate::base::fmt::for_terminal(k);
            let here = if at.is_empty() {
                shown.into_owned()
            } else {
                format!("{at}.{shown}")
            };
            if k.contains('\0') {
                Some(format!("the key {here}"))
            } else {
                nul_field(x, &here)
            }
        }),
        _ => None,
    }
}

/// Read and check one run document, at most [`MAX_DOCUMENT_BYTES`] of it;
/// errors name the file.
pub fn read_run_file(path: &Path) -> Result<Run> {
    read_run_file_capped(path, MAX_DOCUMENT_BYTES)
}

/// Read and check one run document of at most `max` bytes: a regular file,
/// a FIFO (waited for with a timeout, and Ctrl-C) or standard input (`-`);
/// a directory, a device or a socket is refused before it is opened. More
/// than `max` bytes, or more JSON values than [`BYTES_PER_VALUE`] allows,
/// is refused as it is read, never held. Errors are one line naming the file.
pub fn read_run_file_capped(path: &Path, max: u64) -> Result<Run> {
    let shown = crate::base::fmt::for_terminal(&path.to_string_lossy()).into_owned();
    let bytes = read_capped(path, max).map_err(|e| anyhow!("'{shown}': {e}"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow!("'{shown}': not a run document (not UTF-8 text)"))?;
    check_values(&text, max).map_err(|e| anyhow!("'{shown}': {e}"))?;
    check_document(&text).map_err(|e| anyhow!("'{shown}': {e:#}"))
}

/// A size in words: `64 MiB`, or bytes.
fn size_words(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Refuse a document with more JSON values than its cap allows (see
/// [`BYTES_PER_VALUE`]), before it is parsed.
fn check_values(text: &str, max: u64) -> Result<(), String> {
    let limit = (max / BYTES_PER_VALUE).max(1024);
    let (mut n, mut in_str, mut esc) = (0u64, false, false);
    for &b in text.as_bytes() {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        } else if matches!(b, b'[' | b'{' | b',' | b':') {
            n += 1;
            if n > limit {
                return Err(format!(
                    "holds more than {limit} JSON values (one per {BYTES_PER_VALUE} bytes of the cap of {}, \
                     which bounds the memory it takes): if it is a run document, give a larger --max-size",
                    size_words(max)
                ));
            }
        }
    }
    Ok(())
}

/// What a document is read from, opened: a regular file, or a stream (a
/// FIFO, a pipe, a terminal) waited on with `poll`.
struct Source {
    file: std::mem::ManuallyDrop<std::fs::File>,
    /// Whether `file` is ours to close (not standard input).
    owned: bool,
    stream: bool,
}

impl Drop for Source {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: dropped once, here; standard input is never closed.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.file) };
        }
    }
}

/// Why a file of this type is no run document (None: read it). A
/// terminal on standard input is read (typed, then Ctrl-D).
fn refused_type(ft: std::fs::FileType, tty: bool) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        Some("is a directory, not a run document")
    } else if ft.is_char_device() && !tty {
        Some("is a character device, not a run document (give a file, a FIFO or `-`)")
    } else if ft.is_block_device() {
        Some("is a block device, not a run document (give a file, a FIFO or `-`)")
    } else if ft.is_socket() {
        Some("is a socket, not a run document (give a file, a FIFO or `-`)")
    } else {
        None
    }
}

fn open_source(path: &Path, max: u64) -> Result<Source, String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::FromRawFd;
    let io = |e: std::io::Error| crate::base::output::io_text(&e);
    if path.as_os_str() == "-" {
        // SAFETY: fd 0 stays open for the process; ManuallyDrop never closes it.
        let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(0) });
        let md = file
            .metadata()
            .map_err(|e| format!("cannot read standard input: {}", io(e)))?;
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(0) } == 1;
        if let Some(why) = refused_type(md.file_type(), tty) {
            return Err(format!("standard input {why}"));
        }
        if md.is_file() && md.len() > max {
            return Err(too_big(Some(md.len()), max));
        }
        return Ok(Source {
            file,
            owned: false,
            stream: !md.is_file(),
        });
    }
    // Refused before opening: opening a device may do something.
    let md = std::fs::metadata(path).map_err(|e| format!("cannot read: {}", io(e)))?;
    if let Some(why) = refused_type(md.file_type(), false) {
        return Err(why.into());
    }
    if md.is_file() && md.len() > max {
        return Err(too_big(Some(md.len()), max));
    }
    // O_NONBLOCK: a FIFO opens at once, writer or not.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("cannot read: {}", io(e)))?;
    let md = file
        .metadata()
        .map_err(|e| format!("cannot read: {}", io(e)))?;
    if let Some(why) = refused_type(md.file_type(), false) {
        return Err(why.into());
    }
    Ok(Source {
        file: std::mem::ManuallyDrop::new(file),
        owned: true,
        stream: md.file_type().is_fifo(),
    })
}

fn too_big(len: Option<u64>, max: u64) -> String {
    let holds = match len {
        Some(n) => format!("holds {n} bytes, more"),
        None => "holds more".into(),
    };
    format!(
        "{holds} than {}, the cap on a run document (import --max-size BYTES raises it)",
        size_words(max)
    )
}

/// The bytes of the document at `path` (see [`read_run_file_capped`]):
/// read through the cap, a stream polled so that Ctrl-C and the stall
/// timeout are heard.
fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::ErrorKind;
    use std::os::unix::io::AsRawFd;
    let src = open_source(path, max)?;
    let mut f: &std::fs::File = &src.file;
    let fd = f.as_raw_fd();
    let what = if path.as_os_str() == "-" {
        "standard input"
    } else {
        "the FIFO"
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut last = Instant::now();
    loop {
        if crate::base::stop::requested() {
            return Err("interrupted while reading it; nothing imported".into());
        }
        if src.stream {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut p, 1, 100) };
            if ready <= 0 {
                if last.elapsed() > STREAM_STALL {
                    return Err(format!(
                        "{what} sent nothing for {} s (no writer, or one that stopped): gave up",
                        STREAM_STALL.as_secs()
                    ));
                }
                continue;
            }
        }
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                continue
            }
            Err(e) => return Err(format!("cannot read: {}", crate::base::output::io_text(&e))),
        };
        last = Instant::now();
        if out.len() as u64 + n as u64 > max {
            return Err(too_big(None, max));
        }
        out.extend_from_slice(&buf[..n]);
    }
    Ok(out)
}

/// An argument that names a run document rather than a stored run.
fn is_file_arg(s: &str) -> bool {
    s == "-" || s.ends_with(".json") || s.contains('/')
}

/// Runs picked by --host/--cpu/--tag: each kind must match (AND), any value
/// of one kind may (OR). Running runs are left out.
pub fn select_runs(
    all: &[RunSummary],
    hosts: &[String],
    cpus: &[String],
    tags: &[String],
    every: bool,
) -> Vec<RunSummary> {
    let picked: Vec<&RunSummary> = all
        .iter()
        .filter(|s| s.status != RunStatus::Running)
        .filter(|s| hosts.is_empty() || hosts.iter().any(|h| h == &s.host))
        .filter(|s| {
            cpus.is_empty()
                || s.cpu_model.as_deref().is_some_and(|m| {
                    let m = m.to_lowercase();
                    cpus.iter().any(|c| m.contains(&c.to_lowercase()))
                })
        })
        .filter(|s| tags.is_empty() || tags.iter().any(|t| s.tags.contains(t)))
        .collect();
    // Order: by the position of the first asked-for host, then tag, that the
    // run matches (so `--tag before --tag after` puts `before` first, as
    // the baseline); then as listed (oldest first).
    let rank = |s: &RunSummary| {
        (
            hosts.iter().position(|h| h == &s.host).unwrap_or(0),
            tags.iter().position(|t| s.tags.contains(t)).unwrap_or(0),
        )
    };
    let mut picked = picked;
    picked.sort_by_key(|s| rank(s));
    if every {
        return picked.into_iter().cloned().collect();
    }
    // The latest run of each host and asked-for tag set (`all` is oldest
    // first), in order of first appearance: `--tag before --tag after` keeps
    // one run of each tag per host.
    let group = |s: &RunSummary| {
        let t: Vec<&String> = tags.iter().filter(|t| s.tags.contains(t)).collect();
        (s.host.clone(), format!("{t:?}"))
    };
    let mut out: Vec<RunSummary> = Vec::new();
    for s in picked {
        match out.iter_mut().find(|o| group(o) == group(s)) {
            Some(o) => *o = s.clone(),
            None => out.push(s.clone()),
        }
    }
    out
}

/// A `--since` value: an RFC 3339 time (`2026-11-22T01:00:00Z`), a date
/// (`2026-11-22`, midnight UTC), or an age before `now`: a number and
/// `m` (minutes), `h`, `d` or `w` (`90m`, `12h`, `7d`, `2w`).
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    let t = s.trim();
    let bad = || {
        anyhow!(
            "--since '{}': give an RFC 3339 time, a date (YYYY-MM-DD) or an age such as 12h, 7d, 2w",
            s.escape_debug()
        )
    };
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(d.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|x| x.and_utc()).ok_or_else(bad);
    }
    let unit = t.chars().last().ok_or_else(bad)?;
    let secs_per = match unit {
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return Err(bad()),
    };
    let n: i64 = t[..t.len() - 1].parse().map_err(|_| bad())?;
    let secs = n
        .checked_mul(secs_per)
        .filter(|x| (0..=100 * 365 * 86_400).contains(x))
        .ok_or_else(bad)?;
    Ok(now - chrono::Duration::seconds(secs))
}

/// The runs a fleet view reads: those `select_runs` picks by host, CPU and
/// tag (every one, not only the latest), started at or after `since`, then
/// the latest of each host (by start time), in host order. Also returns how
/// many matching runs were left out as older runs of the same hosts.
pub fn latest_per_host(
    all: &[RunSummary],
    hosts: &[String],
    cpus: &[String],
    tags: &[String],
    since: Option<DateTime<Utc>>,
) -> (Vec<RunSummary>, usize) {
    let started = |s: &RunSummary| {
        DateTime::parse_from_rfc3339(&s.started_at)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    };
    let matching: Vec<RunSummary> = select_runs(all, hosts, cpus, tags, true)
        .into_iter()
        .filter(|s| match since {
            None => true,
            Some(t) => started(s).is_some_and(|d| d >= t),
        })
        .collect();
    let mut out: Vec<RunSummary> = Vec::new();
    for s in &matching {
        match out.iter_mut().find(|o| o.host == s.host) {
            Some(o) => {
                if (started(s), &s.id) >= (started(o), &o.id) {
                    *o = s.clone();
                }
            }
            None => out.push(s.clone()),
        }
    }
    out.sort_by(|a, b| a.host.cmp(&b.host));
    let older = matching.len() - out.len();
    (out, older)
}

pub struct Loader {
    spec: Option<String>,
    store: Option<Box<dyn Store>>,
}

impl Loader {
    /// Runs from files, or from the store `spec` names (opened on first
    /// use, to read only: nothing is created).
    pub fn new(spec: Option<String>) -> Loader {
        Loader { spec, store: None }
    }

    pub fn store(&mut self) -> Result<&dyn Store> {
        if self.store.is_none() {
            self.store = Some(open_store_read(self.spec.as_deref())?);
        }
        match &self.store {
            Some(s) => Ok(s.as_ref()),
            None => bail!("no store"),
        }
    }

    pub fn load(&mut self, which: &str) -> Result<Run> {
        if is_file_arg(which) && (which == "-" || Path::new(which).is_file()) {
            return read_run_file(Path::new(which));
        }
        if which.ends_with(".json") {
            bail!("'{which}': no such run document");
        }
        self.store()?.get_run(which)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert!(check_values("[1,2,3]", 1 << 20).is_ok());
        // Commas and brackets inside strings (escaped quotes too) count for nothing.
        let s = format!("[\"{}\\\"{}\"]", ",[{:".repeat(10_000), ",".repeat(10_000));
        assert!(check_values(&s, 32 * 1024).is_ok());
        let many = format!("[{}0]", "0,".repeat(1024));
        let e = check_values(&many, 32 * 1024).unwrap_err();
        assert!(e.contains("more than 1024 JSON values"), "{e}");
        assert!(e.contains("the cap of 32768 bytes"), "{e}");
    }

    #[test]
    fn a_nul_is_found_and_named_by_its_path() {
        let v = serde_json::json!({"host": "a", "tags": ["x", "y\u{0}"], "m": {"k": [1, {"z": "\u{0}"}]}});
        assert_eq!(nul_field(&v, "").as_deref(), Some("m.k[1].z"));
        let v = serde_json::json!({"host": "a\u{0}"});
        assert_eq!(nul_field(&v, "").as_deref(), Some("host"));
        let v = serde_json::json!({"a\u{0}b": 1});
        assert_eq!(nul_field(&v, "").as_deref(), Some("the key a\\x00b"));
        assert_eq!(nul_field(&serde_json::json!({"a": ["b"]}), ""), None);
    }

    #[test]
    fn sizes_read_in_words() {
        assert_eq!(size_words(MAX_DOCUMENT_BYTES), "64 MiB");
        assert_eq!(size_words(1000), "1000 bytes");
        assert!(too_big(Some(5), 4).starts_with("holds 5 bytes, more than 4 bytes,"));
    }
}
