//! Live logs: what the follower appends to the resident corpus, handed to
//! every live tail.
//!
//! The follower (`serve --follow`) publishes one [`Appended`] per batch of
//! whole lines it has made searchable, *after* the session answers queries
//! over them, so a tail that re-reads a range from the session never sees
//! fewer lines than it was told about. A tail subscribes before it reads
//! the corpus's current end, so nothing falls between the two.

use std::sync::Arc;

use tokio::sync::{broadcast, watch};

/// Whole lines appended to one document of the resident corpus.
#[derive(Clone, Debug)]
pub struct Appended {
    /// The document's index in the session's corpus.
    pub doc: usize,
    /// The document's name, as results print it (`path.text` in rg's JSON).
    pub name: String,
    /// The 1-based line number, within its document, of the first line of
    /// `bytes`.
    pub first_line: u64,
    /// The byte offset, within its document, of the first byte of `bytes`.
    pub offset: u64,
    /// Whole lines, each ending in `\n`.
    pub bytes: Arc<[u8]>,
}

/// The broadcast of appended lines: one sender (the follower), any number
/// of tails. A tail that falls more than `capacity` batches behind is told
/// so by its receiver (`RecvError::Lagged`) and catches up from the
/// session, which still holds the lines.
pub struct LiveHub {
    tx: broadcast::Sender<Arc<Appended>>,
    /// `true` once the server stops: tails end their streams (a graceful
    /// shutdown waits for open responses).
    closed: watch::Sender<bool>,
}

impl LiveHub {
    /// A hub that keeps the last `capacity` batches for slow tails.
    pub fn new(capacity: usize) -> LiveHub {
        let (tx, _) = broadcast::channel(capacity.max(1));
        let (closed, _) = watch::channel(false);
        LiveHub { tx, closed }
    }

    /// Hands `batch` to every tail; returns how many tails were listening.
    pub fn publish(&self, batch: Appended) -> usize {
        self.tx.send(Arc::new(batch)).unwrap_or(0)
    }

    /// A receiver of every batch published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Appended>> {
        self.tx.subscribe()
    }

    /// Ends every tail (the server is stopping).
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// A receiver that turns `true` when [`LiveHub::close`] is called
    /// (`wait_for(|&c| c)` completes at once if it was).
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    /// Tails listening now.
    pub fn tails(&self) -> usize {
        self.tx.receiver_count()
    }
}

impl Default for LiveHub {
    fn default() -> LiveHub {
        LiveHub::new(1024)
    }
}
