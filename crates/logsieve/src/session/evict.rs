//! Evicting the oldest lines (`logsieve serve --follow --retain` and
//! `--max-resident`): a prefix of each document is dropped from the host
//! corpus, the stats columns and the GPUs, so it is no longer searchable
//! by any backend. Line numbers and byte offsets stay those of the whole
//! file ([`crate::Document::first_line`], `first_offset`).
//!
//! Two steps, so the copy is never made under a writer's lock:
//! [`Session::prepare_eviction`] (`&self`, beside readers: the server's
//! read lock) copies the kept suffix of every document, cuts the columns
//! and uploads the kept corpus to the same GPUs with the same layout
//! rule; [`Session::apply_eviction`] (`&mut self`, under the write lock)
//! only swaps them in, and hands back what it replaced to be dropped after
//! the lock. The GPU corpus is rebuilt from the kept suffix rather than
//! freed segment by segment: its per-segment state (bind groups, regex
//! automata, candidate lists, brute-byte buffers, the GPU stats columns)
//! is then new by construction, and an eviction removes at least 1/8 of
//! the bound, so the upload is amortised over the 1/8 appended since the
//! last one (about 8 bytes uploaded per byte appended, on top of the
//! appended byte itself).

use super::Session;
use crate::corpus::{Corpus, Document};
use crate::error::Error;
use crate::stats::NO_TIME;

/// How much to keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    /// `--retain`: keep lines whose time is within this many ms of the
    /// newest line's time (the log's clock, as `--since 15m`). Evicted
    /// once the oldest line held is older than 9/8 of it, down to it.
    pub max_age_ms: Option<i64>,
    /// `--max-resident`: keep at most this many bytes of lines (the
    /// host's copy; the GPU holds as many plus its index). Evicted once
    /// passed, down to 7/8 of it.
    pub max_bytes: Option<u64>,
}

impl Retention {
    /// True when a bound is set.
    pub fn is_set(&self) -> bool {
        self.max_age_ms.is_some() || self.max_bytes.is_some()
    }
}

/// What an eviction removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    /// Bytes of lines no longer held.
    pub bytes: u64,
    /// Lines no longer held.
    pub lines: u64,
}

/// An eviction prepared beside readers ([`Session::prepare_eviction`]),
/// for [`Session::apply_eviction`]; after it, what was replaced (drop it
/// after the lock).
pub struct Eviction {
    /// The kept corpus, its columns and GPUs (after the swap: the old
    /// ones).
    next: Session,
    /// Each document's (first offset + held bytes, held lines) when it
    /// was prepared: applied only to that corpus.
    shape: Vec<(u64, u64)>,
    /// Lines cut from each document.
    cuts: Vec<u64>,
    evicted: Evicted,
    /// Why the kept corpus is not on the GPUs (their upload failed: it is
    /// searched on the CPU).
    warning: Option<Error>,
}

impl std::fmt::Debug for Eviction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eviction")
            .field("cuts", &self.cuts)
            .field("evicted", &self.evicted)
            .finish()
    }
}

impl Eviction {
    /// Lines cut from each document.
    pub fn cuts(&self) -> &[u64] {
        &self.cuts
    }

    /// What it removes.
    pub fn evicted(&self) -> Evicted {
        self.evicted
    }

    /// Why the kept corpus is not on the GPUs the session had (their
    /// upload failed): after it is applied, the CPU searches.
    pub fn warning(&self) -> Option<&Error> {
        self.warning.as_ref()
    }
}

fn shape(c: &Corpus) -> Vec<(u64, u64)> {
    c.docs()
        .iter()
        .map(|d| (d.first_offset() + d.data().len() as u64, d.lines().len()))
        .collect()
}

/// Bytes of line `l` of `d`, terminator included (a virtual one is not).
fn line_bytes(d: &Document, l: u64) -> u64 {
    let s = d.lines().starts();
    let len = d.data().len() as u64;
    s[l as usize + 1].min(len) - s[l as usize]
}

impl Session {
    /// How many lines of each document `r` evicts now (`None` when the
    /// bound is not passed, or nothing can go).
    ///
    /// * `max_age_ms`: with the stats columns, once the oldest time held
    ///   is older than the newest minus 9/8 of the age, each document
    ///   loses the longest prefix of lines older than the newest minus
    ///   the age (a line stamped inside the bound stops it, so a slightly
    ///   unsorted log keeps a few older lines a while; lines before a
    ///   document's first timestamp go with the first stamped line after
    ///   them, and a document without any timestamp is bounded by
    ///   `max_bytes` only). A line without a timestamp has the time of
    ///   the nearest stamped line before it (the columns' rule).
    /// * `max_bytes`: once the bytes held pass it, the oldest lines go
    ///   until 7/8 of it is held: documents are taken in the order of
    ///   their first held line's time (a document without times first,
    ///   then by position), merged line by line. The newest line (the last
    ///   line of the document appended to last) is never evicted, so a
    ///   single line larger than the bound is kept, alone.
    pub fn eviction_cuts(&self, r: &Retention) -> Option<Vec<u64>> {
        let docs = self.corpus.docs();
        let mut cuts = vec![0u64; docs.len()];
        if let (Some(age), Some(cols)) = (r.max_age_ms, &self.columns) {
            if let (Some(old), Some(new)) = (cols.oldest(), cols.newest()) {
                let age = age.max(0);
                if old < new.saturating_sub(age.saturating_add(age / 8)) {
                    let cutoff = new.saturating_sub(age);
                    for (d, dc) in cols.docs().iter().enumerate() {
                        // No timestamp at all: nothing to scan (this runs
                        // after every batch while an unsorted document
                        // keeps an old line past its prefix).
                        if dc.stamped == 0 {
                            continue;
                        }
                        let mut cut = 0;
                        for (l, &t) in dc.times.iter().enumerate() {
                            if t == NO_TIME {
                                continue;
                            }
                            if t >= cutoff {
                                break;
                            }
                            cut = l as u64 + 1;
                        }
                        cuts[d] = cut.min(docs.get(d).map_or(0, |x| x.lines().len()));
                    }
                }
            }
        }
        if let Some(max) = r.max_bytes {
            let held: u64 = docs
                .iter()
                .zip(&cuts)
                .map(|(d, &c)| {
                    d.data().len() as u64
                        - d.lines().starts()[c as usize].min(d.data().len() as u64)
                })
                .sum();
            if held > max {
                let mut need = held - (max - max / 8);
                let newest = self
                    .last_appended
                    .or_else(|| (0..docs.len()).rev().find(|&d| !docs[d].lines().is_empty()));
                let key = |d: usize, l: u64| -> i64 {
                    self.columns
                        .as_ref()
                        .and_then(|c| c.docs().get(d))
                        .and_then(|c| c.times.get(l as usize))
                        .copied()
                        .filter(|&t| t != NO_TIME)
                        .unwrap_or(i64::MIN)
                };
                // The lines each document may lose.
                let limit: Vec<u64> = docs
                    .iter()
                    .enumerate()
                    .map(|(d, x)| {
                        let n = x.lines().len();
                        if Some(d) == newest {
                            n.saturating_sub(1)
                        } else {
                            n
                        }
                    })
                    .collect();
                while need > 0 {
                    let mut order: Vec<(i64, usize)> = (0..docs.len())
                        .filter(|&d| cuts[d] < limit[d])
                        .map(|d| (key(d, cuts[d]), d))
                        .collect();
                    if order.is_empty() {
                        break;
                    }
                    order.sort_unstable();
                    let d = order[0].1;
                    let next = order.get(1).map_or(i64::MAX, |o| o.0);
                    loop {
                        let b = line_bytes(&docs[d], cuts[d]);
                        cuts[d] += 1;
                        need = need.saturating_sub(b);
                        if need == 0 || cuts[d] >= limit[d] || key(d, cuts[d]) > next {
                            break;
                        }
                    }
                }
            }
        }
        cuts.iter().any(|&c| c > 0).then_some(cuts)
    }

    /// Prepares the eviction `r` asks for now (`None` when nothing goes):
    /// the kept suffix of every document copied, the columns cut, the
    /// kept corpus uploaded to the same GPUs with the same layout rule.
    /// Runs beside readers (`&self`); apply it with
    /// [`Session::apply_eviction`] before the corpus changes.
    pub fn prepare_eviction(&self, r: &Retention) -> Result<Option<Eviction>, Error> {
        let Some(cuts) = self.eviction_cuts(r) else {
            return Ok(None);
        };
        Ok(Some(self.prepare_cuts(cuts)?))
    }

    /// Prepares evicting the first `cuts[d]` lines of each document `d`
    /// (a missing entry: none).
    pub fn prepare_cuts(&self, mut cuts: Vec<u64>) -> Result<Eviction, Error> {
        let docs = self.corpus.docs();
        cuts.resize(docs.len(), 0);
        let mut evicted = Evicted::default();
        let kept: Vec<Document> = docs
            .iter()
            .zip(cuts.iter_mut())
            .map(|(d, c)| {
                *c = (*c).min(d.lines().len());
                let k = d.without_prefix(*c);
                evicted.lines += *c;
                evicted.bytes += k.first_offset() - d.first_offset();
                k
            })
            .collect();
        let mut next = Session::with_tuning(Corpus::from_docs(kept), self.tuning.clone());
        if let Some(c) = &self.columns {
            next.columns = Some(c.without_prefix(&self.corpus, &cuts));
        }
        next.last_appended = self.last_appended;
        #[cfg(feature = "gpu")]
        let warning = self.gpus_onto(&mut next).err();
        #[cfg(not(feature = "gpu"))]
        let warning = None;
        Ok(Eviction {
            next,
            shape: shape(&self.corpus),
            cuts,
            evicted,
            warning,
        })
    }

    /// Swaps in what `e` prepared, when the corpus is still the one it
    /// was prepared from (else `None`: nothing changes; prepare again).
    /// O(documents): the old corpus, columns and GPU buffers move into
    /// `e`, to be dropped after the caller's lock.
    pub fn apply_eviction(&mut self, e: &mut Eviction) -> Option<Evicted> {
        if e.shape != shape(&self.corpus) {
            return None;
        }
        let n = &mut e.next;
        std::mem::swap(&mut self.corpus, &mut n.corpus);
        std::mem::swap(&mut self.columns, &mut n.columns);
        #[cfg(feature = "gpu")]
        {
            std::mem::swap(&mut self.devices, &mut n.devices);
            std::mem::swap(&mut self.layout, &mut n.layout);
            std::mem::swap(&mut self.attach_notes, &mut n.attach_notes);
        }
        // Applied once.
        e.shape.clear();
        Some(e.evicted)
    }

    /// Prepares and applies the eviction `r` asks for now, in one step
    /// (a caller that does not share the session). Returns what went.
    pub fn evict(&mut self, r: &Retention) -> Result<Option<Evicted>, Error> {
        let Some(mut e) = self.prepare_eviction(r)? else {
            return Ok(None);
        };
        Ok(self.apply_eviction(&mut e))
    }

    /// The kept corpus in `next` uploaded to the session's GPUs, with
    /// the same layout rule (one device holding everything, or shards and
    /// a host tier). A failure leaves `next` on the CPU, never holding
    /// part of the corpus: the eviction goes on, searched on the CPU.
    #[cfg(feature = "gpu")]
    fn gpus_onto(&self, next: &mut Session) -> Result<(), Error> {
        if self.devices.is_empty() {
            return Ok(());
        }
        let ctxs: Vec<crate::gpu::GpuContext> = self
            .devices
            .iter()
            .map(|d| d.corpus.context().clone())
            .collect();
        #[cfg(not(target_arch = "wasm32"))]
        let res = if ctxs.len() > 1 || self.layout.is_some() {
            next.attach_gpus_with(&ctxs, self.upload_options, None)
        } else {
            next.attach_gpu_with(&ctxs[0], self.upload_options)
        };
        #[cfg(target_arch = "wasm32")]
        let res = next.attach_gpu_with(&ctxs[0], self.upload_options);
        if let Err(e) = res {
            next.detach_gpu();
            return Err(Error::backend(format!(
                "the GPU could not take the kept lines after an eviction ({e})"
            )));
        }
        Ok(())
    }
}
