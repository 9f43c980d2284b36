// Lines grouped by shape on the GPU (`gpu.rs`; the shape is `shape.rs`'s):
// `shape_key` hashes each line's shape, one thread per line; the host
// groups the keys; `shape_mark` walks each line beside its group's first
// line, token by token, and marks the digit tokens whose values differ and
// any line whose shape is not its group's (a key collision).
//
// The host prepends the delimiter masks (`D1`..`D3`: bits of bytes 32..127
// that are tokens of their own, from `tokens::is_delimiter`).

struct Info {
    // Lines of the segment.
    n_lines: u32,
    // Threads of the dispatch (the grid stride).
    threads: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> info: Info;
// The segment's bytes (packed little-endian, '\n' padding after, a
// multiple of 16 bytes), read 16 bytes at a time.
@group(0) @binding(1) var<storage, read> data: array<vec4<u32>>;
// Line starts relative to the segment, plus the end sentinel.
@group(0) @binding(2) var<storage, read> starts: array<u32>;
// shape_key: two words per line.
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
// shape_mark: per line, its group (NONE: not picked).
@group(0) @binding(4) var<storage, read> gid: array<u32>;
// shape_mark: the groups' first lines, packed (a multiple of 16 bytes).
@group(0) @binding(5) var<storage, read> reps: array<vec4<u32>>;
// shape_mark: per group, its first line's bytes in `reps` (start, end).
@group(0) @binding(6) var<storage, read> rep_at: array<u32>;
// shape_mark: per group, (digit tokens 0..31 that vary, 32..63, flags).
@group(0) @binding(7) var<storage, read_write> marks: array<atomic<u32>>;

const NONE: u32 = 0xffffffffu;
const CONT: u32 = 0u;
const SPACE: u32 = 1u;
const DELIM: u32 = 2u;
const DIGIT: u32 = 3u;
// marks' flags: a line of another shape; a varying digit token past 63.
const F_OTHER: u32 = 1u;
const F_WIDE: u32 = 2u;

fn class_of(c: u32) -> u32 {
    if c == 32u {
        return SPACE;
    }
    if c >= 48u && c <= 57u {
        return DIGIT;
    }
    var m = 0u;
    if c >= 32u && c < 64u {
        m = D1;
    } else if c >= 64u && c < 96u {
        m = D2;
    } else if c >= 96u && c < 128u {
        m = D3;
    }
    if ((m >> (c & 31u)) & 1u) != 0u {
        return DELIM;
    }
    return CONT;
}

// Each thread reads its line 16 bytes at a time: the last 16 bytes read
// are kept (one load per 16 bytes, not per byte; a thread per line makes
// neighbouring threads read bytes ~200 apart, so each load is a cache
// line of its own).
var<private> win_q: u32 = 0xffffffffu;
var<private> win: vec4<u32>;
var<private> rep_at_q: u32 = 0xffffffffu;
var<private> rep_win: vec4<u32>;

fn byte_at(i: u32) -> u32 {
    let q = i >> 4u;
    if q != win_q {
        win_q = q;
        win = data[q];
    }
    return (win[(i >> 2u) & 3u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn rep_byte(i: u32) -> u32 {
    let q = i >> 4u;
    if q != rep_at_q {
        rep_at_q = q;
        rep_win = reps[q];
    }
    return (rep_win[(i >> 2u) & 3u] >> ((i & 3u) * 8u)) & 0xffu;
}

// Line `line`'s bytes [start, end): its terminator and a trailing '\r'
// left out (the miner's line).
fn line_range(line: u32) -> vec2<u32> {
    let s = starts[line];
    var e = starts[line + 1u] - 1u;
    if e > s && byte_at(e - 1u) == 13u {
        e = e - 1u;
    }
    return vec2<u32>(s, e);
}

// One step of two independent 32-bit hashes.
fn mixh(h: vec2<u32>, v: u32) -> vec2<u32> {
    let a = (h.x ^ v) * 0x01000193u;
    let b = ((h.y ^ v) * 0xcc9e2d51u);
    return vec2<u32>(a ^ (a >> 15u), ((b << 13u) | (b >> 19u)) * 5u + 0xe6546b64u);
}

fn fmix(h: u32) -> u32 {
    var x = h ^ (h >> 16u);
    x = x * 0x85ebca6bu;
    x = x ^ (x >> 13u);
    x = x * 0xc2b2ae35u;
    return x ^ (x >> 16u);
}

// The key: the bytes of the tokens without a digit and of the spaces and
// delimiters between them, the token number of each token with a digit,
// the token count and the digit-token count. Lines of one shape have one
// key; a key may (rarely) be shared by lines of two shapes, which
// `shape_mark` finds.
@compute @workgroup_size(256)
fn shape_key(@builtin(global_invocation_id) gid3: vec3<u32>) {
    for (var line = gid3.x; line < info.n_lines; line += info.threads) {
        let r = line_range(line);
        var h = vec2<u32>(0x811c9dc5u, 0x9747b28cu);
        var t = vec2<u32>(0u, 0u);
        var tokens = 0u;
        var ndig = 0u;
        var intok = false;
        var dig = false;
        // The line's end (p == r.y) ends its last token as a space would.
        for (var p = r.x; p <= r.y; p++) {
            var c = 32u;
            if p < r.y {
                c = byte_at(p);
            }
            let k = class_of(c);
            if k == CONT || k == DIGIT {
                if !intok {
                    intok = true;
                    dig = false;
                    t = vec2<u32>(0x2545f491u, 0x6b43a9b5u);
                }
                t = mixh(t, c);
                dig = dig || k == DIGIT;
                continue;
            }
            if intok {
                if dig {
                    h = mixh(h, 0x20000u + tokens);
                    ndig += 1u;
                } else {
                    h = mixh(mixh(h, t.x), t.y);
                }
                tokens += 1u;
                intok = false;
            }
            if p == r.y {
                break;
            }
            if k == DELIM {
                tokens += 1u;
            }
            h = mixh(h, 0x100u + c);
        }
        h = mixh(mixh(h, 0x10000u + tokens), ndig);
        keys[2u * line] = fmix(h.x);
        keys[2u * line + 1u] = fmix(h.y);
    }
}

// Byte `i` of the line (`rep` false) or of the group's first line.
fn byte_in(i: u32, rep: bool) -> u32 {
    if rep {
        return rep_byte(i);
    }
    return byte_at(i);
}

// The end of the word token at `p0` (before `e`) in the line or, with
// `rep`, in the group's first line, and 1 when it holds a digit:
// (end, digit).
fn word_end(p0: u32, e: u32, rep: bool) -> vec2<u32> {
    var p = p0;
    var d = 0u;
    while p < e {
        let k = class_of(byte_in(p, rep));
        if k == SPACE || k == DELIM {
            break;
        }
        if k == DIGIT {
            d = 1u;
        }
        p++;
    }
    return vec2<u32>(p, d);
}

@compute @workgroup_size(256)
fn shape_mark(@builtin(global_invocation_id) gid3: vec3<u32>) {
    for (var line = gid3.x; line < info.n_lines; line += info.threads) {
        let g = gid[line];
        if g == NONE {
            continue;
        }
        let r = line_range(line);
        var p = r.x;
        let e = r.y;
        var q = rep_at[2u * g];
        let re = rep_at[2u * g + 1u];
        var ord = 0u;
        var lo = 0u;
        var hi = 0u;
        var flags = 0u;
        loop {
            // The spaces before the next token: the same number.
            var ns = 0u;
            while p < e && byte_at(p) == 32u {
                p++;
                ns++;
            }
            var ms = 0u;
            while q < re && rep_byte(q) == 32u {
                q++;
                ms++;
            }
            if ns != ms {
                flags |= F_OTHER;
                break;
            }
            if p >= e || q >= re {
                if p < e || q < re {
                    flags |= F_OTHER;
                }
                break;
            }
            let a = byte_at(p);
            let b = rep_byte(q);
            if class_of(a) == DELIM || class_of(b) == DELIM {
                if a != b {
                    flags |= F_OTHER;
                    break;
                }
                p++;
                q++;
                continue;
            }
            let wa = word_end(p, e, false);
            let wb = word_end(q, re, true);
            if wa.y != wb.y {
                flags |= F_OTHER;
                break;
            }
            var differ = (wa.x - p) != (wb.x - q);
            if !differ {
                for (var i = 0u; i < wa.x - p; i++) {
                    if byte_at(p + i) != rep_byte(q + i) {
                        differ = true;
                        break;
                    }
                }
            }
            if wa.y == 1u {
                if differ {
                    if ord < 32u {
                        lo |= 1u << ord;
                    } else if ord < 64u {
                        hi |= 1u << (ord - 32u);
                    } else {
                        flags |= F_WIDE;
                    }
                }
                ord++;
            } else if differ {
                flags |= F_OTHER;
                break;
            }
            p = wa.x;
            q = wb.x;
        }
        // Most lines of a group set bits already set: loaded first, the
        // atomics are few.
        if (atomicLoad(&marks[3u * g]) & lo) != lo {
            atomicOr(&marks[3u * g], lo);
        }
        if (atomicLoad(&marks[3u * g + 1u]) & hi) != hi {
            atomicOr(&marks[3u * g + 1u], hi);
        }
        if (atomicLoad(&marks[3u * g + 2u]) & flags) != flags {
            atomicOr(&marks[3u * g + 2u], flags);
        }
    }
}
