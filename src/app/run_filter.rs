//! The stored-run filter `compare` and `fleet` share: --host, --cpu, --tag.

/// Stored runs picked by host, CPU model and tag (each kind must match; any
/// value of a kind will do).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunFilter {
    /// Stored runs of this host (exact name; repeatable).
    #[arg(long, value_name = "NAME")]
    pub host: Vec<String>,
    /// Stored runs whose CPU model contains this text (case-insensitive; repeatable).
    #[arg(long, value_name = "TEXT")]
    pub cpu: Vec<String>,
    /// Stored runs carrying this tag (see `run --tag`; repeatable: any of them).
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
}

impl RunFilter {
    /// True when no filter was given.
    pub fn is_empty(&self) -> bool {
        self.host.is_empty() && self.cpu.is_empty() && self.tag.is_empty()
    }

    /// The filter as the user typed it, for messages ("--host a,b --tag x").
    pub fn describe(&self) -> Vec<String> {
        [
            ("--host", &self.host),
            ("--cpu", &self.cpu),
            ("--tag", &self.tag),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} {}", v.join(",")))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_only_what_was_given() {
        let f = RunFilter {
            host: vec!["a".into(), "b".into()],
            cpu: vec![],
            tag: vec!["rack1".into()],
        };
        assert!(!f.is_empty());
        assert_eq!(f.describe(), vec!["--host a,b", "--tag rack1"]);
        assert!(RunFilter::default().is_empty());
    }
}
