//! A one-shot channel whose receiver is a future, completed by wgpu's
//! callbacks (buffer mapped, submitted work done). Natively the caller polls
//! the device first, which runs the callbacks; in a browser the JavaScript
//! event loop runs them while the future waits, since nothing there may
//! block. (A dozen lines instead of a dependency on `futures-channel`.)

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
    closed: bool,
}

/// Completes the receiver once; dropped unsent (a callback that never
/// runs, e.g. on device loss), the receiver yields `None`.
pub(crate) struct Sender<T>(Arc<Mutex<Slot<T>>>);

/// Resolves to the sent value, or `None` when the sender was dropped.
pub(crate) struct Receiver<T>(Arc<Mutex<Slot<T>>>);

pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
        closed: false,
    }));
    (Sender(slot.clone()), Receiver(slot))
}

fn close<T>(slot: &Mutex<Slot<T>>, value: Option<T>) {
    let waker = {
        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
        if value.is_some() {
            s.value = value;
        }
        s.closed = true;
        s.waker.take()
    };
    if let Some(w) = waker {
        w.wake();
    }
}

impl<T> Sender<T> {
    pub(crate) fn send(self, value: T) {
        close(&self.0, Some(value));
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        close(&self.0, None);
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = s.value.take() {
            return Poll::Ready(Some(v));
        }
        if s.closed {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}
