//! What a streaming thread of the loaded-latency curve runs: one STREAM
//! kernel, or blocks of two kernels in turn for a read/write mix no kernel
//! has (two read blocks then a copy block: 3 bytes read to 1 written).

use crate::experiments::memory::bandwidth::Variant;
use crate::kernels::memory::BwKernel;

/// Arrays a streaming thread of `kernel` runs over (copy gets one more:
/// STREAM's copy reads one array and writes another, both beside a third
/// for the kernel's checks).
pub fn arrays_of(kernel: BwKernel) -> usize {
    kernel.arrays().max(1) + usize::from(kernel == BwKernel::Copy)
}

/// The kernels a streaming thread runs block after block, in turn (one:
/// a plain kernel), each at the same width and store.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    pub cycle: Vec<Variant>,
}

impl Traffic {
    /// One kernel, every block.
    pub fn plain(v: Variant) -> Traffic {
        Traffic { cycle: vec![v] }
    }

    /// The variant of block `i` (the cycle's, in turn).
    pub fn block(&self, i: usize) -> &Variant {
        &self.cycle[i % self.cycle.len()]
    }

    /// Arrays its threads run over: the most any of its kernels needs.
    pub fn arrays(&self) -> usize {
        self.cycle
            .iter()
            .map(|v| arrays_of(v.kernel))
            .max()
            .unwrap_or(1)
    }

    /// Its words in the method line: `STREAM read`, or `blocks of STREAM
    /// read, read, copy in turn`.
    pub fn words(&self) -> String {
        let names: Vec<&str> = self.cycle.iter().map(|v| v.kernel.name()).collect();
        if names.len() == 1 {
            format!("STREAM {}", names[0])
        } else {
            format!("blocks of STREAM {} in turn", names.join(", "))
        }
    }

    /// Its kernels' names for the progress line (`read`, `read+read+copy`).
    pub fn name(&self) -> String {
        let names: Vec<&str> = self.cycle.iter().map(|v| v.kernel.name()).collect();
        names.join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::memory::{StoreKind, Width};

    #[test]
    fn a_cycle_runs_its_kernels_in_turn_over_the_arrays_the_largest_needs() {
        let v = |k| Variant::new(k, Width::Scalar, StoreKind::Normal);
        let t = Traffic {
            cycle: vec![v(BwKernel::Read), v(BwKernel::Read), v(BwKernel::Copy)],
        };
        let kinds: Vec<BwKernel> = (0..6).map(|i| t.block(i).kernel).collect();
        assert_eq!(
            kinds,
            [
                BwKernel::Read,
                BwKernel::Read,
                BwKernel::Copy,
                BwKernel::Read,
                BwKernel::Read,
                BwKernel::Copy
            ]
        );
        assert_eq!(t.arrays(), 3);
        assert_eq!(t.words(), "blocks of STREAM read, read, copy in turn");
        assert_eq!(t.name(), "read+read+copy");
        let p = Traffic::plain(v(BwKernel::Read));
        assert_eq!(
            (p.arrays(), p.words(), p.name()),
            (
                1,
                "STREAM read".to_string(),
                BwKernel::Read.name().to_string()
            )
        );
    }
}
