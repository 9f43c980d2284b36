//! The CPU engine: the fallback when no GPU helps, and the reference that
//! every GPU kernel is checked against.
//!
//! One document is searched as one buffer (no per-line calls): the matcher
//! finds a candidate, the loop finds its line with `memrchr`/`memchr`, and
//! the search resumes at the next line. With several threads, the document
//! is cut at line boundaries into chunks searched in parallel (ripgrep
//! parallelises across files only; a single large log is the common case
//! here).

pub(crate) mod doc_regex;
pub(crate) mod fuzzy;
pub(crate) mod matcher;
pub(crate) mod multi;
pub mod multiline;
mod rare;

use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::corpus::Document;
use crate::error::Error;
use crate::query::Query;
use crate::results::{DocHits, Want};

use rare::RareByte;
pub(crate) use rare::{doc_speed, matcher_name, RARE_BYTE_SPEED};

/// Options for the CPU engine.
#[derive(Clone, Copy, Debug)]
pub struct CpuOptions {
    /// Threads for one document; 0 means all cores.
    pub threads: usize,
    /// Count only, or also list the matching lines.
    pub want: Want,
    /// Stop after this many selected lines per document (`-m`).
    pub max_count: Option<u64>,
    /// With [`Want::Lines`]: the selected lines' ids too, not only their
    /// start offsets ([`DocHits::starts`]). False saves a newline count over
    /// the whole document (26% of a one-thread literal search's
    /// instructions, callgrind on 39 MB) when nobody prints line numbers;
    /// `-v` always gives ids.
    pub line_ids: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions {
            threads: 1,
            want: Want::Lines,
            max_count: None,
            line_ids: true,
        }
    }
}

/// Below this many bytes per thread, splitting costs more than it saves
/// (a chunk takes ~0.2 ms at memory speed; handing it to a thread ~20 us).
const MIN_CHUNK: usize = 4 << 20;

/// Calls `on_line(start, end)` for every line of `hay[start..end]` that
/// matches, before `-v`; stops when `on_line` returns false. `start` must be
/// a line start and `end` a line start or `hay.len()`.
pub(crate) fn for_each_match(
    q: &Query,
    hay: &[u8],
    start: usize,
    end: usize,
    on_line: impl FnMut(usize, usize) -> bool,
) {
    for_each_match_until(q, hay, start, end, &Cancel::never(), on_line)
}

/// [`for_each_match`] that also stops when `cancel` fires, looked at
/// before each candidate: a slow verifier (1,000 fuzzy patterns with 3
/// edits verify ~30 KB/s here) must not finish its piece first.
pub(crate) fn for_each_match_until(
    q: &Query,
    hay: &[u8],
    start: usize,
    end: usize,
    cancel: &Cancel,
    on_line: impl FnMut(usize, usize) -> bool,
) {
    for_each_match_rare(q, hay, start, end, cancel, None, on_line)
}

/// [`for_each_match_until`], candidates found by `rare` when given.
fn for_each_match_rare(
    q: &Query,
    hay: &[u8],
    start: usize,
    end: usize,
    cancel: &Cancel,
    rare: Option<&RareByte>,
    mut on_line: impl FnMut(usize, usize) -> bool,
) {
    let m = &q.matcher;
    let mut pos = start;
    let live = cancel.can_fire();
    while pos < end {
        if live && cancel.is_cancelled() {
            return;
        }
        let found = match rare {
            Some(r) => r.find(hay, pos, end).map(|start| matcher::Candidate {
                start,
                verify: r.verify,
            }),
            None => m.find_candidate(hay, pos, end),
        };
        let Some(c) = found else {
            break;
        };
        // A candidate at `end` is an empty match at the end of the last line
        // when that line has no `\n`; otherwise it belongs to the next line.
        if c.start > end || (c.start == end && hay[end - 1] == b'\n') {
            break;
        }
        let ls = memchr::memrchr(b'\n', &hay[pos..c.start]).map_or(pos, |i| pos + i + 1);
        let le = memchr::memchr(b'\n', &hay[c.start..end]).map_or(end, |i| c.start + i);
        if (!c.verify || m.is_match_line(&hay[ls..le])) && !on_line(ls, le) {
            return;
        }
        pos = le + 1;
    }
}

/// Splits `hay` into about `n` chunks at line boundaries.
fn chunks(hay: &[u8], n: usize) -> Vec<(usize, usize)> {
    let n = n.clamp(1, (hay.len() / MIN_CHUNK).max(1));
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..=n {
        let target = hay.len() * i / n;
        let end = if i == n || target <= start {
            if i == n {
                hay.len()
            } else {
                continue;
            }
        } else {
            memchr::memchr(b'\n', &hay[target - 1..]).map_or(hay.len(), |j| target + j)
        };
        if end > start {
            out.push((start, end));
            start = end;
        }
    }
    out
}

/// A rayon pool of `threads` threads, built once per size and kept: building
/// one costs ~0.3 ms, more than a whole search of a few MB.
pub(crate) fn pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Some(Arc::clone(p));
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .ok()?,
    );
    pools.insert(threads, Arc::clone(&p));
    Some(p)
}

/// `n` threads, or all cores for 0. The core count is read once: the
/// standard library re-reads cgroup files on every call (~0.1 ms here).
pub fn resolve_threads(n: usize) -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if n > 0 {
        return n;
    }
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The `\n` bytes in `hay`, ripgrep's way (its `bytecount` crate):
/// compare and subtract 32 bytes at a time into byte counters, summed
/// every 255 vectors. 2.6x fewer instructions than memchr's count, which
/// takes a movemask and a popcount per vector (callgrind, 39 MB:
/// 3.7M against 9.75M), on the path of every `-n` and `--json` line.
pub(crate) fn count_newlines(hay: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { count_newlines_avx2(hay) };
    }
    count_newlines_portable(hay)
}

/// [`count_newlines`] with AVX2: `vpcmpeqb` gives -1 per `\n`, `vpsubb`
/// adds it to 32 byte counters, `vpsadbw` sums them every 255 vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn count_newlines_avx2(hay: &[u8]) -> u64 {
    use std::arch::x86_64::*;
    const V: usize = 32;
    let nl = _mm256_set1_epi8(b'\n' as i8);
    let zero = _mm256_setzero_si256();
    // 4 vectors a step add at most 4 to a byte counter: 63 steps (252)
    // before the counters are summed.
    const STEP: usize = 4 * V;
    let mut total = 0u64;
    let mut at = 0;
    let sum = |acc: __m256i| {
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 writable bytes; the store is unaligned.
        unsafe {
            _mm256_storeu_si256(
                lanes.as_mut_ptr().cast::<__m256i>(),
                _mm256_sad_epu8(acc, zero),
            )
        };
        lanes.iter().sum::<u64>()
    };
    let p = hay.as_ptr();
    while hay.len() - at >= STEP {
        let block_end = (at + 63 * STEP).min(hay.len() - (hay.len() - at) % STEP);
        let mut acc = zero;
        while at < block_end {
            // SAFETY: `at + STEP <= hay.len()`: 4 in-bounds unaligned loads.
            let (a, b, c, d) = unsafe {
                (
                    _mm256_loadu_si256(p.add(at).cast::<__m256i>()),
                    _mm256_loadu_si256(p.add(at + V).cast::<__m256i>()),
                    _mm256_loadu_si256(p.add(at + 2 * V).cast::<__m256i>()),
                    _mm256_loadu_si256(p.add(at + 3 * V).cast::<__m256i>()),
                )
            };
            let ab = _mm256_add_epi8(_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(b, nl));
            let cd = _mm256_add_epi8(_mm256_cmpeq_epi8(c, nl), _mm256_cmpeq_epi8(d, nl));
            acc = _mm256_sub_epi8(acc, _mm256_add_epi8(ab, cd));
            at += STEP;
        }
        total += sum(acc);
    }
    total + count_newlines_portable(&hay[at..])
}

fn count_newlines_portable(hay: &[u8]) -> u64 {
    hay.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The number of lines in `hay` (a last line without `\n` counts).
pub(crate) fn count_lines(hay: &[u8]) -> u64 {
    let nl = count_newlines(hay);
    nl + u64::from(hay.last().is_some_and(|&b| b != b'\n'))
}

/// Bytes searched between two looks at a live cancel token (besides the
/// look before each candidate line): a literal runs through 1 MiB in ~0.1
/// ms, a regex without a literal to look for (~10 MB/s) in ~0.1 s.
const CANCEL_STEP: usize = 1 << 20;

/// The first range of a mapped document's pages mapped in one call before
/// it is searched (`MADV_POPULATE_READ`); each next one twice the last, up
/// to [`POPULATE_MAX`]. Mapped by the search's own page faults instead (16
/// pages a fault), `-c ERROR_503` on 194 MB took 7-13% longer on the
/// build machine (2026-11-26); growing from 1 MiB keeps an early exit
/// (`-m`, `-q`, `| head`) from mapping the whole file first.
const POPULATE_FIRST: usize = 1 << 20;
/// The largest range mapped in one call.
const POPULATE_MAX: usize = 64 << 20;

/// Searches one document.
pub fn search_doc(doc: &Document, q: &Query, opts: &CpuOptions) -> DocHits {
    search_doc_cancellable(doc, q, opts, &Cancel::never())
        .expect("a search that is never cancelled answers")
}

/// [`search_doc`] that stops when `cancel` fires: each thread looks at the
/// token between pieces of [`CANCEL_STEP`] bytes of its part (cut at line
/// starts), and a cancelled search is an error, never a partial answer.
pub fn search_doc_cancellable(
    doc: &Document,
    q: &Query,
    opts: &CpuOptions,
    cancel: &Cancel,
) -> Result<DocHits, Error> {
    search_doc_stepped(doc, q, opts, cancel, CANCEL_STEP, None)
}

/// [`search_doc_cancellable`] that hands the lines it selects to `sink`
/// piece by piece while it runs (see [`search_doc_stepped`]).
pub(crate) fn search_doc_streamed(
    doc: &Document,
    q: &Query,
    opts: &CpuOptions,
    cancel: &Cancel,
    sink: PieceSink<'_>,
) -> Result<DocHits, Error> {
    search_doc_stepped(doc, q, opts, cancel, CANCEL_STEP, Some(sink))
}

/// The selected lines of one piece, handed over as the search finds them:
/// their starts and their ids (empty without line ids).
pub(crate) type PieceSink<'s> = &'s mut dyn FnMut(&[u64], &[u64]);

/// [`search_doc_cancellable`] with pieces of `step` bytes (tests use tiny
/// ones). A token that can never fire searches each part in one piece.
/// With `sink`, a document searched in one part without `-v` hands each
/// piece's lines to it as soon as the piece is searched (the lines are
/// still in the cache), before the answer.
pub(crate) fn search_doc_stepped(
    doc: &Document,
    q: &Query,
    opts: &CpuOptions,
    cancel: &Cancel,
    step: usize,
    sink: Option<PieceSink<'_>>,
) -> Result<DocHits, Error> {
    cancel.check()?;
    let hay = doc.data();
    if let (true, Some(re)) = (q.multiline(), q.matcher.doc_regex()) {
        return multiline::search_doc(re, hay, q.invert(), opts.want, opts.max_count, cancel);
    }
    let live = cancel.can_fire();
    // A lazily mapped file is searched piece by piece too, each piece's
    // pages mapped in one call before it is read (`Document::populate`).
    let mapped = doc.is_mapped();
    let step = step.max(1);
    let threads = resolve_threads(opts.threads);
    let parts = chunks(hay, threads);
    let mut rare = RareByte::plan(q, hay);
    // A rare byte with a pair to time: the first MiB mapped and read by
    // both (`RareByte::settle`).
    if let Some(r) = rare
        .as_mut()
        .filter(|r| r.can_settle() && hay.len() >= rare::SETTLE_MIN_DOC)
    {
        if mapped {
            doc.populate(0..rare::SETTLE_BYTES);
        }
        r.settle(hay);
    }
    // Early exit only makes sense single-threaded without -v.
    let limit = if q.invert() { None } else { opts.max_count };
    let want_lines = opts.want == Want::Lines;
    // Line ids by counting newlines; without ids only the starts are kept.
    let want_ids = want_lines && (opts.line_ids || q.invert());
    // Per part: the matches, their line starts, each one's line number
    // within the part (newlines counted between consecutive matches, in
    // parallel with the other parts) and the part's newlines in all.
    type Part = (u64, Vec<u64>, Vec<u64>, u64);
    let run = |&(s, e): &(usize, usize), sink: &mut dyn FnMut(&[u64], &[u64])| -> Part {
        let mut count = 0u64;
        let mut starts = Vec::new();
        let mut lines = Vec::new();
        let (mut line, mut at) = (0u64, s);
        let (mut from, mut go) = (s, true);
        let mut handed = 0;
        // Mapped ahead of the search up to here, `chunk` bytes at a time.
        let (mut ahead, mut chunk) = (s, POPULATE_FIRST);
        while go && from < e {
            // The next piece ends at a line start (or the part's end): a
            // step for a live token, else the next chunk to map.
            let len = match (live, mapped) {
                (true, _) => step,
                (false, true) => chunk,
                (false, false) => usize::MAX,
            };
            let to = if e - from <= len {
                e
            } else {
                memchr::memchr(b'\n', &hay[from + len - 1..e]).map_or(e, |j| from + len + j)
            };
            if mapped && to > ahead {
                let end = if live {
                    (ahead + chunk).max(to).min(e)
                } else {
                    to
                };
                doc.populate(ahead..end);
                (ahead, chunk) = (end, (chunk * 2).min(POPULATE_MAX));
            }
            for_each_match_rare(q, hay, from, to, cancel, rare.as_ref(), |ls, _| {
                count += 1;
                if want_ids {
                    line += count_newlines(&hay[at..ls]);
                    at = ls;
                    lines.push(line);
                }
                if want_lines {
                    starts.push(ls as u64);
                }
                go = limit.is_none_or(|l| count < l);
                go
            });
            // Never more than -m lines (`-m 0` still finds the first).
            let end = limit.map_or(starts.len(), |l| {
                starts.len().min(usize::try_from(l).unwrap_or(usize::MAX))
            });
            if end > handed {
                let ids = if want_ids { &lines[handed..end] } else { &[] };
                sink(&starts[handed..end], ids);
                handed = end;
            }
            from = to;
            go = go && !(live && cancel.is_cancelled());
        }
        let total = if want_ids {
            line + count_newlines(&hay[at..e])
        } else {
            0
        };
        (count, starts, lines, total)
    };
    let results: Vec<Part> = if parts.len() > 1 {
        match pool(threads) {
            Some(p) => p.install(|| parts.par_iter().map(|p| run(p, &mut |_, _| {})).collect()),
            None => parts.iter().map(|p| run(p, &mut |_, _| {})).collect(),
        }
    } else {
        // One part: its pieces' lines are the document's, in order (under
        // -v the selected lines are only known at the end).
        match sink.filter(|_| want_lines && !q.invert()) {
            Some(sink) => parts.iter().map(|p| run(p, &mut *sink)).collect(),
            None => parts.iter().map(|p| run(p, &mut |_, _| {})).collect(),
        }
    };
    // A piece cut short by the token leaves a partial count: no answer.
    cancel.check()?;
    let matched: u64 = results.iter().map(|r| r.0).sum();
    if !want_lines {
        let selected = if q.invert() {
            count_lines(hay) - matched
        } else {
            matched
        };
        let count = opts.max_count.map_or(selected, |m| selected.min(m));
        return Ok(DocHits {
            count,
            lines: Vec::new(),
            starts: Vec::new(),
        });
    }
    // Line ids by counting newlines between consecutive matches (memchr's
    // SIMD count), as ripgrep numbers lines: no line index (one `u64` per
    // line, 1M pushes) is built for a few hundred matches.
    // Each part counted its own newlines; a prefix sum places them
    // (REGRESSION: one sequential count over the whole document made dense
    // line output on 16 threads 2.4x slower on the H100).
    let mut starts: Vec<u64> = results.iter().flat_map(|r| r.1.iter().copied()).collect();
    if !want_ids {
        if let Some(m) = opts.max_count {
            starts.truncate(m.min(usize::MAX as u64) as usize);
        }
        return Ok(DocHits {
            count: starts.len() as u64,
            lines: Vec::new(),
            starts,
        });
    }
    let mut ids = Vec::with_capacity(starts.len());
    let mut before = 0u64;
    for r in &results {
        ids.extend(r.2.iter().map(|&l| before + l));
        before += r.3;
    }
    if q.invert() {
        ids = complement(&ids, count_lines(hay));
        starts = Vec::new();
    }
    if let Some(m) = opts.max_count {
        ids.truncate(m.min(usize::MAX as u64) as usize);
        starts.truncate(ids.len());
    }
    Ok(DocHits {
        count: ids.len() as u64,
        lines: ids,
        starts,
    })
}

/// The sorted line ids in `0..n` that are not in the sorted `ids`.
pub(crate) fn complement(ids: &[u64], n: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity((n as usize).saturating_sub(ids.len()));
    let mut next = 0u64;
    for &id in ids {
        out.extend(next..id);
        next = id + 1;
    }
    out.extend(next..n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_tile_the_buffer_at_line_starts() {
        let mut hay = Vec::new();
        for i in 0..300_000 {
            hay.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        for n in [1, 2, 3, 7, 64] {
            let cs = chunks(&hay, n);
            assert_eq!(cs.first().unwrap().0, 0);
            assert_eq!(cs.last().unwrap().1, hay.len());
            for w in cs.windows(2) {
                assert_eq!(w[0].1, w[1].0);
                assert_eq!(hay[w[1].0 - 1], b'\n');
            }
        }
    }

    proptest::proptest! {
        /// Cut into pieces for a live cancel token (as small as one byte),
        /// a search answers what the one-piece search answers: counts, line
        /// ids, starts, under -v and -m, with one thread and several. The
        /// pieces handed to a sink, put together, are that answer's lines
        /// (a document this small is one part), and none come under -v or
        /// when only counting.
        #[test]
        fn pieces_answer_as_one_piece(
            text in proptest::collection::vec(proptest::sample::select(b"ab\nx".to_vec()), 0..400),
            pat in 0usize..4,
            invert: bool,
            max in proptest::option::of(0u64..5),
            lines: bool,
            line_ids: bool,
            step in 1usize..40,
            threads in 1usize..3,
        ) {
            let corpus = crate::Corpus::from_bytes("t", text);
            let doc = &corpus.docs()[0];
            let (syntax, p) = [
                (crate::Syntax::Fixed, "ab"),
                (crate::Syntax::Fixed, "x"),
                (crate::Syntax::Regex, "a+b$"),
                (crate::Syntax::Regex, "^"),
            ][pat];
            let q = crate::QueryBuilder::new().syntax(syntax).invert(invert).build(&[p]).unwrap();
            let opts = CpuOptions {
                threads,
                want: if lines { Want::Lines } else { Want::Count },
                max_count: max,
                line_ids,
            };
            let whole = search_doc(doc, &q, &opts);
            let live = Cancel::new();
            let (mut handed, mut handed_ids, mut calls) = (Vec::new(), Vec::new(), 0);
            let mut sink = |starts: &[u64], ids: &[u64]| {
                handed.extend_from_slice(starts);
                handed_ids.extend_from_slice(ids);
                calls += 1;
            };
            let pieces = search_doc_stepped(doc, &q, &opts, &live, step, Some(&mut sink)).unwrap();
            proptest::prop_assert_eq!(whole.count, pieces.count);
            proptest::prop_assert_eq!(&whole.lines, &pieces.lines);
            proptest::prop_assert_eq!(&whole.starts, &pieces.starts);
            if lines && !invert {
                proptest::prop_assert_eq!(&handed, &pieces.starts);
                let ids: &[u64] = if line_ids { &pieces.lines } else { &[] };
                proptest::prop_assert_eq!(&handed_ids[..], ids);
            } else {
                proptest::prop_assert_eq!(calls, 0);
            }
        }
    }

    #[test]
    fn a_cancelled_search_answers_nothing() {
        let corpus = crate::Corpus::from_bytes("t", b"ab\nab\n".repeat(1000));
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&["ab"])
            .unwrap();
        let c = Cancel::new();
        let opts = CpuOptions::default();
        assert_eq!(
            search_doc_stepped(&corpus.docs()[0], &q, &opts, &c, 8, None)
                .unwrap()
                .count,
            2000
        );
        c.cancel();
        let e = search_doc_stepped(&corpus.docs()[0], &q, &opts, &c, 8, None).unwrap_err();
        assert!(e.is_cancelled());
    }

    #[test]
    fn complement_works() {
        assert_eq!(complement(&[1, 3], 5), vec![0, 2, 4]);
        assert_eq!(complement(&[], 2), vec![0, 1]);
        assert_eq!(complement(&[0, 1], 2), Vec::<u64>::new());
    }

    #[test]
    fn newline_count_agrees_with_a_naive_count() {
        // Lengths around the 32-byte vector and the 255-vector block.
        let mut data = Vec::new();
        for i in 0..(32 * 255 * 2 + 77) {
            data.push(if i % 7 == 0 || i % 251 == 3 {
                b'\n'
            } else {
                b'a' + (i % 23) as u8
            });
        }
        for len in [
            0,
            1,
            31,
            32,
            33,
            255 * 32 - 1,
            255 * 32,
            255 * 32 + 1,
            data.len(),
        ] {
            for start in [0, 1, 5] {
                let hay = &data[start.min(len)..len];
                let naive = hay.iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!(count_newlines(hay), naive, "len {len} start {start}");
                assert_eq!(count_newlines_portable(hay), naive);
            }
        }
        // All newlines: every byte counter reaches 255 in a block.
        let all = vec![b'\n'; 32 * 255 * 3 + 5];
        assert_eq!(count_newlines(&all), all.len() as u64);
    }

    #[test]
    fn count_lines_conventions() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\n\n"), 2);
    }
}
