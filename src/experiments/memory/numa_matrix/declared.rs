//! The firmware's figures beside a measured cell (issue 36): what ACPI HMAT
//! declares for the cell's initiator and target node (the raw table when it
//! was read, else Linux's `accessC/initiators/`:
//! [`MemoryTiers::declared_read`](crate::machine::memory_tiers::MemoryTiers::declared_read)),
//! set against the latency or bandwidth measured from it; a mismatch beyond
//! noise is a finding. sysfs lists each target's best initiators only: where
//! the raw table was not read, another node's cell says it is not declared
//! rather than compare with someone else's figure.

use crate::experiments::memory::payload::DeclaredCell;
use crate::machine::MachineInfo;
use crate::results::schema::ResultRecord;

/// Measured and declared agree within this factor either way: the
/// firmware's figures are idle, best-case numbers, rounded by the vendor.
pub const AGREE_WITHIN: f64 = 1.5;

/// Which figure of an access class a cell is set against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Read latency, ns (the chase reads).
    Latency,
    /// Read bandwidth, declared MB/s, measured GB/s.
    Bandwidth,
}

/// The declared figure for the cell from initiator node `from` to memory
/// node `to` and where it was read: Ok(Some) when declared, Ok(None) when
/// the machine declares nothing at all (no HMAT: nothing to say), Err(why)
/// when HMAT is there but says nothing for this pair or this figure.
fn lookup(
    machine: &MachineInfo,
    from: usize,
    to: usize,
    fig: Figure,
) -> Result<Option<(String, f64)>, String> {
    let t = &machine.memory_tiers;
    if !t.declared && !t.hmat_table.read {
        return Ok(None);
    }
    let latency = fig == Figure::Latency;
    let (v, src) = t.declared_read(from, to, latency)?;
    Ok(Some((src, if latency { v } else { v / 1000.0 })))
}

/// The cell's record with the declared figure beside its measured one
/// (`to`: None for the interleave column, which no firmware declares): a
/// note, a typed payload and, beyond [`AGREE_WITHIN`] and outside the
/// samples' range, a finding. Unchanged on a machine without HMAT.
pub fn beside(
    rec: ResultRecord,
    machine: &MachineInfo,
    from: usize,
    to: Option<usize>,
    fig: Figure,
) -> ResultRecord {
    let Some(to) = to else {
        return rec;
    };
    let (unit, what) = match fig {
        Figure::Latency => ("ns", "read latency"),
        Figure::Bandwidth => ("GB/s", "read bandwidth"),
    };
    let (src, declared) = match lookup(machine, from, to, fig) {
        Ok(None) => return rec,
        Ok(Some(x)) => x,
        Err(why) => {
            return rec
                .with_note(&format!("declared {what}: n/a ({why})"))
                .with_payload(&DeclaredCell {
                    not_declared: Some(why),
                    ..DeclaredCell::default()
                })
        }
    };
    let ratio = rec.value.map(|m| m / declared);
    let spread = rec.stats.as_ref().map(|s| (s.min, s.max));
    let outside = spread.is_some_and(|(lo, hi)| declared < lo || declared > hi);
    let mismatch = ratio.filter(|r| !(1.0 / AGREE_WITHIN..=AGREE_WITHIN).contains(r) && outside);
    let mut note = format!("declared {what} (firmware, {src}): {declared} {unit}");
    if let Some(r) = ratio {
        note.push_str(&format!("; measured ×{r:.2} the declared"));
    }
    let mut rec = rec.with_note(&note);
    if let Some(r) = mismatch {
        rec = rec.with_note(&format!(
            "finding: measured {what} is ×{r:.2} the firmware's declared {declared} {unit} (beyond ×{AGREE_WITHIN} either way and outside the samples' range): the HMAT figure does not describe this path"
        ));
    }
    rec.with_payload(&DeclaredCell {
        source: Some(src),
        declared: Some(declared),
        unit: Some(unit.to_string()),
        measured_over_declared: ratio,
        mismatch: mismatch.is_some(),
        not_declared: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::CpuSet;
    use crate::machine::memory_tiers::{Access, MemoryTiers, NodeTier};
    use crate::results::schema::MetricId;

    /// Node 1, memory-only, 250 ns and 61440 MB/s declared for initiator 0.
    fn machine() -> MachineInfo {
        MachineInfo {
            memory_tiers: MemoryTiers {
                declared: true,
                nodes: vec![NodeTier {
                    node: 1,
                    access: vec![Access {
                        class: 1,
                        initiators: CpuSet::from_ids([0]),
                        read_latency_ns: Some(250),
                        read_bandwidth_mb_s: Some(61440),
                        ..Access::default()
                    }],
                    memory_only: Some(true),
                    ..NodeTier::default()
                }],
                ..MemoryTiers::default()
            },
            ..MachineInfo::default()
        }
    }

    fn cell(samples: &[f64]) -> ResultRecord {
        // (numa_matrix's LATENCY, not imported: mod.rs imports this file.)
        let id = MetricId::new("numa_matrix", "latency");
        ResultRecord::of(id, "ns", false).with_samples(samples.to_vec())
    }

    #[test]
    fn a_declared_figure_is_set_beside_the_measured_one() {
        let m = machine();
        let r = beside(
            cell(&[240.0, 255.0, 260.0]),
            &m,
            0,
            Some(1),
            Figure::Latency,
        );
        let d = r.data_as::<DeclaredCell>().expect("a payload");
        assert_eq!(d.declared, Some(250.0));
        assert!(d.source.as_deref().unwrap().contains("access1 via sysfs"));
        assert!(!d.mismatch, "{d:?}");
        assert!((d.measured_over_declared.unwrap() - 1.02).abs() < 0.01);
        assert!(r.notes.iter().any(|n| n.contains("declared read latency")));
        // Three times slower, and the samples nowhere near: a finding.
        let r = beside(
            cell(&[700.0, 760.0, 800.0]),
            &m,
            0,
            Some(1),
            Figure::Latency,
        );
        let d = r.data_as::<DeclaredCell>().unwrap();
        assert!(d.mismatch, "{d:?}");
        assert!(r.notes.iter().any(|n| n.starts_with("finding: measured")));
        // Bandwidth: MB/s declared, GB/s measured.
        let r = beside(cell(&[30.0, 31.0, 32.0]), &m, 0, Some(1), Figure::Bandwidth);
        let d = r.data_as::<DeclaredCell>().unwrap();
        assert_eq!(d.declared, Some(61.44));
        assert!(d.mismatch, "half the declared bandwidth: {d:?}");
    }

    #[test]
    fn another_initiator_and_a_machine_without_hmat_are_said_so() {
        let m = machine();
        let r = beside(cell(&[100.0]), &m, 2, Some(1), Figure::Latency);
        let d = r.data_as::<DeclaredCell>().unwrap();
        let why = d.not_declared.expect("why");
        assert!(why.contains("best initiators only"), "{why}");
        assert!(why.contains("access1 from nodes 0"), "{why}");
        // Interleave, and no HMAT: the record is left as it is.
        let plain = cell(&[100.0]);
        let r = beside(plain.clone(), &m, 0, None, Figure::Latency);
        assert_eq!(r.notes, plain.notes);
        let r = beside(
            plain.clone(),
            &MachineInfo::default(),
            0,
            Some(1),
            Figure::Latency,
        );
        assert!(r.data.is_none() && r.notes == plain.notes);
    }
}
