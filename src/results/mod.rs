//! results room.
