//! harness room.
