//! The coherence family: core-to-core latency (`c2c`), the topology it
//! infers (`infer`), and the costs of synchronisation (`sync`); their
//! records' typed data in `payload`; each draws itself in its folder
//! (text.rs, html.rs, view.rs).

pub mod c2c;
pub mod infer;
pub mod payload;
pub mod sync;
