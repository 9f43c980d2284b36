//! Coalesced counts: a count request that arrives while the same count
//! (same query shape, options and route) is running waits for that run's
//! answer instead of running again.
//!
//! A session's corpus cannot change while a request holds it (`&self`;
//! appends take `&mut self`), so two concurrent runs of one count give
//! the same answer. Sixteen analysts asking for one literal over 200M
//! lines each paid a full pass (38.8 GB) on the H200 (2026-12-01 at
//! `c39c399`); coalesced, the ones that arrive during a pass share it.
//! Only successful answers are shared: a run that fails (or whose caller
//! cancelled it) leaves each waiting request to run its own. A waiting
//! request looks at its own token every few milliseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::{Backend, Route, SearchResult};
use crate::cancel::Cancel;
use crate::error::Error;
use crate::options::SearchOptions;
use crate::query::{Query, QueryShape};

/// What makes two count requests the same run.
#[derive(PartialEq)]
struct Key {
    query: QueryShape,
    opts: SearchOptions,
    backend: Backend,
}

/// A run under way, and its answer once it has one (`Some(None)`: it
/// failed; run again).
struct Flight {
    key: Key,
    done: Mutex<Option<Option<SearchResult>>>,
    cv: Condvar,
}

/// The counts running now, and how many requests shared another's run.
#[derive(Default)]
pub(crate) struct Flights {
    running: Mutex<Vec<Arc<Flight>>>,
    shared: AtomicU64,
}

/// How often a waiting request looks at its token.
const CANCEL_POLL: Duration = Duration::from_millis(5);

impl Flights {
    /// Requests answered by another request's run so far.
    pub(crate) fn shared(&self) -> u64 {
        self.shared.load(Ordering::Relaxed)
    }

    /// Runs `run` for the count of `q` under `opts` on `route`, or waits
    /// for the same count already running and returns its answer.
    pub(crate) fn count(
        &self,
        q: &Query,
        opts: &SearchOptions,
        route: &Route,
        cancel: &Cancel,
        run: impl FnOnce() -> Result<SearchResult, Error>,
    ) -> Result<SearchResult, Error> {
        // `--explain` shows this request's own plan.
        let Some(query) = q.memo_key().filter(|_| !opts.explain) else {
            return run();
        };
        let key = Key {
            query,
            opts: opts.clone(),
            backend: route.backend,
        };
        let t0 = web_time::Instant::now();
        let (flight, lead) = {
            let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
            match r.iter().find(|f| f.key == key) {
                Some(f) => (f.clone(), false),
                None => {
                    let f = Arc::new(Flight {
                        key,
                        done: Mutex::new(None),
                        cv: Condvar::new(),
                    });
                    r.push(f.clone());
                    (f, true)
                }
            }
        };
        if lead {
            let res = run();
            self.running
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|f| !Arc::ptr_eq(f, &flight));
            *flight.done.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(res.as_ref().ok().cloned());
            flight.cv.notify_all();
            return res;
        }
        let mut done = flight.done.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*done {
                Some(Some(r)) => {
                    let mut r = r.clone();
                    self.shared.fetch_add(1, Ordering::Relaxed);
                    r.backend.reason = format!(
                        "{}; answered by a concurrent run of the same count",
                        r.backend.reason
                    );
                    r.backend.elapsed = t0.elapsed();
                    return Ok(r);
                }
                Some(None) => {
                    drop(done);
                    return run();
                }
                None => {
                    done = flight
                        .cv
                        .wait_timeout(done, CANCEL_POLL)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                    if cancel.is_cancelled() {
                        return Err(Error::cancelled());
                    }
                }
            }
        }
    }
}
