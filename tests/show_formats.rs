//! `show RUN --markdown` and `show RUN --csv`: the summary drawn by the
//! Markdown and CSV printers (src/view/markdown.rs, src/view/csv.rs), on the
//! stored runs of tests/fixtures/runs. Every section of the summary's view
//! reaches the output (nothing left out), tables keep their shape, CSV lines
//! parse to the header's nine fields, and no control character gets through.

#[path = "common/bin.rs"]
mod bin;
use cpuscope::results::schema::Run;
use std::collections::BTreeSet;

const FIXTURES: &[&str] = &[
    "lab-2s2c2t-quick.json",
    "vm-2cpu-compute-standard.json",
    "vm-2cpu-quick.json",
];

fn fixture(name: &str) -> (String, Run) {
    let p = format!("{}/tests/fixtures/runs/{name}", env!("CARGO_MANIFEST_DIR"));
    let run: Run = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    (p, run)
}

/// Imports the fixture into a new store and prints `show RUN FLAG`.
fn show(name: &str, flag: &str) -> (Run, String) {
    let (path, run) = fixture(name);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let o = bin::with_store(&db, &["import", &path]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin::with_store(&db, &["show", &run.id, flag]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (run, String::from_utf8(o.stdout).unwrap())
}

fn no_control_characters(s: &str) {
    assert!(
        !s.chars().any(|c| c.is_control() && c != '\n'),
        "a control character got through"
    );
}

/// The `|` that separate cells (not those behind a backslash).
fn cell_bars(line: &str) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for c in line.chars() {
        match (c, escaped) {
            ('\\', false) => escaped = true,
            ('|', false) => n += 1,
            _ => escaped = false,
        }
    }
    n
}

#[test]
fn markdown_has_every_section_and_well_formed_tables() {
    for name in FIXTURES {
        let (run, md) = show(name, "--markdown");
        no_control_characters(&md);
        assert!(
            md.starts_with(&format!("# cpuscope run {}", run.id)),
            "{name}: {}",
            md.lines().next().unwrap_or("")
        );
        let view = cpuscope::report::summary::view(&run);
        let titled = view.iter().filter(|s| !s.title.is_empty()).count();
        // The run's own title is the document's; every other titled section is a `###`.
        assert_eq!(md.matches("\n### ").count(), titled - 1, "{name}");
        // Fences open and close in pairs; outside them, a table's rows have
        // as many cells as its header.
        let mut in_fence: Option<String> = None;
        let mut header_bars = None;
        for line in md.lines() {
            if let Some(f) = &in_fence {
                if line == f {
                    in_fence = None;
                }
                continue;
            }
            if line.starts_with("```") {
                in_fence = Some(line.trim_end_matches("text").to_string());
                continue;
            }
            if line.starts_with('|') {
                let bars = cell_bars(line);
                let want = *header_bars.get_or_insert(bars);
                assert_eq!(bars, want, "{name}: a row of another shape: {line}");
            } else {
                header_bars = None;
            }
        }
        assert!(in_fence.is_none(), "{name}: a fence left open");
        assert!(md.contains("| reason | figures |"), "{name}: no n/a table");
        assert!(
            md.trim_end()
                .ends_with(&format!("cpuscope show {}", run.id)),
            "{name}"
        );
    }
}

/// One CSV line (RFC 4180, no line breaks inside: the printer writes none).
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    assert!(!quoted, "an open quote: {line}");
    out
}

#[test]
fn csv_has_nine_fields_a_line_and_every_section() {
    for name in FIXTURES {
        let (run, csv) = show(name, "--csv");
        no_control_characters(&csv);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("section,table,row,column,text,value,unit,mark,na_reason")
        );
        let mut sections = BTreeSet::new();
        for line in lines {
            let f = fields(line);
            assert_eq!(f.len(), 9, "{name}: {line}");
            assert!(f[2].parse::<usize>().is_ok(), "{name}: row {line}");
            if !f[5].is_empty() {
                let v: f64 = f[5]
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}: value {line}"));
                assert!(v.is_finite());
            }
            // A text cell is never taken for a formula.
            assert!(!f[4].starts_with(['=', '+', '-', '@']), "{name}: {line}");
            sections.insert(f[0].clone());
        }
        let view = cpuscope::report::summary::view(&run);
        let want: BTreeSet<String> = view.iter().map(|s| s.id.clone()).collect();
        assert_eq!(sections, want, "{name}: sections missing from the CSV");
        assert!(sections.contains("not_available") && sections.contains("run"));
    }
}

#[test]
fn the_formats_exclude_one_another_and_all() {
    for args in [
        &["show", "latest", "--csv", "--markdown"][..],
        &["show", "latest", "--all", "--markdown"],
        &["show", "latest", "--json", "--csv"],
    ] {
        let (code, out, err) = bin::run_text(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains("cannot be used with"), "{args:?}: {err}");
    }
}
