//! Page sizes compared at the largest working set two random curves reach:
//! the TLB cost (4 KiB against 2 MiB pages) and 1 GiB pages beside 2 MiB
//! pages (docs/methods-memory.md, "1 GiB pages"), with what the machine
//! offers of them. In a VM, 1 GiB guest pages remove the
//! guest's own page walks but not the host's (EPT/NPT/stage 2): the saving
//! is the guest's share of the climb, what remains on 1 GiB pages the
//! host's. Reads the curves' figures only (a part file: nothing from
//! `mod.rs`).

use crate::base::fmt::fmt_size;
use crate::machine::MachineInfo;
use crate::results::schema::{MetricId, ResultRecord};
use serde::{Deserialize, Serialize};

/// The payload of `giant_page_saving`: where it was read, both medians,
/// and whether the two points' samples overlap.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GiantSavingData {
    pub bytes: usize,
    pub huge_ns: f64,
    pub giant_ns: f64,
    pub within_noise: bool,
}

/// The figures of one random curve this needs: (working set, median, min
/// and max ns) per point, and its page-walk climb (ns per doubling), if any.
pub struct PagesCurve {
    pub points: Vec<(usize, f64, f64, f64)>,
    pub climb: Option<f64>,
}

/// What the machine offers of 1 GiB pages, said beside a climb: measured
/// (`planned`: a `1g` curve is in the plan), or why not.
pub fn pages_note(m: &MachineInfo, planned: bool) -> String {
    if planned {
        return "1 GiB pages: measured (the 1g curve), the climb split in `giant_page_saving`"
            .into();
    }
    let pool = m.knobs.hugepages.iter().find(|p| p.size_kb == 1 << 20);
    let have = match pool {
        None => "this kernel offers no 1 GiB pages".to_string(),
        Some(p) => format!(
            "1 GiB pages: {} reserved, {} free",
            p.nr.map(|n| n.to_string()).unwrap_or_else(|| "?".into()),
            p.free.map(|n| n.to_string()).unwrap_or_else(|| "?".into())
        ),
    };
    format!("{have}: too few to chase on (cpuscope never reserves them; reserve them with /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages or hugepagesz=1G hugepages=N at boot), so the climb is not split between the guest's own page walks and the host's")
}

/// The largest working set of `a` that `b` measured too, and both medians.
fn common_point(a: &PagesCurve, b: &PagesCurve) -> Option<(usize, f64, f64)> {
    let (bytes, on_a, on_b) = common_points(a, b)?;
    Some((bytes, on_a.0, on_b.0))
}

/// The same, each point as (median, min, max).
type Range = (f64, f64, f64);
fn common_points(a: &PagesCurve, b: &PagesCurve) -> Option<(usize, Range, Range)> {
    let &(bytes, m, lo, hi) = a
        .points
        .iter()
        .rev()
        .find(|p| b.points.iter().any(|q| q.0 == p.0))?;
    let &(_, mb, lob, hib) = b.points.iter().find(|q| q.0 == bytes)?;
    Some((bytes, (m, lo, hi), (mb, lob, hib)))
}

/// The TLB cost (`id`): the random curve on 4 KiB pages (`small`) minus
/// `against` (2 MiB pages, or the page-local chase) at the largest working
/// set both measured.
pub fn tlb_cost(
    id: MetricId,
    small: &PagesCurve,
    (against, what): (PagesCurve, &str),
    version: u32,
) -> Option<ResultRecord> {
    let (bytes, a, b) = common_point(small, &against)?;
    let mut rec = ResultRecord::of(id, "ns", false)
        .with_param("pages", "4k")
        .with_method(
            &format!("random-cycle latency on 4 KiB pages minus {what}, same working set: the page-walk share of a DRAM access"),
            version,
        )
        .with_note(&format!(
            "at {}: {a:.1} ns on 4 KiB pages, {b:.1} ns {what} (derived from two medians)",
            fmt_size(bytes)
        ));
    rec.value = Some(a - b);
    Some(rec)
}

fn climb_text(c: Option<f64>) -> String {
    c.map(|v| format!("{v:+.1} ns per doubling"))
        .unwrap_or_else(|| "none".into())
}

/// The latency 1 GiB pages save against 2 MiB pages at the largest working
/// set both measured (`id`: the experiment's figure), with both climbs and
/// what they mean here (`vm`); none without a common point.
pub fn saving_record(
    id: MetricId,
    huge: &PagesCurve,
    giant: &PagesCurve,
    vm: Option<bool>,
    version: u32,
) -> Option<ResultRecord> {
    let (bytes, g, h) = common_points(giant, huge)?;
    let (on_giant, on_huge) = (g.0, h.0);
    // The two points' sample ranges overlap: no saving told from the noise.
    let overlap = g.1 <= h.2 && h.1 <= g.2;
    let meaning = match vm {
        Some(true) => "in a VM 1 GiB guest pages remove the guest's own page walks, not the host's (EPT/NPT): the saving is the guest's share, the climb left on 1 GiB pages the host's walks for the guest's memory",
        _ => "the saving is what the 2 MiB pages' TLB misses and page walks cost at this working set; a climb left on 1 GiB pages is not the guest's (bare metal: their own walks, or another cause)",
    };
    let mut r = ResultRecord::of(id, "ns", false)
        .with_param("pages", "1g")
        .with_method(
            "random-cycle latency on 2 MiB pages minus the same on 1 GiB pages, same working set (the largest both curves measured; derived from two medians)",
            version,
        )
        .with_note(&format!(
            "at {}: {on_huge:.1} ns on 2 MiB pages, {on_giant:.1} ns on 1 GiB pages; page-walk climb {} on 2 MiB pages, {} on 1 GiB pages",
            fmt_size(bytes),
            climb_text(huge.climb),
            climb_text(giant.climb)
        ))
        .with_note(meaning);
    if overlap {
        r = r.with_note(&format!(
            "the two points' samples overlap ({:.1}–{:.1} ns on 2 MiB pages, {:.1}–{:.1} on 1 GiB): no saving told apart from the noise here",
            h.1, h.2, g.1, g.2
        ));
    }
    r.value = Some(on_huge - on_giant);
    Some(r.with_payload(&GiantSavingData {
        bytes,
        huge_ns: on_huge,
        giant_ns: on_giant,
        within_noise: overlap,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: MetricId = MetricId::new("latency", "giant_page_saving");

    #[test]
    fn the_saving_is_read_at_the_largest_common_working_set() {
        let huge = PagesCurve {
            points: vec![
                (1 << 20, 5.0, 5.0, 5.0),
                (64 << 20, 150.0, 149.0, 151.0),
                (256 << 20, 190.0, 185.0, 195.0),
            ],
            climb: Some(20.0),
        };
        let giant = PagesCurve {
            points: vec![
                (64 << 20, 140.0, 139.0, 141.0),
                (256 << 20, 150.0, 148.0, 186.0),
                (512 << 20, 155.0, 150.0, 160.0),
            ],
            climb: Some(4.0),
        };
        let r = saving_record(ID, &huge, &giant, Some(true), 1).unwrap();
        assert_eq!(r.value, Some(40.0));
        assert!(
            r.notes[0].starts_with("at 256 MiB: 190.0 ns on 2 MiB pages, 150.0 ns"),
            "{:?}",
            r.notes
        );
        assert!(r.notes[0]
            .contains("+20.0 ns per doubling on 2 MiB pages, +4.0 ns per doubling on 1 GiB"));
        assert!(r.notes[1].contains("the guest's share"), "{:?}", r.notes);
        assert!(
            r.notes[2].contains("no saving told apart from the noise"),
            "{:?}",
            r.notes
        );
        let apart = PagesCurve {
            points: vec![(256 << 20, 150.0, 148.0, 152.0)],
            climb: None,
        };
        let r = saving_record(ID, &huge, &apart, Some(true), 1).unwrap();
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
        let none = PagesCurve {
            points: vec![(3 << 30, 1.0, 1.0, 1.0)],
            climb: None,
        };
        assert!(saving_record(ID, &huge, &none, None, 1).is_none());
    }

    #[test]
    fn without_a_pool_the_note_says_why_and_never_reserves() {
        let m = MachineInfo::default();
        let n = pages_note(&m, false);
        assert!(n.starts_with("this kernel offers no 1 GiB pages"), "{n}");
        assert!(n.contains("never reserves"), "{n}");
        assert!(pages_note(&m, true).contains("measured"));
    }
}
