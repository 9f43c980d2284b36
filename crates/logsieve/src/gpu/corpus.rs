//! The resident corpus: uploaded once ([`super::upload`]), searched many
//! times. [`GpuCorpus`] owns the segments with their typed buffers, the
//! query uniform, brute-byte's append buffers, each segment's bind group
//! and the readback buffers; every search is a job on the one run
//! (`run.rs`): a kernel driver over the segments, then merged by
//! [`super::readback`].

use std::sync::Mutex;
use std::time::Duration;

// `std::time::Instant` panics on wasm32; this is the same type natively.
use web_time::Instant;

use super::context::{Ctx, GpuContext};
use super::kernels::{brute_byte, params as P, plain_read, signature};
use super::rare::RareBytes;
use super::readback::{self, PerSegment, RawHits, Readback};
use super::segment::ResidentSegment;
use super::upload::{self, round_up, UploadOptions, UploadStats};
use crate::corpus::{Corpus, Segment};
use crate::error::Error;
use crate::query::Query;

/// What a search changes: brute-byte's append buffers grow, and with them
/// the bind groups.
pub(crate) struct State {
    /// Each segment's brute-byte append buffer (binding 9).
    pub(crate) positions: Vec<wgpu::Buffer>,
    /// Each segment's per-line signatures (binding 8): one shared 16-byte
    /// placeholder until the `signature` kernel first runs
    /// ([`GpuCorpus::ensure_signatures`]); 16 bytes a line after.
    pub(crate) signatures: Vec<wgpu::Buffer>,
    /// Whether `signatures` are built.
    pub(crate) signatures_built: bool,
    /// Each segment's bind group in the engine's layout.
    pub(crate) binds: Vec<wgpu::BindGroup>,
    /// Every segment's result bits are zero (a count-only scan zeroes them
    /// as it counts them), so the next scan needs no clear.
    pub(crate) clean: bool,
    /// `clean` as [`GpuCorpus::lock_state`] found it (which marks the bits
    /// dirty for whoever holds the lock, until they say otherwise).
    pub(crate) was_clean: bool,
    /// The readback of fused counts (`fused.rs`), made on first use and
    /// grown to the largest submission.
    pub(crate) batch_readback: Option<wgpu::Buffer>,
    /// The regex automata (`shift-and`) resident for this corpus: tables,
    /// uniforms and bind groups built once per query, reused after.
    pub(crate) automata: super::kernels::shift_and::AutomatonCache,
    /// Class sets' further parameter slots (`search_classes`): for each
    /// pass after the first, a uniform, every segment's bind group with
    /// it, and the words last written to it; made on first use, dropped
    /// when segments change.
    pub(crate) class_slots: Vec<ClassSlot>,
}

/// A further parameter slot of a class set's passes.
pub(crate) type ClassSlot = (
    wgpu::Buffer,
    Vec<wgpu::BindGroup>,
    Option<Box<[u32; P::WORDS]>>,
);

/// A corpus resident in GPU memory: every segment's bytes, line offsets,
/// block hints and bit sets, uploaded once (the `signature` kernel's
/// per-line signatures on its first use).
///
/// A corpus may hold a *shard*: some lines of each document
/// ([`GpuCorpus::upload_lines`]), the rest held by other devices or the
/// host. A shard answers only through the session, which merges every
/// part; its own `search` refuses (its `-v` and counts would be partial).
pub struct GpuCorpus {
    pub(crate) ctx: GpuContext,
    pub(crate) segs: Vec<ResidentSegment>,
    /// Segments holding one line too large for a binding: searched on the
    /// CPU and merged.
    pub(crate) cpu_segs: Vec<(usize, Segment)>,
    /// Each document's size and line count, to check that a search is given
    /// the corpus that was uploaded.
    pub(super) shape: Vec<(u64, u64)>,
    /// The lines this corpus holds, when a shard: (document, lines).
    pub(super) holds: Option<Vec<(usize, std::ops::Range<u64>)>>,
    /// Byte frequencies and a sample of the corpus: `scan`'s rare bytes.
    pub(crate) rare: RareBytes,
    upload_time: Duration,
    upload_stats: UploadStats,
    index_time: Duration,
    pub(super) upload_bytes: u64,
    /// The segment limits the corpus was planned with, for appended lines.
    pub(super) limits: upload::Limits,
    /// Bytes of the bits readback: every segment's room for result bits.
    pub(super) bits_total: u64,
    /// Bytes written to the device by appends ([`GpuCorpus::append`]).
    pub(super) appended_written: u64,
    /// Per document, the room of the last segment opened for its
    /// appended lines (the next one doubles it).
    pub(super) rooms: Vec<u64>,
    /// The query uniform (binding 0).
    pub(crate) params: wgpu::Buffer,
    /// The words last written to `params` ([`GpuCorpus::write_params`]):
    /// the same query again writes nothing.
    last_params: Mutex<Option<Box<[u32; P::WORDS]>>>,
    pub(crate) readback: Readback,
    /// Whether single-literal searches bracket their pass with timestamps
    /// (`GpuSearch::kernel_time`); see [`GpuCorpus::set_timestamps`].
    timestamps: std::sync::atomic::AtomicBool,
    pub(crate) state: Mutex<State>,
}

impl std::fmt::Debug for GpuCorpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuCorpus")
            .field("segments", &self.segs.len())
            .field("cpu_segments", &self.cpu_segs.len())
            .field("bytes", &self.upload_bytes)
            .finish()
    }
}

impl GpuCorpus {
    /// Uploads `corpus` with the default segment size.
    pub fn upload(ctx: &GpuContext, corpus: &Corpus) -> Result<GpuCorpus, Error> {
        GpuCorpus::upload_with(ctx, corpus, UploadOptions::default())
    }

    /// Uploads the lines `holds` of `corpus` (document, line range), a
    /// shard: segments are planned inside those lines only; the other
    /// lines are not this corpus's. Blocks (natively only).
    pub fn upload_lines(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        holds: &[(usize, std::ops::Range<u64>)],
    ) -> Result<GpuCorpus, Error> {
        pollster::block_on(Self::upload_checked(
            ctx,
            corpus,
            opts,
            Some(holds.to_vec()),
            &mut |_, _| {},
        ))
    }

    /// Uploads `corpus`: segments, line offsets, block hints. Errors on out-of-memory or any
    /// device error. Blocks (natively only: in a browser use
    /// [`GpuCorpus::upload_async`]).
    pub fn upload_with(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
    ) -> Result<GpuCorpus, Error> {
        pollster::block_on(Self::upload_async(ctx, corpus, opts, &mut |_, _| {}))
    }

    /// [`GpuCorpus::upload_with`] without blocking, calling
    /// `progress(bytes_staged, bytes_total)` after each staging chunk is
    /// submitted (a browser shows it as a progress bar).
    pub async fn upload_async(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<GpuCorpus, Error> {
        Self::upload_checked(ctx, corpus, opts, None, progress).await
    }

    async fn upload_checked(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        holds: Option<Vec<(usize, std::ops::Range<u64>)>>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<GpuCorpus, Error> {
        let c = &*ctx.inner;
        c.check_faults()?;
        let dev = &c.device;
        let oom = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let res = Self::upload_inner(ctx, corpus, opts, holds, progress).await;
        let v = val.pop().await;
        let o = oom.pop().await;
        if let Some(e) = o {
            return Err(Error::backend(format!(
                "out of GPU memory uploading {} bytes: {e}",
                corpus.total_bytes()
            )));
        }
        if let Some(e) = v {
            return Err(Error::backend(format!("GPU upload failed: {e}")));
        }
        c.check_faults()?;
        res
    }

    async fn upload_inner(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        holds: Option<Vec<(usize, std::ops::Range<u64>)>>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<GpuCorpus, Error> {
        let c = &*ctx.inner;
        let dev = &c.device;
        let rare = RareBytes::of(corpus);
        // Whether a Unicode class string is exact here (`support::class_scan`),
        // checked now rather than by the first query that asks.
        corpus.docs().iter().for_each(|d| {
            d.is_ascii();
        });
        let t_index = Instant::now();
        let planned = upload::plan(c, corpus, &opts, holds.as_deref());
        let segs = planned.segments;
        let index_time = t_index.elapsed();
        // Stage the bytes in chunks, each filled on several threads and
        // copied while the next one fills.
        let t0 = Instant::now();
        let upload_stats = upload::stage(c, corpus, &segs, &opts, progress).await?;
        let upload_time = t0.elapsed();
        let upload_bytes = segs.iter().map(|s| u64::from(s.n_bytes)).sum();
        let limits = upload::limits(c, &opts);

        let params = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: (P::WORDS * 4) as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let positions: Vec<wgpu::Buffer> = segs
            .iter()
            .map(|_| Self::positions_buffer(c, brute_byte::INITIAL_CAPACITY))
            .collect();
        // Measured on 1M generated lines (`tests/multi_gpu.rs`, lavapipe):
        // the signatures took 16 bytes a line, 0.083 bytes per corpus
        // byte, more than the line offsets and block hints together; only
        // the `signature` kernel reads them, so they wait for it.
        let placeholder = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sigs placeholder"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let signatures: Vec<wgpu::Buffer> = segs.iter().map(|_| placeholder.clone()).collect();
        let binds: Vec<wgpu::BindGroup> = segs
            .iter()
            .zip(&positions)
            .zip(&signatures)
            .map(|((s, p), g)| s.bind(dev, &c.pipes.layout, p, g, &params))
            .collect();
        let readback = Readback::new(dev, segs.len(), planned.bits_total, c.info.timestamps);
        c.wait_async().await?;

        Ok(GpuCorpus {
            ctx: ctx.clone(),
            segs,
            cpu_segs: planned.cpu_segments,
            shape: planned.shape,
            holds,
            rare,
            upload_time,
            upload_stats,
            index_time,
            upload_bytes,
            limits,
            bits_total: planned.bits_total,
            appended_written: 0,
            rooms: Vec::new(),
            params,
            last_params: Mutex::new(None),
            readback,
            timestamps: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(State {
                positions,
                signatures,
                signatures_built: false,
                binds,
                // wgpu zero-initialises new buffers.
                clean: true,
                was_clean: true,
                batch_readback: None,
                automata: Default::default(),
                class_slots: Vec::new(),
            }),
        })
    }

    /// A brute-byte append buffer of `capacity` positions.
    pub(crate) fn positions_buffer(c: &Ctx, capacity: u64) -> wgpu::Buffer {
        c.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("positions"),
            size: round_up(capacity.max(4) * 4, 16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// Upload throughput of the corpus bytes, in GB/s (10^9 bytes/s).
    pub fn upload_gbps(&self) -> f64 {
        self.upload_bytes as f64 / self.upload_time.as_secs_f64().max(1e-9) / 1e9
    }

    /// Where the upload's time went.
    pub fn upload_stats(&self) -> UploadStats {
        self.upload_stats
    }

    /// How long the transfer of the corpus bytes took (staging, copies, the
    /// final wait): what [`GpuCorpus::upload_gbps`] divides by.
    pub fn upload_time(&self) -> Duration {
        self.upload_time
    }

    /// How long the rest of the upload took: per-segment line offsets and
    /// block hints (host) and their buffers.
    pub fn index_time(&self) -> Duration {
        self.index_time
    }

    /// Corpus bytes resident on the GPU (oversized lines excluded).
    pub fn resident_bytes(&self) -> u64 {
        self.upload_bytes
    }

    /// The number of GPU segments.
    pub fn segment_count(&self) -> usize {
        self.segs.len()
    }

    /// The context this corpus lives in.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Every GPU buffer and its size, segment buffers named `segN/NAME`.
    pub fn buffers(&self) -> Vec<(String, u64)> {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = vec![("params".to_string(), self.params.size())];
        if !st.signatures_built && !self.segs.is_empty() {
            out.push(("sigs placeholder".to_string(), 16));
        }
        for (n, b) in self.readback.named() {
            out.push((n.to_string(), b.size()));
        }
        for (i, s) in self.segs.iter().enumerate() {
            for (n, b) in s.buffers.named() {
                out.push((format!("seg{i}/{n}"), b.size()));
            }
            if st.signatures_built {
                out.push((format!("seg{i}/sigs"), st.signatures[i].size()));
            }
            out.push((format!("seg{i}/positions"), st.positions[i].size()));
        }
        out
    }

    /// Errors unless `corpus` is the corpus that was uploaded.
    pub(crate) fn check_corpus(&self, corpus: &Corpus) -> Result<(), Error> {
        let same = corpus.docs().len() == self.shape.len()
            && corpus
                .docs()
                .iter()
                .zip(&self.shape)
                .all(|(d, &(bytes, _))| d.data().len() as u64 == bytes);
        if same {
            Ok(())
        } else {
            Err(Error::backend(
                "GPU search given a corpus other than the one uploaded",
            ))
        }
    }

    /// Writes the query uniform, unless it already holds these words (the
    /// only writer, so the last words written are the buffer's by the
    /// next submission): a query run again skips the staging copy and the
    /// barrier a write puts before its commands (0.01-0.02 ms on the H100,
    /// as `scan`'s immediates).
    pub(crate) fn write_params(&self, p: &[u32; P::WORDS]) {
        let mut last = self.last_params.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_deref() == Some(p) {
            return;
        }
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.ctx.inner.queue.write_buffer(&self.params, 0, &bytes);
        *last = Some(Box::new(*p));
    }

    /// Timestamps on: single-literal searches report their kernel time
    /// (`GpuSearch::kernel_time`), at the price of the timestamp writes,
    /// their resolve and one more readback (0.02-0.03 ms a query on the
    /// H100; docs/bench). Off by default: a search that only wants its
    /// answer does not pay for a profile. The plain-read ceiling and the
    /// many-literal kernels always use them.
    pub fn set_timestamps(&self, on: bool) {
        self.timestamps
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a single-literal search brackets its pass with timestamps:
    /// asked for, and the adapter has them.
    pub(crate) fn timestamps_on(&self) -> bool {
        self.readback.timestamps.is_some()
            && self.timestamps.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs the plain-read bandwidth kernel over every segment and returns
    /// its GPU time (timestamps), or the wall time of the submission when
    /// the adapter has no timestamps.
    pub fn plain_read(&self) -> Result<Duration, Error> {
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut p = [0u32; P::WORDS];
        p[P::MAGIC] = plain_read::MAGIC;
        self.write_params(&p);
        let t = Instant::now();
        let mut enc = c.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("plain-read"),
                timestamp_writes: self.readback.timestamp_writes(),
            });
            plain_read::record(
                &mut pass,
                &c.pipes.plain_read,
                &self.segs,
                &st.binds,
                c.grid(),
            );
        }
        self.readback.resolve_timestamps(&mut enc);
        c.queue.submit([enc.finish()]);
        c.wait()?;
        let wall = t.elapsed();
        if let Some(ts) = self.readback.timestamps_map() {
            c.map_many(&[ts])?;
        }
        let kt = self.readback.read_timestamps(c.ts_period)?;
        c.check_faults()?;
        Ok(kt.unwrap_or(wall))
    }

    /// What this corpus found in the lines it holds, before `-v` and
    /// `-m`: the GPU's segments and the CPU's oversized ones.
    pub(crate) fn collect(&self, corpus: &Corpus, q: &Query, found: PerSegment) -> RawHits {
        readback::collect(corpus, q, &self.segs, &self.cpu_segs, found)
    }

    /// Each document's line count.
    pub(crate) fn line_counts(&self) -> Vec<u64> {
        self.shape.iter().map(|&(_, l)| l).collect()
    }

    /// The lines this corpus holds when it is a shard: (document, lines).
    pub fn holds(&self) -> Option<&[(usize, std::ops::Range<u64>)]> {
        self.holds.as_deref()
    }

    /// Errors when this corpus is a shard: its answers alone are partial.
    pub(crate) fn check_whole(&self) -> Result<(), Error> {
        match self.holds {
            None => Ok(()),
            Some(_) => Err(Error::backend(
                "this GPU corpus holds a shard of the corpus: search it through a Session, \
                 which merges every shard",
            )),
        }
    }

    /// Builds the per-line signatures on their first use (the `signature`
    /// kernel), rebinding every segment; submitted ahead of the caller's
    /// work on the same queue.
    pub(crate) fn ensure_signatures(&self, st: &mut State) {
        if st.signatures_built {
            return;
        }
        let c = &*self.ctx.inner;
        let dev = &c.device;
        for (i, s) in self.segs.iter().enumerate() {
            st.signatures[i] = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sigs"),
                size: round_up((u64::from(s.n_lines) * 16).max(4), 16),
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            st.binds[i] = s.bind(
                dev,
                &c.pipes.layout,
                &st.positions[i],
                &st.signatures[i],
                &self.params,
            );
        }
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            signature::record_build(
                &mut pass,
                &c.pipes.sig_build,
                &self.segs,
                &st.binds,
                c.grid(),
            );
        }
        c.queue.submit([enc.finish()]);
        st.signatures_built = true;
    }

    /// The per-corpus scratch state. Natively a search waits for another
    /// one on the same corpus; in a browser nothing may block, so a second
    /// concurrent search is an error. The holder is assumed to leave result
    /// bits set (`clean` false) unless it says otherwise.
    pub(crate) fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, State>, Error> {
        fn mark(mut st: std::sync::MutexGuard<'_, State>) -> std::sync::MutexGuard<'_, State> {
            st.was_clean = st.clean;
            st.clean = false;
            st
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            Ok(mark(self.state.lock().unwrap_or_else(|p| p.into_inner())))
        }
        #[cfg(target_arch = "wasm32")]
        {
            match self.state.try_lock() {
                Ok(st) => Ok(mark(st)),
                Err(std::sync::TryLockError::Poisoned(p)) => Ok(mark(p.into_inner())),
                Err(std::sync::TryLockError::WouldBlock) => Err(Error::backend(
                    "a GPU search of this corpus is already running",
                )),
            }
        }
    }
}
