use cpuscope::kernels::chains::{Chain, CHAIN_LEN};
fn main() {
    for _ in 0..4 {
        for c in [Chain::Add, Chain::Xor, Chain::Mul] {
            let mut best = 0.0f64;
            for _ in 0..5 {
                let n = 100_000u64;
                let t = std::time::Instant::now();
                let v = c.run(n, 1);
                let ns = t.elapsed().as_nanos() as f64;
                std::hint::black_box(v);
                best = best.max((n * CHAIN_LEN) as f64 * c.latency_cycles() / ns);
            }
            print!("{:?} {:.3}  ", c, best);
        }
        println!();
    }
}
