//! The measured loops, and nothing else: no I/O, no printing, no allocation.
//! Each kernel returns a value derived from its work so the compiler cannot
//! remove it, and the caller passes it through `black_box`.

pub mod c2c;
pub mod chacha;
pub mod chains;
pub mod cpu_loops;
pub mod fma;
pub mod memory;
pub mod sync;
