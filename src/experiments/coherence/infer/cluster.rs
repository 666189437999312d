//! The clustering under the inference (docs/methods-c2c.md, "Inference"): the latency
//! matrix, average linkage by the nearest-neighbour chain, the cuts into levels,
//! and the partition arithmetic (Jaccard, refinement). Never measures.

use crate::base::CpuSet;
use serde::Serialize;
use std::collections::BTreeMap;

use super::declared::count_groups;

/// Relative gap between sorted merge heights that starts a new level.
pub const LEVEL_GAP_REL: f64 = 0.08;
/// Absolute gap (ns) between sorted merge heights that starts a new level.
pub const LEVEL_GAP_ABS_NS: f64 = 2.0;

/// A latency matrix over `cpus`, in ns (one-way); None where not measured.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyMatrix {
    pub cpus: Vec<usize>,
    /// Row-major n×n.
    pub ns: Vec<Option<f64>>,
    /// Relative noise of each pair's figure (row-major n×n, e.g. 0.03 for
    /// 3%); None where unknown (then only the spread between pairs counts).
    #[serde(skip)]
    pub noise: Vec<Option<f64>>,
}

impl LatencyMatrix {
    pub fn new(cpus: Vec<usize>) -> LatencyMatrix {
        let n = cpus.len();
        LatencyMatrix {
            cpus,
            ns: vec![None; n * n],
            noise: vec![None; n * n],
        }
    }

    /// Set the relative noise of the pair (i,j), both directions.
    pub fn set_noise_sym(&mut self, i: usize, j: usize, rel: f64) {
        let n = self.n();
        if self.noise.len() != n * n {
            self.noise = vec![None; n * n];
        }
        if rel.is_finite() && rel >= 0.0 {
            self.noise[i * n + j] = Some(rel);
            self.noise[j * n + i] = Some(rel);
        }
    }

    /// Relative noise of the pair (i,j), if known.
    pub fn noise_of(&self, i: usize, j: usize) -> Option<f64> {
        let n = self.n();
        self.noise.get(i * n + j).copied().flatten()
    }

    pub fn n(&self) -> usize {
        self.cpus.len()
    }

    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        self.ns[i * self.n() + j]
    }

    /// Set both (i,j) and (j,i).
    pub fn set_sym(&mut self, i: usize, j: usize, v: f64) {
        let n = self.n();
        self.ns[i * n + j] = Some(v);
        self.ns[j * n + i] = Some(v);
    }

    /// Symmetric distance: the mean of the two directions where both exist.
    pub fn dist(&self, i: usize, j: usize) -> Option<f64> {
        match (self.get(i, j), self.get(j, i)) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (a, b) => a.or(b),
        }
    }

    /// Measured pairs i<j.
    pub fn measured_pairs(&self) -> usize {
        let n = self.n();
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| self.dist(i, j).is_some())
            .count()
    }
}

/// A merge of two clusters at a height.
#[derive(Clone, Copy, Debug)]
pub(super) struct Merge {
    pub(super) a: usize,
    pub(super) b: usize,
    pub(super) height: f64,
}

/// Average-linkage clustering by the nearest-neighbour chain. Returns merges
/// in the order made; cluster ids: 0..n are CPUs, n.. are merges in order.
/// Clusters with no measured pair between them are never merged.
pub(super) fn average_linkage(m: &LatencyMatrix) -> Vec<Merge> {
    let n = m.n();
    if n < 2 {
        return Vec::new();
    }
    let mut link = Linkage::new(m);
    let mut merges = Vec::new();
    let mut chain: Vec<usize> = Vec::new();
    let mut remaining = n;
    while remaining > 1 {
        if chain.is_empty() {
            match (0..n).find(|&s| link.active[s]) {
                Some(s) => chain.push(s),
                None => break,
            }
        }
        let a = chain[chain.len() - 1];
        let prev = if chain.len() >= 2 {
            Some(chain[chain.len() - 2])
        } else {
            None
        };
        let Some((b, db)) = link.nearest(a, prev) else {
            break;
        };
        if !db.is_finite() {
            // a reaches nothing measured: it stays a root.
            link.active[a] = false;
            remaining -= 1;
            chain.clear();
            continue;
        }
        if Some(b) == prev {
            chain.pop();
            chain.pop();
            merges.push(link.merge(a, b, db));
            remaining -= 1;
        } else {
            chain.push(b);
        }
    }
    merges
}

/// The clusters of [`average_linkage`] as it goes, by slot (a slot holds
/// a CPU's cluster, then the merges into it).
struct Linkage {
    n: usize,
    /// Sum/count of measured distances between active clusters, indexed
    /// by slot.
    sum: Vec<f64>,
    cnt: Vec<u32>,
    active: Vec<bool>,
    /// Cluster id held by each slot.
    id: Vec<usize>,
    next_id: usize,
}

impl Linkage {
    /// One cluster per CPU of `m`.
    fn new(m: &LatencyMatrix) -> Linkage {
        let n = m.n();
        let mut sum = vec![0.0f64; n * n];
        let mut cnt = vec![0u32; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    if let Some(d) = m.dist(i, j) {
                        sum[i * n + j] = d;
                        cnt[i * n + j] = 1;
                    }
                }
            }
        }
        Linkage {
            n,
            sum,
            cnt,
            active: vec![true; n],
            id: (0..n).collect::<Vec<usize>>(),
            next_id: n,
        }
    }

    /// Average distance of the clusters in slots `a` and `b`; infinite
    /// when no measured pair joins them.
    fn d(&self, a: usize, b: usize) -> f64 {
        let n = self.n;
        let c = self.cnt[a * n + b];
        if c == 0 {
            f64::INFINITY
        } else {
            self.sum[a * n + b] / c as f64
        }
    }

    /// Nearest active neighbour of a (prefer prev on ties).
    fn nearest(&self, a: usize, prev: Option<usize>) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = prev.map(|p| (p, self.d(a, p)));
        for (s, &act) in self.active.iter().enumerate() {
            if s == a || !act || Some(s) == prev {
                continue;
            }
            let ds = self.d(a, s);
            if best.is_none_or(|(_, bd)| ds < bd) {
                best = Some((s, ds));
            }
        }
        best
    }

    /// Merge b into a's slot, at height `db`.
    fn merge(&mut self, a: usize, b: usize, db: f64) -> Merge {
        let n = self.n;
        let merge = Merge {
            a: self.id[a],
            b: self.id[b],
            height: db,
        };
        let (sum, cnt) = (&mut self.sum, &mut self.cnt);
        for (s, &act) in self.active.iter().enumerate() {
            if s != a && s != b && act {
                sum[a * n + s] += sum[b * n + s];
                cnt[a * n + s] += cnt[b * n + s];
                sum[s * n + a] = sum[a * n + s];
                cnt[s * n + a] = cnt[a * n + s];
            }
        }
        self.active[b] = false;
        self.id[a] = self.next_id;
        self.next_id += 1;
        merge
    }
}

/// Cut sorted merge heights into levels: returns, per level, the largest
/// height it holds.
pub(super) fn level_cuts(heights: &[f64]) -> Vec<f64> {
    let mut h: Vec<f64> = heights.to_vec();
    h.sort_by(|a, b| a.total_cmp(b));
    let mut cuts = Vec::new();
    for w in 0..h.len() {
        let last = w + 1 == h.len();
        if last {
            cuts.push(h[w]);
        } else {
            let gap = h[w + 1] - h[w];
            if gap > LEVEL_GAP_ABS_NS && gap > LEVEL_GAP_REL * h[w] {
                cuts.push(h[w]);
            }
        }
    }
    cuts
}

/// Union-find over CPU indices.
pub(super) struct Dsu(Vec<usize>);
impl Dsu {
    fn find(&mut self, x: usize) -> usize {
        let mut r = x;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut y = x;
        while self.0[y] != r {
            let nx = self.0[y];
            self.0[y] = r;
            y = nx;
        }
        r
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.0[rb] = ra;
        }
    }
}

/// Partition (group number per CPU index, renumbered in order of first CPU).
pub(super) fn renumber(dsu: &mut Dsu, n: usize) -> Vec<usize> {
    let mut map: BTreeMap<usize, usize> = BTreeMap::new();
    (0..n)
        .map(|i| {
            let r = dsu.find(i);
            let next = map.len();
            *map.entry(r).or_insert(next)
        })
        .collect()
}

/// (both, only_a, only_b): counts of CPU pairs in one group in both
/// partitions, only in `a`, only in `b`.
pub(super) fn pair_agreement(a: &[usize], b: &[usize]) -> (u64, u64, u64) {
    let n = a.len();
    let (mut both, mut oa, mut ob) = (0u64, 0u64, 0u64);
    for i in 0..n {
        for j in i + 1..n {
            match (a[i] == a[j], b[i] == b[j]) {
                (true, true) => both += 1,
                (true, false) => oa += 1,
                (false, true) => ob += 1,
                _ => {}
            }
        }
    }
    (both, oa, ob)
}

pub(super) fn jaccard(a: &[usize], b: &[usize]) -> f64 {
    let (both, oa, ob) = pair_agreement(a, b);
    let u = both + oa + ob;
    if u == 0 {
        1.0
    } else {
        both as f64 / u as f64
    }
}

/// True when every group of `fine` lies inside one group of `coarse`.
pub(super) fn refines(fine: &[usize], coarse: &[usize]) -> bool {
    let mut map: BTreeMap<usize, usize> = BTreeMap::new();
    for (f, c) in fine.iter().zip(coarse) {
        match map.get(f) {
            Some(x) if x != c => return false,
            _ => {
                map.insert(*f, *c);
            }
        }
    }
    true
}

pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub(super) fn groups_of(part: &[usize], cpus: &[usize]) -> Vec<Vec<usize>> {
    let mut g: Vec<Vec<usize>> = vec![Vec::new(); count_groups(part)];
    for (i, &p) in part.iter().enumerate() {
        g[p].push(cpus[i]);
    }
    g
}

pub(super) fn fmt_cpus(v: &[usize]) -> String {
    CpuSet::from_ids(v.iter().copied()).to_string()
}

/// Step of `infer`: the partition of the `n` CPUs at each cut, replaying the
/// merges by height (DSU).
pub(super) fn partitions_at_cuts(merges: &[Merge], cuts: &[f64], n: usize) -> Vec<Vec<usize>> {
    let mut parts: Vec<Vec<usize>> = Vec::new();
    // Replay merges sorted by height; after each cut, record the partition.
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut order: Vec<(f64, usize, usize)> = Vec::new();
    for mg in merges {
        let ma = members[mg.a].clone();
        let mb = members[mg.b].clone();
        let mut u = ma.clone();
        u.extend_from_slice(&mb);
        order.push((mg.height, ma[0], mb[0]));
        members.push(u);
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut dsu = Dsu((0..n).collect());
    let mut k = 0;
    for &cut in cuts {
        while k < order.len() && order[k].0 <= cut {
            dsu.union(order[k].1, order[k].2);
            k += 1;
        }
        parts.push(renumber(&mut dsu, n));
    }
    parts
}
