//! Growing the resident corpus in place (`logsieve serve --follow`): new
//! lines go to the corpus (its bytes and line index), the stats columns
//! and the GPUs, through the session, so every front end keeps the one
//! route.

use super::Session;
use crate::corpus::{Document, Room};
use crate::error::Error;

impl Session {
    /// Appends `bytes` to document `doc` as its file grew (they continue
    /// a last line without a terminator, as in the file):
    /// its bytes and line index grow in place, the stats columns are
    /// extended over the new lines, and the GPUs hold them before this
    /// returns, so the next request sees all of them (a caller that
    /// shares the session serialises this with requests: the server holds
    /// its write lock). Returns the document's number of its first new
    /// line (0-based, counting lines evicted before: the number in the
    /// whole file, [`Document::first_line`]).
    pub fn append_lines(&mut self, doc: usize, bytes: &[u8]) -> Result<u64, Error> {
        // Bytes that continue a last line without a terminator change a
        // line the GPUs hold: they take the corpus again (a writer that
        // paused mid-line past the follower's idle time, or a file that
        // did not end in `\n` when loaded; whole lines append in place).
        let continued =
            !bytes.is_empty() && self.corpus.docs().get(doc).is_some_and(|d| !d.appendable());
        let first = self.corpus.append(doc, bytes)?;
        if !bytes.is_empty() {
            self.last_appended = Some(doc);
        }
        if continued {
            self.regrown()?;
        } else {
            self.grown(Some(doc))?;
        }
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
    /// and returns its index.
    pub fn push_document(&mut self, doc: Document) -> Result<usize, Error> {
        self.corpus.push(doc);
        self.last_appended = Some(self.corpus.docs().len() - 1);
        self.grown(None)?;
        Ok(self.corpus.docs().len() - 1)
    }

    /// After a line the GPUs hold changed: the columns extended, the
    /// corpus uploaded again.
    fn regrown(&mut self) -> Result<(), Error> {
        if let Some(c) = &mut self.columns {
            c.extend(&self.corpus);
        }
        #[cfg(feature = "gpu")]
        if !self.devices.is_empty() {
            return self.gpus_uploaded_again();
        }
        Ok(())
    }

    /// After the corpus grew (lines appended to document `doc`, or,
    /// `None`, a document added): the columns extended, the GPUs brought
    /// up to date.
    fn grown(&mut self, doc: Option<usize>) -> Result<(), Error> {
        if let Some(c) = &mut self.columns {
            c.extend(&self.corpus);
        }
        #[cfg(feature = "gpu")]
        self.gpus_grown(doc)?;
        #[cfg(not(feature = "gpu"))]
        let _ = doc;
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
    /// tier (a layout in line order of the whole corpus) take lines
    /// appended to the last document in place too (they continue the
    /// corpus's last part: [`Session::shards_grown`]); other growth is
    /// uploaded again with the same layout rule (DESIGN.md, "Follow"). A
    /// failed append or upload leaves the session on the CPU, never with
    /// a GPU that holds less than the corpus.
    #[cfg(feature = "gpu")]
    fn gpus_grown(&mut self, doc: Option<usize>) -> Result<(), Error> {
        if self.devices.is_empty() {
            return Ok(());
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(r) = doc.and_then(|d| self.shards_grown(d)) {
            return r;
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

    /// Shards after lines were appended to document `doc`, in place when
    /// they are the corpus's newest lines (`doc` is the last document):
    /// the last part of the layout takes them — a device appends them as
    /// one device holding everything does ([`crate::gpu::GpuCorpus::append_shard`]),
    /// the host tier needs nothing uploaded —, and the other devices
    /// note the document's new size. `None` when this cannot be done in
    /// place (another document grew, no layout, the taker is lost, or the
    /// GPU memory budget would be passed: uploading again lays the corpus
    /// out anew, older lines moving to the host).
    #[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
    fn shards_grown(&mut self, doc: usize) -> Option<Result<(), Error>> {
        use super::route::Place;
        let layout = self.layout.as_ref()?;
        let docs = self.corpus.docs();
        if doc + 1 != docs.len() {
            return None;
        }
        let last = layout.parts.last()?;
        let total_lines: u64 = docs.iter().map(|d| d.lines().len()).sum();
        let added_lines = total_lines.checked_sub(last.lines.end)?;
        let d = &docs[doc];
        let from = d.lines().len().checked_sub(added_lines)?;
        let added_bytes = d.data().len() as u64 - d.lines().starts()[from as usize];
        let taker = match last.place {
            Place::Device(k) => {
                let d = self.devices.get(k)?;
                if d.lost.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                    return None;
                }
                if let Some(budget) = self.tuning.gpu.gpu_memory {
                    let on = |f: fn(&super::route::LayoutPart) -> u64| -> u64 {
                        layout
                            .parts
                            .iter()
                            .filter(|p| p.place != Place::Host)
                            .map(f)
                            .sum()
                    };
                    let bytes = on(|p| p.bytes) + added_bytes;
                    let lines = on(|p| p.lines.end - p.lines.start) + added_lines;
                    if super::route::resident_cost(bytes, lines) > budget {
                        return None;
                    }
                }
                Some(k)
            }
            Place::Host => None,
        };
        for (k, d) in self.devices.iter_mut().enumerate() {
            *d.columns.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
            if let Err(e) = d.corpus.append_shard(&self.corpus, doc, Some(k) == taker) {
                self.detach_gpu();
                return Some(Err(Error::backend(format!(
                    "the GPU could not take the appended lines ({e}); searching on the CPU"
                ))));
            }
        }
        let last = self.layout.as_mut()?.parts.last_mut()?;
        last.lines.end += added_lines;
        last.bytes += added_bytes;
        Some(Ok(()))
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
        // the session has learned.
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
