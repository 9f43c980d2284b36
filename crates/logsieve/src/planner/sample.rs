//! The planner's sample of the corpus: windows of it searched on the CPU
//! ([`sample`], memoised per corpus and query shape), the line histogram
//! that estimates phase 1's elimination ([`histogram_elimination`]), and
//! the probe of this machine's scan speed and page faults
//! ([`scan_probe`]).

use super::*;

/// What the planner knows about the corpus and the query from a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStats {
    /// Lines in the sample.
    pub lines: u64,
    /// Sampled lines that match (before `-v`).
    pub matching: u64,
    /// Sampled lines a 128-bin histogram filter would reject.
    pub rejected: u64,
    /// Sampled lines that hold one of the query's required literals
    /// (`Query::required_literals`): tier 1's candidates.
    pub candidates: u64,
    /// Bytes the CPU matcher searched in the sample, and its time there in
    /// nanoseconds (one thread): the CPU's speed on this corpus for
    /// matchers whose speed no fixed factor fits (fuzzy: 0.02 to 0.4 of
    /// the literal speed, by the pigeonhole pieces). 0 when not timed.
    pub cpu_bytes: u64,
    /// See `cpu_bytes`.
    pub cpu_ns: u64,
    /// The CPU finder's speed on the corpus's largest document, over the
    /// calibrated single-literal speed (`cpu::doc_speed`: a literal
    /// found by its rare byte or pair in that document runs faster than
    /// the query's matcher alone); 0 when not known (the matcher's own
    /// speed is used).
    pub cpu_speed: f64,
    /// One thread's memory-bound scan speed on this machine over this
    /// corpus, GB/s ([`scan_probe`]); 0 when not measured (the
    /// calibration's `cpu_gbps` is the base then).
    pub scan_gbps: f64,
    /// The speed at which a search maps the corpus's pages as it reads
    /// them (a lazily mapped file), GB/s on one thread ([`scan_probe`]);
    /// 0 when none are left to map (bytes in memory) or not measured.
    pub fault_gbps: f64,
}

impl SampleStats {
    /// Estimated share of lines that match.
    pub fn density(&self) -> f64 {
        if self.lines == 0 {
            0.0
        } else {
            self.matching as f64 / self.lines as f64
        }
    }

    /// Estimated share of lines that are tier 1's candidates.
    pub fn candidate_share(&self) -> f64 {
        if self.lines == 0 {
            0.0
        } else {
            self.candidates as f64 / self.lines as f64
        }
    }

    /// The CPU matcher's measured speed on the sample, GB/s on one thread
    /// (`None` when not timed, or too little to time).
    pub fn cpu_gbps(&self) -> Option<f64> {
        (self.cpu_bytes >= 4096 && self.cpu_ns > 0)
            .then(|| self.cpu_bytes as f64 / self.cpu_ns as f64)
    }

    /// Estimated share of lines phase 1 rejects.
    pub fn elimination(&self) -> f64 {
        if self.lines == 0 {
            0.0
        } else {
            self.rejected as f64 / self.lines as f64
        }
    }
}

/// Samples `windows` windows of about 4 KiB spread over the corpus, cut at
/// line boundaries: counts lines (SIMD newline count), matching lines (the
/// CPU engine's whole-buffer search, which only visits matches), and — when
/// `histogram` is set — the lines a 128-bin histogram filter would reject
/// (first 256 sampled lines only: it costs ~0.3 us a line). 16 windows cost
/// a few microseconds, small next to a 0.1 ms GPU query (a regex up to
/// ~0.1 ms: memoised per corpus and query, emptied when a document is
/// added).
pub fn sample(corpus: &Corpus, query: &Query, windows: usize, histogram: bool) -> SampleStats {
    let key = memo_key("sample", query, windows, histogram);
    if let Some(&[lines, matching, rejected, candidates, cpu_bytes, cpu_ns, speed]) = corpus
        .samples
        .lock()
        .ok()
        .and_then(|mut m| m.get(&key))
        .as_deref()
    {
        // The finder's speed is memoised too: choosing it reads 64 KiB of
        // the largest document each time. Unmemoised, auto ran 0.07-0.37
        // ms behind the same route forced on the H100's regex bench
        // (2026-11-25, 7c18ce7).
        return SampleStats {
            lines,
            matching,
            rejected,
            candidates,
            cpu_bytes,
            cpu_ns,
            cpu_speed: f64::from_bits(speed),
            // The route sets them (`scan_probe`, memoised apart).
            scan_gbps: 0.0,
            fault_gbps: 0.0,
        };
    }
    let st = sample_uncached(corpus, query, windows, histogram);
    if let Ok(mut m) = corpus.samples.lock() {
        m.put(
            key,
            vec![
                st.lines,
                st.matching,
                st.rejected,
                st.candidates,
                st.cpu_bytes,
                st.cpu_ns,
                st.cpu_speed.to_bits(),
            ],
        );
    }
    st
}

/// The key of `query`'s memoised facts in the corpus's memo: `tag`, the
/// query's shape (`Query::shape_key`: patterns, syntax, flags) and two
/// parameters, as bytes (the patterns raw: formatting them with `Debug`
/// cost more than the lookup).
pub(super) fn memo_key(tag: &str, query: &Query, n: usize, flag: bool) -> Vec<u8> {
    let (syntax, flags, case, kind, cpu_only) = query.shape_flags();
    let mut k = format!("{tag} {syntax:?} {flags:?} {case:?} {kind:?} {cpu_only:?} {n} {flag}")
        .into_bytes();
    for p in query.patterns() {
        k.extend_from_slice(&(p.len() as u64).to_le_bytes());
        k.extend_from_slice(p);
    }
    k
}

/// The speed that replaces the planner's run-time measurements over
/// `corpus`, GB/s, when they are fixed ([`Corpus::fix_measured_speeds`],
/// `LOGSIEVE_FIXED_SPEED` in the environment, and always in the library's
/// own unit tests, at the CPU's default calibration): the memory scan
/// probe reads it and the sampled matcher time is its bytes at it.
pub(crate) fn fixed_speed(corpus: &Corpus) -> Option<f64> {
    if corpus.fixed_speed.is_some() {
        return corpus.fixed_speed;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        static ENV: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
        let env = *ENV.get_or_init(|| {
            std::env::var("LOGSIEVE_FIXED_SPEED")
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|g| *g > 0.0 && g.is_finite())
        });
        if env.is_some() {
            return env;
        }
    }
    cfg!(test).then_some(super::calibration::DEFAULT_CPU_GBPS)
}

/// Bytes [`scan_probe`] reads, in four quarters timed apart.
pub const PROBE_BYTES: usize = 1 << 20;

/// This machine's memory-bound scan speed and the cost of mapping a
/// lazily mapped file's pages, GB/s on one thread: over [`PROBE_BYTES`]
/// of the middle of the corpus's largest document, in four quarters,
/// each one's pages mapped in one call (`Document::populate`: timed, the
/// page faults a search of the map pays) and then read by `memchr` (in
/// RAM, not in the CPU's caches), the fastest quarter of each kept (a
/// preemption in some does not count: on the loaded build machine two
/// halves once both read half speed). Returns `(scan, faults)`; `faults` is 0 for
/// bytes in memory. `(0, 0)` when the largest document is under 4x
/// [`PROBE_BYTES`] (the estimate hardly matters there), and in a browser
/// (no clock). Taken once per corpus (memoised with the samples, emptied
/// when a document is added) and only when the planner prices a route
/// that needs it (`session::route`: a GPU to weigh, or `--explain`); ~0.1
/// ms.
///
/// Why: the CPU speeds behind `Matcher::speed` were measured on the
/// H100 machine's Xeon (8 GB/s a thread for a literal), and the 2-core
/// build machine's thread runs the same finders 1.5-3x faster, so its
/// estimates were 2.0-3.5x too high on 10 of 18 shapes
/// (docs/bench/build-machine-2026-11-25-shapes.md). A rare byte's finder
/// is `memchr` on that byte: the probe's speed is its speed
/// ([`cpu_base`] divides it by its factor, 1.5, to get the base). The
/// page faults are a cost of their own, the same for every matcher: a
/// one-shot search of a 194 MB map spends ~13 ms in them on the build
/// machine, more than the literal's scan.
pub fn scan_probe(corpus: &Corpus) -> (f64, f64) {
    const KEY: &[u8] = b"scan-probe";
    if let Some(&[scan, faults]) = corpus
        .samples
        .lock()
        .ok()
        .and_then(|mut m| m.get(KEY))
        .as_deref()
    {
        return (f64::from_bits(scan), f64::from_bits(faults));
    }
    let probe = corpus
        .docs()
        .iter()
        .max_by_key(|d| d.data().len())
        .map_or((0.0, 0.0), |d| probe_doc(d, fixed_speed(corpus)));
    if let Ok(mut m) = corpus.samples.lock() {
        m.put(KEY.to_vec(), vec![probe.0.to_bits(), probe.1.to_bits()]);
    }
    probe
}

/// [`scan_probe`] over one document.
/// With `fixed`, a document large enough reads that speed and no faults.
pub(super) fn probe_doc(doc: &crate::Document, fixed: Option<f64>) -> (f64, f64) {
    let hay = doc.data();
    if cfg!(target_arch = "wasm32") || hay.len() < 4 * PROBE_BYTES {
        return (0.0, 0.0);
    }
    if let Some(g) = fixed {
        return (g, 0.0);
    }
    // Page-aligned in the document (a map starts on a page).
    let at = (hay.len() / 2) & !4095;
    let piece = PROBE_BYTES / 4;
    let (mut scan, mut faults) = (f64::INFINITY, f64::INFINITY);
    let mut found = 0usize;
    for part in (0..4).map(|k| at + k * piece..at + (k + 1) * piece) {
        let t = std::time::Instant::now();
        if doc.populate(part.clone()) {
            faults = faults.min(t.elapsed().as_secs_f64());
        }
        let t = std::time::Instant::now();
        // A NUL: none in a text log, so every byte is scanned.
        found += memchr::memchr_iter(0, std::hint::black_box(&hay[part])).count();
        scan = scan.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(found);
    let gbps = |s: f64| {
        if s > 0.0 && s.is_finite() {
            piece as f64 / s / 1e9
        } else {
            0.0
        }
    };
    (gbps(scan), gbps(faults))
}

/// [`SampleStats::cpu_speed`]: the finder chosen for the largest document.
pub(crate) fn cpu_speed(corpus: &Corpus, query: &Query) -> f64 {
    corpus
        .docs()
        .iter()
        .max_by_key(|d| d.data().len())
        .map_or(0.0, |d| crate::cpu::doc_speed(query, d.data()))
}

pub(super) fn sample_uncached(
    corpus: &Corpus,
    query: &Query,
    windows: usize,
    histogram: bool,
) -> SampleStats {
    SampleStats {
        cpu_speed: cpu_speed(corpus, query),
        ..sample_lines(corpus, query, windows, histogram)
    }
}

/// The sample's windows of about 4 KiB, spread over the corpus and cut at
/// line boundaries: (document, start, end).
pub(super) fn sample_windows(corpus: &Corpus, windows: usize) -> Vec<(usize, usize, usize)> {
    const WINDOW: usize = 4096;
    let mut out = Vec::new();
    let docs = corpus
        .docs()
        .iter()
        .filter(|d| !d.data().is_empty())
        .count()
        .max(1);
    let per_doc = windows.div_ceil(docs).max(1);
    for (d, doc) in corpus.docs().iter().enumerate() {
        let hay = doc.data();
        if hay.is_empty() {
            continue;
        }
        let n = per_doc.min(hay.len() / WINDOW + 1);
        for w in 0..n {
            let mut s = hay.len() * w / n;
            if s > 0 {
                match memchr::memchr(b'\n', &hay[s - 1..]) {
                    Some(i) => s += i,
                    None => continue,
                }
            }
            if s >= hay.len() {
                continue;
            }
            // End at a line boundary at or after s + WINDOW.
            let e = (s + WINDOW).min(hay.len());
            let e = match memchr::memchr(b'\n', &hay[e - 1..]) {
                Some(i) => e + i,
                None => hay.len(),
            };
            out.push((d, s, e));
        }
    }
    out
}

/// [`sample_uncached`] but the CPU finder's speed.
fn sample_lines(corpus: &Corpus, query: &Query, windows: usize, histogram: bool) -> SampleStats {
    const HIST_LINES: u64 = 256;
    let mut st = SampleStats::default();
    let need = if histogram {
        query
            .literals()
            .and_then(|l| (l.len() == 1).then(|| required_counts(&l[0], query.case())))
    } else {
        None
    };
    let mut hist_lines = 0u64;
    let mut hist_rejected = 0u64;
    for (d, s, e) in sample_windows(corpus, windows) {
        let hay = corpus.docs()[d].data();
        st.lines += crate::cpu::count_lines(&hay[s..e]);
        // Not timed in a browser (`std::time::Instant` panics there), nor
        // with fixed speeds (the bytes at that speed).
        let fixed = fixed_speed(corpus);
        let t = (!cfg!(target_arch = "wasm32") && fixed.is_none()).then(std::time::Instant::now);
        crate::cpu::for_each_match(query, hay, s, e, |_, _| {
            st.matching += 1;
            true
        });
        if let Some(t) = t {
            st.cpu_ns += t.elapsed().as_nanos() as u64;
            st.cpu_bytes += (e - s) as u64;
        } else if let Some(g) = fixed {
            st.cpu_ns += ((e - s) as f64 / g).ceil() as u64;
            st.cpu_bytes += (e - s) as u64;
        }
        if let Some(pre) = query.prefilter() {
            // Lines holding a required literal: one find per line.
            let mut pos = s;
            while let Some(p) = pre.find(hay, pos, e) {
                st.candidates += 1;
                pos = memchr::memchr(b'\n', &hay[p..e]).map_or(e, |i| p + i + 1);
            }
        }
        if let Some(need) = &need {
            let mut pos = s;
            while pos < e && hist_lines < HIST_LINES {
                let end = memchr::memchr(b'\n', &hay[pos..e]).map_or(e, |i| pos + i);
                hist_lines += 1;
                if !histogram_admits(&hay[pos..end], need, query.case()) {
                    hist_rejected += 1;
                }
                pos = end + 1;
            }
        }
    }
    if hist_lines > 0 {
        // Scale the histogram share to the sampled line count.
        st.rejected = (hist_rejected as f64 / hist_lines as f64 * st.lines as f64).round() as u64;
    }
    st
}

fn fold(b: u8, case: CaseMode) -> u8 {
    if case == CaseMode::Ascii {
        b.to_ascii_lowercase() & 127
    } else {
        b & 127
    }
}

fn required_counts(p: &[u8], case: CaseMode) -> [u16; 128] {
    let mut need = [0u16; 128];
    for &b in p {
        let c = fold(b, case) as usize;
        need[c] = need[c].saturating_add(1);
    }
    need
}

fn histogram_admits(line: &[u8], need: &[u16; 128], case: CaseMode) -> bool {
    let mut have = [0u16; 128];
    for &b in line {
        let c = fold(b, case) as usize;
        have[c] = have[c].saturating_add(1);
    }
    need.iter().zip(have.iter()).all(|(n, h)| h >= n)
}

/// The share of all lines of `corpus` that a 128-bin histogram filter for
/// `query`'s single literal rejects (the CPU model of the two-phase
/// engine's phase 1). 0 for queries that are not one literal.
pub fn histogram_elimination(corpus: &Corpus, query: &Query) -> f64 {
    let Some(need) = query
        .literals()
        .and_then(|l| (l.len() == 1).then(|| required_counts(&l[0], query.case())))
    else {
        return 0.0;
    };
    let (mut lines, mut rejected) = (0u64, 0u64);
    for doc in corpus.docs() {
        let hay = doc.data();
        if hay.is_empty() {
            continue;
        }
        let body = hay.strip_suffix(b"\n").unwrap_or(hay);
        for line in body.split(|&b| b == b'\n') {
            lines += 1;
            if !histogram_admits(line, &need, query.case()) {
                rejected += 1;
            }
        }
    }
    if lines == 0 {
        0.0
    } else {
        rejected as f64 / lines as f64
    }
}
