//! `logsieve serve --follow` and `logsieve cluster worker --follow`: the
//! follower thread. It waits for file
//! events (the `notify` crate: inotify on Linux) or its poll interval,
//! whichever comes first — the timer is the backstop when events are lost
//! or unavailable, and the only clock with `--follow-poll` — asks the
//! library's [`Tracker`] what changed, applies it to the session under
//! its owner's write lock (short: the bytes were read before), and only
//! then hands each batch to the owner ([`Owner::publish`]: the server's
//! live hub, [`crate::live`]).

use std::path::PathBuf;
use std::sync::{mpsc, Arc, Weak};
use std::time::{Duration, Instant};

use logsieve::corpus::follow::{Change, Tracker};
use logsieve::corpus::Document;
use logsieve::session::{Evicted, Retention};
use logsieve::Session;
use notify::Watcher;
use parking_lot::RwLock;

use crate::live::Appended;
pub use crate::state::FollowStatus;
use crate::state::{AppState, Inner, Ready};
/// How the follower watches.
#[derive(Clone, Debug)]
pub struct FollowSettings {
    /// `--follow-idle`: a partial last line becomes a line after the file
    /// has not grown this long (and a small new file is adopted).
    pub idle: Duration,
    /// `--follow-interval`: the poll timer (a backstop under events).
    pub interval: Duration,
    /// `--follow-poll`: no file events, the timer only.
    pub force_poll: bool,
    /// Directories are walked again for new files at least this often
    /// (and on every create/rename event).
    pub rescan: Duration,
    /// `--retain` / `--max-resident`: the oldest lines are evicted past
    /// it ([`logsieve::session::Retention`]); none by default.
    pub retention: Retention,
}

impl Default for FollowSettings {
    fn default() -> FollowSettings {
        FollowSettings {
            idle: Duration::from_secs(5),
            interval: Duration::from_millis(250),
            force_poll: false,
            rescan: Duration::from_secs(1),
            retention: Retention::default(),
        }
    }
}

/// What a follower writes into: a session, behind its owner's lock.
pub trait Followed: Send + Sync + 'static {
    /// The session read.
    fn session(&self) -> &Session;
    /// The session written.
    fn session_mut(&mut self) -> &mut Session;
    /// After a batch or an eviction, still under the write lock (what
    /// the owner counts beside the session).
    fn changed(&mut self) {}
}

impl Followed for Session {
    fn session(&self) -> &Session {
        self
    }
    fn session_mut(&mut self) -> &mut Session {
        self
    }
}

impl Followed for Ready {
    fn session(&self) -> &Session {
        &self.session
    }
    fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }
    fn changed(&mut self) {
        self.lines = self
            .session
            .corpus()
            .docs()
            .iter()
            .map(|d| d.lines().len())
            .sum();
        self.backend = if self.session.has_gpu() { "gpu" } else { "cpu" }.to_string();
    }
}

/// Who holds the followed session, and hears of each batch.
pub trait Owner: Send + 'static {
    /// What the lock holds.
    type Held: Followed;
    /// The session's lock: `Err(Gone)` once the owner is gone (the
    /// follower stops), `Ok(None)` while it is not loaded.
    fn lock(&self) -> Result<Option<Arc<RwLock<Self::Held>>>, Gone>;
    /// A batch's lines, once queries see them.
    fn publish(&self, _a: Appended) {}
    /// The follower's state after each poll.
    fn report(&self, _s: FollowStatus) {}
}

/// The owner of a followed session is gone.
#[derive(Debug)]
pub struct Gone;

/// The server: appended lines go to its live tails, the state to
/// `/health` and `/metrics`.
struct Served(Weak<Inner>);

impl Served {
    fn state(&self) -> Result<AppState, Gone> {
        self.0.upgrade().map(AppState).ok_or(Gone)
    }
}

impl Owner for Served {
    type Held = Ready;
    fn lock(&self) -> Result<Option<Arc<RwLock<Ready>>>, Gone> {
        Ok(self.state()?.ready_lock())
    }
    fn publish(&self, a: Appended) {
        if let Ok(s) = self.state() {
            s.live().publish(a);
        }
    }
    fn report(&self, st: FollowStatus) {
        if let Ok(s) = self.state() {
            s.set_follow(st);
        }
    }
}

/// A session alone (a cluster worker's): the follower stops when the
/// last holder of the lock drops it.
pub struct Alone(pub Weak<RwLock<Session>>);

impl Owner for Alone {
    type Held = Session;
    fn lock(&self) -> Result<Option<Arc<RwLock<Session>>>, Gone> {
        self.0.upgrade().map(Some).ok_or(Gone)
    }
}

/// Starts the server's follower on a thread of its own. It stops when
/// the server's state is dropped.
pub fn spawn(state: &AppState, tracker: Tracker, paths: Vec<PathBuf>, settings: FollowSettings) {
    spawn_for(Served(Arc::downgrade(&state.0)), tracker, paths, settings);
}

/// Starts a follower of `paths` into `owner`'s session on a thread of
/// its own; it stops when the owner is gone.
pub fn spawn_for<O: Owner>(
    owner: O,
    tracker: Tracker,
    paths: Vec<PathBuf>,
    settings: FollowSettings,
) {
    let _ = std::thread::Builder::new()
        .name("logsieve-follow".into())
        .spawn(move || run(owner, tracker, paths, settings));
}

fn run<O: Owner>(owner: O, mut tracker: Tracker, paths: Vec<PathBuf>, s: FollowSettings) {
    let (tx, rx) = mpsc::channel::<bool>();
    let watcher = if s.force_poll {
        None
    } else {
        watch(&paths, tx)
    };
    let events = watcher.is_some();
    let mut last_walk = Instant::now();
    let mut status = FollowStatus {
        events,
        stats: tracker.stats(),
        retention: s.retention.is_set().then_some(s.retention),
        ..Default::default()
    };
    // What the load holds past the bound goes before the first batch.
    if s.retention.is_set() {
        match owner.lock() {
            Err(Gone) => return,
            Ok(Some(lock)) => evict(&lock, &s.retention, &mut status),
            Ok(None) => {}
        }
    }
    loop {
        // An event or the timer; a burst of events is one poll.
        let mut rescan = match rx.recv_timeout(s.interval) {
            Ok(structural) => structural,
            Err(mpsc::RecvTimeoutError::Timeout) => false,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(s.interval);
                false
            }
        };
        while let Ok(structural) = rx.try_recv() {
            rescan |= structural;
        }
        rescan |= last_walk.elapsed() >= s.rescan;
        if rescan {
            last_walk = Instant::now();
        }
        let lock = match owner.lock() {
            Err(Gone) => return,
            Ok(None) => continue,
            Ok(Some(l)) => l,
        };
        let t0 = Instant::now();
        if let Some(batch) = apply(&lock, &mut tracker, rescan) {
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            status.batches += 1;
            status.last_batch_ms = ms;
            status.max_batch_ms = status.max_batch_ms.max(ms);
            // Published after the write lock is released: queries see
            // them now.
            for a in batch {
                owner.publish(a);
            }
            if s.retention.is_set() {
                evict(&lock, &s.retention, &mut status);
            }
        }
        {
            let r = lock.read();
            status.held_bytes = r.session().corpus().total_bytes();
            status.oldest_ms = r.session().columns().and_then(|c| c.oldest());
        }
        status.stats = tracker.stats();
        owner.report(status);
    }
}

/// One poll: what changed goes into the session. Returns the complete
/// lines of each change (for the tails), or `None` when nothing was
/// applied.
fn apply<T: Followed>(
    lock: &RwLock<T>,
    tracker: &mut Tracker,
    rescan: bool,
) -> Option<Vec<Appended>> {
    // The follower is the only writer: the corpus read here is the one
    // the changes apply to.
    // Room for the appended bytes is made here too, beside running
    // queries: growing a document's buffer may copy all of it (glibc
    // moves a large one with `mremap` instead, other allocators copy),
    // which must not run under the write lock.
    let (changes, errors, mut rooms) = {
        let r = lock.read();
        let session = r.session();
        let (changes, errors) = tracker.poll(session.corpus(), rescan);
        let mut need: std::collections::BTreeMap<usize, (usize, usize)> = Default::default();
        for c in &changes {
            if let Change::Append { doc, bytes } = c {
                let n = need.entry(*doc).or_default();
                n.0 += bytes.len();
                n.1 += memchr_count(bytes) as usize;
            }
        }
        let rooms: Vec<_> = need
            .into_iter()
            .filter_map(|(doc, (b, l))| session.make_room(doc, b, l).map(|room| (doc, room)))
            .collect();
        (changes, errors, rooms)
    };
    for e in errors {
        tracing::warn!("follow: {e}");
    }
    for n in tracker.take_notes() {
        tracing::info!("follow: {n}");
    }
    if changes.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(changes.len());
    {
        let mut w = lock.write();
        let held = &mut *w;
        let session = held.session_mut();
        // The old buffers go back into `rooms`, dropped after the lock.
        for (doc, room) in &mut rooms {
            *room = session.take_room(*doc, std::mem::take(room));
        }
        for c in changes {
            let (doc, res) = match c {
                Change::NewDoc { doc, name, bytes } => {
                    let d = Document::from_bytes(name, bytes);
                    let res = session.push_document(d).map(|i| {
                        debug_assert_eq!(i, doc);
                        0
                    });
                    (doc, res)
                }
                Change::Append { doc, bytes } => (doc, session.append_lines(doc, &bytes)),
            };
            match res {
                Ok(first) => {
                    let d = &session.corpus().docs()[doc];
                    // Tails get the changed lines that are complete: a
                    // last line without a terminator (a settled file, an
                    // idle writer) waits for its end, and a line it
                    // continues goes out whole.
                    let local = first - d.first_line();
                    let starts = d.lines().starts();
                    let open = u64::from(!d.appendable());
                    let end_line = d.lines().len() - open;
                    if local < end_line {
                        let (a, b) = (starts[local as usize], starts[end_line as usize]);
                        out.push(Appended {
                            doc,
                            name: d.name().to_string(),
                            first_line: first + 1,
                            offset: d.first_offset() + a,
                            bytes: d.data()[a as usize..b as usize].into(),
                        });
                    }
                }
                Err(e) => tracing::warn!("follow: {e}"),
            }
        }
        held.changed();
    }
    drop(rooms);
    Some(out)
}

/// After a batch: the oldest lines past the retention bound evicted.
/// The kept suffix is copied (and uploaded to the GPUs) under the read
/// lock, beside queries; the write lock only swaps it in. The old
/// buffers are freed after the lock. Published batches and tails' cursors
/// count lines of the whole file, so nothing is renumbered.
fn evict<T: Followed>(lock: &RwLock<T>, retention: &Retention, status: &mut FollowStatus) {
    if let Some((ev, prepare_ms, lock_ms)) = evict_in(lock, retention) {
        status.evictions += 1;
        status.evicted_bytes += ev.bytes;
        status.evicted_lines += ev.lines;
        status.last_evict_prepare_ms = prepare_ms;
        status.last_evict_lock_ms = lock_ms;
    }
}

/// Evicts what `retention` asks for now from the served session, as the
/// follower does after a batch (also for tests): returns what went, with
/// the preparation's time beside queries and the time under the write
/// lock (ms); `None` when nothing went.
pub fn evict_now(state: &AppState, retention: &Retention) -> Option<(Evicted, f64, f64)> {
    evict_in(&*state.ready_lock()?, retention)
}

fn evict_in<T: Followed>(lock: &RwLock<T>, retention: &Retention) -> Option<(Evicted, f64, f64)> {
    let t0 = Instant::now();
    // The follower is the only writer: what is prepared here still
    // matches the corpus when the write lock is taken (checked).
    let prepared = lock.read().session().prepare_eviction(retention);
    let mut e = match prepared {
        Ok(Some(e)) => e,
        Ok(None) => return None,
        Err(err) => {
            tracing::warn!("follow: eviction: {err}");
            return None;
        }
    };
    if let Some(w) = e.warning() {
        tracing::warn!("follow: eviction: {w}; searching on the CPU");
    }
    let prepare_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t1 = Instant::now();
    let done = {
        let mut w = lock.write();
        let held = &mut *w;
        let done = held.session_mut().apply_eviction(&mut e);
        if done.is_some() {
            held.changed();
        }
        done
    };
    let lock_ms = t1.elapsed().as_secs_f64() * 1e3;
    // The old corpus, columns and GPU buffers go here, outside the lock.
    drop(e);
    let ev = done?;
    tracing::info!(
        "follow: evicted {} lines ({} bytes) past the retention bound",
        ev.lines,
        ev.bytes
    );
    Some((ev, prepare_ms, lock_ms))
}

fn memchr_count(b: &[u8]) -> u64 {
    b.iter().filter(|&&c| c == b'\n').count() as u64
}

/// Watches `paths` (directories recursively; a file through its
/// directory, so its rotation is seen). `tx` gets `true` for events that
/// may add or move files (create, rename, remove), `false` for writes.
/// `None` when no watcher could be made (the timer polls alone).
fn watch(paths: &[PathBuf], tx: mpsc::Sender<bool>) -> Option<notify::RecommendedWatcher> {
    let handler = move |res: notify::Result<notify::Event>| {
        let structural = match res {
            Ok(ev) => !matches!(
                ev.kind,
                notify::EventKind::Modify(notify::event::ModifyKind::Data(_))
                    | notify::EventKind::Access(_)
            ),
            Err(_) => true,
        };
        let _ = tx.send(structural);
    };
    let mut w = match notify::recommended_watcher(handler) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("follow: no file events ({e}); polling on the timer");
            return None;
        }
    };
    for p in paths {
        let (target, mode) = if p.is_dir() {
            (p.clone(), notify::RecursiveMode::Recursive)
        } else {
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), |d| d.to_path_buf());
            (parent, notify::RecursiveMode::NonRecursive)
        };
        if let Err(e) = w.watch(&target, mode) {
            tracing::warn!(
                "follow: cannot watch {} ({e}); polling it on the timer",
                target.display()
            );
        }
    }
    Some(w)
}
