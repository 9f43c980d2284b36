/*!
logsieve in a browser tab: the same engine compiled to `wasm32-unknown-unknown`,
with the same WGSL kernels running on the user's GPU through WebGPU.

# Overview

The page (`www/`) runs this module in a Web Worker (`www/worker.js`), so that
loading, indexing and CPU searches never freeze the page. [`Sieve`] is the
worker's handle on the engine:

* loading: [`Sieve::begin_file`], [`Sieve::append`] (chunks of a few MB, so
  that a file of hundreds of MB streams in with a progress bar; gzip is
  sniffed and decompressed as it streams), [`Sieve::end_file`];
  [`Sieve::generate`] makes demo logs (the CLI's `gen`);
* WebGPU: [`Sieve::gpu_init`] (adapter, device, every kernel compiled),
  [`Sieve::gpu_upload`] (the resident corpus, with progress);
* searching: [`Sieve::search`] answers with the count, the backend that
  answered and the latency; [`Sieve::rows`] gives only the rows the list
  shows, with the matches cut out for highlighting.

Requests and answers are JSON strings: the page parses a few hundred bytes
per call, and the Rust side has no JavaScript types outside this file.

# Features

Always built with the GPU backend; without WebGPU in the browser,
[`Sieve::gpu_init`] says why and every search runs on the CPU engine.
*/
#![deny(missing_docs)]

pub mod engine;
mod histogram;
pub mod probe;

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use logsieve::gpu::{GpuContext, GpuCorpus, UploadOptions};
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

pub use engine::{Request, WebEngine};

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: present in windows and workers alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn js_now() -> f64;

    /// `console.error`.
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(s: &str);
}

/// A panic in wasm traps with "unreachable" and nothing else; print its
/// message first, so that a bug says what it is.
fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| console_error(&format!("logsieve: {info}"))));
        });
    }
}

/// Measures the adapter and the CPU after an upload ([`probe::probe`]) and
/// routes by what they measured; a software adapter is not probed (auto
/// never uses it). JSON for the upload's answer: each side's time, or why
/// there is none.
async fn probe(e: &Rc<RefCell<WebEngine>>, corpus: Rc<logsieve::Corpus>) -> serde_json::Value {
    let (g, class) = {
        let b = e.borrow();
        (b.gpu_corpus(), b.gpu_class())
    };
    let Some(g) = g else {
        return json!({"skipped": "no resident corpus"});
    };
    if class == Some(logsieve::planner::DeviceClass::Software) {
        return json!({"skipped": "a software adapter"});
    }
    match probe::probe(g, corpus.clone()).await {
        Ok(m) => {
            let mut b = e.borrow_mut();
            if !Rc::ptr_eq(&b.corpus(), &corpus) {
                return json!({"skipped": "the corpus changed during the probe"});
            }
            b.adopt_probe(&m);
            let c = b.calibration();
            json!({
                "cpuBytes": m[0].bytes,
                "cpuMs": m[0].seconds * 1e3,
                "gpuBytes": m[1].bytes,
                "gpuMs": m[1].seconds * 1e3,
                "cpuGbps": c.cpu_gbps,
                "gpuLatencyMs": c.gpu_latency_ms,
                "crossoverBytes": c.crossover_bytes,
            })
        }
        Err(err) => json!({"error": err}),
    }
}

/// The engine as JavaScript sees it.
#[wasm_bindgen]
pub struct Sieve {
    e: Rc<RefCell<WebEngine>>,
}

impl Default for Sieve {
    fn default() -> Self {
        Sieve::new()
    }
}

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[wasm_bindgen]
impl Sieve {
    /// An empty engine.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Sieve {
        install_panic_hook();
        let mut e = WebEngine::new();
        e.set_year(js_sys::Date::new_0().get_full_year() as i32);
        Sieve {
            e: Rc::new(RefCell::new(e)),
        }
    }

    /// Starts loading a file of (about) `size_hint` bytes.
    pub fn begin_file(&self, name: &str, size_hint: f64) {
        let hint = if size_hint.is_finite() && size_hint > 0.0 {
            size_hint.min(4e9) as usize
        } else {
            0
        };
        self.e.borrow_mut().begin_file(name, hint);
    }

    /// Appends a chunk of the file being loaded.
    pub fn append(&self, chunk: &[u8]) -> Result<(), JsError> {
        self.e.borrow_mut().append(chunk).map_err(js_err)
    }

    /// Ends the file; returns its summary (JSON: name, bytes, lines, gzip,
    /// binaryAt).
    pub fn end_file(&self) -> Result<String, JsError> {
        self.e.borrow_mut().end_file().map_err(js_err)
    }

    /// Adds `lines` generated demo lines; returns their summary (JSON).
    pub fn generate(&self, lines: f64, seed: f64) -> Result<String, JsError> {
        if !(lines.is_finite() && (1.0..=2e7).contains(&lines)) {
            return Err(js_err("demo lines: 1 to 20,000,000"));
        }
        let seed = if seed.is_finite() {
            seed.abs() as u64
        } else {
            42
        };
        self.e
            .borrow_mut()
            .generate(lines as u64, seed)
            .map_err(js_err)
    }

    /// Forgets every document.
    pub fn clear(&self) {
        self.e.borrow_mut().clear();
    }

    /// The corpus in numbers (JSON).
    pub fn info(&self) -> String {
        self.e.borrow().info()
    }

    /// Opens WebGPU: resolves to JSON `{"ok":true,"adapter":…,"limits":…}`,
    /// or `{"ok":false,"error":…}` when this browser has no WebGPU, no
    /// adapter, or limits too small for the kernels.
    pub fn gpu_init(&self) -> Promise {
        let e = self.e.clone();
        future_to_promise(async move {
            let out = match GpuContext::new_async().await {
                Ok(ctx) => {
                    let i = ctx.info();
                    let v = json!({
                        "ok": true,
                        "adapter": i.name,
                        "type": i.device_type,
                        "backend": i.backend,
                        "driver": i.driver,
                        "maxStorageBufferBindingSize": i.max_storage_buffer_binding_size,
                        "maxBufferSize": i.max_buffer_size,
                        "timestamps": i.timestamps,
                    });
                    e.borrow_mut().set_gpu_context(Some(ctx));
                    v
                }
                Err(err) => json!({"ok": false, "error": err.to_string()}),
            };
            Ok(JsValue::from_str(&out.to_string()))
        })
    }

    /// Uploads the corpus to the GPU, calling `progress(done, total)` (bytes)
    /// as staging chunks go out. Resolves to JSON `{"ok":true,…}` or
    /// `{"ok":false,"error":…,"lost":bool}` (out of GPU memory, device
    /// lost): the page then searches on the CPU and says why.
    ///
    /// `max_segment` bounds a segment in bytes (0: the adapter's binding
    /// limit); a corpus larger than one binding is always split.
    pub fn gpu_upload(&self, progress: js_sys::Function, max_segment: f64) -> Promise {
        let max_segment =
            (max_segment.is_finite() && max_segment >= 1.0).then_some(max_segment as u64);
        let e = self.e.clone();
        future_to_promise(async move {
            let (ctx, corpus) = {
                let b = e.borrow();
                (b.gpu_context(), b.corpus())
            };
            let Some(ctx) = ctx else {
                let v = json!({"ok": false, "error": "no WebGPU device", "lost": false});
                return Ok(JsValue::from_str(&v.to_string()));
            };
            let t0 = engine::now_ms();
            let mut report = |done: u64, total: u64| {
                let _ = progress.call2(
                    &JsValue::NULL,
                    &JsValue::from_f64(done as f64),
                    &JsValue::from_f64(total as f64),
                );
            };
            let opts = UploadOptions {
                max_segment,
                ..Default::default()
            };
            let res = GpuCorpus::upload_async(&ctx, &corpus, opts, &mut report).await;
            let ms = engine::now_ms() - t0;
            let out = match res {
                Ok(g) => {
                    // The page shows each query's kernel time.
                    g.set_timestamps(true);
                    let mut v = json!({
                        "ok": true,
                        "segments": g.segment_count(),
                        "residentBytes": g.resident_bytes(),
                        "ms": ms,
                        "stagingMs": g.upload_time().as_secs_f64() * 1e3,
                    });
                    let fresh = {
                        let mut b = e.borrow_mut();
                        // Loaded more (or cleared) meanwhile: this upload is stale.
                        let fresh = Rc::ptr_eq(&b.corpus(), &corpus);
                        if fresh {
                            b.set_gpu_corpus(Some(g));
                        }
                        fresh
                    };
                    if fresh {
                        v["probe"] = probe(&e, corpus).await;
                        v
                    } else {
                        json!({"ok": false, "error": "the corpus changed during the upload", "lost": false})
                    }
                }
                Err(err) => {
                    let lost = ctx.is_lost();
                    if lost {
                        e.borrow_mut().set_gpu_context(None);
                    }
                    json!({"ok": false, "error": err.to_string(), "lost": lost})
                }
            };
            Ok(JsValue::from_str(&out.to_string()))
        })
    }

    /// True when the corpus is resident on the GPU.
    pub fn has_gpu(&self) -> bool {
        self.e.borrow().has_gpu()
    }

    /// Destroys the GPU device (tests of the page's device-loss handling).
    pub fn gpu_destroy(&self) {
        if let Some(c) = self.e.borrow().gpu_context() {
            c.destroy_device();
        }
    }

    /// Runs a search (JSON request: patterns, syntax, fuzzy, ignoreCase,
    /// word, invert, backend, kernel). Resolves to the JSON summary: count,
    /// rows, per-document counts, backend, engine, reason, ms, kernelMs, storeMs,
    /// gpuLost; or `{"ok":false,"kind":"query","error":…}` for a pattern
    /// that does not compile (the page shows it inline).
    pub fn search(&self, request: &str) -> Promise {
        let prepared = Request::from_json(request)
            .map_err(|e| json!({"ok": false, "kind": "request", "error": e}).to_string())
            .and_then(|r| self.e.borrow().prepare(&r));
        let p = match prepared {
            Ok(p) => p,
            Err(j) => return Promise::resolve(&JsValue::from_str(&j)),
        };
        let e = self.e.clone();
        future_to_promise(async move {
            let o = engine::run(p).await;
            let s = e.borrow_mut().store(o);
            Ok(JsValue::from_str(&s))
        })
    }

    /// Rows `start..start+n` of the last answer (JSON; see
    /// [`WebEngine::rows`]).
    pub fn rows(&self, start: f64, n: f64) -> String {
        let clamp = |x: f64| {
            if x.is_finite() && x > 0.0 {
                x as u64
            } else {
                0
            }
        };
        self.e.borrow().rows(clamp(start), clamp(n).min(10_000))
    }
}
