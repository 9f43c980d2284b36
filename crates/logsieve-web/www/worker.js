// The engine's thread: the wasm module, the corpus, WebGPU when the browser
// has it. Everything that takes time (reading files, gunzip, line index,
// GPU upload, CPU searches) happens here, so the page never freezes.
//
// Messages in:  {type:'init', wantGpu}, {type:'load', files, upload}, {type:'demo', lines, upload}
//               (upload: upload even to a software adapter),
//               {type:'search', id, req}, {type:'rows', id, start, count},
//               {type:'gpu-destroy'} (tests of device loss)
// Messages out: {type:'ready', gpu}, {type:'progress', phase, done, total, name},
//               {type:'loaded', files, info, upload, gpu}, {type:'uploaded', upload, gpu},
//               {type:'result', id, r, rows},
//               {type:'rows', id, start, rows}, {type:'notice', level, text},
//               {type:'gpu', gpu}, {type:'fatal', text}

import init, { Sieve } from './pkg/logsieve_web.js';

// 8 MiB per read: large enough that per-chunk overhead vanishes, small
// enough that progress moves and memory never holds a second copy of a file.
const CHUNK = 8 << 20;

let sieve = null;
// state: 'ok' (device and kernels ready), 'none' (no WebGPU), 'lost'
let gpu = { state: 'none', note: 'starting' };
let busy = Promise.resolve();
let latestSearch = 0;
let maxSegment = 0; // bytes per GPU segment; 0: the adapter's binding limit
let lastResultId = 0;

const post = (m) => self.postMessage(m);
const notice = (text, level = 'warn') => post({ type: 'notice', level, text });

// One operation at a time: wgpu's resident corpus and the engine are not
// re-entrant, and a search must see a complete corpus.
function serial(fn) {
  busy = busy.then(fn).catch((e) => notice(String(e && e.message || e), 'error'));
  return busy;
}

async function initGpu(wantGpu) {
  if (!wantGpu) {
    gpu = { state: 'none', note: 'WebGPU turned off for this page (?gpu=off)' };
  } else if (!('gpu' in navigator)) {
    gpu = { state: 'none', note: 'this browser has no WebGPU (navigator.gpu is missing)' };
  } else {
    let r = JSON.parse(await sieve.gpu_init());
    // Chromium 156 on Linux with Vulkan (NVIDIA H200, 2026-12-01) answers
    // the first requestAdapter of a fresh browser with null and the next
    // one with the GPU: ask once more before saying there is none.
    if (!r.ok && /no GPU adapter found/.test(r.error)) {
      r = JSON.parse(await sieve.gpu_init());
      if (r.ok) r.retried = true;
    }
    if (r.ok) {
      // wgpu leaves the name empty on the web; the browser's own info has
      // the vendor and architecture (e.g. google / swiftshader).
      let name = r.adapter;
      try {
        const a = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
        if (a && a.info) name = name || [a.info.vendor, a.info.architecture, a.info.description].filter(Boolean).join(' ');
      } catch (_) { /* the name is cosmetic */ }
      gpu = { state: 'ok', adapter: name || r.type || 'WebGPU adapter', info: r };
    } else {
      const none = /no GPU adapter found/.test(r.error);
      gpu = { state: 'none', note: none ? 'WebGPU offers no adapter in this browser' : r.error };
    }
  }
  return gpu;
}

// A software adapter (SwiftShader, lavapipe: wgpu's device type `Cpu`) is
// never chosen by auto (its scan: 0.3-0.4 s over 48.5 MB, the worker's CPU
// 10-37 ms), and uploading to it took 4-7 s for nothing: it is uploaded to
// only when WebGPU is chosen by hand (at load, or on the first search).
const software = () => gpu.state === 'ok' && gpu.info && gpu.info.type === 'Cpu';
let uploadedFor = null; // the corpus generation the last upload attempt was for
let generation = 0;

async function upload() {
  if (gpu.state !== 'ok') return null;
  uploadedFor = generation;
  post({ type: 'progress', phase: 'upload', done: 0, total: 1 });
  const r = JSON.parse(await sieve.gpu_upload((done, total) =>
    post({ type: 'progress', phase: 'upload', done, total }), maxSegment));
  if (!r.ok) {
    if (r.lost) {
      gpu = { state: 'lost', note: 'the GPU device was lost during the upload' };
    } else {
      gpu = { ...gpu, note: r.error };
    }
    notice(`GPU upload failed (${r.error}): searching on the CPU engine instead.`);
  }
  return r;
}

async function finishLoad(files) {
  for (const f of files) {
    if (f.binaryAt !== null && f.binaryAt !== undefined) {
      notice(`${f.name} looks binary (NUL byte at offset ${f.binaryAt}): its matches are counted, its lines are not shown.`);
    }
  }
  generation++;
  const up = software() && !wantUpload
    ? { ok: false, skipped: true, error: 'a software adapter: auto does not use it' }
    : await upload();
  post({ type: 'loaded', files, info: JSON.parse(sieve.info()), upload: up, gpu });
}

let wantUpload = false;

async function load(files) {
  sieve.clear();
  const total = files.reduce((s, f) => s + f.size, 0);
  let done = 0;
  const out = [];
  for (const f of files) {
    sieve.begin_file(f.name, f.size);
    let ok = true;
    for (let off = 0; off < f.size; off += CHUNK) {
      const buf = new Uint8Array(await f.slice(off, off + CHUNK).arrayBuffer());
      try {
        sieve.append(buf);
      } catch (e) {
        notice(`${f.name}: ${e.message}`, 'error');
        ok = false;
        break;
      }
      done += buf.length;
      post({ type: 'progress', phase: 'read', done, total, name: f.name });
    }
    if (!ok) {
      done += f.size;
      continue;
    }
    try {
      out.push(JSON.parse(sieve.end_file()));
    } catch (e) {
      notice(`${f.name}: ${e.message}`, 'error');
    }
  }
  await finishLoad(out);
}

async function search(id, req) {
  if (id !== latestSearch) return; // typed on: a newer search supersedes this one
  let r;
  let rows = [];
  // WebGPU chosen on a software adapter not uploaded to yet: upload now.
  if (req.backend === 'gpu' && gpu.state === 'ok' && uploadedFor !== generation && !sieve.has_gpu()) {
    const up = await upload();
    post({ type: 'uploaded', upload: up, gpu });
  }
  try {
    r = JSON.parse(await sieve.search(JSON.stringify(req)));
    if (r.ok) {
      const t = performance.now();
      rows = JSON.parse(sieve.rows(0, 200));
      r.rowsMs = performance.now() - t;
    }
  } catch (e) {
    // A bug in the engine (a wasm trap): say so instead of never answering.
    r = { ok: false, kind: 'internal', error: `the engine failed: ${e.message || e}` };
    notice(`The search engine failed (${e.message || e}); reload the page.`, 'error');
  }
  lastResultId = id;
  post({ type: 'result', id, r, rows });
  if (r.ok && r.gpuLost) {
    gpu = { state: 'lost', note: 'the GPU device was lost' };
    notice('The GPU device was lost: this answer came from the CPU engine. Re-creating the device and re-uploading…');
    post({ type: 'gpu', gpu });
    serial(recover);
  }
}

async function recover() {
  await initGpu(true);
  if (gpu.state !== 'ok') {
    notice(`WebGPU could not be restarted (${gpu.note}): staying on the CPU engine.`);
  } else {
    const r = await upload();
    notice(r && r.ok ? 'WebGPU restarted and the corpus re-uploaded.' : 'WebGPU restarted, but the upload failed: CPU engine.');
  }
  post({ type: 'gpu', gpu });
}

self.onmessage = (ev) => {
  const m = ev.data;
  switch (m.type) {
    case 'init':
      serial(async () => {
        try {
          await init();
        } catch (e) {
          post({ type: 'fatal', text: `the engine could not start: ${e.message || e}` });
          return;
        }
        sieve = new Sieve();
        maxSegment = m.maxSegment || 0;
        await initGpu(m.wantGpu);
        post({ type: 'ready', gpu });
      });
      break;
    case 'load':
      wantUpload = !!m.upload;
      serial(() => load(m.files));
      break;
    case 'demo':
      wantUpload = !!m.upload;
      serial(async () => {
        sieve.clear();
        post({ type: 'progress', phase: 'generate', done: 0, total: 1 });
        const f = JSON.parse(sieve.generate(m.lines, 42));
        post({ type: 'progress', phase: 'generate', done: 1, total: 1 });
        await finishLoad([f]);
      });
      break;
    case 'search':
      latestSearch = m.id;
      serial(() => search(m.id, m.req));
      break;
    case 'rows':
      serial(async () => {
        if (m.id !== lastResultId) return;
        post({ type: 'rows', id: m.id, start: m.start, rows: JSON.parse(sieve.rows(m.start, m.count)) });
      });
      break;
    case 'gpu-destroy':
      serial(async () => sieve.gpu_destroy());
      break;
  }
};
