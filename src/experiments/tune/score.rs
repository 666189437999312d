//! A tune run's score (docs/methods-tune.md): from the command's time, a
//! number in its output (a pattern) or a file it writes, and how a missing
//! one is said.

use crate::base::pattern::Pattern;
use crate::harness::child::{ChildRun, TAIL_BYTES};
use anyhow::Result;
use std::path::PathBuf;
use std::time::SystemTime;

/// The most bytes read from a score file (`--score-file`).
pub const SCORE_FILE_MAX_BYTES: u64 = 1 << 30;

/// How the score of one run is read.
#[derive(Clone, Debug)]
pub enum ScoreSource {
    /// Seconds from exec to exit.
    WallTime,
    /// The first group (else the whole match) of the last match of the
    /// pattern in the command's standard output, else its standard error.
    Output(Pattern),
    /// A file the command writes (it must change during the run): the
    /// pattern's last match in it, or its first number.
    File {
        path: PathBuf,
        pattern: Option<Pattern>,
    },
}

/// The score of the runs, and which way is better.
#[derive(Clone, Debug)]
pub struct Score {
    pub source: ScoreSource,
    pub higher_is_better: bool,
    pub unit: String,
}

impl Score {
    /// Wall time in seconds, lower is better.
    pub fn wall_time() -> Score {
        Score {
            source: ScoreSource::WallTime,
            higher_is_better: false,
            unit: "s".into(),
        }
    }

    /// One line saying what the score is.
    pub fn describe(&self) -> String {
        let way = if self.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        };
        match &self.source {
            ScoreSource::WallTime => format!("wall time (s, exec to exit), {way}"),
            ScoreSource::Output(p) => {
                format!("'{p}' in the command's output ({}), {way}", self.unit)
            }
            ScoreSource::File { path, pattern } => format!(
                "{} in {} ({}), {way}",
                pattern
                    .as_ref()
                    .map(|p| format!("'{p}'"))
                    .unwrap_or_else(|| "the first number".into()),
                path.display(),
                self.unit
            ),
        }
    }

    /// The score file's stamp (modification time, size, inode) before a
    /// run, to tell afterwards whether the run wrote it; None without a
    /// score file or when it does not exist yet.
    pub fn file_stamp(&self) -> Option<FileStamp> {
        match &self.source {
            ScoreSource::File { path, .. } => FileStamp::of(path),
            _ => None,
        }
    }

    /// The score of `run`, or why there is none; `before`: the score
    /// file's stamp before the run ([`Score::file_stamp`]).
    pub fn read(&self, run: &ChildRun, before: Option<&FileStamp>) -> Result<f64, String> {
        match &self.source {
            ScoreSource::WallTime => Ok(run.wall_s),
            ScoreSource::Output(p) => extract(p, &run.stdout)
                .or_else(|| extract(p, &run.stderr))
                .ok_or_else(|| output_miss(p, run)),
            ScoreSource::File { path, pattern } => {
                let now = FileStamp::of(path)
                    .ok_or_else(|| format!("no score: {} does not exist", path.display()))?;
                if before == Some(&now) {
                    return Err(format!(
                        "no score: {} was not written during the run",
                        path.display()
                    ));
                }
                // Never blocks: a FIFO or device put there is refused (not
                // opened to wait for a writer), a huge file is capped, and
                // non-UTF-8 bytes (a log's stray byte) become U+FFFD.
                let (text, _) =
                    crate::base::files::read_file_text_capped(path, SCORE_FILE_MAX_BYTES)
                        .map_err(|e| format!("no score: cannot read {}: {e}", path.display()))?;
                let got = match pattern {
                    Some(p) => extract(p, &text),
                    None => first_number(&text),
                };
                got.ok_or_else(|| match pattern {
                    Some(p) => format!("no score: '{p}' does not match {}", path.display()),
                    None => format!("no score: {} holds no number", path.display()),
                })
            }
        }
    }
}

/// Why `p` found no score in the output `run` kept: when the command wrote
/// more than is kept, the message says that only the end was searched.
fn output_miss(p: &Pattern, run: &ChildRun) -> String {
    let longest = run.stdout_len.max(run.stderr_len);
    if longest <= TAIL_BYTES {
        return format!("no score: '{p}' does not match the command's output");
    }
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    format!(
        "no score: '{p}' does not match the last {} MiB of the command's output: only the last {} MiB of each stream are kept and searched, and it wrote {} to standard output and {} to standard error (a match earlier than that is not seen: print the score at the end, or use --score-file)",
        TAIL_BYTES >> 20,
        TAIL_BYTES >> 20,
        mib(run.stdout_len),
        mib(run.stderr_len)
    )
}

/// What tells two versions of a file apart: modification time, size,
/// inode (a file rewritten or replaced changes one of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
    ino: u64,
}

impl FileStamp {
    /// The stamp of `path`; None when it does not exist.
    pub fn of(path: &std::path::Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            modified: md.modified().ok(),
            len: md.len(),
            ino: md.ino(),
        })
    }
}

/// A number as programs print it: `14460`, `1.5e3`, `14,460.5`, `1_000`.
pub fn parse_number(s: &str) -> Option<f64> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_')
        .collect();
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The first group (else the whole match) of the last match of `p` in
/// `text`, as a number.
pub fn extract(p: &Pattern, text: &str) -> Option<f64> {
    let m = p.last_match(text)?;
    let s = if p.group_count() > 1 {
        m.text(text, 1)?
    } else {
        m.text(text, 0)?
    };
    parse_number(s)
}

/// The first number in `text`.
pub fn first_number(text: &str) -> Option<f64> {
    let p = Pattern::new(r"[-+]?(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?").ok()?;
    let m = p.find_at(text, 0)?;
    parse_number(m.text(text, 0)?)
}
