//! Strings from outside never drive the terminal. A run document may come
//! from anywhere (`import`), a recorded tree (`--sysroot`) may hold any
//! bytes, and a tag is typed by whoever runs cpuscope: control characters
//! (ESC sequences, a newline that would forge a row of `runs`, C1 controls)
//! and Unicode bidirectional overrides are shown as visible escapes by every
//! text view, CSV and Markdown output, and HTML pages escape their markup.
//! Bad tags are refused with one line before anything is measured or stored.
//! Every test ends with [`Guarded::assert_intact`].

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/guard.rs"]
mod guard;

use guard::Guarded;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The bidirectional formatting characters ("Trojan Source").
const BIDI: &[char] = &[
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
];

const HOST: &str = "vm\nforged-row 20260101T000000Z-fake-0000  2026-01-01T00:00:00Z\r\x1b[2K<script>alert(1)</script>";
const MODEL: &str = "Evil\x1b[31m CPU\u{9b}2J \u{202e}kcatta\u{202c} 海光";
const NOTE: &str = "\x1b]0;title\x07 note \u{202e}desrever\u{2066}isolate\u{2069} <b>bold</b>";
const TAG: &str = "t\x1b[1m\n<i>tag</i>";
const REASON: &str = "no PMU\x1b[5m\n  forged: line <u>x</u>";
const HOST2: &str = "lab\x1b[2Jhost\u{202d}";

/// Text that is safe on a terminal: no ESC byte, no control character but
/// the newline, no C1 control, no bidirectional override or isolate.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    assert!(
        !bytes.contains(&0x1b),
        "{what}: an ESC byte reached the output"
    );
    let text = String::from_utf8_lossy(bytes);
    for (i, line) in text.lines().enumerate() {
        if let Some(c) = line
            .chars()
            .find(|c| (c.is_control() && *c != '\n') || BIDI.contains(c))
        {
            panic!("{what}: line {} holds {c:?}: {line:?}", i + 1);
        }
    }
}

fn ok(o: &Output, what: &str) -> Vec<u8> {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_terminal_safe(&format!("{what} (stderr)"), &o.stderr);
    o.stdout.clone()
}

fn fixture(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name);
    serde_json::from_slice(&std::fs::read(&p).expect("fixture run")).expect("fixture JSON")
}

/// The vm fixture as a hostile document: host, CPU model, notes, a tag, a
/// record's note and an unavailable reason with control characters, bidi
/// overrides and markup. Still a valid run document.
fn hostile_vm(id: &str) -> Value {
    let mut d = fixture("vm-2cpu-quick.json");
    d["id"] = json!(id);
    d["host"] = json!(HOST);
    d["machine"]["identity"]["model_name"] = json!(MODEL);
    d["environment"]["notes"]
        .as_array_mut()
        .expect("notes")
        .push(json!(NOTE));
    d["tags"] = json!([TAG, "plain"]);
    let results = d["results"].as_array_mut().expect("results");
    results[0]["notes"]
        .as_array_mut()
        .expect("record notes")
        .push(json!(NOTE));
    let gone = results
        .iter_mut()
        .find(|r| r["value"].is_null())
        .expect("the vm fixture has an unavailable result");
    gone["unavailable_reason"] = json!(REASON);
    d
}

/// The lab fixture with another hostile host, for `compare` and `fleet`.
fn hostile_lab(id: &str) -> Value {
    let mut d = fixture("lab-2s2c2t-quick.json");
    d["id"] = json!(id);
    d["host"] = json!(HOST2);
    d["environment"]["notes"]
        .as_array_mut()
        .expect("notes")
        .push(json!(NOTE));
    d
}

fn write_doc(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    p
}

const EVIL: &str = "20261126T010203Z-evil-0001";
const EVIL2: &str = "20261126T020304Z-evil-0002";

/// A guarded store whose path holds an ESC (the store location is printed
/// too), with both hostile runs in it. `import` refuses their host names
/// and tag (the rules `run` applies: tests/reliability_inputs.rs), so they
/// are stored as a store an older cpuscope wrote would hold them.
fn hostile_store() -> Guarded {
    use cpuscope::results::store::Store as _;
    let dir = tempfile::Builder::new()
        .prefix("store\x1b[31m\u{202e}")
        .tempdir()
        .expect("tempdir");
    let g = Guarded::in_dir(dir);
    let a = write_doc(g.dir.path(), "evil.json", &hostile_vm(EVIL));
    let o = g.run(&["import", a.to_str().unwrap()]);
    assert!(cli::one_line_error(&o).contains("that `run` refuses"));
    let runs: Vec<cpuscope::results::Run> = [hostile_vm(EVIL), hostile_lab(EVIL2)]
        .into_iter()
        .map(|d| serde_json::from_value(d).expect("a run document"))
        .collect();
    cpuscope::results::sqlite::SqliteStore::open(&g.store)
        .and_then(|mut s| s.put_runs(&runs))
        .expect("store the hostile runs");
    g
}

#[test]
fn runs_prints_one_line_per_run_whatever_the_host() {
    let g = hostile_store();
    let out = String::from_utf8(ok(&g.run(&["runs"]), "runs")).unwrap();
    assert_terminal_safe("runs", out.as_bytes());
    let lines: Vec<&str> = out.lines().collect();
    // Header, four runs, the count line.
    assert_eq!(lines.len(), 6, "{out}");
    assert!(lines[5].starts_with("4 run(s) in store '"), "{out}");
    assert!(lines[5].contains("store\\x1b[31m\\u{202e}"), "{out}");
    for id in [EVIL, EVIL2] {
        let with: Vec<&&str> = lines.iter().filter(|l| l.contains(id)).collect();
        assert_eq!(with.len(), 1, "{id}: {out}");
    }
    let evil = lines.iter().find(|l| l.contains(EVIL)).unwrap();
    assert!(evil.contains("vm\\nforged-row"), "{evil}");
    assert!(evil.contains("\\r\\x1b[2K"), "{evil}");
    assert!(
        evil.contains("Evil\\x1b[31m CPU\\u{9b}2J \\u{202e}kcatta\\u{202c} 海光"),
        "{evil}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("forged-row")), "{out}");
    g.assert_intact();
}

#[test]
fn show_in_every_form_escapes_the_document() {
    let g = hostile_store();
    for args in [
        vec!["show", EVIL],
        vec!["show", EVIL, "--all"],
        vec!["show", EVIL, "--summary"],
        vec!["show", EVIL2, "--all"],
    ] {
        let what = args.join(" ");
        let out = ok(&g.run(&args), &what);
        assert_terminal_safe(&what, &out);
    }
    let all = String::from_utf8(ok(&g.run(&["show", EVIL, "--all"]), "show --all")).unwrap();
    for want in [
        "host      vm\\nforged-row",
        "Evil\\x1b[31m CPU",
        "note: \\x1b]0;title\\x07 note \\u{202e}desrever\\u{2066}isolate\\u{2069} <b>bold</b>",
        "t\\x1b[1m\\n<i>tag</i>, plain",
        "not available: no PMU\\x1b[5m\\n  forged: line",
    ] {
        assert!(all.contains(want), "show --all lacks {want:?}:\n{all}");
    }
    // The verdict (plain `show`) names the machine on one line.
    let verdict = String::from_utf8(ok(&g.run(&["show", EVIL]), "show")).unwrap();
    assert!(verdict.contains("Evil\\x1b[31m CPU"), "{verdict}");
    g.assert_intact();
}

#[test]
fn compare_and_fleet_escape_in_text_csv_and_markdown_and_html_escapes_markup() {
    let g = hostile_store();
    let dir = g.dir.path().to_path_buf();
    for args in [
        vec!["compare", EVIL, EVIL2],
        vec!["compare", EVIL2, EVIL, "--published"],
        vec!["compare", EVIL, EVIL2, "--markdown"],
        vec!["compare", EVIL, EVIL2, "--csv"],
        vec!["fleet"],
    ] {
        let what = args.join(" ");
        let out = ok(&g.run(&args), &what);
        assert_terminal_safe(&what, &out);
    }
    let text = String::from_utf8(ok(&g.run(&["compare", EVIL, EVIL2]), "compare")).unwrap();
    assert!(text.contains("vm\\nforged-row"), "{text}");
    assert!(text.contains("lab\\x1b[2Jhost\\u{202d}"), "{text}");
    // CSV: one record per line (every line has the header's field count
    // outside quotes), and no cell starts a formula.
    let csv = String::from_utf8(ok(&g.run(&["compare", EVIL, EVIL2, "--csv"]), "csv")).unwrap();
    let fields = |l: &str| {
        let mut n = 1;
        let mut quoted = false;
        for c in l.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => n += 1,
                _ => {}
            }
        }
        n
    };
    let mut lines = csv.lines();
    let width = fields(lines.next().unwrap());
    for l in lines {
        assert_eq!(fields(l), width, "{l}");
        assert!(
            !l.contains(",=") && !l.contains(",+") && !l.contains(",@"),
            "{l}"
        );
    }
    let fleet = String::from_utf8(ok(&g.run(&["fleet"]), "fleet")).unwrap();
    assert!(fleet.contains("vm\\nforged-row"), "{fleet}");

    // HTML pages: the markup in the strings is text, not elements.
    let cmp_html = dir.join("cmp.html");
    let fleet_html = dir.join("fleet.html");
    ok(
        &g.run(&["compare", EVIL, EVIL2, "--html", cmp_html.to_str().unwrap()]),
        "compare --html",
    );
    ok(
        &g.run(&["fleet", "--html", fleet_html.to_str().unwrap()]),
        "fleet --html",
    );
    let run: cpuscope::results::Run = serde_json::from_value(hostile_vm(EVIL)).unwrap();
    let report = cpuscope::report::html::render_run(&run);
    for (what, page) in [
        ("compare", std::fs::read_to_string(&cmp_html).unwrap()),
        ("fleet", std::fs::read_to_string(&fleet_html).unwrap()),
        ("run report", report),
    ] {
        for raw in ["<script>", "<b>bold", "<i>tag", "<u>x"] {
            assert!(!page.contains(raw), "{what} page holds raw {raw:?}");
        }
        assert!(
            page.contains("&lt;script&gt;"),
            "{what} page lacks the host"
        );
    }
    g.assert_intact();
}

#[test]
fn info_of_a_recorded_tree_escapes_its_model_name_and_host_name() {
    let g = Guarded::new();
    // A copy of the ARM fixture tree read as an x86 one (no MIDR, no
    // device tree), whose cpuinfo and host name hold ESC sequences, under a
    // directory whose own name holds one.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm-virt/kunpeng-like");
    let root = g.dir.path().join("tree\x1b[32m");
    copy_tree(&src, &root);
    let _ = std::fs::remove_dir_all(root.join("proc/device-tree"));
    for cpu in 0..64 {
        let _ = std::fs::remove_file(root.join(format!(
            "sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1"
        )));
    }
    let mut cpuinfo = String::new();
    for cpu in 0..8 {
        cpuinfo.push_str(&format!(
            "processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n\
             model name\t: Evil\x1b[31m CPU\u{202e} @ 9GHz\x1b]0;pwned\x07\nflags\t\t: fpu sse sse2\n\n"
        ));
    }
    std::fs::write(root.join("proc/cpuinfo"), cpuinfo).unwrap();
    std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    std::fs::write(
        root.join("proc/sys/kernel/hostname"),
        "host\x1b[2J\u{202e}\n",
    )
    .unwrap();
    let o = g.run(&["--sysroot", root.to_str().unwrap(), "info"]);
    let out = String::from_utf8(ok(&o, "info --sysroot")).unwrap();
    assert_terminal_safe("info", out.as_bytes());
    assert!(
        out.contains("Evil\\x1b[31m CPU\\u{202e} @ 9GHz\\x1b]0;pwned\\x07"),
        "{out}"
    );
    assert!(out.contains("host\\x1b[2J\\u{202e}"), "{out}");
    assert!(
        out.contains("recorded machine at ") && out.contains("tree\\x1b[32m"),
        "{out}"
    );
    g.assert_intact();
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        let dest = to.join(e.file_name());
        if t.is_dir() {
            copy_tree(&e.path(), &dest);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A bad `--tag` is refused when the command line is parsed: `--list`
/// would otherwise print the plan and exit 0, so nothing runs either way.
#[test]
fn bad_tags_are_refused_at_parse_time_with_one_line() {
    let g = Guarded::new();
    let long = "y".repeat(120 * 1024);
    for (tag, says) in [
        ("", "may not be empty"),
        ("  ", "only spaces"),
        (long.as_str(), "at most 64 characters"),
        ("a\x1b[31mred", "holds the character \\x1b"),
        ("a\nb", "holds the character \\n"),
        ("rtl\u{202e}", "holds the character \\u{202e}"),
    ] {
        let o = g.run(&["run", "--tag", "ok", "--tag", tag, "--list"]);
        let err = cli::one_line_error(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{tag:?}: {err}");
        assert!(err.contains("invalid --tag"), "{err}");
        assert!(
            err.len() < 300,
            "the error quotes the whole tag: {} bytes",
            err.len()
        );
        assert_terminal_safe("tag error", &o.stderr);
        assert!(o.stdout.is_empty(), "{tag:?}: the plan was printed");
    }
    // Good tags pass the parser (`--list` then prints the plan).
    let o = g.run(&[
        "run",
        "--tag",
        "baseline",
        "--tag",
        "batch=2026-11",
        "--list",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    g.assert_intact();
}

/// The same tag twice is refused before anything is measured or stored
/// (`run` checks its tags before opening the store).
#[test]
fn a_tag_given_twice_is_refused_and_nothing_is_stored() {
    let g = Guarded::new();
    let o = g.run(&[
        "run",
        "--tag",
        "x",
        "--tag",
        "y",
        "--tag",
        "x",
        "--only",
        "frequency",
        "--profile",
        "quick",
        "--no-html",
        "--quiet",
    ]);
    let err = cli::one_line_error(&o);
    assert!(err.contains("--tag 'x' is given twice"), "{err}");
    let runs = g.run(&["runs", "--json"]);
    let doc: Value = serde_json::from_slice(&runs.stdout).expect("runs --json");
    assert_eq!(
        doc["runs"].as_array().map(Vec::len),
        Some(2),
        "a run was stored"
    );
    g.assert_intact();
}
