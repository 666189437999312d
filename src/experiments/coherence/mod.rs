//! The coherence family: core-to-core latency (`c2c`), the topology it
//! infers (`infer`), and the costs of synchronisation (`sync`); their
//! records' typed data in `payload`; `text` and `html` render them.

pub mod c2c;
pub mod html;
pub mod infer;
pub mod payload;
pub mod sync;
pub mod text;
