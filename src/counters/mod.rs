//! counters room.
