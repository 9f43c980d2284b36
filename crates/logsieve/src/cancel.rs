//! Cancellation of a running request: a flag the caller sets (a client
//! that hung up, a deadline that passed) and the engines read between
//! units of work — the CPU engine between the pieces of a document, the
//! GPU path before it submits and when it waits its turn, a caller's line
//! encoder between chunks. A cancelled request returns
//! [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) instead of an
//! answer, never a partial one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::Error;

/// A cancel token: cheap to clone (clones share the flag). The default
/// token is never cancelled and costs nothing to check.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    flag: Option<Arc<AtomicBool>>,
}

impl Cancel {
    /// A token that is never cancelled.
    pub fn never() -> Cancel {
        Cancel { flag: None }
    }

    /// A token that [`Cancel::cancel`] (on it or a clone) cancels.
    pub fn new() -> Cancel {
        Cancel {
            flag: Some(Arc::new(AtomicBool::new(false))),
        }
    }

    /// Cancels every request carrying this token (or a clone).
    pub fn cancel(&self) {
        if let Some(f) = &self.flag {
            f.store(true, Ordering::Relaxed);
        }
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.flag
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// False for [`Cancel::never`]: nothing can cancel it, so engines need
    /// not cut their work into pieces to look at it.
    pub fn can_fire(&self) -> bool {
        self.flag.is_some()
    }

    /// `Err(cancelled)` once cancelled.
    pub fn check(&self) -> Result<(), Error> {
        if self.is_cancelled() {
            Err(Error::cancelled())
        } else {
            Ok(())
        }
    }

    /// A guard that cancels this token when dropped (a response body that
    /// a client stopped reading, a request future that was dropped),
    /// unless [`CancelOnDrop::disarm`]ed first.
    pub fn on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(Some(self.clone()))
    }
}

/// Cancels its token when dropped ([`Cancel::on_drop`]).
#[derive(Debug)]
pub struct CancelOnDrop(Option<Cancel>);

impl CancelOnDrop {
    /// Drops the guard without cancelling (the request finished).
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_guards_fire_on_drop() {
        let never = Cancel::never();
        never.cancel();
        assert!(!never.is_cancelled());
        assert!(never.check().is_ok());
        let c = Cancel::new();
        let d = c.clone();
        assert!(!d.is_cancelled());
        c.on_drop().disarm();
        assert!(!d.is_cancelled());
        drop(c.on_drop());
        assert!(d.is_cancelled());
        let e = d.check().unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Cancelled), "{e:?}");
    }
}
