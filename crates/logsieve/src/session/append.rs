//! Growing the resident corpus in place (`logsieve serve --follow`): new
//! lines go to the corpus (its bytes and line index), the stats columns
//! and the GPUs, through the session, so every front end keeps the one
//! route.

use super::Session;
use crate::corpus::{Document, Room};
use crate::error::Error;

impl Session {
    /// Appends whole lines (`bytes` ends with `\n`) to document `doc`:
    /// its bytes and line index grow in place, the stats columns are
    /// extended over the new lines, and the GPUs hold them before this
    /// returns, so the next request sees all of them (a caller that
    /// shares the session serialises this with requests: the server holds
    /// its write lock). Returns the document's number of its first new
    /// line (0-based, counting lines evicted before: the number in the
    /// whole file, [`Document::first_line`]).
    pub fn append_lines(&mut self, doc: usize, bytes: &[u8]) -> Result<u64, Error> {
        let first = self.corpus.append(doc, bytes)?;
        if !bytes.is_empty() {
            self.last_appended = Some(doc);
        }
        self.grown()?;
        Ok(first + self.corpus.docs()[doc].first_line())
    }

    /// Room in document `doc` for `bytes` more bytes and `lines` more
    /// lines, made without the write lock ([`Document::make_room`]): a
    /// caller that shares the session calls it under its read lock, then
    /// [`Session::take_room`] under the write lock before
    /// [`Session::append_lines`], so no copy of the whole document runs
    /// under the write lock. `None` when the document has the room (or
    /// does not exist).
    pub fn make_room(&self, doc: usize, bytes: usize, lines: usize) -> Option<Room> {
        self.corpus.docs().get(doc)?.make_room(bytes, lines)
    }

    /// Gives document `doc` the buffers of `room`; returns the buffers it
    /// replaced, to drop after the write lock.
    pub fn take_room(&mut self, doc: usize, room: Room) -> Room {
        self.corpus.take_room(doc, room)
    }

    /// Adds a document (a file that appeared in a followed directory)
    /// and returns its index. To grow later it must be empty or end with
    /// `\n` ([`Document::appendable`]).
    pub fn push_document(&mut self, doc: Document) -> Result<usize, Error> {
        self.corpus.push(doc);
        self.last_appended = Some(self.corpus.docs().len() - 1);
        self.grown()?;
        Ok(self.corpus.docs().len() - 1)
    }

    /// After the corpus grew: the columns extended, the GPUs brought up
    /// to date.
    fn grown(&mut self) -> Result<(), Error> {
        if let Some(c) = &mut self.columns {
            c.extend(&self.corpus);
        }
        #[cfg(feature = "gpu")]
        self.gpus_grown()?;
        Ok(())
    }

    /// The GPUs after the corpus grew. One device holding the whole
    /// corpus takes the new lines in place ([`crate::gpu::GpuCorpus::append`]:
    /// only the new bytes, line offsets and block hints are written). Its
    /// stats columns are dropped and uploaded again by the next stats
    /// request routed to the GPU: they are per-line times relative to the
    /// oldest time and per-line codes, laid out per segment, so an
    /// older appended time or a grown segment would need them rebuilt
    /// anyway; their upload is the columns only (8 + 4 x fields bytes a
    /// line), never the corpus. Shards over several devices or a host
    /// tier (a layout in line order of the whole corpus) are uploaded
    /// again with the same layout rule (DESIGN.md, "Follow"). A failed
    /// append or upload leaves the session on the CPU, never with a GPU
    /// that holds less than the corpus.
    #[cfg(feature = "gpu")]
    fn gpus_grown(&mut self) -> Result<(), Error> {
        if self.devices.is_empty() {
            return Ok(());
        }
        #[cfg(not(target_arch = "wasm32"))]
        if self.devices.len() == 1 && self.layout.is_none() {
            let d = &mut self.devices[0];
            *d.columns.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
            if let Err(e) = d.corpus.append(&self.corpus) {
                self.detach_gpu();
                return Err(Error::backend(format!(
                    "the GPU could not take the appended lines ({e}); searching on the CPU"
                )));
            }
            return Ok(());
        }
        self.gpus_uploaded_again()
    }

    /// The GPUs after the corpus grew, when the lines cannot be appended
    /// in place: the corpus uploaded again to the same devices with the
    /// same layout rule.
    #[cfg(feature = "gpu")]
    fn gpus_uploaded_again(&mut self) -> Result<(), Error> {
        let ctxs: Vec<crate::gpu::GpuContext> = self
            .devices
            .iter()
            .map(|d| d.corpus.context().clone())
            .collect();
        let several = ctxs.len() > 1 || self.layout.is_some();
        let calibration = self.calibration();
        // Several devices (shards, a host tier) exist natively only; the
        // browser holds one.
        #[cfg(not(target_arch = "wasm32"))]
        let res = if several {
            self.attach_gpus_with(&ctxs, self.upload_options, None)
        } else {
            self.attach_gpu_with(&ctxs[0], self.upload_options)
        };
        #[cfg(target_arch = "wasm32")]
        let res = {
            let _ = several;
            self.attach_gpu_with(&ctxs[0], self.upload_options)
        };
        // Attaching loads the device's calibration file again: keep what
        // this session has learned.
        *self
            .calibration
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = calibration;
        if let Err(e) = res {
            self.detach_gpu();
            return Err(Error::backend(format!(
                "the GPU could not take the appended lines ({e}); searching on the CPU"
            )));
        }
        Ok(())
    }
}
