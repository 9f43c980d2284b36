//! A test hook into file loading, for fault tests (a file deleted,
//! truncated or replaced while it is loaded; a read error mid-file).
//!
//! [`Document::open`](super::Document::open) calls the hook of its thread,
//! if any, after it has opened the file and read its head (the bytes that
//! decide binary and compression), before it maps or reads the rest. The
//! hook may change the file on disk, or return an error, which the load
//! then meets as the error of reading the rest of the file. Thread-local:
//! a test sets it on the thread that loads, and parallel tests never see
//! each other's hooks. Not for production use.

use std::cell::RefCell;
use std::io;
use std::path::Path;

/// The hook: called with the path being loaded.
pub type AfterHead = Box<dyn FnMut(&Path) -> io::Result<()>>;

thread_local! {
    static AFTER_HEAD: RefCell<Option<AfterHead>> = const { RefCell::new(None) };
}

/// Sets (or, with `None`, clears) this thread's hook.
#[doc(hidden)]
pub fn set_after_head(hook: Option<AfterHead>) {
    AFTER_HEAD.with(|h| *h.borrow_mut() = hook);
}

/// Runs this thread's hook, if any.
pub(super) fn after_head(path: &Path) -> io::Result<()> {
    AFTER_HEAD.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(path),
        None => Ok(()),
    })
}
