//! Several GPUs and a host tier: the corpus cut at line boundaries into
//! parts ([`Layout`], decided by [`route::layout`] when the GPUs are
//! attached), each device holding its shard as a [`GpuCorpus`] of those
//! lines only, the rest in host memory. A request fans out — one thread
//! per device, the CPU's parts on the caller's thread meanwhile — and
//! the parts go into one answer through its collector
//! ([`Collect`]: hits in corpus order, then [`RawHits::finish`] applies
//! `-v` and `-m` once; per-pattern counts and stats add up). A device
//! that fails mid-request is not trusted again: its shard is searched on
//! the CPU, and the report says so.

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::collect::{Collect, PatternTally};
use super::route::{self, DeviceState, Layout, LayoutPart, LineMap, Place, Route, Split};
use super::{SearchResult, Session};
use crate::corpus::Corpus;
use crate::cpu::multi::{count_range, GroupCounts, Occurrences, PatternSet};
use crate::error::Error;
use crate::gpu::readback::{Candidates, RawHits};
use crate::gpu::{GpuContext, GpuCorpus, Placement, UploadOptions};
use crate::kernel::Kernel;
use crate::options::SearchOptions;
use crate::pattern_counts::PatternCounts;
use crate::planner::Calibration;
use crate::query::{CaseMode, Query};
use crate::results::{BackendReport, Want};
use crate::stats::gpu::GpuColumns;
use crate::stats::{Columns, Stats, StatsQuery};

/// The CPU's part is cut into pieces of about this many bytes, at line
/// boundaries, for rayon (the CPU engine's `MIN_CHUNK`).
const CPU_PIECE: u64 = 4 << 20;

/// One request's answer over a split, and how it was found.
struct Gathered<T> {
    answer: T,
    /// Devices that searched a shard.
    devices: usize,
    /// Whether the CPU searched some lines (the host tier's, or a failed
    /// device's shard).
    on_cpu: bool,
    /// The route's reason, with a note per failed device.
    reason: String,
}

/// One GPU of the session.
pub(crate) struct Device {
    /// The lines it holds: the whole corpus, or a shard.
    pub(crate) corpus: GpuCorpus,
    /// The stats columns of its lines, uploaded by the first stats
    /// request routed to the GPU.
    pub(crate) columns: Mutex<Option<Arc<GpuColumns>>>,
    /// Why it is no longer used (it failed mid-request).
    pub(crate) lost: Mutex<Option<String>>,
    /// The shape kernels of the template miner, compiled on first use
    /// (`shapes.rs`; natively only).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) shapes: std::sync::OnceLock<crate::patterns::gpu::ShapeKernels>,
}

impl Device {
    pub(crate) fn new(corpus: GpuCorpus) -> Device {
        Device {
            corpus,
            columns: Mutex::new(None),
            lost: Mutex::new(None),
            #[cfg(not(target_arch = "wasm32"))]
            shapes: std::sync::OnceLock::new(),
        }
    }

    /// Whether its stats columns are uploaded.
    pub(crate) fn has_columns(&self) -> bool {
        self.columns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Its stats columns, uploaded on first use.
    pub(crate) fn columns(
        &self,
        corpus: &Corpus,
        cols: &Columns,
    ) -> Result<Arc<GpuColumns>, Error> {
        let mut slot = self.columns.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(gc) = &*slot {
            return Ok(gc.clone());
        }
        let gc = Arc::new(GpuColumns::upload(&self.corpus, corpus, cols)?);
        *slot = Some(gc.clone());
        Ok(gc)
    }

    fn state(&self) -> DeviceState {
        let lost = self
            .lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .or_else(|| {
                self.corpus
                    .context()
                    .is_lost()
                    .then(|| "device lost".to_string())
            });
        DeviceState { lost }
    }

    /// Marks it lost after `e`, if its device is.
    pub(super) fn note_failure(&self, e: &Error) {
        if self.corpus.context().is_lost() {
            *self.lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
        }
    }

    /// It failed for good: its device is lost, or a panic marked it.
    pub(super) fn gone(&self) -> bool {
        self.corpus.context().is_lost()
            || self
                .lost
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
    }
}

/// Errors unless `layout` tiles the lines of a corpus of `total` lines in
/// order and names only devices below `devices`.
fn check_layout(layout: &Layout, total: u64, devices: usize) -> Result<(), Error> {
    let mut at = 0;
    for p in &layout.parts {
        if p.lines.start != at || p.lines.end < p.lines.start {
            return Err(Error::backend(format!(
                "GPU layout: part {:?} does not follow line {at}",
                p.lines
            )));
        }
        if let Place::Device(k) = p.place {
            if k >= devices {
                return Err(Error::backend(format!(
                    "GPU layout names device {k} of {devices}"
                )));
            }
        }
        at = p.lines.end;
    }
    if at != total {
        return Err(Error::backend(format!(
            "GPU layout covers {at} of {total} lines"
        )));
    }
    Ok(())
}

impl Session {
    /// Uploads the corpus to the devices `ctxs` with `opts`: with one
    /// device, no GPU memory budget ([`crate::gpu::GpuTuning::gpu_memory`])
    /// and no `layout`, the whole corpus as [`Session::attach_gpu_with`];
    /// otherwise in shards at line boundaries laid out by `layout`, or by
    /// [`route::layout`] (sized by the budget, the newest lines on the
    /// GPUs by default), one upload thread per device. A device whose
    /// upload fails leaves its shard in host memory (the reports say so);
    /// an error only when every device fails.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn attach_gpus_with(
        &mut self,
        ctxs: &[GpuContext],
        opts: UploadOptions,
        layout: Option<Layout>,
    ) -> Result<(), Error> {
        let budget = self.tuning.gpu.gpu_memory;
        self.upload_options = opts;
        match ctxs {
            [] => return Err(Error::backend("no GPU device to attach")),
            [one] if layout.is_none() && budget.is_none() => {
                return self.attach_gpu_with(one, opts);
            }
            _ => {}
        }
        let total = LineMap::new(&self.corpus).total_lines();
        let layout = match layout {
            Some(l) => {
                check_layout(&l, total, ctxs.len())?;
                l
            }
            None => route::layout(
                &self.corpus,
                ctxs.len(),
                None,
                budget,
                self.tuning.gpu.placement == Placement::Newest,
            ),
        };
        let map = LineMap::new(&self.corpus);
        let holds: Vec<Vec<(usize, Range<u64>)>> = (0..ctxs.len())
            .map(|k| {
                layout
                    .parts
                    .iter()
                    .filter(|p| p.place == Place::Device(k))
                    .flat_map(|p| map.doc_lines(&p.lines))
                    .collect()
            })
            .collect();
        let corpus = &self.corpus;
        let uploads: Vec<Result<GpuCorpus, Error>> = std::thread::scope(|sc| {
            let handles: Vec<_> = ctxs
                .iter()
                .zip(&holds)
                .map(|(c, h)| sc.spawn(move || GpuCorpus::upload_lines(c, corpus, opts, h)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::backend("a GPU upload thread panicked")))
                })
                .collect()
        });
        // Devices whose upload failed drop out; their shards stay on the
        // host and the others are renumbered.
        let mut notes = Vec::new();
        let mut devices = Vec::new();
        let mut renumber = vec![None; ctxs.len()];
        let mut first_error = None;
        for (k, u) in uploads.into_iter().enumerate() {
            match u {
                Ok(g) => {
                    renumber[k] = Some(devices.len());
                    devices.push(Device::new(g));
                }
                Err(e) => {
                    notes.push(format!(
                        "device {k} ({}): upload failed ({e}); its shard stays in host memory",
                        ctxs[k].info().name
                    ));
                    first_error.get_or_insert(e);
                }
            }
        }
        if devices.is_empty() {
            return Err(first_error.unwrap_or_else(|| Error::backend("no GPU device attached")));
        }
        let parts = layout
            .parts
            .into_iter()
            .map(|p| LayoutPart {
                place: match p.place {
                    Place::Device(k) => renumber[k].map_or(Place::Host, Place::Device),
                    Place::Host => Place::Host,
                },
                ..p
            })
            .collect();
        self.load_calibration(&devices[0].corpus);
        self.devices = devices;
        self.layout = Some(Layout { parts });
        self.attach_notes = notes;
        Ok(())
    }

    /// Adds the split to a GPU route when the corpus is spread over
    /// several places ([`route::split`]); the reason says it.
    pub(super) fn with_split(
        &self,
        mut r: Route,
        cal: &Calibration,
        opts: &SearchOptions,
    ) -> Route {
        let (Some(layout), Some(kernel)) = (&self.layout, r.backend.kernel()) else {
            return r;
        };
        let states: Vec<DeviceState> = self.devices.iter().map(Device::state).collect();
        let split = route::split(
            layout,
            &states,
            cal,
            kernel,
            crate::cpu::resolve_threads(opts.threads),
            self.attach_notes.clone(),
            !r.forced,
        );
        r.reason = format!("{}; {}", r.reason, split.summary());
        r.split = Some(split);
        r
    }

    /// The devices that search a part of `split`, and the CPU's lines.
    fn fan_out(split: &Split) -> (Vec<usize>, Vec<Range<u64>>) {
        let mut devs: Vec<usize> = split.parts.iter().filter_map(|p| p.1).collect();
        devs.dedup();
        devs.sort_unstable();
        devs.dedup();
        let cpu = split
            .parts
            .iter()
            .filter(|p| p.1.is_none())
            .map(|p| p.0.lines.clone())
            .collect();
        (devs, cpu)
    }

    /// The lines of `split` that device `k` was to search.
    fn lines_of(split: &Split, k: usize) -> Vec<Range<u64>> {
        split
            .parts
            .iter()
            .filter(|p| p.1 == Some(k))
            .map(|p| p.0.lines.clone())
            .collect()
    }

    /// Runs `work` on every device of `devs`, one thread each, and `cpu` on
    /// this thread meanwhile. The test hook's device is destroyed first.
    #[cfg(not(target_arch = "wasm32"))]
    fn run_devices<T: Send, C>(
        &self,
        devs: &[usize],
        work: impl Fn(&Device) -> Result<T, Error> + Sync,
        cpu: impl FnOnce() -> C,
    ) -> (Vec<Result<T, Error>>, C) {
        let lose = self
            .lose_next
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let work = &work;
        std::thread::scope(|sc| {
            let handles: Vec<_> = devs
                .iter()
                .map(|&k| {
                    let dev = &self.devices[k];
                    sc.spawn(move || {
                        if lose == Some(k) {
                            dev.corpus.context().destroy_device();
                        }
                        work(dev)
                    })
                })
                .collect();
            let c = cpu();
            let r = handles
                .into_iter()
                .zip(devs)
                .map(|(h, &k)| {
                    h.join().unwrap_or_else(|_| {
                        // A panic inside wgpu leaves the device in an
                        // unknown state: it is not used again, and its
                        // shard is searched on the CPU.
                        let why = "its GPU search thread panicked";
                        *self.devices[k]
                            .lost
                            .lock()
                            .unwrap_or_else(|p| p.into_inner()) = Some(why.to_string());
                        Err(Error::backend(why))
                    })
                })
                .collect();
            (r, c)
        })
    }

    /// [`Session::run_devices`] in a browser, where GPU handles cannot
    /// cross threads: the devices one after the other, then `cpu`.
    #[cfg(target_arch = "wasm32")]
    fn run_devices<T, C>(
        &self,
        devs: &[usize],
        work: impl Fn(&Device) -> Result<T, Error>,
        cpu: impl FnOnce() -> C,
    ) -> (Vec<Result<T, Error>>, C) {
        let lose = self
            .lose_next
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let r = devs
            .iter()
            .map(|&k| {
                let dev = &self.devices[k];
                if lose == Some(k) {
                    dev.corpus.context().destroy_device();
                }
                work(dev)
            })
            .collect();
        (r, cpu())
    }

    /// What device `k` failing with `e` means: an error on a forced route
    /// when the device is not lost (a query the GPU refuses); otherwise
    /// a note, and the CPU searches its lines.
    fn device_failed(&self, k: usize, e: Error, route: &Route) -> Result<String, Error> {
        let dev = &self.devices[k];
        dev.note_failure(&e);
        if route.forced && !dev.gone() {
            return Err(e);
        }
        Ok(format!(
            "device {k} ({}) failed mid-request ({e}); its shard searched on the CPU",
            dev.corpus.context().info().name
        ))
    }

    /// Runs one request over `split`: `device` on each device's shard
    /// (one thread each), `cpu` on the host's lines meanwhile and again on
    /// the shard of a device that fails; every part goes into one answer
    /// through its [`Collect`]. The reason is the route's with a note per
    /// failed device.
    fn gather<T: Collect + wgpu::WasmNotSend>(
        &self,
        split: &Split,
        route: &Route,
        device: impl Fn(&Device) -> Result<T, Error> + wgpu::WasmNotSync,
        cpu: impl Fn(&[Range<u64>]) -> Result<T, Error>,
    ) -> Result<Gathered<T>, Error> {
        let (devs, cpu_lines) = Self::fan_out(split);
        let (results, host) = self.run_devices(&devs, device, || cpu(&cpu_lines));
        let mut answer = host?;
        let mut reason = route.reason.clone();
        let mut on_cpu = !cpu_lines.is_empty();
        for (&k, r) in devs.iter().zip(results) {
            let part = match r {
                Ok(part) => part,
                Err(e) => {
                    reason.push_str("; ");
                    reason.push_str(&self.device_failed(k, e, route)?);
                    on_cpu = true;
                    cpu(&Self::lines_of(split, k))?
                }
            };
            answer = answer.collect(part);
        }
        Ok(Gathered {
            answer,
            devices: devs.len(),
            on_cpu,
            reason,
        })
    }

    /// The CPU's matches in corpus-wide lines `parts`, before `-v` and
    /// `-m`, in pieces of ~4 MiB on rayon's pool when `threads` > 1.
    fn cpu_raw(&self, q: &Query, parts: &[Range<u64>], lines: bool, threads: usize) -> RawHits {
        use rayon::prelude::*;
        let map = LineMap::new(&self.corpus);
        let nd = self.corpus.docs().len();
        let mut pieces = Vec::new();
        for (d, r) in parts.iter().flat_map(|r| map.doc_bytes(r)) {
            let starts = self.corpus.docs()[d].lines().starts();
            let mut at = r.start;
            while at < r.end {
                let target = at + CPU_PIECE;
                let end = if target >= r.end {
                    r.end
                } else {
                    let i = starts.partition_point(|&s| s < target);
                    starts.get(i).copied().unwrap_or(r.end).min(r.end)
                };
                pieces.push((d, at..end));
                at = end;
            }
        }
        // The corpus alone crosses to rayon's threads (in a browser the
        // session's GPU handles cannot).
        let corpus = &self.corpus;
        let one = |(d, r): &(usize, Range<u64>)| {
            let mut h = RawHits::empty(nd, lines);
            h.add_cpu(corpus, q, *d, r.clone());
            h
        };
        if crate::cpu::resolve_threads(threads) > 1 && pieces.len() > 1 {
            pieces
                .par_iter()
                .map(one)
                .reduce(|| RawHits::empty(nd, lines), RawHits::collect)
        } else {
            pieces
                .iter()
                .map(one)
                .fold(RawHits::empty(nd, lines), RawHits::collect)
        }
    }

    /// Each document's line count.
    pub(super) fn line_counts(&self) -> Vec<u64> {
        self.corpus.docs().iter().map(|d| d.lines().len()).collect()
    }

    fn report_name<T>(&self, what: &str, g: &Gathered<T>, threads: usize) -> String {
        let mut n = format!("{what} x{} GPUs", g.devices);
        if g.on_cpu {
            n.push_str(&format!(" + cpu x{}", crate::cpu::resolve_threads(threads)));
        }
        n
    }

    /// A search over the split: every device on its shard, the CPU on the
    /// rest, merged in corpus order with `-v` and `-m` applied once. With
    /// `tier1`, each device finds the candidate lines of the query's
    /// required literals and they are verified on the CPU (the CPU's own
    /// parts run the query exactly).
    pub(super) fn search_split(
        &self,
        q: &Query,
        opts: &SearchOptions,
        kernel: Kernel,
        tier1: bool,
        split: &Split,
        route: &Route,
    ) -> Result<SearchResult, Error> {
        let t = Instant::now();
        let lines = opts.want == Want::Lines;
        let plan = match tier1 {
            true => Some(super::exec::route_prefilter(q, opts, kernel, route)?),
            false => None,
        };
        let g = self.gather(
            split,
            route,
            |d| match &plan {
                Some(p) if p.verify == crate::support::Verifier::Gpu => d
                    .corpus
                    .search_verified(
                        &self.corpus,
                        &p.literals,
                        q,
                        p.classes.as_deref(),
                        opts.want,
                    )
                    .map(|r| r.0),
                Some(p) => {
                    let (raw, _) =
                        d.corpus
                            .search_part(&self.corpus, &p.literals, kernel, Want::Lines)?;
                    Ok(Candidates::unverified(raw)?.verify(&self.corpus, q, lines, opts.threads))
                }
                None => match &route.job {
                    Some(job) if job.kernel == kernel => d
                        .corpus
                        .search_part_planned(&self.corpus, q, job, opts.want)
                        .map(|r| r.0),
                    _ => d
                        .corpus
                        .search_part(&self.corpus, q, kernel, opts.want)
                        .map(|r| r.0),
                },
            },
            |parts| Ok(self.cpu_raw(q, parts, lines, opts.threads)),
        )?;
        let verify = if tier1 { "+verify" } else { "" };
        let name = self.report_name(&format!("gpu/{}{verify}", kernel.name()), &g, opts.threads);
        let docs = g
            .answer
            .finish(&self.line_counts(), q.invert(), opts.max_count);
        Ok(SearchResult {
            docs,
            backend: BackendReport {
                name,
                reason: g.reason,
                elapsed: t.elapsed(),
            },
            plan: None,
        })
    }

    /// The CPU's per-pattern counts (lines, occurrences) over corpus-wide
    /// lines `parts`: the exact one-pass counter the GPU path uses for its
    /// oversized lines.
    fn cpu_pattern_counts(&self, q: &Query, parts: &[Range<u64>]) -> PatternTally {
        let n = q.patterns().len();
        // No lines for the host (the usual split: every shard on a GPU):
        // zeros, without building the counter. Building it for a
        // 10k-literal watchlist took most of the 34 ms of each HTTP
        // per-pattern answer on the H100 (docs/bench/h100-2026-11-25-merged-2.md
        // §4) against 1.4 ms for the GPU's count.
        if parts.iter().all(|r| r.is_empty()) {
            return PatternTally::zero(n);
        }
        let Some(lits) = q.literals() else {
            return PatternTally::zero(n);
        };
        let set = PatternSet::new(lits, q.case() == CaseMode::Ascii);
        let lens: Vec<usize> = set.uniq.iter().map(|p| p.len()).collect();
        let group_of = set.group_of.clone();
        let mut c = GroupCounts::zero(lens.len());
        if let Some(occ) = Occurrences::new(set, q.cpu_multi()) {
            let map = LineMap::new(&self.corpus);
            for (d, r) in parts.iter().flat_map(|r| map.doc_bytes(r)) {
                let hay = self.corpus.docs()[d].data();
                c.add(&count_range(
                    &occ,
                    &lens,
                    hay,
                    r.start as usize,
                    r.end as usize,
                ));
            }
        }
        PatternTally {
            lines: group_of.iter().map(|&k| c.lines[k as usize]).collect(),
            occurrences: group_of
                .iter()
                .map(|&k| c.occurrences[k as usize])
                .collect(),
        }
    }

    /// Per-pattern counts over the split: every part's counts add up.
    pub(super) fn pattern_counts_split(
        &self,
        q: &Query,
        opts: &SearchOptions,
        kernel: Kernel,
        split: &Split,
        route: &Route,
        w: Option<&crate::watchlist::Watchlist>,
    ) -> Result<PatternCounts, Error> {
        let t = Instant::now();
        let Some(mk) = kernel.multi() else {
            return Err(Error::backend(format!(
                "per-pattern counts run a many-literal kernel, not {kernel}"
            )));
        };
        let g = self.gather(
            split,
            route,
            |d| {
                d.corpus
                    .count_per_pattern_part(&self.corpus, q, mk, w.map(|w| w.gpu()))
                    .map(PatternTally::from)
            },
            |parts| Ok(self.cpu_pattern_counts(q, parts)),
        )?;
        let name = self.report_name(&format!("gpu/{}", kernel.name()), &g, opts.threads);
        Ok(PatternCounts {
            patterns: q.patterns().into(),
            lines: g.answer.lines,
            occurrences: g.answer.occurrences,
            backend: BackendReport {
                name,
                reason: g.reason,
                elapsed: t.elapsed(),
            },
        })
    }

    /// Stats over the split: each device's columns on its shard, the CPU
    /// on the rest; the counts add up ([`Stats::merge`]).
    pub(super) fn stats_split(
        &self,
        cols: &Columns,
        q: &StatsQuery<'_>,
        split: &Split,
        route: &Route,
        t: Instant,
    ) -> Result<(Stats, BackendReport), Error> {
        let map = LineMap::new(&self.corpus);
        let doc_lines = |parts: &[Range<u64>]| -> Vec<(usize, Range<u64>)> {
            parts.iter().flat_map(|r| map.doc_lines(r)).collect()
        };
        let g = self.gather(
            split,
            route,
            |d| {
                let gc = d.columns(&self.corpus, cols)?;
                gc.run_part(&d.corpus, &self.corpus, cols, q)
                    .map(|r| r.stats)
            },
            |parts| {
                crate::stats::run_cpu_lines(
                    cols.span(None),
                    &self.corpus,
                    cols,
                    q,
                    &doc_lines(parts),
                )
            },
        )?;
        let name = self.report_name("gpu/pipeline", &g, 0);
        Ok((
            g.answer,
            BackendReport {
                name,
                reason: g.reason,
                elapsed: t.elapsed(),
            },
        ))
    }
}
