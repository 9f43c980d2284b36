//! The engine behind the page, in plain Rust (no JavaScript types), so that
//! it is tested natively too: chunked loading with gzip, the search request
//! and its answer as JSON, the GPU route with its CPU fallback, and the
//! rows of the result list with their highlighted matches.
//!
//! The JavaScript side (`lib.rs`) holds a [`WebEngine`] in a `RefCell`. A
//! search is split in three so that no borrow lives across an `await`:
//! [`WebEngine::prepare`] (borrow), [`run`] (no borrow: it owns `Rc`s of
//! the corpus and the GPU corpus), [`WebEngine::store`] (borrow).

use std::io::Write;
use std::rc::Rc;

use flate2::write::MultiGzDecoder;
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gpu::{GpuContext, GpuCorpus, GpuKernel};
use logsieve::planner::{Calibration, DeviceClass, Measurement};
use logsieve::session::route::{Backend, GpuState, Memo, MemoCounts, RequestKind, RouteInput};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec, NO_TIME};
use logsieve::{
    BackendChoice, Corpus, DocHits, Document, Query, QueryBuilder, Scope, SearchOptions, Syntax,
    Want,
};
use serde_json::{json, Value};

use crate::histogram::{nice_bucket, time_span};

/// Bytes of one line shown in the list; the rest is elided.
const SHOW_BYTES: usize = 2000;

/// Milliseconds on a monotonic clock (`performance.now()` in a browser).
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        crate::js_now()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        static T0: OnceLock<std::time::Instant> = OnceLock::new();
        T0.get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
            * 1e3
    }
}

/// One file arriving in chunks: plain bytes, or gzip decompressed as the
/// chunks come (sniffed from the magic bytes, whatever the name says).
struct Loading {
    name: String,
    /// The first bytes, until there are two to sniff.
    head: Vec<u8>,
    sink: Option<Sink>,
    size_hint: usize,
    received: u64,
}

enum Sink {
    Plain(Vec<u8>),
    Gzip(Box<MultiGzDecoder<Vec<u8>>>),
}

/// What loading one file produced (JSON for the page).
fn file_summary(doc: &Document, compressed: Option<u64>) -> Value {
    json!({
        "name": doc.name(),
        "bytes": doc.data().len() as u64,
        "lines": doc.lines().len(),
        "gzip": compressed.is_some(),
        "compressedBytes": compressed,
        "binaryAt": doc.binary_offset(),
    })
}

/// A search as the page asks for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// One pattern per line (grep's rule: a newline separates patterns).
    pub patterns: String,
    /// How the patterns are read.
    pub syntax: Syntax,
    /// `-i`.
    pub ignore_case: bool,
    /// `-w`.
    pub word: bool,
    /// `-v`.
    pub invert: bool,
    /// `auto`, `cpu` or `gpu`.
    pub backend: String,
    /// The GPU kernel asked for by name; `None` (no `kernel` field, as the
    /// page sends): the route picks, as natively (`scan` for a literal,
    /// `shift-and` for a regex or wildcard, `bitap` for fuzzy).
    pub kernel: Option<GpuKernel>,
    /// A time range (Unix ms, start inclusive, end exclusive) chosen by
    /// dragging on the histogram: only lines stamped inside it count.
    pub range: Option<(i64, i64)>,
}

impl Request {
    /// Reads the page's JSON request; unknown fields are ignored, bad
    /// values are errors (never panics).
    pub fn from_json(s: &str) -> Result<Request, String> {
        let v: Value = serde_json::from_str(s).map_err(|e| format!("bad request: {e}"))?;
        let str_of = |k: &str, d: &str| v.get(k).and_then(Value::as_str).unwrap_or(d).to_string();
        let bool_of = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let k = v.get("fuzzy").and_then(Value::as_u64).unwrap_or(1);
        let name = str_of("syntax", "literal");
        let syntax = Syntax::from_name(&name, Some(u8::try_from(k).unwrap_or(u8::MAX)))
            .ok_or_else(|| format!("unknown syntax {name:?}"))?;
        let backend = str_of("backend", "auto");
        if !matches!(backend.as_str(), "auto" | "cpu" | "gpu") {
            return Err(format!("unknown backend {backend:?}"));
        }
        let kernel = match v.get("kernel").and_then(Value::as_str) {
            None => None,
            Some(k) => {
                Some(GpuKernel::from_name(k).ok_or_else(|| format!("unknown GPU kernel {k:?}"))?)
            }
        };
        let ms_of = |k: &str| v.get(k).and_then(Value::as_f64).filter(|x| x.is_finite());
        let range = match (ms_of("sinceMs"), ms_of("untilMs")) {
            (Some(a), Some(b)) if a < b => Some((a as i64, b as i64)),
            (None, None) => None,
            _ => return Err("bad time range: sinceMs must be below untilMs".to_string()),
        };
        Ok(Request {
            range,
            patterns: str_of("patterns", ""),
            syntax,
            ignore_case: bool_of("ignoreCase"),
            word: bool_of("word"),
            invert: bool_of("invert"),
            backend,
            kernel,
        })
    }

    /// The compiled query; the error is the message the page shows inline.
    pub fn query(&self) -> Result<Query, String> {
        // A trailing newline in the box is not an empty extra pattern
        // (which would match every line).
        let pats = self.patterns.trim_end_matches(['\n', '\r']);
        QueryBuilder::new()
            .syntax(self.syntax)
            .case_insensitive(self.ignore_case)
            .word(self.word)
            .invert(self.invert)
            .build(&[pats])
            .map_err(|e| e.to_string())
    }
}

/// Where a prepared search runs: the routing point's [`Backend`], with the
/// resident corpus the GPU route needs.
enum Route {
    Cpu,
    Gpu(Rc<GpuCorpus>, GpuKernel),
}

/// A search ready to run, owning what it needs.
pub struct Prepared {
    query: Query,
    corpus: Rc<Corpus>,
    route: Route,
    reason: String,
    range: Option<(i64, i64)>,
}

/// The answer to one search.
pub struct Outcome {
    query: Query,
    range: Option<(i64, i64)>,
    docs: Vec<DocHits>,
    backend: String,
    engine: &'static str,
    reason: String,
    ms: f64,
    kernel_ms: Option<f64>,
    gpu_lost: bool,
}

/// Runs a prepared search: on the GPU when routed there (falling back to
/// the CPU if the GPU fails, and saying so), else on the CPU.
pub async fn run(p: Prepared) -> Outcome {
    let t0 = now_ms();
    let mut reason = p.reason;
    let mut gpu_lost = false;
    if let Route::Gpu(g, kernel) = &p.route {
        match g
            .search_async(&p.corpus, &p.query, *kernel, Want::Lines, None)
            .await
        {
            Ok(r) => {
                return Outcome {
                    range: p.range,
                    query: p.query,
                    docs: r.docs,
                    backend: format!("gpu/{}", kernel.name()),
                    engine: "WebGPU",
                    reason,
                    ms: now_ms() - t0,
                    kernel_ms: r.kernel_time.map(|d| d.as_secs_f64() * 1e3),
                    gpu_lost: false,
                }
            }
            Err(e) => {
                gpu_lost = g.context().is_lost();
                reason = format!("the GPU failed ({e}); answered on the CPU");
            }
        }
    }
    let t0 = now_ms();
    let opts = CpuOptions {
        threads: 1,
        want: Want::Lines,
        max_count: None,
        line_ids: true,
    };
    let docs = p
        .corpus
        .docs()
        .iter()
        .map(|d| search_doc(d, &p.query, &opts))
        .collect();
    Outcome {
        range: p.range,
        backend: format!("cpu/{}", p.query.cpu_matcher_name()),
        query: p.query,
        docs,
        engine: "CPU",
        reason,
        ms: now_ms() - t0,
        kernel_ms: None,
        gpu_lost,
    }
}

/// The class of `g`'s adapter as the planner sees it.
fn class_of(g: &GpuCorpus) -> DeviceClass {
    let info = g.context().info();
    DeviceClass::from_wgpu(&info.device_type, info.is_software)
}

/// The columns of the loaded documents and their time span.
struct Stamped {
    cols: Columns,
    /// [`time_span`], found once per load: sampling and sorting 65,536
    /// times on every search cost milliseconds in the tab.
    span: Option<(i64, i64)>,
}

/// The last answer, kept for the rows of the list.
struct Answer {
    query: Query,
    docs: Vec<DocHits>,
    /// `ends[i]`: rows in documents `0..=i`.
    ends: Vec<u64>,
}

/// The documents, the GPU (when attached) and the last answer.
#[derive(Default)]
pub struct WebEngine {
    corpus: Rc<Corpus>,
    loading: Option<Loading>,
    gpu_ctx: Option<GpuContext>,
    gpu: Option<Rc<GpuCorpus>>,
    answer: Option<Answer>,
    /// Per document: holds a NUL byte (found once at load: scanning 50 MB
    /// per displayed row made every result take most of a second).
    binary: Vec<bool>,
    /// Each line's time and level (the pipeline's columns), built on the
    /// first search after a load: the histogram and the level counts of
    /// the matches.
    columns: Option<Stamped>,
    /// The year of year-less timestamps (syslog): the page passes the
    /// current one (the CLI uses each file's modification year).
    year: i32,
    /// The routes of recent requests, as a `Session` keeps them: a query
    /// typed again on the same files is not planned again.
    routes: Memo,
    /// What the probe after an upload measured
    /// ([`crate::probe::probe`]); `None`: the adapter class's defaults.
    calibration: Option<Calibration>,
}

impl WebEngine {
    /// An empty engine.
    pub fn new() -> WebEngine {
        WebEngine {
            year: 1970,
            ..Default::default()
        }
    }

    /// Sets the year of year-less timestamps.
    pub fn set_year(&mut self, year: i32) {
        self.year = year;
        self.columns = None;
    }

    /// The corpus (shared with running searches and the GPU upload).
    pub fn corpus(&self) -> Rc<Corpus> {
        self.corpus.clone()
    }

    /// Starts a file; `size_hint` (its size on disk) reserves memory once
    /// instead of doubling a buffer of hundreds of MB.
    pub fn begin_file(&mut self, name: &str, size_hint: usize) {
        self.loading = Some(Loading {
            name: name.to_string(),
            head: Vec::new(),
            sink: None,
            size_hint,
            received: 0,
        });
    }

    /// Appends the next chunk of the file begun last.
    pub fn append(&mut self, chunk: &[u8]) -> Result<(), String> {
        let l = self
            .loading
            .as_mut()
            .ok_or_else(|| "append without begin_file".to_string())?;
        l.received += chunk.len() as u64;
        if l.sink.is_none() {
            l.head.extend_from_slice(chunk);
            if l.head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(&mut l.head);
            let sink = if head.starts_with(&[0x1f, 0x8b]) {
                Sink::Gzip(Box::new(MultiGzDecoder::new(Vec::with_capacity(
                    l.size_hint.saturating_mul(4).min(1 << 30),
                ))))
            } else {
                Sink::Plain(Vec::with_capacity(l.size_hint.max(head.len())))
            };
            l.sink = Some(sink);
            return write_sink(l, &head);
        }
        write_sink(l, chunk)
    }

    /// Ends the file begun last and adds it to the corpus; returns its
    /// summary (JSON). A GPU upload, if any, is dropped: the corpus changed.
    pub fn end_file(&mut self) -> Result<String, String> {
        let mut l = self
            .loading
            .take()
            .ok_or_else(|| "end_file without begin_file".to_string())?;
        let head = std::mem::take(&mut l.head);
        let (data, compressed) = match l.sink.take() {
            None => (head, None),
            Some(Sink::Plain(v)) => (v, None),
            Some(Sink::Gzip(mut d)) => {
                d.try_finish()
                    .map_err(|e| format!("{}: not valid gzip: {e}", l.name))?;
                let v = d
                    .finish()
                    .map_err(|e| format!("{}: not valid gzip: {e}", l.name))?;
                (v, Some(l.received))
            }
        };
        let doc = Document::from_bytes(l.name, data);
        let summary = file_summary(&doc, compressed);
        self.push(doc)?;
        Ok(summary.to_string())
    }

    /// Adds generated demo logs (`logsieve gen`'s generator, same seed →
    /// same bytes as the CLI).
    pub fn generate(&mut self, lines: u64, seed: u64) -> Result<String, String> {
        let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines,
            seed,
            ..Default::default()
        });
        let doc = Document::from_bytes(format!("demo-{lines}-lines.log"), data);
        let summary = file_summary(&doc, None);
        self.push(doc)?;
        Ok(summary.to_string())
    }

    fn push(&mut self, doc: Document) -> Result<(), String> {
        let corpus = Rc::get_mut(&mut self.corpus)
            .ok_or_else(|| "busy: a search or upload is using the corpus".to_string())?;
        self.binary.push(doc.binary_offset().is_some());
        corpus.push(doc);
        self.gpu = None;
        self.columns = None;
        self.answer = None;
        Ok(())
    }

    /// Forgets every document (the GPU context stays).
    pub fn clear(&mut self) {
        self.corpus = Rc::new(Corpus::new());
        self.binary.clear();
        self.columns = None;
        self.loading = None;
        self.gpu = None;
        self.answer = None;
    }

    /// The corpus in numbers (JSON).
    pub fn info(&self) -> String {
        let docs: Vec<Value> = self
            .corpus
            .docs()
            .iter()
            .map(|d| json!({"name": d.name(), "bytes": d.data().len() as u64}))
            .collect();
        json!({
            "docs": docs,
            "bytes": self.corpus.total_bytes(),
            "gpu": self.gpu.as_ref().map(|g| json!({
                "segments": g.segment_count(),
                "residentBytes": g.resident_bytes(),
            })),
        })
        .to_string()
    }

    /// The GPU context, once made.
    pub fn gpu_context(&self) -> Option<GpuContext> {
        self.gpu_ctx.clone()
    }

    /// Keeps the GPU context (made asynchronously by the caller).
    pub fn set_gpu_context(&mut self, ctx: Option<GpuContext>) {
        self.gpu_ctx = ctx;
        self.gpu = None;
        self.calibration = None;
    }

    /// Keeps the uploaded corpus.
    pub fn set_gpu_corpus(&mut self, g: Option<GpuCorpus>) {
        self.gpu = g.map(Rc::new);
    }

    /// The resident corpus, for [`crate::probe::probe`].
    pub fn gpu_corpus(&self) -> Option<Rc<GpuCorpus>> {
        self.gpu.clone()
    }

    /// The adapter's class as the planner sees it (`None` without a
    /// resident corpus).
    pub fn gpu_class(&self) -> Option<DeviceClass> {
        self.gpu.as_deref().map(class_of)
    }

    /// Routes by what [`crate::probe::probe`] measured from now on
    /// ([`Calibration::adopt`] over the adapter class's defaults).
    pub fn adopt_probe(&mut self, probe: &[Measurement]) {
        let mut c = Calibration::defaults(self.gpu_class().unwrap_or(DeviceClass::Other));
        c.adopt(probe);
        self.calibration = Some(c);
    }

    /// The calibration routes are planned with.
    pub fn calibration(&self) -> Calibration {
        self.calibration.clone().unwrap_or_else(|| {
            Calibration::defaults(self.gpu_class().unwrap_or(DeviceClass::Other))
        })
    }

    /// True when a GPU corpus is resident.
    pub fn has_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// How many routes came from the route memo and how many were
    /// planned.
    pub fn route_counts(&self) -> MemoCounts {
        self.routes.counts()
    }

    /// Compiles the request and asks the routing point
    /// ([`logsieve::session::route::route`], the one every front end uses,
    /// through its memo, [`Memo`]) where it runs. The error is JSON for the
    /// page (an invalid regex, shown inline).
    pub fn prepare(&self, req: &Request) -> Result<Prepared, String> {
        let query = req
            .query()
            .map_err(|e| json!({"ok": false, "kind": "query", "error": e}).to_string())?;
        let opts = SearchOptions {
            backend: match req.backend.as_str() {
                "cpu" => BackendChoice::Cpu,
                "gpu" => BackendChoice::Gpu,
                _ => BackendChoice::Auto,
            },
            threads: 1,
            want: Want::Lines,
            gpu_kernel: req.kernel,
            ..Default::default()
        };
        let gpu = self.gpu.as_ref().map(|g| {
            let info = g.context().info();
            GpuState {
                class: class_of(g),
                name: info.name.clone(),
                resident: true,
                class_scan: !g.context().tuning().no_class_scan,
                force_class_scan: false,
            }
        });
        let calibration = self.calibration();
        let routed = self
            .routes
            .route(&RouteInput {
                request: RequestKind::Search(&query),
                opts: &opts,
                corpus: &self.corpus,
                gpu,
                calibration: &calibration,
            })
            .map(|(r, _)| r);
        let (route, reason) = match (routed, &self.gpu) {
            (Ok(r), Some(g)) => match r.backend {
                Backend::Gpu(k) => (Route::Gpu(g.clone(), k), r.reason),
                Backend::Cpu => (Route::Cpu, r.reason),
                // `support::prefilter_support` refuses tier 1 in the
                // browser (its readback blocks); natively the page's
                // engine runs it on the CPU.
                Backend::GpuPrefilter(_) => (
                    Route::Cpu,
                    format!("{}; tier 1 runs on the CPU in the page", r.reason),
                ),
            },
            (Ok(r), None) => (Route::Cpu, r.reason),
            // `--backend gpu` that cannot run: the page still answers, on
            // the CPU, and says why.
            (Err(e), _) if self.gpu_ctx.is_none() => {
                (Route::Cpu, format!("no WebGPU: CPU engine ({e})"))
            }
            (Err(e), _) => (Route::Cpu, e.to_string()),
        };
        Ok(Prepared {
            query,
            corpus: self.corpus.clone(),
            route,
            reason,
            range: req.range,
        })
    }

    /// Keeps the answer for [`WebEngine::rows`] and returns its summary
    /// (JSON). A lost device drops the GPU corpus and context.
    pub fn store(&mut self, mut o: Outcome) -> String {
        let t0 = now_ms();
        if o.gpu_lost {
            self.gpu = None;
            self.gpu_ctx = None;
        }
        if let Some((since, until)) = o.range {
            // The histogram's time range: the lines stamped inside it (an
            // unstamped line inherits the time before it, as in the
            // pipeline), kept by the library's scope rule. O(hits).
            let scope = Scope {
                docs: None,
                since: Some(since),
                until: Some(until),
            };
            let cols = self.columns();
            for (d, h) in cols.docs().iter().zip(o.docs.iter_mut()) {
                scope.keep_window(&d.times, h, u64::MAX);
                h.starts.clear();
            }
        }
        let mut ends = Vec::with_capacity(o.docs.len());
        let mut total = 0u64;
        for d in &o.docs {
            total += d.lines.len() as u64;
            ends.push(total);
        }
        let count: u64 = o.docs.iter().map(|d| d.count).sum();
        let (histogram, levels) = self.time_and_levels(&o.docs);
        let docs: Vec<Value> = self
            .corpus
            .docs()
            .iter()
            .zip(&o.docs)
            .map(|(d, h)| json!({"name": d.name(), "count": h.count}))
            .collect();
        let summary = json!({
            "ok": true,
            "count": count,
            "rows": total,
            "docs": docs,
            "backend": o.backend,
            "engine": o.engine,
            "reason": o.reason,
            "ms": o.ms,
            "kernelMs": o.kernel_ms,
            "gpuLost": o.gpu_lost,
            "histogram": histogram,
            "levels": levels,
            "range": o.range.map(|(a, b)| json!([a, b])),
            // Keeping the answer: the histogram and level counts.
            "storeMs": now_ms() - t0,
        });
        self.answer = Some(Answer {
            query: o.query,
            docs: o.docs,
            ends,
        });
        summary.to_string()
    }

    /// The time and level columns and their time span, built on first use
    /// after a load.
    fn stamped(&mut self) -> &Stamped {
        let corpus = &self.corpus;
        let year = self.year;
        self.columns.get_or_insert_with(|| {
            let opts = ColumnOptions {
                fields: vec![FieldSpec::level()],
                year,
                ..Default::default()
            };
            let cols = Columns::build(corpus, &opts);
            let span = time_span(&cols);
            Stamped { cols, span }
        })
    }

    fn columns(&mut self) -> &Columns {
        &self.stamped().cols
    }

    /// The matches per time bucket (about 60 buckets of a round width over
    /// the corpus's time span) and per log level, from the matching line
    /// ids: O(hits) once the columns exist. `null`s when no line has a
    /// timestamp.
    fn time_and_levels(&mut self, hits: &[DocHits]) -> (Value, Value) {
        let Stamped { cols, span } = self.stamped();
        let histogram = match *span {
            Some((lo, hi)) => {
                let bucket = nice_bucket(hi - lo);
                let start = lo.div_euclid(bucket) * bucket;
                let n = ((hi - start) / bucket + 1) as usize;
                let mut counts = vec![0u64; n];
                for (d, h) in cols.docs().iter().zip(hits) {
                    for &l in &h.lines {
                        let t = d.times.get(l as usize).copied().unwrap_or(NO_TIME);
                        if t != NO_TIME {
                            let b = ((t - start) / bucket).clamp(0, n as i64 - 1);
                            counts[b as usize] += 1;
                        }
                    }
                }
                json!({"start": start, "bucket": bucket, "counts": counts})
            }
            _ => Value::Null,
        };
        let levels = match cols.field_index("level") {
            Some(f) => {
                let dict = &cols.fields()[f];
                let mut by = vec![0u64; dict.cardinality() as usize];
                for (d, h) in cols.docs().iter().zip(hits) {
                    for &l in &h.lines {
                        if let Some(&c) = d.codes[f].get(l as usize) {
                            by[c as usize] += 1;
                        }
                    }
                }
                let mut rows: Vec<(String, u64)> = by
                    .iter()
                    .enumerate()
                    .filter(|&(_, &n)| n > 0)
                    .map(|(c, &n)| {
                        let name = dict
                            .value(c as u32)
                            .map_or("(none)".into(), |v| String::from_utf8_lossy(v).into_owned());
                        (name, n)
                    })
                    .collect();
                rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                json!(rows)
            }
            None => Value::Null,
        };
        (histogram, levels)
    }

    /// Rows `start..start + n` of the last answer (JSON array), each with
    /// its document, line number (1-based) and the text cut into pieces,
    /// matches marked: `{"d":0,"n":42,"p":[["text",0],["ERROR",1]]}`. Only
    /// the visible rows are asked for, so only they pay for highlighting.
    pub fn rows(&self, start: u64, n: u64) -> String {
        let Some(a) = &self.answer else {
            return "[]".to_string();
        };
        let total = a.ends.last().copied().unwrap_or(0);
        let end = start.saturating_add(n).min(total);
        let mut out = Vec::new();
        for row in start..end {
            let di = a.ends.partition_point(|&e| e <= row);
            let before = if di == 0 { 0 } else { a.ends[di - 1] };
            let line = a.docs[di].lines[(row - before) as usize];
            let doc = &self.corpus.docs()[di];
            if self.binary.get(di).copied().unwrap_or(false) {
                out.push(json!({"i": row, "d": di, "n": line + 1, "binary": true}));
                continue;
            }
            out.push(
                json!({"i": row, "d": di, "n": line + 1, "p": pieces(&a.query, doc.line(line))}),
            );
        }
        Value::Array(out).to_string()
    }
}

fn write_sink(l: &mut Loading, bytes: &[u8]) -> Result<(), String> {
    match l.sink.as_mut() {
        Some(Sink::Plain(v)) => {
            v.extend_from_slice(bytes);
            Ok(())
        }
        Some(Sink::Gzip(d)) => d
            .write_all(bytes)
            .map_err(|e| format!("{}: not valid gzip: {e}", l.name)),
        None => Ok(()),
    }
}

/// Bytes of a long line's start that stay in view when the line is cut
/// around a match further on: its timestamp (and level) are there.
const HEAD_BYTES: usize = 64;
/// Bytes shown before a match that starts past the first `SHOW_BYTES`.
const LEAD_BYTES: usize = 200;

/// The parts of `line` shown: all of it when short; else the first
/// [`SHOW_BYTES`] bytes when the first match (`first`) starts there, or the
/// line's head plus a window around that match.
// A list of one range is a list here, not a mistyped `0..n` (clippy's guess).
#[allow(clippy::single_range_in_vec_init)]
fn shown_ranges(line: &[u8], first: Option<usize>) -> Vec<std::ops::Range<usize>> {
    let n = line.len();
    if n <= SHOW_BYTES {
        return vec![0..n];
    }
    match first {
        Some(m) if m + 1 > SHOW_BYTES - LEAD_BYTES => {
            let start = m.saturating_sub(LEAD_BYTES).max(HEAD_BYTES);
            let end = (start + SHOW_BYTES - HEAD_BYTES).min(n);
            vec![0..HEAD_BYTES, start..end]
        }
        _ => vec![0..SHOW_BYTES],
    }
}

/// The line cut at its matches: `[text, 1]` for a match, `[text, 0]`
/// between. Long lines are cut at [`SHOW_BYTES`]; when the first match is
/// further on, the line's head (its timestamp) stays and the cut is around
/// the match, with ` … ` where bytes are left out.
fn pieces(q: &Query, line: &[u8]) -> Value {
    let matches = q.find_iter_line(line);
    let ranges = shown_ranges(line, matches.first().map(|r| r.start));
    let mut out = Vec::new();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut hidden_before = 0;
    for (i, range) in ranges.iter().enumerate() {
        if i > 0 {
            let skipped = range.start - ranges[i - 1].end;
            if skipped > 0 {
                out.push(json!([format!(" … ({skipped} bytes) … "), 0]));
            }
        }
        hidden_before = range.end;
        let mut at = range.start;
        for r in &matches {
            if r.end <= range.start || r.start >= range.end {
                continue;
            }
            let (s, e) = (r.start.max(range.start), r.end.min(range.end));
            if s > at {
                out.push(json!([text(&line[at..s]), 0]));
            }
            if e > s {
                out.push(json!([text(&line[s..e]), 1]));
            }
            at = at.max(e);
        }
        if at < range.end {
            out.push(json!([text(&line[at..range.end]), 0]));
        }
    }
    if line.len() > hidden_before {
        out.push(json!([
            format!(" … ({} more bytes)", line.len() - hidden_before),
            0
        ]));
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use logsieve::planner::MeasuredBackend;

    fn req(j: Value) -> Request {
        Request::from_json(&j.to_string()).unwrap()
    }

    fn search(e: &mut WebEngine, j: Value) -> Value {
        let p = e.prepare(&req(j)).unwrap();
        let o = pollster_free_block_on(run(p));
        serde_json::from_str(&e.store(o)).unwrap()
    }

    /// `run` on the CPU route never awaits, so one poll finishes it.
    fn pollster_free_block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("the CPU route awaited"),
        }
    }

    fn load(e: &mut WebEngine, name: &str, data: &[u8], chunk: usize) -> Value {
        e.begin_file(name, data.len());
        for c in data.chunks(chunk.max(1)) {
            e.append(c).unwrap();
        }
        serde_json::from_str(&e.end_file().unwrap()).unwrap()
    }

    #[test]
    fn chunked_plain_and_gzip_loads_agree() {
        let text = b"alpha ERROR one\nbeta\nERROR two ERROR\n".repeat(50);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        for chunk in [1, 2, 7, 4096] {
            let mut e = WebEngine::new();
            let a = load(&mut e, "a.log", &text, chunk);
            let b = load(&mut e, "b.log", &gz, chunk);
            assert_eq!(a["bytes"], b["bytes"]);
            assert_eq!(a["lines"], 150);
            assert_eq!(b["gzip"], true);
            let r = search(&mut e, json!({"patterns": "ERROR"}));
            assert_eq!(r["count"], 200);
            assert_eq!(r["docs"][1]["count"], 100);
            assert_eq!(r["engine"], "CPU");
        }
    }

    /// The same query on the same files is routed from the memo; after
    /// another file is loaded it is planned again, and the answer counts
    /// the new file.
    #[test]
    fn a_repeated_query_is_routed_from_the_memo_until_the_files_change() {
        let mut e = WebEngine::new();
        load(&mut e, "a.log", b"ERROR one\nok\nERROR two\n", 4);
        let q = json!({"patterns": r"ERROR \w+", "syntax": "regex"});
        assert_eq!(search(&mut e, q.clone())["count"], 2);
        assert_eq!(search(&mut e, q.clone())["count"], 2);
        let once = MemoCounts {
            memoised: 1,
            planned: 1,
        };
        assert_eq!(e.route_counts(), once);
        load(&mut e, "b.log", b"ERROR three\n", 4);
        assert_eq!(search(&mut e, q)["count"], 3);
        let again = MemoCounts {
            memoised: 1,
            planned: 2,
        };
        assert_eq!(e.route_counts(), again);
    }

    /// A probe's measurements replace the class's defaults until the GPU
    /// context changes.
    #[test]
    fn a_probe_is_routed_by_until_the_context_changes() {
        let mut e = WebEngine::new();
        let defaults = Calibration::defaults(DeviceClass::Other);
        assert_eq!(e.calibration(), defaults);
        let probe = [
            Measurement {
                backend: MeasuredBackend::Cpu { threads: 1 },
                bytes: 8 << 20,
                seconds: 0.016,
            },
            Measurement {
                backend: MeasuredBackend::Gpu {
                    kernel: GpuKernel::Scan,
                },
                bytes: 200 << 20,
                seconds: 0.003,
            },
        ];
        e.adopt_probe(&probe);
        let mut want = defaults.clone();
        want.adopt(&probe);
        assert_eq!(e.calibration(), want);
        assert_eq!(want.gpu_latency_ms, 3.0);
        assert_ne!(want, defaults);
        e.set_gpu_context(None);
        assert_eq!(e.calibration(), defaults);
    }

    #[test]
    fn bad_gzip_and_empty_files() {
        let mut e = WebEngine::new();
        e.begin_file("bad.gz", 10);
        let r = e.append(&[0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let r = r.and_then(|_| e.end_file().map(|_| ()));
        assert!(r.unwrap_err().contains("not valid gzip"));
        let empty = load(&mut e, "empty.log", b"", 1);
        assert_eq!(empty["lines"], 0);
        let one = load(&mut e, "x.log", b"x", 1);
        assert_eq!(one["lines"], 1);
        assert!(e.append(b"x").is_err());
        assert!(e.end_file().is_err());
    }

    #[test]
    fn rows_highlight_matches_and_page() {
        let mut e = WebEngine::new();
        load(&mut e, "a.log", b"no\nan ERROR and error\nnone\nERROR\n", 5);
        load(&mut e, "b.log", b"error b\n", 5);
        let r = search(&mut e, json!({"patterns": "error", "ignoreCase": true}));
        assert_eq!(r["count"], 3);
        let rows: Value = serde_json::from_str(&e.rows(0, 10)).unwrap();
        assert_eq!(
            rows[0],
            json!({"i": 0, "d": 0, "n": 2, "p": [["an ", 0], ["ERROR", 1], [" and ", 0], ["error", 1]]})
        );
        assert_eq!(rows[1]["p"], json!([["ERROR", 1]]));
        assert_eq!(
            rows[2],
            json!({"i": 2, "d": 1, "n": 1, "p": [["error", 1], [" b", 0]]})
        );
        let page: Value = serde_json::from_str(&e.rows(2, 10)).unwrap();
        assert_eq!(page.as_array().unwrap().len(), 1);
        assert_eq!(e.rows(99, 10), "[]");
    }

    #[test]
    fn every_syntax_and_inline_errors() {
        let mut e = WebEngine::new();
        load(
            &mut e,
            "a.log",
            b"GET /a 200\nGET /b 503\nPOST /a 503\nconnection refused\n",
            64,
        );
        let c = |e: &mut WebEngine, j: Value| search(e, j)["count"].as_u64().unwrap();
        assert_eq!(
            c(&mut e, json!({"patterns": "503", "syntax": "literal"})),
            2
        );
        assert_eq!(
            c(
                &mut e,
                json!({"patterns": "^GET .* 503$", "syntax": "regex"})
            ),
            1
        );
        assert_eq!(
            c(&mut e, json!({"patterns": "P*T /a", "syntax": "wildcard"})),
            1
        );
        assert_eq!(
            c(
                &mut e,
                json!({"patterns": "conection refusd", "syntax": "fuzzy", "fuzzy": 2})
            ),
            1
        );
        assert_eq!(c(&mut e, json!({"patterns": "GET\nrefused\n"})), 3);
        assert_eq!(
            c(
                &mut e,
                json!({"patterns": "get", "ignoreCase": true, "invert": true})
            ),
            2
        );
        let bad = e.prepare(&req(json!({"patterns": "a(b", "syntax": "regex"})));
        let err: Value = serde_json::from_str(&bad.err().unwrap()).unwrap();
        assert_eq!(err["kind"], "query");
        assert!(err["error"].as_str().unwrap().contains("unclosed"));
        assert!(Request::from_json("{").is_err());
        assert!(Request::from_json(r#"{"syntax":"nope"}"#).is_err());
        assert!(Request::from_json(r#"{"kernel":"nope"}"#).is_err());
        let far = e.prepare(&req(
            json!({"patterns": "x", "syntax": "fuzzy", "fuzzy": 300}),
        ));
        assert!(far.is_err());
    }

    #[test]
    fn binary_documents_count_but_do_not_print() {
        let mut e = WebEngine::new();
        let s = load(&mut e, "bin", b"a\0b\nab\n", 3);
        assert_eq!(s["binaryAt"], 1);
        let r = search(&mut e, json!({"patterns": "a"}));
        assert_eq!(r["count"], 2);
        let rows: Value = serde_json::from_str(&e.rows(0, 5)).unwrap();
        assert_eq!(rows[0]["binary"], true);
    }

    #[test]
    fn long_lines_are_cut() {
        let mut e = WebEngine::new();
        let mut line = b"needle ".to_vec();
        line.extend(vec![b'a'; SHOW_BYTES + 10]);
        line.push(b'\n');
        load(&mut e, "long", &line, 1000);
        search(&mut e, json!({"patterns": "needle"}));
        let rows: Value = serde_json::from_str(&e.rows(0, 1)).unwrap();
        let p = rows[0]["p"].as_array().unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0], json!(["needle", 1]));
        assert!(p[2][0].as_str().unwrap().contains("17 more bytes"));
    }

    #[test]
    fn long_lines_cut_around_a_far_match_keep_their_timestamp() {
        let mut e = WebEngine::new();
        let mut line = b"2026-11-20T10:00:00Z web-01 INFO ".to_vec();
        line.extend(vec![b'a'; 3 * SHOW_BYTES]);
        let at = line.len();
        line.extend_from_slice(b"needle");
        line.extend(vec![b'b'; 3 * SHOW_BYTES]);
        line.push(b'\n');
        let n = line.len() - 1;
        load(&mut e, "long", &line, 1000);
        search(&mut e, json!({"patterns": "needle"}));
        let rows: Value = serde_json::from_str(&e.rows(0, 1)).unwrap();
        let p = rows[0]["p"].as_array().unwrap();
        let texts: Vec<&str> = p.iter().map(|x| x[0].as_str().unwrap()).collect();
        // The head with the timestamp, a gap, the window with the match.
        assert!(
            texts[0].starts_with("2026-11-20T10:00:00Z web-01 INFO"),
            "{texts:?}"
        );
        assert_eq!(texts[0].len(), HEAD_BYTES);
        let gap = at - LEAD_BYTES - HEAD_BYTES;
        assert_eq!(texts[1], format!(" … ({gap} bytes) … "));
        assert!(p.iter().any(|x| x == &json!(["needle", 1])), "{texts:?}");
        let shown: usize = HEAD_BYTES + (SHOW_BYTES - HEAD_BYTES);
        assert_eq!(
            texts.last().unwrap().to_string(),
            format!(
                " … ({} more bytes)",
                n - (at - LEAD_BYTES) - (shown - HEAD_BYTES)
            )
        );
        // Every shown byte is the line's: the pieces between the markers
        // are the line's bytes in order.
        let rebuilt: String = p
            .iter()
            .filter(|x| !x[0].as_str().unwrap().starts_with(" … "))
            .map(|x| x[0].as_str().unwrap())
            .collect();
        assert_eq!(rebuilt.len(), shown);
    }

    #[test]
    fn a_time_range_keeps_the_lines_stamped_inside_it() {
        let mut e = WebEngine::new();
        let log = b"2026-11-20T10:00:00Z INFO a x\n2026-11-20T10:10:00Z WARN b x\n\
                    no time here x\n2026-11-20T10:20:00Z ERROR c x\n";
        load(&mut e, "t.log", log, 2026);
        let t = |m: i64| 1_795_132_800_000 + (10 * 60 + m) * 60_000;
        let all = search(&mut e, json!({"patterns": "x"}));
        assert_eq!(all["count"], 4);
        assert!(all["range"].is_null());
        // [10:10, 10:20): the 10:10 line and the untimed one after it.
        let mid = search(
            &mut e,
            json!({"patterns": "x", "sinceMs": t(10), "untilMs": t(20)}),
        );
        assert_eq!(mid["count"], 2);
        assert_eq!(mid["rows"], 2);
        let rows: Value = serde_json::from_str(&e.rows(0, 10)).unwrap();
        let nums: Vec<u64> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["n"].as_u64().unwrap())
            .collect();
        assert_eq!(nums, vec![2, 3]);
        // The end is exclusive; an inverted range is an error, not a panic.
        let end = search(
            &mut e,
            json!({"patterns": "x", "sinceMs": t(20), "untilMs": t(21)}),
        );
        assert_eq!(end["count"], 1);
        assert!(Request::from_json(
            &json!({"patterns": "x", "sinceMs": t(5), "untilMs": t(1)}).to_string()
        )
        .is_err());
    }

    #[test]
    fn histogram_and_levels_of_the_matches() {
        let mut e = WebEngine::new();
        let log = b"2026-11-20T10:00:00Z ERROR a x\n2026-11-20T10:00:30Z INFO b\n\
                    2026-11-20T10:10:00Z WARN c x\nno time here x\n2026-11-20T10:20:00Z ERROR x\n";
        load(&mut e, "t.log", log, 7);
        let r = search(&mut e, json!({"patterns": "x"}));
        assert_eq!(r["count"], 4);
        let h = &r["histogram"];
        assert_eq!(h["bucket"], 30_000);
        let counts: Vec<u64> = serde_json::from_value(h["counts"].clone()).unwrap();
        assert_eq!(counts.len(), 41);
        assert_eq!(counts.iter().sum::<u64>(), 4);
        // The untimed line inherits the time before it (the pipeline's rule).
        assert_eq!((counts[0], counts[20], counts[40]), (1, 2, 1));
        assert_eq!(r["levels"][0], json!(["ERROR", 2]));
        let none = search(&mut e, json!({"patterns": "zzz"}));
        assert_eq!(none["histogram"]["counts"].as_array().unwrap().len(), 41);
        // One line from 1970 among 2000 from one hour: the range ignores it
        // and it is counted in the first bucket.
        let mut e = WebEngine::new();
        let mut log = b"1970-01-01T00:00:00Z x\n".to_vec();
        for i in 0..2000 {
            log.extend(format!("2026-11-20T10:{:02}:{:02}Z x\n", i / 60 % 60, i % 60).bytes());
        }
        load(&mut e, "o.log", &log, 4096);
        let r = search(&mut e, json!({"patterns": "x"}));
        assert!(r["histogram"]["bucket"].as_i64().unwrap() <= 60_000);
        let counts: Vec<u64> = serde_json::from_value(r["histogram"]["counts"].clone()).unwrap();
        assert_eq!(counts.iter().sum::<u64>(), 2001);
        let mut e = WebEngine::new();
        load(&mut e, "plain", b"no\ntimes\n", 3);
        assert_eq!(
            search(&mut e, json!({"patterns": "no"}))["histogram"],
            Value::Null
        );
    }

    #[test]
    fn demo_data_is_the_clis() {
        let mut e = WebEngine::new();
        let s: Value = serde_json::from_str(&e.generate(2000, 42).unwrap()).unwrap();
        assert_eq!(s["lines"], 2000);
        let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines: 2000,
            ..Default::default()
        });
        assert_eq!(s["bytes"], data.len() as u64);
        let r = search(&mut e, json!({"patterns": "ERROR_503"}));
        let want = data
            .split(|&b| b == b'\n')
            .filter(|l| l.windows(9).any(|w| w == b"ERROR_503"))
            .count();
        assert_eq!(r["count"], want as u64);
        assert!(want > 0);
    }
}
