// bloom: many literals at memory speed. Each thread streams 16-byte
// vec4<u32> loads (coalesced, a grid-stride loop so that a workgroup pays
// for its filter load once over many vec4s) and tests all 16 start
// positions of its vec4 from registers against a bit filter held in
// workgroup memory; only the positions that pass are looked up in the
// global hash table and verified byte by byte. The filter is a prefilter:
// false positives, never false negatives.
//
// Keys. L = min(shortest pattern, 8) >= 4 (mp.f; shorter sets run `ac`).
// A position's key is two little-endian words: A = bytes [0, 4) and
// B = bytes [L-4, L) (they overlap when L < 8; together they are the first
// L bytes). Both are ASCII-folded by SWAR under -i (patterns are folded on
// the host).
//
// Filter (mp.a: P = mp.parts parts of 2^(mp.b - 5) words each, part p's
// copied to `wbits` at workgroup start; or, P = 1, read from `tables` when
// mp.global_filter is set):
// x = A * K1 and y = (x ^ B) * K2. With one part, the top mp.b - 5 bits
// of x pick a word and the next five one bit of it; over P > 1 parts as
// one array of W = P * 2^(mp.b - 5) words (pipeline constant SPLIT), word
// ((x >> 16) * W) >> 16 (W <= 65536) and bits [11, 16) of x. A position
// passes when three bits of that word are set: that one and the two the
// top ten bits of y name. One workgroup-memory load a position (a
// blocked Bloom filter).
// The first bit is a 4-gram filter; the second is keyed by all L bytes, so
// patterns that share a 4-byte prefix (IP lists: "192.") do not let every
// occurrence of that prefix through. The word's part is the key's part:
// workgroup (g, p) tests only the positions whose word lies in part p
// (a compare in registers), so each position is verified in one
// workgroup at most, and P parts give the filter P times the bits a key
// for P reads of the corpus (100k keys in one 32 KiB part: ~20% of the
// generated corpus's positions pass; in 4 parts, ~4.6%).
//
// Verification filter (mp.g: 2^mp.h bits, read from L2): one bit per key
// from a third hash of y, tested before the buckets.
//
// Table: 2^mp.e buckets indexed by the top mp.e bits of y; bucket starts
// (prefix sums, 2^mp.e + 1 words) at mp.c, entries of eight words at mp.d,
// sorted by bucket: the key (A, B), the pattern's bytes [L, L + 8) (C, D,
// zero past its end), its group and its length. An entry whose key and
// next bytes agree with the position's is a match when the pattern is at
// most L + 8 bytes long; longer ones compare the rest byte by byte.
//
// Reads stay in bounds: a thread reads the next vec4 for the windows that
// run past its own 16 bytes (a neighbour's data, a cache hit), and the
// segment is padded with >= 128 bytes of '\n', which no pattern holds, so
// every comparison ends there.

// The filter's size in words: replaced at pipeline build by the largest
// the device's workgroup storage allows (kernels/bloom.rs). Keep the line
// as it is: the replacement matches it.
const BLOOM_WORDS: u32 = 4096u;

var<workgroup> wbits: array<u32, BLOOM_WORDS>;

// This workgroup's part of the filter, and the filter's shape (set once
// at the kernel's start): words a part (a power of two) less one, log2 of
// it, and words over all parts.
var<private> fpart: u32;
var<private> fmask: u32;
var<private> fbits: u32;
var<private> fwords: u32;

// false only in the diagnostic pipeline of LOGSIEVE_BLOOM_DIAG=16
// (kernels/bloom.rs): verification compiled out, so that the pass's cost
// without its code (registers, occupancy) is measured; results are wrong.
override VERIFY: bool = true;

// true in the pipeline for filters split into parts (mp.parts > 1): the
// plain pipeline keeps the one-part arithmetic (a shift for the word).
override SPLIT: bool = false;

const K1: u32 = 0x9E3779B1u;
const K2: u32 = 0x85EBCA77u;
const K3: u32 = 0x2C1B3C6Du;

// ASCII upper case to lower case in four bytes at once (as the CPU's
// fold8): per byte, h = b & 0x7f plus 0x3f carries into the top bit iff
// h >= 'A', plus 0x25 iff h > 'Z'; bytes >= 0x80 are left alone. No lane
// carries into the next (h + 0x3f <= 0xbe).
fn fold4(x: u32) -> u32 {
    let h = x & 0x7F7F7F7Fu;
    let upper = (h + 0x3F3F3F3Fu) & ~(h + 0x25252525u) & ~x & 0x80808080u;
    return x | (upper >> 2u);
}

// fold4 under -i (a uniform branch).
fn mfold4(x: u32) -> u32 {
    if mp.fold != 0u {
        return fold4(x);
    }
    return x;
}

// 1 when the key at a position passes the filter, else 0: `a` is its
// first 4 bytes, and its last 4 are bytes [s/8, s/8 + 4) of the word pair
// (blo, bhi) (s is a constant at every call). One word of the filter holds
// all three bits: the word and one bit from the first hash, two from the
// second hash's top ten; 0 when the word is in another workgroup's part.
// sh = 32 - the word index bits (one part).
fn probe(a: u32, blo: u32, bhi: u32, s: u32, sh: u32) -> u32 {
    let x = a * K1;
    if (mp.diag & 4u) != 0u {
        return u32(x == 0x12345678u);
    }
    var b = blo;
    if s != 0u {
        b = (blo >> s) | (bhi << (32u - s));
    }
    let y = (x ^ b) * K2;
    // A uniform branch: the filter in workgroup memory, or (sets past 8
    // bits a key there, with LOGSIEVE_BLOOM_DIAG=8) a larger one in global
    // memory, through L1/L2 (measured slower: kernels/bloom.rs).
    var w: u32;
    var own = 1u;
    var b1: u32;
    if mp.global_filter != 0u {
        w = tables[mp.a + (x >> sh)];
        b1 = (x >> (sh - 5u)) & 31u;
    } else if SPLIT {
        let wi = ((x >> 16u) * fwords) >> 16u;
        own = u32((wi >> fbits) == fpart);
        w = wbits[wi & fmask];
        b1 = (x >> 11u) & 31u;
    } else {
        w = wbits[x >> sh];
        b1 = (x >> (sh - 5u)) & 31u;
    }
    return own & (w >> b1) & (w >> (y >> 27u)) & (w >> ((y >> 22u) & 31u)) & 1u;
}

// The four positions of word `lo` (the next word is `hi`; `blo`, `bhi`
// are the same words shifted by L - 4 bytes): one bit each. The shifts
// are constants.
fn test4(lo: u32, hi: u32, blo: u32, bhi: u32, sh: u32) -> u32 {
    var m = probe(lo, blo, bhi, 0u, sh);
    m |= probe((lo >> 8u) | (hi << 24u), blo, bhi, 8u, sh) << 1u;
    m |= probe((lo >> 16u) | (hi << 16u), blo, bhi, 16u, sh) << 2u;
    m |= probe((lo >> 24u) | (hi << 8u), blo, bhi, 24u, sh) << 3u;
    return m;
}

// The (folded) 4 bytes at p.
fn win_at(p: u32) -> u32 {
    let w = p >> 2u;
    let s = (p & 3u) * 8u;
    var x = word_at(w);
    if s != 0u {
        x = (x >> s) | (word_at(w + 1u) << (32u - s));
    }
    return mfold4(x);
}

// Verifies the candidate positions `mask` (bit j: base + j).
fn verify(base: u32, mask: u32) {
    var m = mask;
    // Results only: candidates before `skip` are on a line already set.
    var skip = 0u;
    let l = mp.f;
    while m != 0u {
        let p = base + countTrailingZeros(m);
        m &= m - 1u;
        if p < skip || p >= seg.n_bytes {
            continue;
        }
        let ka = win_at(p);
        let kb = win_at(p + l - 4u);
        let y = ((ka * K1) ^ kb) * K2;
        // The verification filter (from L2): most chance passes end here.
        let z = ((y ^ (y >> 15u)) * K3) >> (32u - mp.h);
        if ((tables[mp.g + (z >> 5u)] >> (z & 31u)) & 1u) == 0u {
            continue;
        }
        let bk = y >> (32u - mp.e);
        // The pattern's next 8 bytes, loaded with the bucket.
        let kc = win_at(p + l);
        let kd = win_at(p + l + 4u);
        let lo = tables[mp.c + bk];
        let hi = tables[mp.c + bk + 1u];
        for (var e = lo; e < hi; e++) {
            let eo = mp.d + 8u * e;
            if tables[eo] != ka || tables[eo + 1u] != kb {
                continue;
            }
            let g = tables[eo + 4u];
            let len = tables[eo + 5u];
            // Bytes [l, l + 8) of the pattern, as far as it goes.
            let rest = len - l;
            var mc = 0xFFFFFFFFu;
            if rest < 4u {
                mc = (1u << (rest * 8u)) - 1u;
            }
            var md = 0u;
            if rest >= 8u {
                md = 0xFFFFFFFFu;
            } else if rest > 4u {
                md = (1u << ((rest - 4u) * 8u)) - 1u;
            }
            if ((kc ^ tables[eo + 2u]) & mc) != 0u || ((kd ^ tables[eo + 3u]) & md) != 0u {
                continue;
            }
            var ok = true;
            if rest > 8u {
                let off = tables[mp.pat_off + 2u * g];
                for (var i = l + 8u; i < len; i++) {
                    if mfold(byte_at(p + i)) != pat_byte(off, i) {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                continue;
            }
            if mp.per_pattern != 0u {
                on_match(p, g);
                continue;
            }
            let line = line_of(p);
            set_result(line);
            skip = starts[line + 1u];
            break;
        }
    }
}

@compute @workgroup_size(256)
fn bloom(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    // Workgroup (g, p): the P workgroups of one stride are neighbours, so
    // they run together and read the corpus through L2 once.
    var parts = 1u;
    if SPLIT {
        parts = max(mp.parts, 1u);
    }
    let gid = group_id(wid, nwg);
    let groups = (nwg.x * nwg.y) / parts;
    if gid >= groups * parts {
        // Padding of a 2-D grid (uniform in the workgroup).
        return;
    }
    fpart = gid % parts;
    fbits = mp.b - 5u;
    fmask = (1u << fbits) - 1u;
    fwords = parts << fbits;
    if mp.global_filter == 0u {
        let n_words = 1u << fbits;
        let base = mp.a + fpart * n_words;
        for (var i = lid; i < n_words; i += WG) {
            wbits[i] = tables[base + i];
        }
    }
    workgroupBarrier();
    let sh = 32u - (mp.b - 5u);
    let d = mp.f - 4u;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    let stride = groups * WG;
    // Two vec4s (a grid stride apart) an iteration, all four loads issued
    // before either is tested: twice the loads in flight per thread.
    for (var c = (gid / parts) * WG + lid; c < n_vec; c += 2u * stride) {
        let c2 = c + stride;
        let v = data[c];
        // Bytes 16..24 for the windows that run past this vec4: in bounds
        // (the padding is >= 128 bytes).
        let nx = data[c + 1u];
        var v2 = vec4<u32>(0x0A0A0A0Au);
        var nx2 = v2;
        if c2 < n_vec {
            v2 = data[c2];
            nx2 = data[c2 + 1u];
        }
        test16(v, nx, c, sh, d);
        if c2 < n_vec {
            test16(v2, nx2, c2, sh, d);
        }
    }
}

// The 16 start positions of vec4 c (`v`; `nx` is the next vec4).
fn test16(v: vec4<u32>, nx: vec4<u32>, c: u32, sh: u32, d: u32) {
    let w0 = mfold4(v.x);
    let w1 = mfold4(v.y);
    let w2 = mfold4(v.z);
    let w3 = mfold4(v.w);
    let w4 = mfold4(nx.x);
    let w5 = mfold4(nx.y);
    // The words shifted by d = L - 4 bytes (uniform: one branch for
    // the whole dispatch).
    var b0 = w0;
    var b1 = w1;
    var b2 = w2;
    var b3 = w3;
    var b4 = w4;
    if d == 4u {
        b0 = w1;
        b1 = w2;
        b2 = w3;
        b3 = w4;
        b4 = w5;
    } else if d != 0u {
        let s = 8u * d;
        let t = 32u - s;
        b0 = (w0 >> s) | (w1 << t);
        b1 = (w1 >> s) | (w2 << t);
        b2 = (w2 >> s) | (w3 << t);
        b3 = (w3 >> s) | (w4 << t);
        b4 = (w4 >> s) | (w5 << t);
    }
    let m = test4(w0, w1, b0, b1, sh)
        | (test4(w1, w2, b1, b2, sh) << 4u)
        | (test4(w2, w3, b2, b3, sh) << 8u)
        | (test4(w3, w4, b3, b4, sh) << 12u);
    if VERIFY && m != 0u && (mp.diag & 1u) == 0u {
        verify(c * 16u, m);
    }
}
