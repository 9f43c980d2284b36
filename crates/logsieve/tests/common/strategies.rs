//! Random corpora, boundary variations and property-test strategies.

#[cfg(not(target_arch = "wasm32"))]
use super::Flags;

/// Pieces random corpora are made of: log-like tokens, separators, line
/// ends (LF, CRLF, empty lines), non-ASCII letters with interesting case
/// folds (é/É, Greek sigma, KELVIN SIGN, LONG S), NUL and invalid UTF-8.
pub const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"ab",
    b"ba",
    b"foo",
    b"Foo",
    b"FOO",
    b"bar",
    b"error",
    b"ERROR",
    b"Error",
    b"x",
    b"k",
    b"K",
    b"s",
    b"S",
    b"1",
    b"42",
    b"503",
    b"_",
    b" ",
    b" ",
    b"  ",
    b":",
    b"=",
    b"-",
    b".",
    b"/",
    b"[",
    b"]",
    b"\t",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\r",
    "é".as_bytes(),
    "É".as_bytes(),
    "σ".as_bytes(),
    "Σ".as_bytes(),
    "ς".as_bytes(),
    "\u{212A}".as_bytes(),
    "ſ".as_bytes(),
    "→".as_bytes(),
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xa9",
];

/// Pieces patterns are made of (a subset that occurs in corpora, plus a few
/// that do not).
pub const PATTERN_PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"ab",
    b"foo",
    b"FOO",
    b"error",
    b"Error",
    b"x",
    b"k",
    b"s",
    b"1",
    b"42",
    b" ",
    b":",
    b"=",
    b"_",
    b".",
    b"-",
    b"zz",
    "é".as_bytes(),
    "É".as_bytes(),
    "σ".as_bytes(),
    "ſ".as_bytes(),
    b"\xff",
];

/// Concatenates pieces chosen by index.
pub fn assemble(pieces: &[&[u8]], idx: &[usize]) -> Vec<u8> {
    idx.iter()
        .flat_map(|&i| pieces[i % pieces.len()].iter().copied())
        .collect()
}

/// Boundary variations of `hay` (aho-corasick's `variations()` idea): pad
/// the first line with 0..=`max_pad` filler bytes before and the last line
/// after, so matches land on every alignment and every 4-/16-/32-byte word
/// edge; put whole filler lines before and after; drop or add the final
/// newline. The filler `.` is a non-word byte that occurs in no pattern of
/// the sweeps.
pub fn variations(hay: &[u8], max_pad: usize) -> Vec<Vec<u8>> {
    let mut out = vec![hay.to_vec()];
    for pad in 1..=max_pad {
        let fill = vec![b'.'; pad];
        // Same line, before and after.
        out.push([&fill[..], hay].concat());
        out.push([hay, &fill[..]].concat());
        // Own line before; own line after.
        out.push([&fill[..], b"\n", hay].concat());
        let mut after = hay.to_vec();
        if !after.ends_with(b"\n") {
            after.push(b'\n');
        }
        after.extend_from_slice(&fill);
        out.push(after);
    }
    if let Some(h) = hay.strip_suffix(b"\n") {
        out.push(h.to_vec());
    } else {
        out.push([hay, b"\n"].concat());
    }
    out
}

/// A generated log of about `lines * 200` bytes (deterministic).
pub fn generated(lines: u64, seed: u64) -> Vec<u8> {
    logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines,
        seed,
        ..Default::default()
    })
}

// ---------------------------------------------------------------------------
// Random regexes with required literals (the CPU prefilter's and the GPU
// tier 1's property tests)
// ---------------------------------------------------------------------------

// The browser tests include this file and have no proptest.
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;

/// `-i`, `-w`, `-x`, `-v` at random (`-x` never with `-w`).
#[cfg(not(target_arch = "wasm32"))]
pub fn flags_strategy(allow_wx: bool) -> impl Strategy<Value = Flags> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(move |(i, w, x, v)| {
        Flags {
            i,
            w: w && allow_wx,
            x: x && allow_wx && !w,
            v,
        }
    })
}

/// Regex fragments for the prefilter property: the required literal sits in
/// alternations, optional groups, `{0,}` and `{1,}` repetitions, next to
/// classes and anchors, over a small alphabet so literals occur often.
pub const PREFILTER_PIECES: &[&str] = &[
    "abc",
    "(abc)?",
    "(?:abc|bca)",
    "(?:ab|cab)",
    "(?:cab){0,}",
    "(?:bcab){1,2}",
    "(?:a|abc)bb",
    "[ab]",
    "[^c]",
    "c+",
    "a*",
    ".",
    "cc",
    "^",
    "$",
    "\\b",
];

#[cfg(not(target_arch = "wasm32"))]
pub fn prefilter_case() -> impl Strategy<Value = (Vec<u8>, Vec<Vec<u8>>, Flags)> {
    let corpus = prop::collection::vec(
        prop::sample::select(&[b'a', b'b', b'c', b'\n', b' ', b'A', b'C'][..]),
        0..400,
    );
    let pattern = prop::collection::vec(0..PREFILTER_PIECES.len(), 1..5).prop_map(|idx| {
        idx.iter()
            .map(|&i| PREFILTER_PIECES[i])
            .collect::<String>()
            .into_bytes()
    });
    (
        corpus,
        prop::collection::vec(pattern, 1..3),
        flags_strategy(true),
    )
        .prop_map(|(c, p, mut f)| {
            // The oracle checks -w spans by slicing the line, where anchors
            // change meaning; anchors are covered without -w.
            if p.iter()
                .any(|p| p.iter().any(|&b| b == b'^' || b == b'$' || b == b'\\'))
            {
                f.w = false;
            }
            (c, p, f)
        })
}
