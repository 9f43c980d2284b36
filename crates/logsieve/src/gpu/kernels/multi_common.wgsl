// Shared by the multi-literal kernels (trie, ac, prefix-hash, bloom).
// Appended to common.wgsl + a corpus view (bytes_u32.wgsl, or
// bytes_vec4.wgsl for bloom), of which they use the segment uniform, the
// corpus bytes, the line offsets (line_of) and the result bits
// (set_result); the multi-literal layout binds only those and the three
// bindings below, so common's other bindings are never touched.

struct MParams {
    // 1: fold ASCII letters of the corpus (patterns are folded on the host).
    fold: u32,
    // 1: count lines and occurrences per pattern; 0: result bits only (a
    // walk stops at its first match).
    per_pattern: u32,
    // Distinct patterns (groups).
    n_groups: u32,
    // Word offset of the pattern table (2 words per group: byte offset in
    // the byte section, length) and of the byte section (4 bytes a word).
    pat_off: u32,
    bytes_off: u32,
    // Kernel-specific word offsets and sizes (see each kernel).
    a: u32,
    b: u32,
    c: u32,
    d: u32,
    e: u32,
    f: u32,
    // Diagnostics only (bloom, LOGSIEVE_BLOOM_DIAG, to price its parts;
    // results are wrong): 1 skips verification, 4 every probe.
    diag: u32,
    // More kernel-specific word offsets and sizes.
    g: u32,
    h: u32,
    // bloom: 1 when its filter is read from `tables` at mp.a (a set too
    // large for workgroup memory), 0 when copied to workgroup memory.
    global_filter: u32,
    // bloom: the parts its keys are split into (0 or 1: one), one
    // workgroup filter each (bloom.wgsl).
    parts: u32,
}

// The pattern set's tables, one array (sections at the offsets above).
@group(0) @binding(10) var<storage, read> tables: array<u32>;
// Per group: lines (lo, hi), occurrences (lo, hi); then one overlap flag
// per group at 4 * n_groups + g.
@group(0) @binding(11) var<storage, read_write> pcounts: array<atomic<u32>>;
@group(0) @binding(12) var<uniform> mp: MParams;

fn mfold(b: u32) -> u32 {
    if mp.fold != 0u && b >= 65u && b <= 90u {
        return b + 32u;
    }
    return b;
}

// Byte i of group g's (folded) pattern.
fn pat_byte(off: u32, i: u32) -> u32 {
    let k = off + i;
    return (tables[mp.bytes_off + (k >> 2u)] >> ((k & 3u) * 8u)) & 0xFFu;
}

// True when group g's pattern (at byte offset off, length m) occurs at q.
fn occurs(off: u32, m: u32, q: u32) -> bool {
    for (var i = 0u; i < m; i++) {
        if mfold(byte_at(q + i)) != pat_byte(off, i) {
            return false;
        }
    }
    return true;
}

// A 64-bit counter in two words, portable (no 64-bit atomics): exactly
// one thread sees the low word wrap and carries.
fn add64(i: u32) {
    let old = atomicAdd(&pcounts[i], 1u);
    if old == 0xFFFFFFFFu {
        atomicAdd(&pcounts[i + 1u], 1u);
    }
}

// Group g matches at p: set the line's bit, and with per-pattern counts,
// count the line if this is g's first occurrence in it, and the occurrence
// if no earlier occurrence of g overlaps it. The backward scan stops at
// g's previous occurrence, so it costs O(line length) per pattern and line
// at worst. An overlapping predecessor (a self-overlapping pattern such as
// "aa" in "aaa") flags g: the host recounts its occurrences exactly.
fn on_match(p: u32, g: u32) {
    let line = line_of(p);
    set_result(line);
    if mp.per_pattern == 0u {
        return;
    }
    let off = tables[mp.pat_off + 2u * g];
    let m = tables[mp.pat_off + 2u * g + 1u];
    let ls = starts[line];
    var prev = -1;
    var q = i32(p) - 1;
    while q >= i32(ls) {
        if occurs(off, m, u32(q)) {
            prev = q;
            break;
        }
        q -= 1;
    }
    if prev < 0 {
        add64(4u * g);
        add64(4u * g + 2u);
    } else if p - u32(prev) >= m {
        add64(4u * g + 2u);
    } else {
        atomicOr(&pcounts[4u * mp.n_groups + g], 1u);
    }
}
