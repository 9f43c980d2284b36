// shift-and: tier 2 of regex on the GPU, a bit-parallel run of the
// regex's position (Glushkov) automaton (query/glushkov.rs, whose
// `run_line` is this kernel on the host). One thread per line; the state
// is W 32-bit words (W a pipeline constant: 1, 2, 4 or 8 words, the
// positions rounded up), one bit per position, bit 0 the start (always
// set: an unanchored search). Per byte:
//   D' = (follow(D) | conditional(D)) & mask[byte]
// `follow` ORs, for each non-zero byte of the state, a precomputed union of
// follow sets (split tables, in the table buffer) — or, for an automaton of
// the extended shift-and form (`lin_off` != 0, glushkov::Linear), is
// `((D & shift) << 1) | (D & self_loop)` in registers; `mask` (256 x W words)
// lives in workgroup memory. Look-around edges (^ $ \b ...) are groups
// checked against the boundary's conditions (`satisfied`). Under a
// Unicode-dependent regex a byte >= 0x80 makes the line undecided: its
// `cand` bit is set and the CPU decides it.
//
// As tier 1's verifier (`only_marked` = 1) the kernel runs after a literal
// kernel in the same pass, whose per-line result bits are the candidates (a
// prefilter: false positives, never false negatives). `compact` first
// gathers the candidates' line ids into `list` (one thread per bit word,
// one global atomic per workgroup); then `verify_split` runs the automaton
// over the *listed* lines, several threads a line while the candidates are
// few: a candidate that does not match has its bit cleared, an undecided
// one moves to `cand`. The bits left are the regex's matches,
// exactly as without the filter. A pass over every line that skipped
// unmarked ones kept almost every warp busy: with 8% of lines candidates,
// 1 - 0.92^32 = 93% of 32-line warps hold one, and a warp costs its
// longest line (`web-\d\d (ERROR|WARN)`, 69% candidates, 9.3 ms on the
// H100 against 4.5 ms for tier 2 over every line, 2026-11-25).

override W: u32 = 1u;
const MAXW: u32 = 8u;

struct RParams {
    n_groups: u32,
    // 1: bytes >= 0x80 make a line undecided.
    unicode: u32,
    // Word offsets in `rt`: follow tables, accepting positions, groups
    // (from, cond, accept, then W target words: `stride` words each).
    follow_off: u32,
    last_off: u32,
    groups_off: u32,
    stride: u32,
    // 1: verify only the lines whose result bit is set (tier 1), from
    // the list `compact` made of them.
    only_marked: u32,
    // Word offset of the linear form (W shift words, then W self-loop
    // words); 0: none, the follow tables run.
    lin_off: u32,
    // Word offset of the positions one byte reaches from the start alone
    // (W words, glushkov::Automaton::start_skip); 0: no skipping. While the
    // state is the start alone, a byte whose mask misses them all leaves
    // it so: such bytes cost a mask lookup, not a step.
    skip_off: u32,
    // 1: some group's conditions look at word characters (`\b` ...);
    // 0: only at the line's edges (`^`, `$`), whose test is cheaper.
    word_conds: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(10) var<storage, read> rt: array<u32>;
@group(0) @binding(12) var<uniform> rp: RParams;
// Tier 1's candidate lines, compacted by `compact`: [0] how many, then
// their line ids (in no particular order).
@group(0) @binding(13) var<storage, read_write> list: array<atomic<u32>>;

var<workgroup> wmask: array<u32, 2048>;
var<workgroup> wlisted: atomic<u32>;
var<workgroup> wbase: u32;
var<workgroup> wcount: u32;
// `verify_split`: each line's verdict, OR-ed by its parts (slot = the
// line's place in the workgroup).
var<workgroup> wverdict: array<atomic<u32>, 256>;

// What a run says of a line (or of a window of it).
const NO_MATCH: u32 = 0u;
const MATCH: u32 = 1u;
// A byte >= 0x80 under a Unicode-dependent regex: the CPU decides.
const UNDECIDED: u32 = 2u;

// One thread per word of the result bits: appends the ids of the lines
// whose bit is set to `list` (cleared to zero count before the pass).
@compute @workgroup_size(256)
fn compact(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&wlisted, 0u);
    }
    workgroupBarrier();
    let w = group_id(wid, nwg) * WG + lid;
    var bits = 0u;
    if w < seg.n_words {
        bits = atomicLoad(&result[w]);
    }
    let n = countOneBits(bits);
    var at = 0u;
    if n != 0u {
        at = atomicAdd(&wlisted, n);
    }
    workgroupBarrier();
    if lid == 0u {
        let total = atomicLoad(&wlisted);
        var base = 0u;
        if total != 0u {
            base = atomicAdd(&list[0], total);
        }
        wbase = base;
    }
    let base = workgroupUniformLoad(&wbase);
    var b = bits;
    var o = 1u + base + at;
    while b != 0u {
        let line = w * 32u + firstTrailingBit(b);
        if line < seg.n_lines {
            atomicStore(&list[o], line);
            o += 1u;
        }
        b &= b - 1u;
    }
}

// The line has no match: under the filter, its candidate bit is cleared.
fn no_match(line: u32) {
    if rp.only_marked != 0u {
        atomicAnd(&result[line >> 5u], ~(1u << (line & 31u)));
    }
}

// A line's verdict into the bits: a match sets its result bit (under the
// filter it is set already); otherwise the candidate bit is cleared and an
// undecided line moves to `cand`.
fn settle(line: u32, v: u32) {
    if (v & MATCH) != 0u {
        if rp.only_marked == 0u {
            set_result(line);
        }
        return;
    }
    no_match(line);
    if (v & UNDECIDED) != 0u {
        set_cand(line);
    }
}

fn is_word(b: u32) -> bool {
    return (b >= 48u && b <= 57u) || (b >= 65u && b <= 90u) || (b >= 97u && b <= 122u) || b == 95u;
}

// The line-edge conditions alone (START, END, START_CR, END_CR) between
// prev and next: what `^` and `$` need, without the word tests.
fn edges(prev: u32, next: u32) -> u32 {
    var s = 0u;
    if prev == 256u || prev == 13u {
        s |= 4u;
    }
    if prev == 256u {
        s |= 1u;
    }
    if next == 256u || next == 13u {
        s |= 8u;
    }
    if next == 256u {
        s |= 2u;
    }
    return s;
}

// The conditions (glushkov::cond) satisfied between bytes prev and next;
// 256 stands for the line's edge.
fn satisfied(prev: u32, next: u32) -> u32 {
    let pw = prev < 256u && is_word(prev);
    let nw = next < 256u && is_word(next);
    var s = edges(prev, next);
    if pw != nw {
        s |= 16u;
    } else {
        s |= 32u;
    }
    if !pw && nw {
        s |= 64u;
    }
    if pw && !nw {
        s |= 128u;
    }
    if !pw {
        s |= 256u;
    }
    if !nw {
        s |= 512u;
    }
    return s;
}


// The look-around conditions that hold between `prev` and `next`: none
// without groups, `\b`-style word tests where the query has them, else
// the line edges alone.
fn conditions(prev: u32, next: u32) -> u32 {
    if rp.n_groups == 0u {
        return 0u;
    }
    if rp.word_conds != 0u {
        return satisfied(prev, next);
    }
    return edges(prev, next);
}
@compute @workgroup_size(256)
fn shift_and(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    whole_lines(wid, nwg, lid);
}

// One thread a line (under the filter: a listed line), the whole line.
fn whole_lines(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {
    let id = group_id(wid, nwg) * WG + lid;
    // Under the filter, thread `id` verifies the id-th listed candidate;
    // workgroups past the list's end leave before loading the masks.
    var n = seg.n_lines;
    if rp.only_marked != 0u {
        if lid == 0u {
            wcount = atomicLoad(&list[0]);
        }
        n = workgroupUniformLoad(&wcount);
        if group_id(wid, nwg) * WG >= n {
            return;
        }
    }
    for (var i = lid; i < 256u * W; i += 256u) {
        wmask[i] = rt[i];
    }
    workgroupBarrier();
    if id >= n {
        return;
    }
    var line = id;
    if rp.only_marked != 0u {
        line = atomicLoad(&list[1u + id]);
    }
    let s = starts[line];
    let e = starts[line + 1u] - 1u;
    // W is a pipeline constant: each pipeline keeps one of the two.
    var v = NO_MATCH;
    if W <= 2u && rp.lin_off != 0u && rp.n_groups == 0u {
        v = run_linear(s, e + 1u, e);
    } else if W <= 2u {
        v = run_small(s, s, e + 1u, e);
    } else {
        v = run_general(s, e);
    }
    settle(line, v);
}

// Most threads a candidate line in `verify_split`.
const MAX_PARTS: u32 = 16u;
// `verify_split` splits the lines while candidates x parts stays within
// this many threads: past it the GPU has threads enough without.
const SPLIT_THREADS: u32 = 131072u;

// Tier 1's verification with several threads a line (one or two state
// words): T threads a listed line (a power of two; T = 1 when the
// candidates alone fill the GPU), part j taking the matches that start in
// its share of the line, j * c to (j + 1) * c (c = the line's length / T,
// rounded up; the last part also the line's end): the start is set again
// only within the share, and past it the part runs on while a match is
// under way (glushkov::Automaton::run_parts, the reference). A thread
// alone on a line waits on every byte's chain of instructions, so the
// walk's length is the pass's time when the candidates are few
// (`ERROR_5\d\d`, 4,125 lines: shift-and took ~90 µs of a 170 µs pass
// walking whole lines on the H100, 2026-11-25). The parts' verdicts meet
// in workgroup memory; part 0 settles the line.
@compute @workgroup_size(256)
fn verify_split(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        wcount = atomicLoad(&list[0]);
    }
    let n = workgroupUniformLoad(&wcount);
    var t = 1u;
    let room = min(SPLIT_THREADS, seg.n_lines);
    while t < MAX_PARTS && n * t * 2u <= room {
        t *= 2u;
    }
    // Candidates enough to fill the GPU: one thread a line, without the
    // parts' meeting.
    if t == 1u {
        whole_lines(wid, nwg, lid);
        return;
    }
    let g = group_id(wid, nwg);
    if g * WG >= n * t {
        return;
    }
    for (var i = lid; i < 256u * W; i += 256u) {
        wmask[i] = rt[i];
    }
    atomicStore(&wverdict[lid], NO_MATCH);
    workgroupBarrier();
    let id = g * WG + lid;
    let k = id / t;
    let j = id % t;
    var line = 0u;
    if k < n {
        line = atomicLoad(&list[1u + k]);
        let s = starts[line];
        let e = starts[line + 1u] - 1u;
        let c = (e - s + t - 1u) / t;
        let w0 = s + j * c;
        if j == 0u || w0 < e {
            // The last part also takes a match at the line's end.
            let to = select(w0 + c, e + 1u, w0 + c >= e);
            var v = NO_MATCH;
            if rp.lin_off != 0u && rp.n_groups == 0u {
                v = run_linear(w0, to, e);
            } else {
                v = run_small(s, w0, to, e);
            }
            if v != NO_MATCH {
                atomicOr(&wverdict[lid / t], v);
            }
        }
    }
    workgroupBarrier();
    if k < n && j == 0u {
        settle(line, atomicLoad(&wverdict[lid / t]));
    }
}

// The corpus's 16-byte block holding the bytes being read: one vec4
// load, one memory latency per 16 bytes instead of per 4 (the segment's
// buffer is padded past its last block). The byte's word is picked with
// selects, not by indexing the vector: 2-7% off tier 2 on the H100 against
// four u32 loads and an index (2026-11-25, `ef5693c`).
struct Reader {
    blk: vec4<u32>,
    at: u32,
}

// Byte p of the segment, through the reader's block.
fn read_byte(r: ptr<function, Reader>, p: u32) -> u32 {
    if (p >> 4u) != (*r).at {
        (*r).at = p >> 4u;
        (*r).blk = data[(*r).at];
    }
    let b = (*r).blk;
    let i = (p >> 2u) & 3u;
    let v = select(select(b.x, b.y, i == 1u), select(b.z, b.w, i == 3u), i >= 2u);
    return (v >> ((p & 3u) * 8u)) & 0xFFu;
}

// Word i (0 or 1) of a two-word state.
fn word_of(v: vec2<u32>, i: u32) -> u32 {
    return select(v.x, v.y, i != 0u);
}

// The common case in few instructions a byte: an automaton of the linear
// form (`lin_off` != 0) with no look-around groups, one or two state
// words. The step is `run_small`'s without the groups, the follow tables
// or the start's skip loop: a thread alone on its line (tier 1's sparse
// candidates) waits on each instruction of its chain, so the instructions
// a byte are the time a byte.
// The matches of the line ending at `e` that start at a byte in [s, to)
// (to = e + 1: the whole line from s): the start is set again only before
// `to`; past it the run goes on while a match is under way
// (glushkov::Automaton::run_window).
fn run_linear(s: u32, to: u32, e: u32) -> u32 {
    let two = W > 1u;
    let uni = rp.unicode != 0u;
    let lst = vec2<u32>(rt[rp.last_off], select(0u, rt[rp.last_off + 1u], two));
    let sh = vec2<u32>(rt[rp.lin_off], select(0u, rt[rp.lin_off + 1u], two));
    let sl = vec2<u32>(rt[rp.lin_off + W], select(0u, rt[rp.lin_off + W + 1u], two));
    // The block read inline, not through `read_byte`'s pointer: 1-4% off
    // tier 2 on the H100 (2026-11-25, `ef5693c`).
    var blk = vec4<u32>(0u);
    var at = 0xFFFFFFFFu;
    var d = vec2<u32>(1u, 0u);
    // The start is set again after each byte before `lim`; from `lim` on
    // (the share's last byte) the run goes on while a state bit is set.
    // One test a byte, as the whole line's `p >= e` alone.
    let lim = min(e, to - 1u);
    var start = 1u;
    var p = s;
    loop {
        var next = 256u;
        if p < e {
            if (p >> 4u) != at {
                at = p >> 4u;
                blk = data[at];
            }
            let i = (p >> 2u) & 3u;
            let v = select(select(blk.x, blk.y, i == 1u), select(blk.z, blk.w, i == 3u), i >= 2u);
            next = (v >> ((p & 3u) * 8u)) & 0xFFu;
            if uni && next >= 128u {
                return UNDECIDED;
            }
        }
        if any((d & lst) != vec2<u32>(0u)) {
            return MATCH;
        }
        if p >= lim {
            if p >= e || all(d == vec2<u32>(0u)) {
                break;
            }
            start = 0u;
        }
        let x = d & sh;
        var f = (x << vec2<u32>(1u)) | (d & sl);
        if two {
            f.y |= x.x >> 31u;
        }
        let m = next * W;
        d = f & vec2<u32>(wmask[m], select(0u, wmask[m + 1u], two));
        d.x |= start;
        p += 1u;
    }
    return NO_MATCH;
}

// One or two state words as a vec2 in registers: the general path's
// arrays, indexed by loop counters and by group sources, may live in
// local memory (measured: `ERROR_5\d\d`, one word, 7.5 ms on the H100 for
// 194 MB, ~26 GB/s). Same steps as `run_general`. The line is [s, e); the
// run takes the matches starting in [w0, to), as `run_linear` (the whole
// line: w0 = s, to = e + 1).
fn run_small(s: u32, w0: u32, to: u32, e: u32) -> u32 {
    let two = W > 1u;
    let lst = vec2<u32>(rt[rp.last_off], select(0u, rt[rp.last_off + 1u], two));
    let lin = rp.lin_off != 0u;
    var sh = vec2<u32>(0u);
    var sl = vec2<u32>(0u);
    if lin {
        sh = vec2<u32>(rt[rp.lin_off], select(0u, rt[rp.lin_off + 1u], two));
        sl = vec2<u32>(rt[rp.lin_off + W], select(0u, rt[rp.lin_off + W + 1u], two));
    }
    var first = vec2<u32>(0u);
    if rp.skip_off != 0u {
        first = vec2<u32>(rt[rp.skip_off], select(0u, rt[rp.skip_off + 1u], two));
    }
    var rd = Reader(vec4<u32>(0u), 0xFFFFFFFFu);
    var d = vec2<u32>(1u, 0u);
    var prev = 256u;
    if w0 > s {
        prev = read_byte(&rd, w0 - 1u);
        // Under a Unicode regex the byte before the window is part of a
        // character whose word class the step cannot tell.
        if rp.unicode != 0u && rp.word_conds != 0u && prev >= 128u {
            return UNDECIDED;
        }
    }
    // As in `run_linear`.
    let lim = min(e, to - 1u);
    var start = 1u;
    var p = w0;
    loop {
        // The start alone: skip the bytes that leave it so (a byte >= 0x80
        // under a Unicode regex stops the skip; the step below decides).
        if rp.skip_off != 0u && d.x == 1u && d.y == 0u {
            loop {
                if p >= lim {
                    break;
                }
                let b = read_byte(&rd, p);
                if rp.unicode != 0u && b >= 128u {
                    break;
                }
                let m = b * W;
                if any((first & vec2<u32>(wmask[m], select(0u, wmask[m + 1u], two))) != vec2<u32>(0u)) {
                    break;
                }
                prev = b;
                p += 1u;
            }
        }
        var next = 256u;
        if p < e {
            next = read_byte(&rd, p);
        }
        if rp.unicode != 0u && next >= 128u && next < 256u {
            return UNDECIDED;
        }
        let sat = conditions(prev, next);
        // The groups whose source is active and whose conditions hold, in
        // one pass: an accepting one accepts, the others' targets join
        // the follow set.
        var acc = any((d & lst) != vec2<u32>(0u));
        var fg = vec2<u32>(0u);
        for (var g = 0u; g < rp.n_groups; g++) {
            let at = rp.groups_off + g * rp.stride;
            let src = rt[at];
            if (rt[at + 1u] & ~sat) == 0u && ((word_of(d, src >> 5u) >> (src & 31u)) & 1u) != 0u {
                if rt[at + 2u] != 0u {
                    acc = true;
                } else {
                    fg.x |= rt[at + 3u];
                    if two {
                        fg.y |= rt[at + 4u];
                    }
                }
            }
        }
        if acc {
            return MATCH;
        }
        if p >= lim {
            if p >= e || all(d == vec2<u32>(0u)) {
                break;
            }
            start = 0u;
        }
        var f = fg;
        if lin {
            let x = d & sh;
            f |= (x << vec2<u32>(1u)) | vec2<u32>(0u, x.x >> 31u) | (d & sl);
        } else {
            for (var w = 0u; w < W; w++) {
                let x = word_of(d, w);
                for (var k = 0u; k < 4u; k++) {
                    let v = (x >> (8u * k)) & 0xFFu;
                    if v != 0u {
                        let at = rp.follow_off + ((w * 4u + k) * 256u + v) * W;
                        f.x |= rt[at];
                        if two {
                            f.y |= rt[at + 1u];
                        }
                    }
                }
            }
        }
        let m = next * W;
        d = f & vec2<u32>(wmask[m], select(0u, wmask[m + 1u], two));
        d.x |= start;
        prev = next;
        p += 1u;
    }
    return NO_MATCH;
}

// Any width up to MAXW words, over the whole line [s, e).
fn run_general(s: u32, e: u32) -> u32 {
    var d: array<u32, MAXW>;
    var f: array<u32, MAXW>;
    // The accepting positions, in registers (tested at every boundary).
    var lst: array<u32, MAXW>;
    var sh: array<u32, MAXW>;
    var sl: array<u32, MAXW>;
    for (var w = 0u; w < W; w++) {
        lst[w] = rt[rp.last_off + w];
        if rp.lin_off != 0u {
            sh[w] = rt[rp.lin_off + w];
            sl[w] = rt[rp.lin_off + W + w];
        }
    }
    var first: array<u32, MAXW>;
    if rp.skip_off != 0u {
        for (var w = 0u; w < W; w++) {
            first[w] = rt[rp.skip_off + w];
        }
    }
    var rd = Reader(vec4<u32>(0u), 0xFFFFFFFFu);
    d[0] = 1u;
    var prev = 256u;
    var p = s;
    loop {
        // The start alone: as in `run_small`.
        var alone = rp.skip_off != 0u && d[0] == 1u;
        for (var w = 1u; w < W; w++) {
            alone = alone && d[w] == 0u;
        }
        if alone {
            loop {
                if p >= e {
                    break;
                }
                let b = read_byte(&rd, p);
                if rp.unicode != 0u && b >= 128u {
                    break;
                }
                var hit = 0u;
                for (var w = 0u; w < W; w++) {
                    hit |= first[w] & wmask[b * W + w];
                }
                if hit != 0u {
                    break;
                }
                prev = b;
                p += 1u;
            }
        }
        var next = 256u;
        if p < e {
            next = read_byte(&rd, p);
        }
        if rp.unicode != 0u && next >= 128u && next < 256u {
            return UNDECIDED;
        }
        let sat = conditions(prev, next);
        var acc = false;
        for (var w = 0u; w < W; w++) {
            acc = acc || (d[w] & lst[w]) != 0u;
        }
        for (var g = 0u; g < rp.n_groups; g++) {
            let at = rp.groups_off + g * rp.stride;
            let src = rt[at];
            if rt[at + 2u] != 0u && (rt[at + 1u] & ~sat) == 0u && ((d[src >> 5u] >> (src & 31u)) & 1u) != 0u {
                acc = true;
            }
        }
        if acc {
            return MATCH;
        }
        if p >= e {
            break;
        }
        if rp.lin_off != 0u {
            var carry = 0u;
            for (var u = 0u; u < W; u++) {
                let x = d[u] & sh[u];
                f[u] = (x << 1u) | carry | (d[u] & sl[u]);
                carry = x >> 31u;
            }
        } else {
            for (var u = 0u; u < W; u++) {
                f[u] = 0u;
            }
            for (var w = 0u; w < W; w++) {
                let x = d[w];
                for (var k = 0u; k < 4u; k++) {
                    let v = (x >> (8u * k)) & 0xFFu;
                    if v != 0u {
                        let at = rp.follow_off + ((w * 4u + k) * 256u + v) * W;
                        for (var u = 0u; u < W; u++) {
                            f[u] |= rt[at + u];
                        }
                    }
                }
            }
        }
        for (var g = 0u; g < rp.n_groups; g++) {
            let at = rp.groups_off + g * rp.stride;
            let src = rt[at];
            if rt[at + 2u] == 0u && (rt[at + 1u] & ~sat) == 0u && ((d[src >> 5u] >> (src & 31u)) & 1u) != 0u {
                for (var u = 0u; u < W; u++) {
                    f[u] |= rt[at + 3u + u];
                }
            }
        }
        for (var u = 0u; u < W; u++) {
            d[u] = f[u] & wmask[next * W + u];
        }
        d[0] |= 1u;
        prev = next;
        p += 1u;
    }
    return NO_MATCH;
}
