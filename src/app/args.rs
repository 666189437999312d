//! Command-line groups that several commands share (clap `#[command(flatten)]`):
//!
//! - [`OutputArgs`]: the output formats `--json`, `--csv`, `--markdown` and
//!   `--html FILE`, each command offering those it has, with its own help
//!   line (what the document is), in its own order ([`Formats`]); the
//!   printed formats exclude one another unless the command says otherwise.
//!   [`OutputArgs::chosen`] says which one was asked for.
//! - [`MeasureArgs`]: what every measuring command of one experiment takes
//!   (`--profile`, `--json`, `--quiet`); [`Progress`]: `--quiet` alone, for
//!   the commands whose other options sit between.
//! - [`StoreArgs`]: the global `--store`.
//!
//! A group keeps the options' names, help, defaults and conflicts in one
//! place; `cpuscope CMD --help` shows them where the group is flattened.

use crate::experiments::experiment::Profile;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};
use std::ffi::OsString;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// Declares the [`Formats`] of a command: a unit type with the options it
/// offers, in `--help` order, each with its help line (no closing full
/// stop); `shared` when its printed formats may be given together.
///
/// `formats!(CompareFormats { Json: "Print JSON", Csv: "Print CSV" });`
macro_rules! formats {
    ($(#[$m:meta])* $vis:vis $name:ident $(, shared = $shared:literal)? { $($flag:ident: $help:expr),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug)]
        $vis struct $name;
        impl $crate::app::args::Formats for $name {
            const OFFERED: &'static [($crate::app::args::Flag, &'static str)] =
                &[$(($crate::app::args::Flag::$flag, $help)),+];
            $(const EXCLUSIVE: bool = !$shared;)?
        }
    };
}
pub(crate) use formats;

/// One output option of [`OutputArgs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// `--json`: print JSON.
    Json,
    /// `--csv`: print CSV.
    Csv,
    /// `--markdown`: print Markdown.
    Markdown,
    /// `--html FILE`: write an HTML page to FILE.
    Html,
}

impl Flag {
    /// The option's id and long name.
    pub fn id(self) -> &'static str {
        match self {
            Flag::Json => "json",
            Flag::Csv => "csv",
            Flag::Markdown => "markdown",
            Flag::Html => "html",
        }
    }

    fn arg(self, help: &'static str) -> Arg {
        let arg = Arg::new(self.id()).long(self.id()).help(help);
        match self {
            Flag::Html => arg
                .value_name("FILE")
                .action(ArgAction::Set)
                .value_parser(clap::value_parser!(PathBuf)),
            _ => arg.action(ArgAction::SetTrue),
        }
    }
}

/// The output options a command offers: each with its help line (as
/// `--help` shows it: no closing full stop), in the order `--help` lists
/// them.
pub trait Formats {
    const OFFERED: &'static [(Flag, &'static str)];
    /// Whether the printed formats (`--json`, `--csv`, `--markdown`) exclude
    /// one another on the command line (`--html` writes a file beside any).
    const EXCLUSIVE: bool = true;
}

/// What a command prints on standard output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Markdown,
}

/// The output group: the options of [`Formats`] `F` (an option `F` does
/// not offer is never set).
pub struct OutputArgs<F> {
    pub json: bool,
    pub csv: bool,
    pub markdown: bool,
    pub html: Option<PathBuf>,
    offered: PhantomData<F>,
}

impl<F: Formats> OutputArgs<F> {
    /// The printed format asked for (the first of --json, --csv,
    /// --markdown set; they exclude one another where `F` is exclusive),
    /// else text.
    pub fn chosen(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.csv {
            Format::Csv
        } else if self.markdown {
            Format::Markdown
        } else {
            Format::Text
        }
    }

    /// The HTML file asked for with --html.
    pub fn html(&self) -> Option<&Path> {
        self.html.as_deref()
    }
}

impl<F> std::fmt::Debug for OutputArgs<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputArgs")
            .field("json", &self.json)
            .field("csv", &self.csv)
            .field("markdown", &self.markdown)
            .field("html", &self.html)
            .finish()
    }
}

fn printed(flag: Flag) -> bool {
    flag != Flag::Html
}

impl<F: Formats> clap::Args for OutputArgs<F> {
    fn augment_args(mut cmd: Command) -> Command {
        for &(flag, help) in F::OFFERED {
            let mut arg = flag.arg(help);
            if F::EXCLUSIVE && printed(flag) {
                let others = F::OFFERED
                    .iter()
                    .map(|&(f, _)| f)
                    .filter(|&f| f != flag && printed(f))
                    .map(Flag::id);
                arg = arg.conflicts_with_all(others);
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<F: Formats> FromArgMatches for OutputArgs<F> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut out = OutputArgs {
            json: false,
            csv: false,
            markdown: false,
            html: None,
            offered: PhantomData,
        };
        out.update_from_arg_matches(m)?;
        Ok(out)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for &(flag, _) in F::OFFERED {
            match flag {
                Flag::Json => self.json = m.get_flag("json"),
                Flag::Csv => self.csv = m.get_flag("csv"),
                Flag::Markdown => self.markdown = m.get_flag("markdown"),
                Flag::Html => self.html = m.get_one::<PathBuf>("html").cloned(),
            }
        }
        Ok(())
    }
}

formats!(
    /// `--json` of a measuring command: its `cpuscope.run/1` document.
    pub RunDocument {
        Json: "Print JSON: the cpuscope.run/1 document of this measurement (docs/schema-run.md)",
    }
);

/// `--quiet`: no progress lines.
#[derive(clap::Args, Debug, Clone, Copy)]
#[group(skip)]
pub struct Progress {
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What every measuring command of one experiment takes.
#[derive(clap::Args, Debug)]
pub struct MeasureArgs {
    /// Repetitions and sample lengths: quick, standard, full.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    #[command(flatten)]
    pub formats: OutputArgs<RunDocument>,
    #[command(flatten)]
    pub progress: Progress,
}

impl MeasureArgs {
    /// Whether --json was given.
    pub fn json(&self) -> bool {
        self.formats.json
    }

    /// Whether --quiet was given.
    pub fn quiet(&self) -> bool {
        self.progress.quiet
    }
}

/// The global `--store`.
#[derive(clap::Args, Debug, Clone, Default)]
#[group(skip)]
pub struct StoreArgs {
    /// Store: a SQLite file path (default: $XDG_DATA_HOME/cpuscope/runs.db) or a postgres://user@host/db URL.
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub store: Option<OsString>,
}

impl StoreArgs {
    /// The store location as text (cpuscope keeps store paths as text);
    /// the name given back where it is not UTF-8.
    pub fn location(self) -> Result<Option<String>, OsString> {
        self.store.map(OsString::into_string).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use clap::{CommandFactory, Parser};

    formats!(Exclusive {
        Json: "j",
        Csv: "c",
        Html: "h"
    });
    formats!(Shared, shared = true { Csv: "c", Json: "j" });

    #[derive(Parser, Debug)]
    struct Exc {
        #[command(flatten)]
        f: OutputArgs<Exclusive>,
    }

    #[derive(Parser, Debug)]
    struct Sh {
        #[command(flatten)]
        f: OutputArgs<Shared>,
    }

    #[test]
    fn offered_options_parse_and_printed_formats_exclude_one_another() {
        let c = Exc::try_parse_from(["x", "--csv", "--html", "p.html"]).unwrap();
        assert_eq!(c.f.chosen(), Format::Csv);
        assert_eq!(c.f.html(), Some(Path::new("p.html")));
        assert!(!c.f.json && !c.f.markdown);
        assert_eq!(Exc::try_parse_from(["x"]).unwrap().f.chosen(), Format::Text);
        let both = Exc::try_parse_from(["x", "--json", "--csv"]).unwrap_err();
        assert_eq!(both.kind(), ErrorKind::ArgumentConflict);
        // --html writes a file beside any printed format.
        let c = Exc::try_parse_from(["x", "--json", "--html", "p.html"]).unwrap();
        assert_eq!(c.f.chosen(), Format::Json);
        let absent = Exc::try_parse_from(["x", "--markdown"]).unwrap_err();
        assert_eq!(absent.kind(), ErrorKind::UnknownArgument);
    }

    #[test]
    fn shared_formats_go_together_in_the_declared_order_with_their_help() {
        let c = Sh::try_parse_from(["x", "--json", "--csv"]).unwrap();
        assert!(c.f.json && c.f.csv);
        let cmd = Sh::command();
        let args: Vec<(&str, String)> = cmd
            .get_arguments()
            .filter_map(|a| Some((a.get_long()?, a.get_help()?.to_string())))
            .collect();
        assert_eq!(args, [("csv", "c".to_string()), ("json", "j".to_string())]);
    }

    #[test]
    fn a_store_name_that_is_not_utf8_comes_back() {
        use std::os::unix::ffi::OsStringExt;
        let ok = StoreArgs {
            store: Some("runs.db".into()),
        };
        assert_eq!(ok.location(), Ok(Some("runs.db".to_string())));
        assert_eq!(StoreArgs::default().location(), Ok(None));
        let bad = OsString::from_vec(vec![b'r', 0xff]);
        let back = StoreArgs {
            store: Some(bad.clone()),
        };
        assert_eq!(back.location(), Err(bad));
    }
}
