//! The evidence lines of a fleet finding drawn from the host's own record:
//! its repetitions, and the params it was measured with where most of its
//! peers had others.

use crate::base::fmt::fmt_num;
use crate::results::schema::ResultRecord;
use std::collections::BTreeMap;

/// The host's own repetitions (n, CV, min and max, its own noise), or that
/// it has one.
pub(super) fn own_repetitions(r: &ResultRecord, unit: &str, own_pct: f64) -> String {
    match &r.stats {
        Some(s) if s.n > 1 => format!(
            "its own repetitions: n={}, CV {:.1}%, min {} max {} {unit} (own noise ±{:.1}%)",
            s.n,
            s.cv * 100.0,
            fmt_num(s.min),
            fmt_num(s.max),
            own_pct
        ),
        _ => "one repetition: no own spread recorded".into(),
    }
}

/// Params where it was measured differently (e.g. fewer threads): each
/// param of `r` whose value is not the one most peers have.
pub(super) fn param_differences(
    r: &ResultRecord,
    peer_recs: &[(&str, &ResultRecord)],
) -> Vec<String> {
    let mut evidence = Vec::new();
    for (k, v) in &r.params {
        let mut others: BTreeMap<String, usize> = BTreeMap::new();
        for (_, pr) in peer_recs {
            if let Some(pv) = pr.params.get(k) {
                *others.entry(pv.to_string()).or_default() += 1;
            }
        }
        if let Some((common, _)) = others.iter().max_by_key(|c| c.1) {
            let mine = v.to_string();
            if *common != mine {
                evidence.push(format!(
                    "measured with {k}={} (most peers: {k}={})",
                    v.to_string().trim_matches('"'),
                    common.trim_matches('"')
                ));
            }
        }
    }
    evidence
}
