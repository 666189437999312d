//! Placement primitives: pinning, thread teams, memory policy,
//! page-aligned buffers, and the machine-wide switches (SMT, turbo) a
//! measurement may hold for its duration (`machine_state`, restored on drop
//! and on Ctrl-C). Each module's doc says what it guarantees.

pub mod binding;
pub mod buffer;
pub mod machine_state;
pub mod mempolicy;
pub mod pin;
pub mod team;
pub mod watch;

pub use buffer::{Buffer, BufferOptions, PageKind, PageReport, PageRequest, Touch, Unavailable};
// `CpuSet` lives on the bottom floor (`base`); these paths stay for callers.
pub use mempolicy::MemPolicy;
pub use pin::{current_affinity, current_cpu, pin_current_thread, set_affinity, AffinityGuard};
pub use team::{Round, SpinBarrier, Team, ThreadCtx};
