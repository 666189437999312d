//! NUMA matrices: latency (one CPU of node i chasing memory bound to node j)
//! and bandwidth (all CPUs of node i reading memory bound to node j), plus
//! interleave over all memory nodes, set against the kernel's declared
//! distance matrix (measured/declared ratio tables: "distances look fake").

pub mod declared;
pub mod text;
pub mod view;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::experiments::common::{
    self, fixed_policy, huge_buffer, memory_nodes, node_cpus, CacheFacts, DRAM_REACH, MIB,
};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::memory::bandwidth::{measure_variant, StreamArrays, Variant};
use crate::experiments::memory::latency::chase_samples;
use crate::experiments::memory::payload::{NumaMatrixData, INTERLEAVE_TARGET};
use crate::kernels::memory::{BwKernel, Layout, PointerChain, StoreKind, Width};
use crate::machine::MachineInfo;
use crate::placement::mempolicy::{page_nodes, MemPolicy};
use crate::placement::pin::AffinityGuard;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub struct NumaMatrix;

pub const EXP: &str = "numa_matrix";
/// Latency from a node's CPU to a memory target (params cpu_node, mem).
pub const LATENCY: MetricId = MetricId::new(EXP, "latency");
/// Read bandwidth from a node's CPUs to a memory target.
pub const BANDWIDTH: MetricId = MetricId::new(EXP, "bandwidth");
/// The largest remote/local latency ratio; both matrices in data.
pub const MATRIX: MetricId = MetricId::new(EXP, "matrix");
const METHOD_VERSION: u32 = 1;

/// A memory target: one node, or interleave over several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    Node(usize),
    Interleave(Vec<usize>),
}

impl Target {
    pub fn label(&self) -> String {
        match self {
            Target::Node(n) => n.to_string(),
            Target::Interleave(_) => INTERLEAVE_TARGET.into(),
        }
    }
    /// The node of a one-node target (None: interleave).
    pub fn node(&self) -> Option<usize> {
        match self {
            Target::Node(n) => Some(*n),
            Target::Interleave(_) => None,
        }
    }
    fn policy(&self) -> MemPolicy {
        match self {
            Target::Node(n) => MemPolicy::Bind(CpuSet::from_ids([*n])),
            Target::Interleave(v) => MemPolicy::Interleave(CpuSet::from_ids(v.iter().copied())),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct NumaPlan {
    /// Rows: nodes with usable CPUs, and those CPUs.
    pub rows: Vec<(usize, CpuSet)>,
    /// Columns: memory targets.
    pub targets: Vec<Target>,
    pub latency_bytes: usize,
    pub array_bytes: usize,
    pub reps: usize,
    pub latency: bool,
    pub bandwidth: bool,
    /// Why no cell is measured (the working sets that reach memory do not
    /// fit the memory this process may take); None to measure.
    pub unavailable: Option<String>,
    pub notes: Vec<String>,
}

pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> NumaPlan {
    let cf = CacheFacts::of(machine);
    let mut notes = Vec::new();
    if let Some(n) = &cf.note {
        notes.push(n.clone());
    }
    let rows = node_cpus(machine, cpus);
    let mem = memory_nodes(machine);
    let mut targets: Vec<Target> = mem.iter().map(|&n| Target::Node(n)).collect();
    if mem.len() > 1 {
        targets.push(Target::Interleave(mem.clone()));
    }
    let cells = (rows.len() * targets.len()).max(1);
    // DRAM working set: 4x the LLC of one instance (what one CPU sees),
    // capped by memory and, with many cells, kept modest in quick.
    // The bandwidth array: 4x the last-level caches a row's CPUs can fill
    // (the largest row), STREAM's rule for the readers of one cell.
    let serving = rows
        .iter()
        .map(|(_, c)| cf.llc_serving(machine, c))
        .max()
        .unwrap_or(cf.llc_total);
    let want_lat = (cf.llc * 4).max(64 * MIB);
    let want_arr = (serving * 4).max(64 * MIB);
    let room = common::memory_room();
    let cap = common::auto_cap_of(&room) / 2;
    let mut lat = want_lat.min(cap).max(64 * common::KIB);
    let mut arr = want_arr.min(cap).max(64 * common::KIB);
    if lat < want_lat || arr < want_arr {
        notes.push(common::capped_note(
            "working sets (latency chain and bandwidth array)",
            lat + arr,
            want_lat + want_arr,
            &room,
        ));
    }
    let reach = cf.llc.saturating_mul(DRAM_REACH);
    let unavailable = (lat < reach).then(|| {
        common::fit_or_reason(
            &room,
            &format!(
                "the matrix's cells need (a chain and an array, each {DRAM_REACH} × the {} last-level cache)",
                fmt_size(cf.llc)
            ),
            reach * 2,
        )
        .err()
        .unwrap_or_else(|| {
            format!(
                "the chain of {} stays below {DRAM_REACH} × the last-level cache",
                fmt_size(lat)
            )
        })
    });
    if profile == Profile::Quick && cells > 4 {
        lat = lat.min(256 * MIB);
        arr = arr.min(512 * MIB);
        notes.push("quick profile: working sets capped at 256 MiB (latency) and 512 MiB (bandwidth) per cell".into());
    }
    NumaPlan {
        rows,
        targets,
        latency_bytes: lat,
        array_bytes: arr,
        reps: match profile {
            Profile::Quick => 5,
            Profile::Standard => 7,
            Profile::Full => 15,
        },
        latency: true,
        bandwidth: true,
        unavailable,
        notes,
    }
}

/// Seconds the plan takes, column by column: per target, the chain's
/// touch and build (~8 ns per line) and the array's first touch (~4 GB/s),
/// once; per cell, the chase's warm-up (up to 200k loads at ~100 ns) and
/// samples (~1 ms each), and the read passes at
/// [`common::est_stream_bw`] for the row's CPUs.
pub fn estimate(plan: &NumaPlan) -> f64 {
    let cols = plan.targets.len() as f64;
    let lines = plan.latency_bytes as f64 / 64.0;
    let warm = (lines * 2.0).min(200_000.0) * 100e-9;
    let samples = (plan.reps.max(3) * 3) as f64 * 1e-3;
    let mut t = 0.0;
    if plan.latency {
        t += cols * (lines * 8e-9 + plan.rows.len() as f64 * (warm + samples + 0.01));
    }
    if plan.bandwidth {
        let passes: f64 = plan
            .rows
            .iter()
            .map(|(_, c)| {
                plan.array_bytes as f64 / common::est_stream_bw(c.len(), 1)
                    * (plan.reps as f64 + 1.0)
            })
            .sum();
        t += cols * (plan.array_bytes as f64 / 4e9 + passes);
    }
    t
}

/// Declared distance from node i to node j (None when not known).
fn declared(machine: &MachineInfo, i: usize, j: usize) -> Option<u32> {
    let order: Vec<usize> = machine.numa_nodes.iter().map(|n| n.id).collect();
    let row = machine.numa_nodes.iter().find(|n| n.id == i)?;
    let k = order.iter().position(|&x| x == j)?;
    row.distances.get(k).copied()
}

/// Compare measured latency ratios (cell / local cell of the row) with the
/// declared distance ratios (d_ij / d_ii). Returns the table and findings.
pub fn distance_check(
    rows: &[usize],
    cols: &[usize],
    lat: &[Vec<Option<f64>>],
    dist: impl Fn(usize, usize) -> Option<u32>,
) -> (Vec<Vec<Option<f64>>>, Vec<String>) {
    let mut table = Vec::new();
    let mut findings = Vec::new();
    for (ri, &i) in rows.iter().enumerate() {
        let local = cols.iter().position(|&c| c == i).and_then(|k| lat[ri][k]);
        let dii = dist(i, i);
        let mut row = Vec::new();
        for (ci, &j) in cols.iter().enumerate() {
            let v = match (lat[ri][ci], local, dist(i, j), dii) {
                (Some(m), Some(l), Some(d), Some(d0)) if l > 0.0 && d0 > 0 => {
                    let measured = m / l;
                    let decl = d as f64 / d0 as f64;
                    Some(measured / decl)
                }
                _ => None,
            };
            row.push(v);
        }
        table.push(row);
    }
    // Rank order per row: a node declared farther should not be measured nearer.
    for (ri, &i) in rows.iter().enumerate() {
        for (a, &ja) in cols.iter().enumerate() {
            for (b, &jb) in cols.iter().enumerate() {
                if let (Some(da), Some(db), Some(la), Some(lb)) =
                    (dist(i, ja), dist(i, jb), lat[ri][a], lat[ri][b])
                {
                    if da < db && la > lb * 1.05 {
                        findings.push(format!(
                            "finding: from node {i}, node {ja} is declared nearer (distance {da}) than node {jb} ({db}) but measures slower ({la:.0} ns vs {lb:.0} ns): the declared distances do not describe this machine"
                        ));
                    }
                }
            }
        }
        for (ci, v) in table[ri].iter().enumerate() {
            if let Some(r) = v {
                if !(0.67..=1.5).contains(r) {
                    findings.push(format!(
                        "finding: node {i} -> node {}: measured latency ratio differs from the declared distance ratio by ×{r:.2} (declared distances look {})",
                        cols[ci],
                        if *r < 1.0 { "inflated" } else { "understated" }
                    ));
                }
            }
        }
    }
    (table, findings)
}

/// A matrix of figures, rows × memory targets (None: not measured).
type Cells = Vec<Vec<Option<f64>>>;

/// The note on every record of a one-node machine.
const SINGLE_NOTE: &str = "one NUMA node: the matrix is this single cell (no remote memory to compare with; interleave is the same as local)";

pub fn run_plan(
    ctx: &mut ExpCtx,
    plan: &NumaPlan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    if let Some(why) = &plan.unavailable {
        for (id, unit) in [(LATENCY, "ns"), (BANDWIDTH, "GB/s"), (MATRIX, "ratio")] {
            out(ResultRecord::unavailable(
                id.experiment,
                id.metric,
                unit,
                why,
            ))?;
        }
        return Ok(());
    }
    let single = plan.rows.len() <= 1 && plan.targets.len() <= 1;
    let nrow = plan.rows.len();
    let ncol = plan.targets.len();
    let mut lat: Cells = vec![vec![None; ncol]; nrow];
    let mut bw: Cells = vec![vec![None; ncol]; nrow];
    let mut reasons: Vec<String> = Vec::new();
    let read = Variant::new(
        BwKernel::Read,
        Width::widest().unwrap_or(Width::Scalar),
        StoreKind::Normal,
    );
    // Column by column: each memory target's chain and array are made once
    // and read from every row's CPUs (the touch is the costly part of a cell).
    for (ci, t) in plan.targets.iter().enumerate() {
        if plan.latency {
            let cells = latency_column(ctx, plan, t, single, &mut reasons);
            for (ri, rec, value) in cells {
                lat[ri][ci] = value;
                out(rec)?;
            }
        }
        if plan.bandwidth {
            let cells = bandwidth_column(ctx, plan, t, single, &read, &mut reasons);
            for (ri, rec, value) in cells {
                bw[ri][ci] = value;
                out(rec)?;
            }
        }
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
    }
    out(matrix_record(
        ctx.machine,
        plan,
        (lat, bw),
        &reasons,
        single,
    ))
}

/// The records of one column, each with its row's index and figure (None:
/// not measured, the reason added to `reasons`).
type Column = Vec<(usize, ResultRecord, Option<f64>)>;

/// The latency records of target `t`'s column: one chain over memory bound
/// to `t`, built once (pinned to the first row's CPU), chased from the first
/// CPU of each row.
fn latency_column(
    ctx: &mut ExpCtx,
    plan: &NumaPlan,
    t: &Target,
    single: bool,
    reasons: &mut Vec<String>,
) -> Column {
    let first = plan.rows.iter().find_map(|(_, c)| c.first());
    let built = first.map(|cpu| build_chain(plan, cpu, t));
    let mut cells = Vec::new();
    for (ri, (node, cpus)) in plan.rows.iter().enumerate() {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let (Some(cpu), Some(built)) = (cpus.first(), built.as_ref()) else {
            continue;
        };
        (ctx.step)(&format!(
            "latency: CPU {cpu} (node {node}) -> memory {}",
            t.label()
        ));
        let r = match built {
            Ok((chain, placed)) => {
                chase_from(plan, chain, cpu, ctx.stop).map(|s| (s, Some(placed)))
            }
            Err(e) => Err(anyhow!("{e:#}")),
        };
        let rec = ResultRecord::of(LATENCY, "ns", false)
            .with_method(&format!("random pointer chase over {} bound to the memory target, from CPU {cpu} of the row's node; median of samples", fmt_size(plan.latency_bytes)), METHOD_VERSION);
        let at = CellAt {
            node: *node,
            t,
            single,
        };
        let (rec, value) = at.finish(ctx.machine, rec, r, declared::Figure::Latency, reasons);
        cells.push((ri, rec, value));
    }
    cells
}

/// The bandwidth records of target `t`'s column (`read`: the STREAM read
/// variant): one array bound to `t`, touched once by the first row's CPUs,
/// read by every usable CPU of each row in turn.
fn bandwidth_column(
    ctx: &mut ExpCtx,
    plan: &NumaPlan,
    t: &Target,
    single: bool,
    read: &Variant,
    reasons: &mut Vec<String>,
) -> Column {
    let width = read.width;
    let first = plan.rows.iter().find(|(_, c)| !c.is_empty());
    let arrays = first.map(|(_, cpus)| column_arrays(plan, cpus, t));
    let mut cells = Vec::new();
    for (ri, (node, cpus)) in plan.rows.iter().enumerate() {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let Some(arrays) = arrays.as_ref().filter(|_| !cpus.is_empty()) else {
            continue;
        };
        (ctx.step)(&format!(
            "bandwidth: CPUs {cpus} (node {node}) -> memory {}",
            t.label()
        ));
        let r = match arrays {
            Ok(a) => read_from(plan, a, cpus, read, ctx.stop),
            Err(e) => Err(anyhow!("{e:#}")),
        };
        let rec = ResultRecord::of(BANDWIDTH, "GB/s", true)
            .with_method(&format!("STREAM read ({}) by every usable CPU of the row's node ({cpus}), array of {} bound to the memory target; median of rounds", width.name(), fmt_size(plan.array_bytes)), METHOD_VERSION);
        let at = CellAt {
            node: *node,
            t,
            single,
        };
        let r = r.map(|s| (s, None));
        let (rec, value) = at.finish(ctx.machine, rec, r, declared::Figure::Bandwidth, reasons);
        cells.push((ri, rec, value));
    }
    cells
}

/// Where a cell of the matrices sits: its row's node, its memory target,
/// and whether the machine has one node only.
struct CellAt<'a> {
    node: usize,
    t: &'a Target,
    single: bool,
}

impl CellAt<'_> {
    /// The cell's record `rec` (figure kind and method set) finished with
    /// what was measured, `r`: the samples and a note (where the pages
    /// went), or why not (added to `reasons`); then its params, the
    /// one-node note and the declared figure beside it. Returns the record
    /// and its value.
    fn finish(
        &self,
        machine: &MachineInfo,
        rec: ResultRecord,
        r: Result<(Vec<f64>, Option<&String>)>,
        figure: declared::Figure,
        reasons: &mut Vec<String>,
    ) -> (ResultRecord, Option<f64>) {
        let (node, t) = (self.node, self.t);
        let mut rec = rec
            .with_param("cpu_node", node as u64)
            .with_param("mem", t.label());
        match r {
            Ok((s, note)) => {
                rec = rec.with_samples(s);
                if let Some(n) = note {
                    rec = rec.with_note(n);
                }
            }
            Err(e) => {
                let m = format!("{e:#}");
                let what = match figure {
                    declared::Figure::Latency => "latency",
                    declared::Figure::Bandwidth => "bandwidth",
                };
                reasons.push(format!("{what} {node}->{}: {m}", t.label()));
                rec.unavailable_reason = Some(m);
            }
        }
        if self.single {
            rec = rec.with_note(SINGLE_NOTE);
        }
        let value = rec.value;
        (
            declared::beside(rec, machine, node, t.node(), figure),
            value,
        )
    }
}

/// A random chain over memory bound to `t`, built pinned to `cpu`, and
/// where its pages went (and how huge pages were had).
fn build_chain(plan: &NumaPlan, cpu: usize, t: &Target) -> Result<(PointerChain, String)> {
    let _pin = AffinityGuard::pin(cpu)?;
    let (buf, outcome) = huge_buffer(plan.latency_bytes, Some(t.policy()), |b| {
        b.touch_here();
        Ok(())
    })?;
    let placed = placement_text(&buf, t);
    let chain = PointerChain::build(buf, plan.latency_bytes, Layout::Random { stride: 64 }, 7)?;
    Ok((
        chain,
        format!("{placed}; 2 MiB pages by {}", outcome.mechanism),
    ))
}

/// Latency samples of one cell: CPU `cpu` chases the column's chain.
fn chase_from(
    plan: &NumaPlan,
    chain: &PointerChain,
    cpu: usize,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    let _pin = AffinityGuard::pin(cpu)?;
    chase_samples(
        chain,
        plan.reps.max(3) * 3,
        Duration::from_micros(500),
        stop,
    )
}

/// The column's array bound to `t`, first-touched by a team on `cpus`
/// (interleave: the policy set on each thread while it touches).
fn column_arrays(plan: &NumaPlan, cpus: &CpuSet, t: &Target) -> Result<StreamArrays> {
    let mut team = Team::new(&cpus.to_vec())?;
    match t {
        Target::Node(n) => StreamArrays::with_count(&mut team, plan.array_bytes, Some(*n), 1),
        Target::Interleave(_) => {
            let pol = t.policy();
            team.run_round(|_| crate::placement::mempolicy::set_thread_policy(&pol))?
                .results
                .into_iter()
                .collect::<Result<Vec<()>>>()?;
            let a = StreamArrays::with_count(&mut team, plan.array_bytes, None, 1);
            team.run_round(|_| {
                crate::placement::mempolicy::set_thread_policy(&MemPolicy::Default)
            })?;
            a
        }
    }
}

/// Bandwidth samples of one cell: every CPU of the row (`cpus`) reads the
/// column's array.
fn read_from(
    plan: &NumaPlan,
    arr: &StreamArrays,
    cpus: &CpuSet,
    read: &Variant,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    let mut team = Team::new(&cpus.to_vec())?;
    let len = arr.chunk(team.size());
    let p = measure_variant(&mut team, arr, read, len, &fixed_policy(plan.reps, 1), stop)?;
    Ok(p.samples)
}

/// The matrix record: both matrices (latency, bandwidth: rows × targets),
/// the declared distances and the measured/declared table; value: the
/// largest remote/local latency ratio, or why there is none (`reasons`:
/// the cells that failed).
fn matrix_record(
    machine: &MachineInfo,
    plan: &NumaPlan,
    (lat, bw): (Cells, Cells),
    reasons: &[String],
    single: bool,
) -> ResultRecord {
    // The matrices and the distance check.
    let rows: Vec<usize> = plan.rows.iter().map(|r| r.0).collect();
    let cols: Vec<usize> = plan
        .targets
        .iter()
        .filter_map(|t| match t {
            Target::Node(n) => Some(*n),
            _ => None,
        })
        .collect();
    let node_lat: Vec<Vec<Option<f64>>> = lat.iter().map(|r| r[..cols.len()].to_vec()).collect();
    let (ratio, findings) = distance_check(&rows, &cols, &node_lat, |i, j| declared(machine, i, j));
    let declared_m: Vec<Vec<Option<u32>>> = rows
        .iter()
        .map(|&i| cols.iter().map(|&j| declared(machine, i, j)).collect())
        .collect();
    let worst = rows
        .iter()
        .enumerate()
        .filter_map(|(ri, &i)| {
            let l = cols
                .iter()
                .position(|&c| c == i)
                .and_then(|k| node_lat[ri][k])?;
            node_lat[ri]
                .iter()
                .flatten()
                .map(|m| m / l)
                .reduce(f64::max)
        })
        .reduce(f64::max);
    let mut rec = ResultRecord::of(MATRIX, "ratio", false)
        .with_method("latency and bandwidth matrices; value = largest remote/local latency ratio over the rows; ratio table = (measured latency ratio) / (declared distance ratio)", METHOD_VERSION)
        .with_payload(&NumaMatrixData {
            rows,
            targets: plan.targets.iter().map(|t| t.label()).collect(),
            latency_ns: lat,
            bandwidth_gbs: bw,
            declared_distance: declared_m,
            measured_over_declared: ratio,
            latency_bytes: plan.latency_bytes,
            array_bytes: plan.array_bytes,
        });
    rec.value = worst;
    if worst.is_none() {
        rec.unavailable_reason = Some(if reasons.is_empty() {
            "no local latency cell was measured".into()
        } else {
            reasons.join("; ")
        });
    }
    if single {
        rec = rec.with_note(SINGLE_NOTE);
    }
    for f in findings {
        rec = rec.with_note(&f);
    }
    for n in &plan.notes {
        rec = rec.with_note(n);
    }
    rec
}

fn placement_text(buf: &crate::placement::buffer::Buffer, t: &Target) -> String {
    // Check a sample of the pages (first 64 MiB) with move_pages.
    let len = buf.len().min(64 * MIB);
    match page_nodes(buf.as_ptr(), len) {
        Ok(p) => {
            let nodes: Vec<String> = p
                .per_node
                .iter()
                .map(|(n, c)| format!("node {n}: {c}"))
                .collect();
            let ok = match t {
                Target::Node(n) => p.all_on(*n),
                Target::Interleave(_) => true,
            };
            format!(
                "pages checked (first {}): {}{}",
                fmt_size(len),
                nodes.join(", "),
                if ok {
                    ""
                } else {
                    " — NOT all on the bound node"
                }
            )
        }
        Err(e) => format!("page placement not verified: {e:#}"),
    }
}

/// What `cpuscope numa-matrix` may change in a profile's plan (`None`: the
/// profile's choice).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Rows: nodes whose CPUs run the measurement.
    pub cpu_nodes: Option<String>,
    /// Columns: nodes whose memory is read.
    pub mem_nodes: Option<String>,
    /// Leave out the interleave column.
    pub no_interleave: bool,
    /// Working set of the latency chase.
    pub latency_size: Option<String>,
    /// Bytes of the bandwidth array.
    pub size: Option<String>,
    /// Measure the latency matrix.
    pub latency: bool,
    /// Measure the bandwidth matrix.
    pub bandwidth: bool,
}

/// The profile's plan with `o` applied; each error is one line naming the option.
pub fn plan_with(m: &MachineInfo, cpus: &CpuSet, p: Profile, o: &Options) -> Result<NumaPlan> {
    let mut plan = plan(m, cpus, p);
    if let Some(l) = &o.cpu_nodes {
        let want = common::check_nodes(l, m, "--cpu-nodes")?;
        let rows: Vec<_> = plan
            .rows
            .iter()
            .filter(|r| want.contains(&r.0))
            .cloned()
            .collect();
        if rows.len() != want.len() {
            let have: Vec<String> = plan.rows.iter().map(|r| r.0.to_string()).collect();
            bail!(
                "--cpu-nodes: some of node(s) {l} have no CPU this process may use (nodes with usable CPUs: {})",
                have.join(",")
            );
        }
        plan.rows = rows;
    }
    if let Some(l) = &o.mem_nodes {
        let want = common::check_nodes(l, m, "--mem-nodes")?;
        plan.targets = want.iter().map(|&n| Target::Node(n)).collect();
        if want.len() > 1 {
            plan.targets.push(Target::Interleave(want.clone()));
        }
    }
    if o.no_interleave {
        plan.targets.retain(|t| matches!(t, Target::Node(_)));
    }
    if let Some(s) = &o.latency_size {
        plan.latency_bytes = common::size_option("--latency-size", s, 1, 4096)?;
    }
    if let Some(s) = &o.size {
        plan.array_bytes = common::size_option("--size", s, 1, 0)?;
    }
    if o.size.is_some() || o.latency_size.is_some() {
        plan.unavailable = None;
        let llc = CacheFacts::of(m).llc;
        for (what, b) in [
            ("latency working set", plan.latency_bytes),
            ("bandwidth array", plan.array_bytes),
        ] {
            plan.notes.extend(common::below_llc_note(what, b, llc));
        }
    }
    plan.latency = o.latency;
    plan.bandwidth = o.bandwidth;
    Ok(plan)
}

impl Experiment for NumaMatrix {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "NUMA latency and bandwidth matrices, interleave, vs declared distances"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        estimate(&plan(machine, cpus, profile))
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = plan(ctx.machine, &ctx.cpus, ctx.profile);
        self.run_with(ctx, &mut p, out)
    }
}

impl WithParams for NumaMatrix {
    type Params = NumaPlan;
    /// Measure with a [`NumaPlan`] (`cpuscope numa-matrix`, see [`plan_with`]).
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut NumaPlan,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        run_plan(ctx, p, out)
    }
}
