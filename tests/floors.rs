//! The floors of docs/architecture.md hold: `scripts/check-floors.py` finds
//! no import from a lower room to a higher one, none from a higher floor of
//! experiments/ (trait < helpers and payloads < experiments < renderers <
//! registry), and no import cycle at all in src/; and two ratchets of issue
//! 26. The checker itself is shown to catch each kind on a small tree.
//!
//! When `python3` is missing the check cannot run: under CI (`CI` set) that
//! is a failure, elsewhere a visible `SKIP:` line.

#[path = "common/python_check.rs"]
mod python_check;
#[path = "common/skip.rs"]
mod skip;

#[test]
fn no_upward_import_and_no_cycle() {
    python_check::assert_passes("scripts/check-floors.py", "check-floors: ok");
}

/// A tiny src/ tree: experiments/ with the trait, a family with a payload,
/// an experiment and its text renderer, the registry on top, and `extra`
/// files (path, contents) added or replacing those.
fn tree(extra: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cpuscope-floors-{}-{}",
        std::process::id(),
        extra.len() + extra.iter().map(|(p, c)| p.len() + c.len()).sum::<usize>()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let files: Vec<(&str, &str)> = vec![
        ("lib.rs", "pub mod experiments;\n"),
        (
            "experiments/mod.rs",
            "pub mod experiment;\npub mod fam;\npub mod registry;\n",
        ),
        ("experiments/experiment.rs", "pub trait Experiment {}\n"),
        (
            "experiments/fam/mod.rs",
            "pub mod exp;\npub mod payload;\npub mod text;\n",
        ),
        ("experiments/fam/payload.rs", "pub struct Data;\n"),
        (
            "experiments/fam/exp.rs",
            "use crate::experiments::fam::payload::Data;\nuse crate::experiments::experiment::Experiment;\n",
        ),
        (
            "experiments/fam/text.rs",
            "use crate::experiments::fam::{exp, payload};\n",
        ),
        (
            "experiments/registry.rs",
            "use crate::experiments::fam::{exp, text};\n",
        ),
    ];
    for (path, text) in files.iter().chain(extra) {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The checker's verdict on a tree: (passed, output).
fn check(extra: &[(&str, &str)]) -> Option<(bool, String)> {
    let dir = tree(extra);
    let out = python_check::run_on("scripts/check-floors.py", &dir)?;
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    Some((out.status.success(), text))
}

#[test]
fn the_floor_check_catches_what_it_forbids() {
    let Some((ok, out)) = check(&[]) else { return };
    assert!(ok, "the clean tree must pass:\n{out}");
    assert!(out.contains("no cycle (0 allowed)"), "{out}");

    // An experiment that calls its renderer: inner floor and a cycle.
    let Some((ok, out)) = check(&[(
        "experiments/fam/exp.rs",
        "use crate::experiments::fam::text;\n",
    )]) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(
        out.contains("inner floor: src/experiments/fam/exp.rs:1 (experiments) imports src/experiments/fam/text.rs (renderers"),
        "{out}"
    );
    assert!(
        out.contains("cycle inside experiments/fam/: src/experiments/fam/exp.rs, src/experiments/fam/text.rs"),
        "{out}"
    );

    // A payload that reaches up to an experiment.
    let Some((ok, out)) = check(&[(
        "experiments/fam/payload.rs",
        "pub struct Data;\nfn f() { crate::experiments::fam::exp::g() }\n",
    )]) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("inner floor: src/experiments/fam/payload.rs:2 (shared helpers and payloads) imports src/experiments/fam/exp.rs"), "{out}");

    // Two experiments importing each other: a cycle on one floor.
    let Some((ok, out)) = check(&[
        (
            "experiments/fam/mod.rs",
            "pub mod exp;\npub mod other;\npub mod payload;\npub mod text;\n",
        ),
        ("experiments/fam/other.rs", "use super::exp;\n"),
        (
            "experiments/fam/exp.rs",
            "use crate::experiments::fam::other;\n",
        ),
    ]) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("cycle inside experiments/fam/: src/experiments/fam/exp.rs, src/experiments/fam/other.rs (via src/experiments/fam/exp.rs -> src/experiments/fam/other.rs; src/experiments/fam/other.rs -> src/experiments/fam/exp.rs)"), "{out}");
}

/// Issue 26's ratchets: the string-keyed reads of record data
/// (`scripts/check-keyed-reads.py`) and the functions over 120 lines
/// (`scripts/fn-lengths.py`) may only go down from what each script names.
#[test]
fn keyed_reads_do_not_grow() {
    python_check::assert_passes("scripts/check-keyed-reads.py", "check-keyed-reads: ok");
}

#[test]
fn long_functions_do_not_grow() {
    python_check::assert_passes("scripts/fn-lengths.py", "fn-lengths: ok");
}

#[test]
fn the_keyed_read_check_catches_what_it_forbids() {
    let dir = std::env::temp_dir().join(format!("cpuscope-keyed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src");
    let fam = src.join("experiments/fam");
    std::fs::create_dir_all(&fam).unwrap();
    // Three reads of a record's data by key: a literal key, and a helper
    // handed its key (the raw field in hand). Not reads: the typed payload,
    // a params look-up, an emptiness test, keys in the payload leaf file.
    std::fs::write(
        fam.join("text.rs"),
        r#"fn a(r: &ResultRecord) -> Option<f64> { r.data.as_ref()?.get("x")?.as_f64() }
fn b(r: &ResultRecord, k: &str) -> Option<f64> { r.data.as_ref()?.get(k)?.as_f64() }
fn c(r: &ResultRecord) -> Option<Data> { r.data_as::<Data>() }
fn d(r: &ResultRecord) -> bool { r.params.get("width").is_some() && r.data.is_none() }
"#,
    )
    .unwrap();
    std::fs::write(
        fam.join("payload.rs"),
        "fn e(d: &Value) -> &Value { &d[\"x\"] }\n",
    )
    .unwrap();
    let Some(out) = python_check::run_on("scripts/check-keyed-reads.py", &src) else {
        return;
    };
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("FAIL: 3 string-keyed read(s) of record data in 1 file(s)"),
        "{text}"
    );
    assert!(text.contains("   3  src/experiments/fam/text.rs"), "{text}");
    assert!(
        text.contains("not counted:   1  payload leaf files"),
        "{text}"
    );
    assert!(text.contains("a record's params"), "{text}");
}
