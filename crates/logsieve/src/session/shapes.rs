//! Lines grouped by shape for the template miner ([`crate::patterns`]):
//! the one place that decides where. On the GPU when one device holds
//! the whole corpus (two passes over the picked lines' segments,
//! `patterns/gpu.rs`), else on every core ([`shape::group`]); the groups
//! are the same either way.

use super::Session;
use crate::error::Error;
use crate::options::BackendChoice;
use crate::patterns::shape::{self, Shapes};

/// Lines grouped by shape, and where.
#[derive(Clone, Debug)]
pub struct Grouped {
    /// The groups ([`shape::group`]'s over the picked lines in order).
    pub shapes: Shapes,
    /// `gpu` or `cpu`.
    pub backend: &'static str,
    /// Why the CPU grouped them where a GPU is attached.
    pub note: Option<String>,
}

impl Session {
    /// Groups `picked` — per document, in the order given, its line
    /// numbers in ascending order — by shape, as [`shape::group`] groups
    /// those lines: `first` and `of_line` index them in that order. Where
    /// `backend` allows, on the GPU holding the whole corpus; an error on
    /// the GPU falls back to the CPU under [`BackendChoice::Auto`].
    pub fn group_shapes(
        &self,
        picked: &[(usize, Vec<u64>)],
        backend: BackendChoice,
    ) -> Result<Grouped, Error> {
        let mut note = None;
        if backend != BackendChoice::Cpu {
            match self.group_shapes_on_gpu(picked) {
                Ok(Ok(shapes)) => {
                    return Ok(Grouped {
                        shapes,
                        backend: "gpu",
                        note: None,
                    })
                }
                Ok(Err(why)) | Err(why) if backend == BackendChoice::Gpu => {
                    return Err(Error::backend(format!(
                        "the GPU cannot group these lines: {why}"
                    )))
                }
                Ok(Err(why)) | Err(why) => note = Some(why),
            }
        }
        let corpus = self.corpus();
        let lines: Vec<&[u8]> = picked
            .iter()
            .flat_map(|(d, ls)| {
                let doc = &corpus.docs()[*d];
                ls.iter().map(move |&l| doc.line(l))
            })
            .collect();
        Ok(Grouped {
            shapes: shape::group(&lines),
            backend: "cpu",
            note,
        })
    }

    /// The GPU's groups; `Ok(Err(why))` where it leaves them to the CPU.
    #[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
    fn group_shapes_on_gpu(
        &self,
        picked: &[(usize, Vec<u64>)],
    ) -> Result<Result<Shapes, String>, String> {
        let dev = match (self.devices.first(), &self.layout) {
            (None, _) => return Ok(Err("no GPU is attached".into())),
            (Some(_), Some(_)) => {
                return Ok(Err("the corpus is spread over several places".into()))
            }
            (Some(d), None) if d.gone() => return Ok(Err("the GPU was lost".into())),
            (Some(d), None) => d,
        };
        let k = dev
            .shapes
            .get_or_init(|| crate::patterns::gpu::ShapeKernels::new(&dev.corpus));
        match crate::patterns::gpu::group(k, &dev.corpus, self.corpus(), picked) {
            Ok(r) => Ok(r.map_err(|why| why.to_string())),
            Err(e) => {
                dev.note_failure(&e);
                Err(e.to_string())
            }
        }
    }

    #[cfg(not(all(feature = "gpu", not(target_arch = "wasm32"))))]
    fn group_shapes_on_gpu(
        &self,
        _: &[(usize, Vec<u64>)],
    ) -> Result<Result<Shapes, String>, String> {
        Ok(Err("built without native GPU support".into()))
    }
}
