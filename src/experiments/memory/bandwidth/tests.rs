//! Unit tests of `bandwidth` (beside it, to keep the module readable).

use super::*;

#[test]
fn every_kernel_names_its_figure() {
    for k in BwKernel::ALL {
        let id = kernel_metric(k);
        assert_eq!((id.experiment, id.metric), (EXP, k.name()));
    }
}
