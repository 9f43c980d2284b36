//! `brute-byte`: one thread per byte, atomic append of match positions.
//!
//! The number of matches is unknown before the run. The append buffer is
//! bounded and the counter counts past its end: after the run the host
//! compares the count with the capacity, grows the buffer to the exact
//! count and runs again; if the exact size would not fit one binding, it
//! collects the positions window by window (a window of at most `capacity`
//! bytes cannot overflow, since a byte starts at most one match). No
//! position is ever dropped.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "brute-byte",
    view: View::U32,
    wgsl: include_str!("brute_byte.wgsl"),
    entry_points: &["brute_byte"],
};

/// The first capacity of a segment's append buffer, in positions.
pub(crate) const INITIAL_CAPACITY: u64 = 1 << 16;
