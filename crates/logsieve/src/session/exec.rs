//! The executor: runs a [`Route`] for a [`Request`] on the backend it names.
//! It decides nothing: a GPU failure on an automatic route falls back to
//! the CPU and says so; on a forced route it is an error.

use std::time::Instant;

use super::{Answer, Backend, Request, Route, SearchResult, Session};
use crate::cancel::Cancel;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::options::{BackendChoice, SearchOptions};
use crate::pattern_counts::{cpu_counts, one_pass, PatternCounts};
use crate::planner;
use crate::query::Query;
use crate::results::{BackendReport, HitSink, NoSink};
use crate::stats::{self, Stats, StatsQuery};
use crate::watchlist::Watchlist;

impl Session {
    /// Runs `request` where `route` says.
    pub fn execute(
        &self,
        request: &Request<'_>,
        route: &Route,
        opts: &SearchOptions,
    ) -> Result<Answer, Error> {
        self.execute_with(request, route, opts, &Cancel::never())
    }

    /// [`Session::execute`] that stops when `cancel` fires (a client that
    /// hung up, a deadline): the CPU engine looks at the token between the
    /// pieces of each document, the GPU path before it submits (and while
    /// it waits its turn for the device); a cancelled request is
    /// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled), never a
    /// partial answer, and never falls back to the CPU.
    pub fn execute_with(
        &self,
        request: &Request<'_>,
        route: &Route,
        opts: &SearchOptions,
        cancel: &Cancel,
    ) -> Result<Answer, Error> {
        // A count that is running now answers an identical one
        // (`flight.rs`): no sink watches a count's lines.
        // `LOGSIEVE_NO_FUSE=1` turns this off with fused counts (the
        // benchmark's before and after).
        #[cfg(feature = "gpu")]
        let coalesce = !self.tuning.gpu.no_fuse;
        #[cfg(not(feature = "gpu"))]
        let coalesce = true;
        if let (Request::Search(q), crate::Want::Count, true) = (*request, opts.want, coalesce) {
            cancel.check()?;
            return self
                .flights
                .count(q, opts, route, cancel, || {
                    match self.execute_streamed(request, route, opts, cancel, &mut NoSink)? {
                        Answer::Search(r) => Ok(r),
                        _ => Err(Error::backend("a search was not answered by a search")),
                    }
                })
                .map(Answer::Search);
        }
        self.execute_streamed(request, route, opts, cancel, &mut NoSink)
    }

    /// [`Session::execute_with`] that hands a search's selected lines to
    /// `sink` while it runs, where the engine can ([`HitSink`]): the CLI
    /// prints a line while the CPU still has it in its cache, and stops
    /// early (by cancelling) when its reader has gone (`| head`).
    pub fn execute_streamed(
        &self,
        request: &Request<'_>,
        route: &Route,
        opts: &SearchOptions,
        cancel: &Cancel,
        sink: &mut dyn HitSink,
    ) -> Result<Answer, Error> {
        cancel.check()?;
        let t = self.traced().then(Instant::now);
        let answer = match *request {
            Request::Search(q) if !opts.scope.is_all() => self
                .execute_search(q, route, &Self::scoped_options(opts), cancel, &mut NoSink)
                .map(|mut r| {
                    self.keep_in_scope(opts, &mut r.docs);
                    Answer::Search(r)
                }),
            Request::Search(q) => self
                .execute_search(q, route, opts, cancel, sink)
                .map(Answer::Search),
            Request::PatternCounts(q) => self
                .execute_pattern_counts(q, route, opts, None, cancel)
                .map(Answer::PatternCounts),
            Request::Watchlist(w) => self
                .execute_pattern_counts(w.query(), route, opts, Some(w), cancel)
                .map(Answer::PatternCounts),
            Request::Stats(s) => self
                .execute_stats(s, route, opts)
                .map(|(s, r)| Answer::Stats(s, r)),
        };
        if let Some(t) = t {
            eprintln!(
                "logsieve: execute: {} in {:.1} us",
                route.backend,
                t.elapsed().as_secs_f64() * 1e6
            );
        }
        // Work that ran to its end after the token fired is not answered
        // either: the caller has gone.
        cancel.check()?;
        answer
    }

    fn execute_search(
        &self,
        q: &Query,
        route: &Route,
        opts: &SearchOptions,
        cancel: &Cancel,
        sink: &mut dyn HitSink,
    ) -> Result<SearchResult, Error> {
        #[cfg(feature = "gpu")]
        if let (Some(kernel), Some(split)) = (route.backend.kernel(), &route.split) {
            let tier1 = matches!(route.backend, Backend::GpuPrefilter(_));
            let mut r = self.search_split(q, opts, kernel, tier1, split, route)?;
            r.plan = route.decision.clone();
            return Ok(r);
        }
        // A fused count's time includes its wait for the batch; the batch
        // records its own measurement (`fuse.rs`).
        let mut fused = false;
        let (mut r, ran) = match route.backend {
            Backend::Cpu => (
                self.search_cpu(q, opts, &route.reason, cancel, sink)?,
                Backend::Cpu,
            ),
            Backend::Gpu(kernel) => match self.search_gpu(q, opts, kernel, route, cancel) {
                Ok((r, f)) => {
                    fused = f;
                    (r, route.backend)
                }
                Err(e) if route.forced || e.is_cancelled() => return Err(e),
                Err(e) => (
                    self.search_cpu(
                        q,
                        opts,
                        &format!("GPU failed ({e}); fell back to the CPU"),
                        cancel,
                        sink,
                    )?,
                    Backend::Cpu,
                ),
            },
            Backend::GpuPrefilter(kernel) => {
                match self.search_gpu_prefilter(q, opts, kernel, route, cancel) {
                    // Tier 1's time is the literal kernel's plus the
                    // verification: not that kernel's throughput, so it is
                    // not recorded.
                    Ok(r) => (r, route.backend),
                    Err(e) if route.forced || e.is_cancelled() => return Err(e),
                    Err(e) => (
                        self.search_cpu(
                            q,
                            opts,
                            &format!("GPU prefilter failed ({e}); fell back to the CPU"),
                            cancel,
                            sink,
                        )?,
                        Backend::Cpu,
                    ),
                }
            }
        };
        if route.decision.is_some() && !fused {
            self.record_result(q, &r, ran, opts);
        }
        r.plan = route.decision.clone();
        Ok(r)
    }

    /// Runs `query` on the CPU engine (what a CPU route runs).
    pub(crate) fn search_cpu(
        &self,
        query: &Query,
        opts: &SearchOptions,
        reason: &str,
        cancel: &Cancel,
        sink: &mut dyn HitSink,
    ) -> Result<SearchResult, Error> {
        let t = Instant::now();
        let copts = crate::cpu::CpuOptions {
            threads: opts.threads,
            want: opts.want,
            max_count: opts.max_count,
            line_ids: opts.line_ids,
        };
        let mut docs = Vec::with_capacity(self.corpus.docs().len());
        for (k, d) in self.corpus.docs().iter().enumerate() {
            let mut piece = |starts: &[u64], ids: &[u64]| sink.lines(k, starts, ids);
            let hits = crate::cpu::search_doc_streamed(d, query, &copts, cancel, &mut piece)?;
            sink.doc_done(k, &hits);
            docs.push(hits);
        }
        let threads = crate::cpu::resolve_threads(opts.threads);
        // The finder chosen for the largest document is the one that ran
        // for most of the bytes.
        let matcher = match self.corpus.docs().iter().max_by_key(|d| d.data().len()) {
            Some(d) => crate::cpu::matcher_name(query, d.data()),
            None => query.cpu_matcher_name().to_string(),
        };
        Ok(SearchResult {
            docs,
            backend: BackendReport {
                name: format!("cpu/{matcher} x{threads}"),
                reason: reason.to_string(),
                elapsed: t.elapsed(),
            },
            plan: None,
        })
    }

    /// A search on the one device; `true` with it when the count was fused
    /// (`fuse.rs`).
    #[cfg(feature = "gpu")]
    fn search_gpu(
        &self,
        q: &Query,
        opts: &SearchOptions,
        kernel: Kernel,
        route: &Route,
        cancel: &Cancel,
    ) -> Result<(SearchResult, bool), Error> {
        let Some(g) = self.gpu() else {
            return Err(Error::backend("no GPU attached"));
        };
        let reason = &route.reason;
        let t = Instant::now();
        let fuser = self.fusable(g, q, kernel, opts);
        let r = match (fuser, &route.job) {
            (Some(f), _) => f.count(self, g, q, opts.max_count, cancel)?,
            // The route's plan, as support compiled it.
            (None, Some(plan)) if plan.kernel == kernel => {
                cancel.check()?;
                g.search_planned(&self.corpus, q, plan, opts.want, opts.max_count)?
            }
            (None, _) => {
                cancel.check()?;
                g.search_max(&self.corpus, q, kernel, opts.want, opts.max_count)?
            }
        };
        Ok((
            SearchResult {
                docs: r.docs,
                backend: BackendReport {
                    name: format!("gpu/{}", kernel.name()),
                    reason: reason.to_string(),
                    elapsed: t.elapsed(),
                },
                plan: None,
            },
            fuser.is_some(),
        ))
    }

    /// Tier 1 on one device: the required literals' candidate lines from
    /// `kernel` (the GPU), each verified by the query's CPU matcher, then
    /// `-v` and `-m` on the host.
    #[cfg(feature = "gpu")]
    fn search_gpu_prefilter(
        &self,
        q: &Query,
        opts: &SearchOptions,
        kernel: Kernel,
        route: &Route,
        cancel: &Cancel,
    ) -> Result<SearchResult, Error> {
        use crate::gpu::readback::Candidates;
        let Some(g) = self.gpu() else {
            return Err(Error::backend("no GPU attached"));
        };
        let reason = &route.reason;
        let plan = route_prefilter(q, opts, kernel, route)?;
        let t = Instant::now();
        if plan.verify == crate::support::Verifier::Gpu {
            // scan + shift-and over its candidates, one submission: exact;
            // or, for a class string, one scan pass.
            let classes = plan.classes.as_deref();
            let (raw, r) =
                g.search_verified(&self.corpus, &plan.literals, q, classes, opts.want)?;
            let confirmed: u64 = raw.matched.iter().sum();
            let docs = raw.finish(&self.line_counts(), q.invert(), opts.max_count);
            if classes.is_some() {
                return Ok(SearchResult {
                    docs,
                    backend: BackendReport {
                        name: format!("gpu/{} (class string)", kernel.name()),
                        reason: format!(
                            "{reason}; tier 1: {confirmed} lines matched by one scan pass \
                             (the classes tested at each survivor, exact)"
                        ),
                        elapsed: t.elapsed(),
                    },
                    plan: None,
                });
            }
            let undecided = match r.candidates {
                Some(n) => format!(", {n} undecided lines verified on the CPU"),
                None => String::new(),
            };
            return Ok(SearchResult {
                docs,
                backend: BackendReport {
                    name: format!("gpu/{}+verify gpu/shift-and", kernel.name()),
                    reason: format!(
                        "{reason}; tier 1: {confirmed} lines confirmed on the GPU \
                         (literal and automaton in one submission){undecided}"
                    ),
                    elapsed: t.elapsed(),
                },
                plan: None,
            });
        }
        let (raw, _) = g.search_part(&self.corpus, &plan.literals, kernel, crate::Want::Lines)?;
        let cands = Candidates::unverified(raw)?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3;
        cancel.check()?;
        let n = cands.len();
        let tv = Instant::now();
        let lines = opts.want == crate::Want::Lines;
        let hits = cands.verify(&self.corpus, q, lines, opts.threads);
        let verify_ms = tv.elapsed().as_secs_f64() * 1e3;
        let confirmed: u64 = hits.matched.iter().sum();
        let docs = hits.finish(&self.line_counts(), q.invert(), opts.max_count);
        Ok(SearchResult {
            docs,
            backend: BackendReport {
                name: format!(
                    "gpu/{}+verify cpu x{}",
                    kernel.name(),
                    crate::cpu::resolve_threads(opts.threads)
                ),
                reason: format!(
                    "{reason}; tier 1: {n} candidate lines in {gpu_ms:.3} ms, \
                     {confirmed} confirmed in {verify_ms:.3} ms"
                ),
                elapsed: t.elapsed(),
            },
            plan: None,
        })
    }

    #[cfg(not(feature = "gpu"))]
    fn search_gpu_prefilter(
        &self,
        _q: &Query,
        _opts: &SearchOptions,
        _kernel: Kernel,
        _route: &Route,
        _cancel: &Cancel,
    ) -> Result<SearchResult, Error> {
        Err(Error::backend("built without the GPU backend"))
    }

    #[cfg(not(feature = "gpu"))]
    fn search_gpu(
        &self,
        _q: &Query,
        _opts: &SearchOptions,
        _kernel: Kernel,
        _route: &Route,
        _cancel: &Cancel,
    ) -> Result<(SearchResult, bool), Error> {
        Err(Error::backend("built without the GPU backend"))
    }

    /// Folds an automatic run's time into the calibration. Early exits
    /// (`-m`) do not measure throughput.
    fn record_result(&self, q: &Query, r: &SearchResult, ran: Backend, opts: &SearchOptions) {
        if opts.max_count.is_some() {
            return;
        }
        let backend = match ran {
            Backend::Gpu(kernel) => planner::MeasuredBackend::Gpu { kernel },
            // Tier 1 measures the literal kernel plus verification.
            Backend::GpuPrefilter(_) => return,
            Backend::Cpu => planner::MeasuredBackend::Cpu {
                threads: crate::cpu::resolve_threads(opts.threads),
            },
        };
        // A run counts its bytes times its units (`planner::units`: tier
        // 2's kernels are calibrated per unit).
        let units = match ran {
            Backend::Gpu(k) => planner::units(k, q),
            _ => 1.0,
        };
        self.record(&planner::Measurement {
            backend,
            bytes: (self.corpus.total_bytes() as f64 * units) as u64,
            seconds: r.backend.elapsed.as_secs_f64(),
        });
    }

    /// Per-pattern counts of `q`, with watchlist `w`'s compiled counter
    /// and GPU tables when `q` is its query.
    fn execute_pattern_counts(
        &self,
        q: &Query,
        route: &Route,
        opts: &SearchOptions,
        w: Option<&Watchlist>,
        cancel: &Cancel,
    ) -> Result<PatternCounts, Error> {
        let t = Instant::now();
        let patterns = || match w {
            Some(w) => w.patterns().clone(),
            None => q.patterns().into(),
        };
        if !opts.scope.is_all() {
            let runs = self.scope_runs(&opts.scope);
            let (lines, occurrences) = crate::pattern_counts::cpu_counts_in(
                &self.corpus,
                q,
                w.map(|w| w.cpu()),
                &runs,
                cancel,
            )?;
            return Ok(PatternCounts {
                patterns: patterns(),
                lines,
                occurrences,
                backend: BackendReport {
                    name: "cpu/scope".to_string(),
                    reason: route.reason.clone(),
                    elapsed: t.elapsed(),
                },
            });
        }
        let cpu = |reason: &str| -> Result<PatternCounts, Error> {
            let (how, (lines, occurrences)) = match w {
                Some(w) => (
                    "watchlist",
                    w.cpu().count(&self.corpus, opts.threads, cancel)?,
                ),
                None if one_pass(q) => (
                    "one-pass",
                    cpu_counts(&self.corpus, q, opts.threads, cancel)?,
                ),
                None => (
                    "each pattern alone",
                    cpu_counts(&self.corpus, q, opts.threads, cancel)?,
                ),
            };
            let threads = crate::cpu::resolve_threads(opts.threads);
            Ok(PatternCounts {
                patterns: patterns(),
                lines,
                occurrences,
                backend: BackendReport {
                    name: format!("cpu/{how} x{threads}"),
                    reason: reason.to_string(),
                    elapsed: t.elapsed(),
                },
            })
        };
        #[cfg(feature = "gpu")]
        if let (Backend::Gpu(kernel), Some(split)) = (route.backend, &route.split) {
            let mut r = self.pattern_counts_split(q, opts, kernel, split, route, w)?;
            r.patterns = patterns();
            return Ok(r);
        }
        match route.backend {
            Backend::Cpu => cpu(&route.reason),
            Backend::GpuPrefilter(_) => Err(Error::backend(
                "the GPU prefilter (tier 1) runs searches only, not per-pattern counts",
            )),
            Backend::Gpu(kernel) => match self.pattern_counts_gpu(q, kernel, &route.reason, t, w) {
                Ok(mut r) => {
                    r.patterns = patterns();
                    Ok(r)
                }
                Err(e) if route.forced || e.is_cancelled() => Err(e),
                Err(_) => cpu(&route.reason),
            },
        }
    }

    #[cfg(feature = "gpu")]
    fn pattern_counts_gpu(
        &self,
        q: &Query,
        kernel: Kernel,
        reason: &str,
        t: Instant,
        w: Option<&Watchlist>,
    ) -> Result<PatternCounts, Error> {
        let Some(g) = self.gpu() else {
            return Err(Error::backend("no GPU attached"));
        };
        let Some(mk) = kernel.multi() else {
            return Err(Error::backend(format!(
                "per-pattern counts run a many-literal kernel, not {kernel}"
            )));
        };
        g.check_whole()?;
        let c = g.count_per_pattern_timed(&self.corpus, q, mk, w.map(|w| w.gpu()))?;
        // How the counters came back, then the kernel's share of the time
        // (last: the bench reads it), for reports and the bench.
        let reason = format!("{reason}; {}", c.how);
        let reason = match c.kernel_time {
            Some(k) => format!("{reason}; kernel {:.3} ms", k.as_secs_f64() * 1e3),
            None => reason,
        };
        Ok(PatternCounts {
            patterns: Default::default(),
            lines: c.lines,
            occurrences: c.occurrences,
            backend: BackendReport {
                name: format!(
                    "gpu/{}{}",
                    kernel.name(),
                    if w.is_some() { " (watchlist)" } else { "" }
                ),
                reason,
                elapsed: t.elapsed(),
            },
        })
    }

    #[cfg(not(feature = "gpu"))]
    fn pattern_counts_gpu(
        &self,
        _q: &Query,
        _kernel: Kernel,
        _reason: &str,
        _t: Instant,
        _w: Option<&Watchlist>,
    ) -> Result<PatternCounts, Error> {
        Err(Error::backend("built without the GPU backend"))
    }

    fn execute_stats(
        &self,
        q: &StatsQuery<'_>,
        route: &Route,
        opts: &SearchOptions,
    ) -> Result<(Stats, BackendReport), Error> {
        if !opts.scope.is_all() {
            let t = Instant::now();
            let s = self.scoped_stats(q, &opts.scope)?;
            let report = BackendReport {
                name: "cpu/pipeline".to_string(),
                reason: route.reason.clone(),
                elapsed: t.elapsed(),
            };
            return Ok((s, report));
        }
        let Some(cols) = &self.columns else {
            return Err(Error::query(
                "stats: the session has no columns (Session::set_columns)",
            ));
        };
        let cpu = |reason: String| -> Result<(Stats, BackendReport), Error> {
            let t = Instant::now();
            let s = stats::run_cpu(&self.corpus, cols, q, opts.threads)?;
            Ok((
                s,
                BackendReport {
                    name: "cpu/pipeline".to_string(),
                    reason,
                    elapsed: t.elapsed(),
                },
            ))
        };
        match route.backend {
            Backend::Cpu => cpu(route.reason.clone()),
            Backend::GpuPrefilter(_) => Err(Error::backend(
                "the GPU prefilter (tier 1) runs searches only, not stats",
            )),
            Backend::Gpu(_) => match self.stats_gpu(cols, q, route) {
                Ok(Ok(r)) => Ok(r),
                Ok(Err(why)) if route.forced || opts.backend == BackendChoice::Gpu => {
                    Err(Error::backend(format!("--backend gpu: {why}")))
                }
                Ok(Err(why)) => cpu(why),
                Err(e) if route.forced => Err(e),
                Err(e) => cpu(format!("GPU not used: {e}")),
            },
        }
    }

    /// Uploads the stats columns to every GPU now, which the first stats
    /// query routed to a GPU would otherwise do on its own time (8.4 s at
    /// 200M lines on the H200, 2026-12-01 at `c39c399`, against 5-6 ms
    /// for the next); a caller runs it beside queries once the session is
    /// serving. `Ok(None)`: nothing to upload (no columns, no GPU, or
    /// uploaded already); else the time it took.
    pub fn prepare_stats(&self) -> Result<Option<std::time::Duration>, Error> {
        #[cfg(feature = "gpu")]
        {
            let Some(cols) = &self.columns else {
                return Ok(None);
            };
            let t = Instant::now();
            let mut any = false;
            for dev in &self.devices {
                any |= !dev.has_columns();
                dev.columns(&self.corpus, cols)?;
            }
            if any {
                // One stats query as a user's first would run (count by
                // the first field, an hourly histogram): after the upload
                // alone the first query still took 171 ms against 16 for
                // the next at 200M lines (H200, 2026-12-01).
                let mut q = StatsQuery::default();
                if let Some(f) = cols.fields().first() {
                    let _ = q.count_by(cols, &[f.name.as_str()]);
                }
                q.histogram = Some(3_600_000);
                self.stats(&q, &SearchOptions::default())?;
            }
            Ok(any.then(|| t.elapsed()))
        }
        #[cfg(not(feature = "gpu"))]
        Ok(None)
    }

    /// Runs the keep-warm dispatch on every GPU (`gpu::GpuContext::nudge`):
    /// what `serve --keep-warm` does while no query runs. Without a GPU,
    /// nothing.
    pub fn keep_warm(&self) -> Result<(), Error> {
        #[cfg(feature = "gpu")]
        for dev in &self.devices {
            dev.corpus.context().nudge()?;
        }
        Ok(())
    }

    /// The stats kernel over the resident columns (uploaded on first use).
    /// `Ok(Err(reason))`: the GPU cannot run this query (too many
    /// counters, say); the caller decides what that means.
    #[cfg(feature = "gpu")]
    fn stats_gpu(
        &self,
        cols: &crate::stats::Columns,
        q: &StatsQuery<'_>,
        route: &super::Route,
    ) -> Result<Result<(Stats, BackendReport), String>, Error> {
        let reason = &route.reason;
        let Some(dev) = self.devices.first() else {
            return Err(Error::backend("no GPU attached"));
        };
        let t = Instant::now();
        let gc = dev.columns(&self.corpus, cols)?;
        if let Some(r) = gc.unsupported(cols, q) {
            return Ok(Err(r));
        }
        if let Some(split) = &route.split {
            return self.stats_split(cols, q, split, route, t).map(Ok);
        }
        let r = gc.run_part(&dev.corpus, &self.corpus, cols, q)?;
        Ok(Ok((
            r.stats,
            BackendReport {
                name: "gpu/pipeline".to_string(),
                reason: format!(
                    "{reason}; upload {:.1} ms, query {:.3} ms",
                    (t.elapsed() - r.end_to_end).as_secs_f64() * 1e3,
                    r.end_to_end.as_secs_f64() * 1e3
                ),
                elapsed: r.end_to_end,
            },
        )))
    }

    #[cfg(not(feature = "gpu"))]
    fn stats_gpu(
        &self,
        _cols: &crate::stats::Columns,
        _q: &StatsQuery<'_>,
        _route: &super::Route,
    ) -> Result<Result<(Stats, BackendReport), String>, Error> {
        Err(Error::backend("built without the GPU backend"))
    }
}

/// Tier 1's plan for a [`Backend::GpuPrefilter`] route: the one the route
/// chose (`Route::prefilter`), else derived again with the kernel the
/// caller asked for (a route made without it), which must name the
/// route's kernel.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(super) fn route_prefilter(
    q: &Query,
    opts: &SearchOptions,
    kernel: Kernel,
    route: &Route,
) -> Result<crate::support::PrefilterPlan, Error> {
    match &route.prefilter {
        Some(p) if p.kernel == kernel => Ok(p.clone()),
        Some(p) => Err(Error::backend(format!(
            "GPU prefilter: the route chose {} for tier 1, its plan {}",
            kernel.name(),
            p.kernel.name()
        ))),
        None => crate::support::prefilter_plan(q, opts.gpu_kernel, kernel)
            .map_err(|u| Error::backend(format!("GPU prefilter: {u}"))),
    }
}
