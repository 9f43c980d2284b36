// Shared by every logsieve kernel: the bind-group layout (one layout for all
// pipelines, so one bind group per segment serves every kernel), the query
// uniform and the shared functions. Each kernel file adds its own declaration of
// `data` (binding 2: array<u32> or array<vec4<u32>>) and `byte_at`.
//
// Bytes are packed little-endian in u32 words (WGSL has no u8). The segment
// is padded with '\n' up to a multiple of 16 bytes plus 128 bytes, so reads
// a little past the end stay in bounds, and a pattern (which never contains
// '\n') can never match in the padding.

struct Params {
    // Pattern bytes, one per u32 (uniform arrays need a 16-byte stride, so
    // four to a vec4), ASCII-lowercased when `fold` is set.
    pat: array<vec4<u32>, 16>,
    // two-phase: required count of each `byte & 127` bin, four u8 per u32.
    need: array<vec4<u32>, 8>,
    // signature: presence bits of `byte & 127` the pattern needs.
    sig: vec4<u32>,
    pat_len: u32,
    // 1 for ASCII case-insensitive matching.
    fold: u32,
    // scan: pattern index of the rarest byte, and the signed distance from
    // it to the second rarest.
    r1: u32,
    d2: i32,
    // scan: the rare bytes broadcast to four lanes, and the OR mask that
    // folds a letter (0x20202020 for a letter under -i, else 0).
    b1: u32,
    b2: u32,
    or1: u32,
    or2: u32,
    // scan: 1 when the second test runs on every chunk (the rarest byte
    // is common), 0 when only where the first test hit. Picks scan's
    // pipeline on the host; the kernel has it as a constant.
    dense: u32,
    // brute-byte: only positions in [win_lo, win_hi) are appended.
    win_lo: u32,
    win_hi: u32,
    // plain-read: a value the XOR of a vec4 is compared with, so the loads
    // cannot be optimised away.
    magic: u32,
    // The pattern again, four bytes to a word (scan verifies a word at a
    // time).
    patw: array<vec4<u32>, 4>,
    // scan, a class string (`class_at`): per four positions, two vec4s:
    // (the OR folding letters, range 1 low, range 1 high + 1, range 2
    // low), (range 2 high + 1, the lanes the ranges decide, the lanes
    // looked up in their class's bits, unused). Lanes as 0x80 bits.
    lanes: array<vec4<u32>, 32>,
}

struct Seg {
    // Bytes of the segment (without the padding).
    n_bytes: u32,
    // Lines of the segment.
    n_lines: u32,
    // u32 words of the per-line bit sets.
    n_words: u32,
    // log2 of the bytes per block hint (`blk`).
    blk_shift: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<uniform> seg: Seg;
// Line starts relative to the segment, plus the end sentinel.
@group(0) @binding(3) var<storage, read> starts: array<u32>;
// blk[k] = the line holding byte k << seg.blk_shift: bounds the binary
// search of a match position to the few lines of one block.
@group(0) @binding(4) var<storage, read> blk: array<u32>;
// Candidate lines (phase 1 of two-phase and signature).
@group(0) @binding(5) var<storage, read_write> cand: array<atomic<u32>>;
// Matching lines (before -v).
@group(0) @binding(6) var<storage, read_write> result: array<atomic<u32>>;
// [0] matching lines, [1] candidate lines, [2] appended positions,
// [3] plain-read sink.
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>, 4>;
// Per-line 128-bit presence mask of `byte & 127` (signature kernel).
@group(0) @binding(8) var<storage, read_write> sigs: array<vec4<u32>>;
// Match positions (brute-byte), relative to the segment.
@group(0) @binding(9) var<storage, read_write> positions: array<u32>;

const WG: u32 = 256u;

// The linear workgroup id of a 2-D dispatch (one dimension holds at most
// 65535 workgroups).
fn group_id(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

fn pat_at(i: u32) -> u32 {
    return params.pat[i >> 2u][i & 3u];
}

fn fold(b: u32) -> u32 {
    if params.fold != 0u && b >= 65u && b <= 90u {
        return b + 32u;
    }
    return b;
}

// True when the pattern occurs at byte p of the segment.
fn matches_at(p: u32) -> bool {
    let m = params.pat_len;
    if p + m > seg.n_bytes {
        return false;
    }
    for (var i = 0u; i < m; i++) {
        if fold(byte_at(p + i)) != pat_at(i) {
            return false;
        }
    }
    return true;
}

// The largest i in [lo, hi] with starts[i] <= p.
fn search_line(p: u32, lo_in: u32, hi_in: u32) -> u32 {
    var lo = lo_in;
    var hi = hi_in;
    while lo < hi {
        let mid = (lo + hi + 1u) >> 1u;
        if starts[mid] <= p {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

// The line holding byte p, searched within its block's lines.
fn line_of(p: u32) -> u32 {
    let k = p >> seg.blk_shift;
    return search_line(p, blk[k], blk[k + 1u]);
}

fn set_result(line: u32) {
    atomicOr(&result[line >> 5u], 1u << (line & 31u));
}

fn set_cand(line: u32) {
    atomicOr(&cand[line >> 5u], 1u << (line & 31u));
}
