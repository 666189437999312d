//! experiments room.
