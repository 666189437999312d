//! `cpuscope compare` (runs side by side, from one store or many machines'
//! exported documents) and `cpuscope published` (the reference figures of
//! the seed articles, embedded in the binary).

use super::store_cmds::read_run_file;
use super::Context;
use crate::report::compare;
use crate::results::published::{self, value_text, PublishedSet};
use crate::results::schema::{Run, RunStatus};
use crate::results::store::{open_store, RunSummary, Store};
use anyhow::{bail, Context as _, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Runs: ids, unique prefixes, `latest`, or run documents written by `cpuscope export` (FILE.json).
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// The run the others are set against (default: the first). Added if not among RUNs.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
    /// Add the stored runs of this host (exact name; repeatable).
    #[arg(long, value_name = "NAME")]
    pub host: Vec<String>,
    /// Add the stored runs whose CPU model contains this text (case-insensitive; repeatable).
    #[arg(long, value_name = "TEXT")]
    pub cpu: Vec<String>,
    /// Add the stored runs carrying this tag (see `run --tag`; repeatable).
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// With --host/--cpu/--tag: keep every matching run, not only the latest of each host (and tag).
    #[arg(long)]
    pub every: bool,
    /// Show the published reference figures (seed articles) for the same workloads.
    #[arg(long)]
    pub published: bool,
    /// Print the comparison as JSON (cpuscope.compare/1).
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    /// Print CSV: one line per result and run.
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    /// Print Markdown tables.
    #[arg(long)]
    pub markdown: bool,
    /// Also write the comparison page (one offline HTML file with charts) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct PublishedArgs {
    /// Show only this set (see the list for ids).
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Print the sets as JSON (cpuscope.published/1 documents).
    #[arg(long)]
    pub json: bool,
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

struct Loader {
    spec: Option<String>,
    store: Option<Box<dyn Store>>,
}

impl Loader {
    fn store(&mut self) -> Result<&dyn Store> {
        if self.store.is_none() {
            self.store = Some(open_store(self.spec.as_deref())?);
        }
        match &self.store {
            Some(s) => Ok(s.as_ref()),
            None => bail!("no store"),
        }
    }

    fn load(&mut self, which: &str) -> Result<Run> {
        if is_file_arg(which) && (which == "-" || Path::new(which).is_file()) {
            return read_run_file(Path::new(which));
        }
        if which.ends_with(".json") {
            bail!("'{which}': no such run document");
        }
        self.store()?.get_run(which)
    }
}

/// `cpuscope compare RUN… [--baseline RUN] [--host H] [--cpu M] [--tag T]`
pub fn run(ctx: &Context, args: &CompareArgs) -> Result<i32> {
    let mut loader = Loader {
        spec: ctx.store.clone(),
        store: None,
    };
    let mut runs: Vec<Run> = Vec::new();
    let mut ids = BTreeSet::new();
    for w in &args.runs {
        let r = loader.load(w)?;
        if !ids.insert(r.id.clone()) {
            bail!("run {} is given twice", r.id);
        }
        runs.push(r);
    }
    let filtered = !(args.host.is_empty() && args.cpu.is_empty() && args.tag.is_empty());
    if filtered {
        let all = loader.store()?.list_runs()?;
        let picked = select_runs(&all, &args.host, &args.cpu, &args.tag, args.every);
        if picked.is_empty() {
            let mut what = Vec::new();
            for (k, v) in [
                ("--host", &args.host),
                ("--cpu", &args.cpu),
                ("--tag", &args.tag),
            ] {
                if !v.is_empty() {
                    what.push(format!("{k} {}", v.join(",")));
                }
            }
            bail!(
                "no finished run in store '{}' matches {}",
                loader.store()?.location(),
                what.join(" ")
            );
        }
        for s in picked {
            if ids.insert(s.id.clone()) {
                runs.push(loader.store()?.get_run(&s.id)?);
            }
        }
    }
    let mut baseline = 0;
    if let Some(b) = &args.baseline {
        let r = loader.load(b)?;
        match runs.iter().position(|x| x.id == r.id) {
            Some(i) => baseline = i,
            None => runs.insert(0, r),
        }
    }
    if runs.is_empty() {
        bail!("nothing to compare: give RUN arguments, or pick stored runs with --host, --cpu or --tag");
    }
    if runs.len() < 2 && !args.published {
        bail!(
            "compare needs at least two runs (got 1: {}); add RUNs or --host/--cpu/--tag, or use --published to set one run against published figures",
            runs[0].id
        );
    }
    let cmp = compare::compare(&runs, baseline, args.published)?;
    if let Some(p) = &args.html {
        let page = compare::html::render(&cmp, &runs);
        std::fs::write(p, page)
            .with_context(|| format!("cannot write the comparison page '{}'", p.display()))?;
    }
    if args.json {
        super::print_json(&cmp)?;
    } else if args.csv {
        print!("{}", compare::csv::render(&cmp));
    } else if args.markdown {
        print!("{}", compare::markdown::render(&cmp));
    } else {
        print!("{}", compare::text::render(&cmp));
    }
    if let Some(p) = &args.html {
        eprintln!("comparison page: {}", p.display());
    }
    Ok(0)
}

/// Text listing of published sets.
pub fn render_published(sets: &[&PublishedSet]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for s in sets {
        let _ = writeln!(out, "{}  {}", s.id, s.title);
        let _ = writeln!(
            out,
            "  source: seed {} — {}\n  section: {}",
            s.source.seed, s.source.document, s.source.section
        );
        let _ = writeln!(out, "  workload: {}", s.workload);
        for n in &s.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        for (m, d) in &s.machines {
            let _ = writeln!(out, "  machine: {m}: {d}");
        }
        for m in &s.mappings {
            let _ = writeln!(
                out,
                "  shown beside: {} {} [{}]{}{}",
                m.result.experiment,
                m.result.metric,
                m.result.unit,
                if m.result.params.is_empty() {
                    String::new()
                } else {
                    format!(
                        " {}",
                        serde_json::Value::from(
                            m.result
                                .params
                                .clone()
                                .into_iter()
                                .collect::<serde_json::Map<_, _>>()
                        )
                    )
                },
                if m.scale != 1.0 {
                    format!(" (published × {})", m.scale)
                } else {
                    String::new()
                }
            );
        }
        let mut rows: Vec<Vec<String>> = Vec::new();
        for f in &s.figures {
            let params: Vec<String> = f
                .params
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(t) => format!("{k}={t}"),
                    o => format!("{k}={o}"),
                })
                .collect();
            rows.push(vec![
                f.machine.clone(),
                f.metric.clone(),
                params.join(", "),
                format!("{} {}", value_text(f.value, f.range, f.qualifier), f.unit),
                if f.higher_is_better {
                    "higher is better".into()
                } else {
                    "lower is better".into()
                },
            ]);
        }
        let ncol = 5;
        let mut w = vec![0usize; ncol];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        for r in &rows {
            let mut line = String::from("    ");
            for (i, c) in r.iter().enumerate() {
                line.push_str(c);
                if i + 1 < r.len() {
                    line.push_str(&" ".repeat(w[i] - c.chars().count() + 2));
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} set(s). These figures are published by the sources named; cpuscope did not measure them.",
        sets.len()
    );
    out
}

/// `cpuscope published [ID] [--json]`
pub fn published(_ctx: &Context, args: &PublishedArgs) -> Result<i32> {
    let sets: Vec<&PublishedSet> = match &args.id {
        Some(id) => vec![published::by_id(id)?],
        None => published::all()?.iter().collect(),
    };
    if args.json {
        super::print_json(&sets)?;
    } else {
        print!("{}", render_published(&sets));
    }
    Ok(0)
}
