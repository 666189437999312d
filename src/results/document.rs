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

/// What import checks of a run document's text: the document itself
/// (`parse_run`) and that the run has finished.
fn check_document(text: &str) -> Result<Run> {
    let run = parse_run(text)?;
    if run.status == RunStatus::Running {
        bail!(
            "run {} is still running; export it again once it has finished",
            run.id
        );
    }
    Ok(run)
}

/// Read and check one run document; errors name the file.
pub fn read_run_file(path: &Path) -> Result<Run> {
    let shown = path.display().to_string();
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .map_err(|e| anyhow!("'-': cannot read standard input: {e}"))?;
        b
    } else {
        if path.is_dir() {
            bail!("'{shown}' is a directory, not a run document");
        }
        std::fs::read(path).map_err(|e| anyhow!("'{shown}': cannot read: {e}"))?
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow!("'{shown}': not a run document (not UTF-8 text)"))?;
    check_document(&text).map_err(|e| anyhow!("'{shown}': {e:#}"))
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
