//! What the packages carry, from the binary under test: `--version` says
//! which build it is; man pages (one per sub-command) and completions are
//! rendered from the clap definitions; a run records the build. The portable
//! builds themselves, their glibc floor and the Debian 11 chroot are checked
//! by scripts/package.sh and scripts/test-old-userland.sh under .ci/run
//! (docs/packaging.md).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/skip.rs"]
mod skip;

use std::process::{Command, Output};

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn version_says_commit_date_target_and_glibc_floor() {
    let o = bin::run(&["--version"]);
    assert!(o.status.success());
    let t = text(&o);
    for field in [
        "commit:",
        "built:",
        "target:",
        "glibc floor:",
        "glibc here:",
    ] {
        assert!(t.contains(field), "{field} in\n{t}");
    }
    assert!(
        t.starts_with(&format!("cpuscope {}\n", env!("CARGO_PKG_VERSION"))),
        "{t}"
    );
    assert!(t.contains(std::env::consts::ARCH), "{t}");
    // -V: the same facts on one line.
    let o = bin::run(&["-V"]);
    let line = text(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains(std::env::consts::ARCH) && line.contains("glibc"),
        "{line}"
    );
}

#[test]
fn one_man_page_per_sub_command() {
    let list = text(&bin::run(&["manpage", "--list"]));
    let pages: Vec<&str> = list.lines().collect();
    assert_eq!(pages.first(), Some(&"cpuscope"), "{list}");
    for want in [
        "cpuscope-run",
        "cpuscope-info",
        "cpuscope-compare",
        "cpuscope-completions",
    ] {
        assert!(pages.contains(&want), "{want} in {pages:?}");
    }
    // The hidden renderer and clap's `help` have no page of their own.
    assert!(!pages.contains(&"cpuscope-manpage"), "{pages:?}");
    assert!(!pages.contains(&"cpuscope-help"), "{pages:?}");
    // The --help text lists the same sub-commands.
    let help = text(&bin::run(&["--help"]));
    for p in &pages[1..] {
        let sub = p.trim_start_matches("cpuscope-");
        assert!(
            help.contains(&format!("  {sub} ")) || help.contains(&format!("  {sub}\n")),
            "{sub} in help"
        );
    }
    for p in &pages {
        let args: Vec<&str> = match p.strip_prefix("cpuscope-") {
            Some(sub) => vec!["manpage", sub],
            None => vec!["manpage"],
        };
        let o = bin::run(&args);
        assert!(o.status.success(), "{p}");
        let roff = text(&o);
        assert!(
            roff.contains(&format!(".TH {p} 1 ")),
            "{p}: {}",
            &roff[..roff.len().min(300)]
        );
        assert!(
            roff.contains(".SH NAME") && roff.contains(".SH SYNOPSIS"),
            "{p}"
        );
    }
    let run = text(&bin::run(&["manpage", "run"]));
    // Options from the definitions, the global ones included.
    for opt in ["profile", "only", "sysroot", "store"] {
        assert!(
            run.contains(&format!("\\-\\-{opt}")),
            "--{opt} in cpuscope-run(1)"
        );
    }
    let o = bin::run(&["manpage", "no-such-command"]);
    assert_eq!(o.status.code(), Some(1));
    let err = cli::one_line_error(&o);
    assert!(err.contains("--list"), "{err}");
}

#[test]
fn bash_completes_sub_commands() {
    let script = text(&bin::run(&["completions", "bash"]));
    assert!(script.contains("complete -F _cpuscope"), "{script}");
    for shell in ["zsh", "fish"] {
        let o = bin::run(&["completions", shell]);
        assert!(o.status.success() && !o.stdout.is_empty(), "{shell}");
    }
    let o = bin::run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    cli::one_line_error(&o);
    // What bash offers for `cpuscope ru<TAB>`.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cpuscope.bash");
    std::fs::write(&f, &script).unwrap();
    let probe = format!(
        "source '{}'; COMP_WORDS=(cpuscope ru); COMP_CWORD=1; COMP_LINE='cpuscope ru'; COMP_POINT=11; \
         _cpuscope cpuscope ru cpuscope; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        f.display()
    );
    let o = match Command::new("bash").arg("-c").arg(&probe).output() {
        Ok(o) => o,
        Err(e) => {
            skip::skip_or_fail(&format!("no bash to try the completion in: {e}"));
            return;
        }
    };
    let mut offered: Vec<String> = text(&o).lines().map(str::to_string).collect();
    offered.sort();
    assert_eq!(
        offered,
        ["run", "runs"],
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_run_records_the_build_that_measured_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let store = store.to_str().unwrap();
    let args: Vec<&str> = ["--store", store]
        .into_iter()
        .chain(cli::QUICK_RUN)
        .collect();
    let o = bin::run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_slice(&bin::run(&["--store", store, "export", "latest"]).stdout).unwrap();
    let b = &doc["environment"]["build"];
    assert_eq!(b["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        b["target"]
            .as_str()
            .unwrap()
            .starts_with(std::env::consts::ARCH),
        "{b}"
    );
    assert!(b["build_date"].as_str().unwrap().ends_with('Z'), "{b}");
    assert!(
        b["glibc_floor_source"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{b}"
    );
    #[cfg(target_env = "gnu")]
    assert!(
        b["glibc_running"].as_str().unwrap().starts_with("2."),
        "{b}"
    );
    // show prints the build line.
    let shown = text(&bin::run(&["--store", store, "show", "latest", "--all"]));
    let commit = b["commit"].as_str().unwrap_or("unknown commit");
    assert!(shown.contains(commit), "{commit} in show");
}
