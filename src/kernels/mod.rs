//! kernels room.
