// The page: controls, progress, the virtualised result list. The engines
// live elsewhere: the wasm engine for files opened in this tab in
// worker.js, and, when `logsieve serve` serves the page, the server's
// corpus behind its API (server.js); this thread only renders.

import { ServerEngine, Unauthorized, token, matchRow } from './server.js';

const $ = (id) => document.getElementById(id);
const ROW_H = 20;           // px, as --row in style.css
const BLOCK = 200;          // rows fetched from the worker at a time
const DEBOUNCE_MS = 120;
const ELIDE_AFTER = 80;      // chars before the first match shown in full
const HEAD_CHARS = 32;       // chars of a line's head kept when its middle is cut (the timestamp)

const params = new URLSearchParams(location.search);
// Lines the live view keeps (the oldest beyond it are dropped and counted);
// ?liveMax=N changes it (tests).
const LIVE_MAX = Math.max(1, Math.floor(Number(params.get('liveMax'))) || 2000);
// What serves this page (GET /page.json): a `logsieve serve` API beside
// it, the wasm engine, a token. A plain static server has no page.json:
// the wasm engine alone.
let pageInfo = { api: false, wasm: true, token: false };
try {
  const r = await fetch('page.json');
  if (r.ok) pageInfo = await r.json();
} catch (_) { /* not served by logsieve: the defaults */ }
const wantGpu = params.get('gpu') !== 'off';
// The header says where the logs are: on the server that served the page
// (its facts in #server), or in this tab only.
$('tagline').textContent = pageInfo.api
  ? 'searches the logs held by the server that served this page: queries go to it, the logs stay there'
  : 'files opened here stay in this tab: nothing is uploaded anywhere';
if (pageInfo.api) {
  $('server').hidden = false;
  $('server-origin').textContent = location.origin;
  // Files of one's own, beside the server's: only with the in-tab engine.
  $('tab-title').hidden = !pageInfo.wasm;
  // The server's corpus is one more engine, chosen by default.
  const o = document.createElement('option');
  o.value = 'server';
  o.textContent = 'server';
  $('engine-choice').prepend(o);
  $('engine-choice').value = 'server';
  $('engine-choice').title = 'server: the logs logsieve serve holds; auto / WebGPU / CPU: files opened in this tab';
}
if (['auto', 'gpu', 'cpu', ...(pageInfo.api ? ['server'] : [])].includes(params.get('backend'))) {
  $('engine-choice').value = params.get('backend');
}

// State the end-to-end test reads (window.__ls).
const st = {
  ready: false, loaded: false, gpu: null, files: [], info: null, upload: null,
  searchId: 0, result: null, resultQuery: null, rowsCache: new Map(), requested: new Set(),
  notices: [], progressSeen: { read: 0, upload: 0, generate: 0 },
  // Time range chosen by dragging on the histogram: [since, until) in Unix
  // ms, or null; `hist` is the last histogram's geometry.
  range: null, hist: null,
  // The server's corpus (null: no server behind this page).
  page: pageInfo,
  server: pageInfo.api ? { ready: false, health: null, error: null, span: null } : null,
  // The live view (a tail of the query on the server): `on` is the
  // toggle, `view` whether its list replaces the results, `status` the
  // stream's (off, connecting, open, invalid, refused, ended), `rows` the
  // received lines (the newest `max` are shown), `opened`/`closed` count
  // streams.
  live: {
    on: false, view: false, paused: false, status: 'off', rows: [], received: 0, unseen: 0,
    max: LIVE_MAX, files: 0, key: null, message: '', info: false, reason: '', endReason: null, opened: 0, closed: 0,
  },
};
window.__ls = st;

const server = pageInfo.api ? new ServerEngine() : null;
// True when the search box searches the server's corpus.
const onServer = () => !!server && $('engine-choice').value === 'server';
const canSearch = () => (onServer() ? st.server.ready : st.loaded);

let worker = null;
function startWorker() {
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  st.worker = worker;
  worker.onerror = (e) => fatal(`the engine worker failed: ${e.message || 'could not start (wasm not built?)'}`);
  worker.onmessage = onWorkerMessage;
  // ?maxSegment=BYTES splits the GPU corpus into smaller segments (tests;
  // larger corpora than one binding are split anyway).
  worker.postMessage({ type: 'init', wantGpu, maxSegment: Number(params.get('maxSegment')) || 0 });
}

function fatal(text) {
  addNotice(text, 'error');
  if (server) {
    // The server engine still answers.
    for (const o of $('engine-choice').options) o.disabled = o.value !== 'server';
    return;
  }
  $('engine').textContent = 'engine failed';
  document.body.dataset.state = 'failed';
}

function addNotice(text, level = 'warn', keep = false) {
  st.notices.push(text);
  const d = document.createElement('div');
  d.className = `notice ${level}`;
  if (keep) d.dataset.keep = '1';
  d.textContent = text;
  $('notices').append(d);
}

function clearNotices() {
  document.querySelectorAll('#notices .notice:not([data-keep])').forEach((n) => n.remove());
  st.notices = [...document.querySelectorAll('#notices .notice, #tab-note:not([hidden])')].map((n) => n.textContent);
}

// A quiet note in the in-tab section (what files of one's own can and
// cannot do here), kept; listed with the notices.
function tabNote(text) {
  $('tab-note').textContent = text;
  $('tab-note').hidden = false;
  st.notices.push(text);
}

const fmtInt = (n) => Number(n).toLocaleString('en-US');
const fmtBytes = (b) => b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${fmtInt(b)} B`;
const fmtMs = (ms) => ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;

function showEngine() {
  liveControls();
  const e = $('engine');
  if (onServer()) {
    const h = st.server.health;
    e.dataset.engine = 'server';
    e.textContent = h && h.status === 'ready'
      ? `logsieve serve · ${h.gpu ? `GPU ${h.gpu}` : 'CPU'}` : 'logsieve serve · loading';
    e.title = 'Queries go to the server that served this page (its /api/v1); its logs stay there.';
  } else if (st.gpu && st.gpu.state === 'ok') {
    e.dataset.engine = 'webgpu';
    const soft = st.gpu.info && st.gpu.info.type === 'Cpu';
    e.textContent = `WebGPU · ${st.gpu.adapter}${soft ? ' (software)' : ''}`;
    e.title = 'Literal, regex, wildcard and fuzzy queries run as WGSL compute kernels on this GPU; several patterns on the CPU engine in a Web Worker.';
  } else {
    e.dataset.engine = 'cpu';
    e.textContent = 'CPU engine (Web Worker)';
    e.title = st.gpu ? st.gpu.note : '';
  }
}

// ---- loading -------------------------------------------------------------

function setLoading(on) {
  $('demo').disabled = on || !worker;
  $('file').disabled = on || !worker;
  $('q').disabled = onServer() ? !st.server.ready : (on || !st.ready);
  $('progress').hidden = !on;
  document.body.dataset.state = on ? 'loading' : (canSearch() ? 'loaded' : 'ready');
}

const nFiles = (n) => `${fmtInt(n)} file${n === 1 ? '' : 's'}`;

// The server's facts (#server): what it holds and what searches it, from
// GET /api/v1/health (and the time span from the first /api/v1/stats).
function showServer() {
  if (!st.server) return;
  const h = st.server.health;
  let corpus = 'loading…';
  let backend = 'known once the server has loaded its logs';
  if (st.server.error && !(h && h.status === 'ready')) {
    corpus = st.server.error;
    backend = '';
  } else if (h && h.status === 'ready') {
    corpus = `${nFiles(h.files)} · ${fmtInt(h.lines)} lines · ${fmtBytes(h.bytes)}`;
    if (st.server.span) corpus += ` · ${st.server.span[0]} → ${st.server.span[1]}`;
    if (h.follow) corpus += ` · following ${nFiles(h.follow.files)}`;
    backend = h.backend === 'gpu'
      ? `gpu · ${h.gpu || 'GPU'} (the corpus is resident on it)`
      : `${h.backend || 'cpu'} · in memory, searched by the CPU engine`;
  } else if (!h && st.page.token && !token.get()) {
    corpus = 'the server wants its token (below)';
  } else if (h) {
    corpus = `loading (${h.phase}): ${nFiles(h.files)}, ${fmtBytes(h.bytes)} so far`;
  }
  $('server-corpus').textContent = corpus;
  $('server-backend').textContent = backend;
}

// The corpus line and the empty state follow the engine: the server's
// logs, or the files opened in this tab.
function showCorpus() {
  showServer();
  if (onServer()) {
    const h = st.server.health;
    $('corpus').textContent = h && h.status === 'ready'
      ? `Searching the server's ${fmtInt(h.lines)} lines (${nFiles(h.files)}).`
      : '';
    $('empty').hidden = st.server.ready;
    $('empty').textContent = st.server.error || 'The server is loading its logs…';
  } else {
    $('corpus').textContent = st.tabCorpus || '';
    $('empty').hidden = st.loaded;
    $('empty').textContent = worker
      ? 'Load logs to start: open files, drop them here, or use the demo data.'
      : 'This page has no in-browser engine (its WebAssembly is not built): search the server\'s logs (engine: server).';
  }
  showEngine();
}

function loadFiles(files) {
  if (!st.ready || !worker || !files.length) return;
  st.loaded = false;
  clearNotices();
  setLoading(true);
  st.loadStart = performance.now();
  st.progressSeen = { read: 0, upload: 0, generate: 0 };
  st.readEnd = 0;
  worker.postMessage({ type: 'load', files: [...files], upload: $('engine-choice').value === 'gpu' });
}

$('file').addEventListener('change', (e) => loadFiles(e.target.files));
$('demo').addEventListener('click', () => {
  if (!st.ready || !worker) return;
  st.loaded = false;
  clearNotices();
  setLoading(true);
  st.loadStart = performance.now();
  st.readEnd = 0;
  worker.postMessage({ type: 'demo', lines: Number($('demo-lines').value), upload: $('engine-choice').value === 'gpu' });
});

let dragDepth = 0;
window.addEventListener('dragenter', (e) => { e.preventDefault(); dragDepth++; document.body.classList.add('dragging'); });
window.addEventListener('dragleave', () => { if (--dragDepth <= 0) { dragDepth = 0; document.body.classList.remove('dragging'); } });
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => {
  e.preventDefault();
  dragDepth = 0;
  document.body.classList.remove('dragging');
  loadFiles(e.dataTransfer.files);
});

function progress(m) {
  st.progressSeen[m.phase] = (st.progressSeen[m.phase] || 0) + 1;
  if (m.phase === 'upload' && !st.readEnd) st.readEnd = performance.now();
  const frac = m.total > 0 ? Math.min(1, m.done / m.total) : 0;
  $('progress-fill').style.width = `${(frac * 100).toFixed(1)}%`;
  const what = { read: `Reading ${m.name || ''}`, upload: 'Uploading to the GPU', generate: 'Generating demo logs' }[m.phase];
  $('progress').hidden = false;
  $('progress-label').textContent = m.phase === 'generate'
    ? `${what}…`
    : `${what} — ${fmtBytes(m.done)} of ${fmtBytes(m.total)} (${(frac * 100).toFixed(0)}%)`;
}

function loaded(m) {
  st.loaded = true;
  st.range = null;
  st.files = m.files;
  st.info = m.info;
  st.upload = m.upload;
  st.gpu = m.gpu;
  st.loadMs = performance.now() - st.loadStart;
  // Files opened in the tab are what the user wants to search now.
  if (onServer()) $('engine-choice').value = 'auto';
  setLoading(false);
  const lines = m.files.reduce((s, f) => s + f.lines, 0);
  st.readMs = (st.readEnd || performance.now()) - st.loadStart;
  let text = `${m.files.length} file${m.files.length === 1 ? '' : 's'} · ${fmtInt(lines)} lines · ${fmtBytes(m.info.bytes)} · read in ${fmtMs(st.readMs)}`;
  text += uploadText(m.upload);
  text += ` · ready in ${fmtMs(st.loadMs)}`;
  st.tabCorpus = text;
  st.tabCorpusBase = text.replace(uploadText(m.upload), '');
  showCorpus();
  $('q').disabled = false;
  $('q').focus();
  if ($('q').value) schedule(0);
}

function uploadText(up) {
  if (up && up.ok) {
    return ` · resident on the GPU in ${up.segments} segment${up.segments === 1 ? '' : 's'} (upload ${fmtMs(up.ms)})`;
  }
  if (up && up.skipped) return ' · not uploaded to the software adapter (auto does not use it; choose WebGPU to upload)';
  return '';
}

// A later upload (the WebGPU engine chosen on a software adapter).
function uploaded(m) {
  st.upload = m.upload;
  st.gpu = m.gpu;
  $('progress').hidden = true;
  st.tabCorpus = (st.tabCorpusBase || st.tabCorpus || '') + uploadText(m.upload);
  showCorpus();
}

// ---- the server's corpus ------------------------------------------------------

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

function askToken(why) {
  $('token-form').hidden = false;
  $('token-why').textContent = why || 'This server wants its token (the first line of its --token-file); it is kept in this tab only.';
  $('token').focus();
}

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  token.set($('token').value.trim());
  $('token').value = '';
  $('token-form').hidden = true;
  connectServer();
});

async function connectServer() {
  if (st.page.token && !token.get()) {
    askToken();
    return;
  }
  try {
    let h = await server.fetchHealth();
    while (h.status !== 'ready') {
      st.server.health = h;
      showServer();
      $('progress').hidden = false;
      $('progress-fill').style.width = `${(100 * h.progress).toFixed(1)}%`;
      $('progress-label').textContent = `The server is loading its logs (${h.phase}) — ${fmtBytes(h.bytes)}, ${(100 * h.progress).toFixed(0)}%`;
      await sleep(300);
      h = await server.fetchHealth();
    }
    const s = await server.prepare();
    st.server.span = s.oldest && s.newest ? [s.oldest.utc, s.newest.utc] : null;
    st.server.health = h;
    st.server.ready = true;
    st.server.error = null;
    if (onServer()) $('progress').hidden = true;
    setLoading(false);
    showCorpus();
    if (onServer()) {
      $('q').focus();
      if ($('q').value) schedule(0);
    }
  } catch (e) {
    if (e instanceof Unauthorized) {
      token.clear();
      askToken('The server refused this token: type the first line of its --token-file.');
      return;
    }
    st.server.error = `The server does not answer (${e.message}).`;
    addNotice(st.server.error, 'error', true);
    showCorpus();
  }
}

// ---- searching -------------------------------------------------------------

function request() {
  const syntax = document.querySelector('input[name=syntax]:checked').value;
  return {
    patterns: $('q').value,
    syntax,
    fuzzy: Number($('fuzzy-k').value),
    ignoreCase: $('icase').checked,
    word: $('word').checked,
    invert: $('invert').checked,
    backend: $('engine-choice').value,
    ...(st.range ? { sinceMs: st.range[0], untilMs: st.range[1] } : {}),
  };
}

let timer = 0;
function schedule(delay = DEBOUNCE_MS) {
  clearTimeout(timer);
  timer = setTimeout(runSearch, delay);
}

function runSearch() {
  if (!canSearch()) return;
  const req = request();
  // A live view follows the query as it is edited.
  if (st.live.on && !liveUnavailable() && liveKey(req) !== st.live.key) liveRestart(req);
  if (req.patterns.replace(/[\r\n]+$/, '') === '') {
    st.result = null;
    st.resultQuery = null;
    $('qerror').hidden = true;
    $('count').textContent = '';
    $('latency').textContent = '';
    $('backend').textContent = '';
    $('hist').hidden = true;
    setRows(0);
    return;
  }
  const id = ++st.searchId;
  st.pending = { id, req, t0: performance.now() };
  document.body.dataset.state = 'searching';
  if (onServer()) {
    serverSearch(id, req);
  } else {
    worker.postMessage({ type: 'search', id, req });
  }
}

async function serverSearch(id, req) {
  try {
    const r = await server.search(req, (rows) => {
      // Rows on screen as they stream in (the count comes with the first).
      if (id !== st.searchId || !rows.length) return;
      st.result = null;
      st.rowsCache = new Map(rows.map((row) => [row.i, row]));
      st.requested = new Set([0]);
      st.rowsFrom = 'server';
      setRows(rows.length);
    });
    if (id !== st.searchId) return;
    result({ id, r, rows: r.firstRows });
  } catch (e) {
    if (id !== st.searchId || e.name === 'AbortError') return;
    if (e instanceof Unauthorized) {
      token.clear();
      askToken('The server refused this token: type the first line of its --token-file.');
    }
    result({ id, r: { ok: false, kind: e.status === 400 ? 'query' : (e.kind || 'server'), error: e.message } });
  }
}

$('q').addEventListener('input', () => {
  // One row per pattern, up to 6.
  $('q').rows = Math.min(6, $('q').value.split('\n').length);
  schedule();
});
$('q').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); schedule(0); }
});
for (const el of document.querySelectorAll('.opts input, .opts select')) {
  el.addEventListener('change', () => schedule(0));
}

function result(m) {
  if (m.id !== st.searchId) return; // a newer search is on its way
  const r = m.r;
  const roundTrip = performance.now() - st.pending.t0;
  document.body.dataset.state = 'done';
  if (!r.ok) {
    st.result = { ...r, id: m.id };
    st.resultQuery = st.pending.req;
    $('qerror').hidden = false;
    $('qerror').textContent = r.error;
    $('count').textContent = 'invalid pattern';
    $('latency').textContent = '';
    $('backend').textContent = '';
    $('hist').hidden = true;
    setRows(0);
    return;
  }
  $('qerror').hidden = true;
  st.result = { ...r, roundTripMs: roundTrip, id: m.id };
  st.resultQuery = st.pending.req;
  $('count').textContent = `${fmtInt(r.count)} matching line${r.count === 1 ? '' : 's'}`;
  const kernel = r.kernelMs != null ? ` (kernel ${fmtMs(r.kernelMs)})` : '';
  if (r.engine === 'server') {
    // The server's own search time, then what this tab waited for: the
    // count (response headers), and the first rows with the histogram.
    const own = r.searchMs != null ? `server search ${fmtMs(r.searchMs)} · ` : '';
    $('latency').textContent = `${own}count in ${fmtMs(r.headersMs)} · ${fmtMs(roundTrip)} with rows and histogram`;
    $('backend').textContent = `server · ${r.backend}`;
  } else {
    $('latency').textContent = `${fmtMs(r.ms)}${kernel} · ${fmtMs(roundTrip)} round trip`;
    $('backend').textContent = r.engine === 'WebGPU'
      ? `WebGPU ${r.backend.replace('gpu/', '')} kernel`
      : `CPU worker · ${r.backend.replace('cpu/', '')}`;
  }
  $('backend').title = r.reason;
  $('backend').dataset.engine = { WebGPU: 'webgpu', server: 'server' }[r.engine] || 'cpu';
  showHistogram(r.histogram, r.levels);
  st.rowsCache = new Map();
  st.requested = new Set([0]);
  st.rowsFrom = r.engine === 'server' ? 'server' : 'worker';
  m.rows.forEach((row) => st.rowsCache.set(row.i, row));
  setRows(r.rows);
  $('list').scrollTop = 0;
  render();
}

// ---- matches over time, and per level -----------------------------------------

const fmtTime = (ms) => new Date(ms).toISOString().replace('T', ' ').replace(/\.000Z$|Z$/, '');
function showHistogram(h, levels) {
  const box = $('hist');
  if (!h || !h.counts.length) { box.hidden = true; st.hist = null; return; }
  box.hidden = false;
  st.hist = h;
  const max = Math.max(1, ...h.counts);
  const bars = h.counts.map((n, i) => {
    const d = document.createElement('div');
    d.style.height = `${(100 * n / max).toFixed(1)}%`;
    d.title = `${fmtTime(h.start + i * h.bucket)}: ${fmtInt(n)}`;
    return d;
  });
  $('hist-bars').replaceChildren(...bars, $('hist-range'));
  $('hist-from').textContent = fmtTime(h.start);
  $('hist-to').textContent = fmtTime(h.start + h.counts.length * h.bucket);
  const sel = $('hist-range');
  if (st.range) {
    const span = h.counts.length * h.bucket;
    const a = Math.max(0, (st.range[0] - h.start) / span);
    const b = Math.min(1, (st.range[1] - h.start) / span);
    sel.style.left = `${(100 * a).toFixed(2)}%`;
    sel.style.width = `${(100 * Math.max(0, b - a)).toFixed(2)}%`;
    sel.hidden = false;
    $('hist-clear').hidden = false;
    $('hist-clear').textContent = `${fmtTime(st.range[0])} – ${fmtTime(st.range[1])} ✕`;
  } else {
    sel.hidden = true;
    $('hist-clear').hidden = true;
  }
  $('levels').replaceChildren(...(levels || []).slice(0, 6).map(([name, n]) => {
    const sp = document.createElement('span');
    sp.textContent = `${name} ${fmtInt(n)}`;
    return sp;
  }));
}

// ---- the virtualised list ----------------------------------------------------

function setRows(n) {
  st.rowCount = n;
  $('spacer').style.height = `${n * ROW_H}px`;
  render();
}

let rafPending = false;
$('list').addEventListener('scroll', () => {
  if (!rafPending) {
    rafPending = true;
    requestAnimationFrame(() => { rafPending = false; render(); });
  }
});
window.addEventListener('resize', () => render());

function render() {
  const list = $('list');
  const n = st.rowCount || 0;
  const first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - 10);
  const last = Math.min(n, Math.ceil((list.scrollTop + list.clientHeight) / ROW_H) + 10);
  const names = st.rowsFrom === 'server' ? st.server.health.files > 1 : st.files.length > 1;
  const frag = document.createDocumentFragment();
  for (let i = first; i < last; i++) {
    const row = st.rowsCache.get(i);
    if (!row) { want(i); continue; }
    frag.append(rowEl(row, names));
  }
  $('spacer').replaceChildren(frag);
}

function rowEl(row, names) {
  const d = document.createElement('div');
  d.className = 'row';
  d.style.top = `${row.i * ROW_H}px`;
  // The row's index, for tests: style.top reads back with 6 significant
  // digits ('2e+07px' for row 999,999).
  d.dataset.i = row.i;
  const ln = document.createElement('span');
  ln.className = 'ln';
  const name = row.name !== undefined ? row.name : (st.files[row.d] ? st.files[row.d].name : row.d);
  ln.textContent = names ? `${name}:${row.n}` : String(row.n);
  const tx = document.createElement('span');
  tx.className = 'tx';
  if (row.binary) {
    d.classList.add('binary');
    tx.textContent = 'binary file matches (line not shown)';
  } else {
    // A first match far along the line: the line's head (its timestamp)
    // stays, and the rest of the text before the match is shown cut from
    // the left ("…tail"), so the match is on screen. The DOM keeps the
    // whole text (copying a row copies the line).
    const first = row.p.findIndex(([, hit]) => hit);
    const before = first > 0 ? row.p.slice(0, first).reduce((n, [t]) => n + t.length, 0) : 0;
    const elide = before > ELIDE_AFTER;
    let headLeft = elide ? HEAD_CHARS : 0;
    let target = tx;
    row.p.forEach(([text0, hit], k) => {
      let text = text0;
      if (k === first) target = tx;
      if (elide && k < first) {
        if (headLeft > 0) {
          const head = text.slice(0, headLeft);
          tx.append(head);
          headLeft -= head.length;
          text = text.slice(head.length);
          if (!text) return;
        }
        if (target === tx) {
          const pre = document.createElement('span');
          pre.className = 'pre';
          target = document.createElement('span');
          target.dir = 'ltr';
          pre.append(target);
          tx.append(pre);
        }
      }
      if (hit) {
        const mk = document.createElement('mark');
        mk.textContent = text;
        target.append(mk);
      } else {
        target.append(text);
      }
    });
  }
  d.append(ln, tx);
  return d;
}

function want(i) {
  const start = Math.floor(i / BLOCK) * BLOCK;
  if (st.requested.has(start)) return;
  st.requested.add(start);
  if (st.rowsFrom === 'server') {
    const id = st.searchId;
    server.rows(st.resultQuery, start, BLOCK).then((rows) => {
      if (id !== st.searchId) return;
      rows.forEach((row) => st.rowsCache.set(row.i, row));
      render();
    }, (e) => addNotice(`Rows from the server failed: ${e.message}`, 'error'));
    return;
  }
  worker.postMessage({ type: 'rows', id: st.searchId, start, count: BLOCK });
}

// ---- worker messages -----------------------------------------------------------

function onWorkerMessage(ev) {
  const m = ev.data;
  switch (m.type) {
    case 'ready':
      st.ready = true;
      st.gpu = m.gpu;
      showCorpus();
      if (m.gpu.state !== 'ok') {
        addNotice(`No WebGPU here (${m.gpu.note}): searching with the CPU engine in a Web Worker; the page stays responsive.`, 'warn', true);
      }
      setLoading(false);
      break;
    case 'progress': progress(m); break;
    case 'loaded': loaded(m); break;
    case 'uploaded': uploaded(m); break;
    case 'result': result(m); break;
    case 'rows':
      if (m.id !== st.searchId) return;
      m.rows.forEach((row) => st.rowsCache.set(row.i, row));
      render();
      break;
    case 'notice': addNotice(m.text, m.level); break;
    case 'gpu': st.gpu = m.gpu; showEngine(); break;
    case 'fatal': fatal(m.text); break;
  }
}

// ---- time range: drag on the histogram, click ✕ (or Escape) to clear ---------

{
  const bars = $('hist-bars');
  let drag = null;
  // The time under a pointer, snapped to the bucket grid.
  const timeAt = (x) => {
    const h = st.hist;
    const r = bars.getBoundingClientRect();
    const f = Math.min(1, Math.max(0, (x - r.left) / Math.max(1, r.width)));
    const b = Math.round(f * h.counts.length);
    return h.start + b * h.bucket;
  };
  bars.addEventListener('pointerdown', (e) => {
    if (!st.hist) return;
    drag = { from: timeAt(e.clientX) };
    bars.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  bars.addEventListener('pointermove', (e) => {
    if (!drag || !st.hist) return;
    const t = timeAt(e.clientX);
    const span = st.hist.counts.length * st.hist.bucket;
    const [a, b] = [Math.min(drag.from, t), Math.max(drag.from, t)];
    const sel = $('hist-range');
    sel.hidden = false;
    sel.style.left = `${(100 * (a - st.hist.start) / span).toFixed(2)}%`;
    sel.style.width = `${(100 * (b - a) / span).toFixed(2)}%`;
  });
  bars.addEventListener('pointerup', (e) => {
    if (!drag || !st.hist) return;
    const t = timeAt(e.clientX);
    let [a, b] = [Math.min(drag.from, t), Math.max(drag.from, t)];
    // A click (no drag) selects the bucket under the pointer.
    if (a === b) {
      a = st.hist.start + Math.floor((a - st.hist.start) / st.hist.bucket) * st.hist.bucket;
      if (a >= st.hist.start + st.hist.counts.length * st.hist.bucket) a -= st.hist.bucket;
      b = a + st.hist.bucket;
    }
    drag = null;
    st.range = [a, b];
    schedule(0);
  });
  const clear = () => { if (st.range) { st.range = null; schedule(0); } };
  $('hist-clear').addEventListener('click', clear);
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') clear(); });
}

// ---- live: new matching lines as the server appends them ----------------------------
//
// A tail of the query (POST /api/v1/tail, server-sent events read by
// server.js) replaces the result list while it is on. Newest at the
// bottom, as `tail -f` prints them; the list follows the bottom unless it
// was scrolled up. The newest LIVE_MAX lines are kept, older ones dropped
// and counted. Pause freezes the list; lines still arrive, are kept (the
// same bound) and counted, and Resume shows them. Editing the query
// restarts the tail once the edits pause (LIVE_RESTART_MS; the list starts
// again: it follows the new query from now). One stream at most: a new one
// aborts the old first (an HTTP/1.1 page has 6 connections per server;
// leaked streams would stall every later fetch). The server frees a closed
// stream's slot (--max-tails) when it sees the connection close, a moment
// later, so a 429 is retried a few times (LIVE_RETRIES, ~3 s) before it is
// shown.

const LIVE_RESTART_MS = 250;
const LIVE_RETRIES = 5;
let liveCtl = null;  // the stream in flight
let liveSeq = 0;     // its number: events of an older stream are ignored
let liveTimer = 0;   // a render is pending
let liveRestartTimer = 0;

const liveKey = (req) => JSON.stringify([req.patterns, req.syntax, req.syntax === 'fuzzy' ? req.fuzzy : 0,
  req.ignoreCase, req.word, req.invert]);

// Why Live cannot run now ('' when it can).
function liveUnavailable() {
  if (!server) return 'Live follows the logs of a logsieve serve, and this page was not served by one (files opened in a tab do not grow).';
  if (!onServer()) return 'Live follows the server\'s logs: choose the engine "server".';
  if (!st.server.ready) return 'The server is still loading its logs.';
  return '';
}

function liveControls() {
  const L = st.live;
  const why = liveUnavailable();
  L.reason = why;
  const b = $('live');
  b.disabled = !!why && !L.on;
  b.title = why || (L.on ? 'Stop the live view (back to the search results)'
    : 'Show new lines that match the query as the server appends them (tail -f), newest at the bottom');
  b.setAttribute('aria-pressed', String(L.on));
  const p = $('live-pause');
  p.hidden = !(L.view && L.on);
  p.setAttribute('aria-pressed', String(L.paused));
  p.textContent = L.paused ? 'Resume' : 'Pause';
}

function liveShow(on) {
  $('live-list').hidden = !on;
  $('list').hidden = on;
  if (on) $('empty').hidden = true;
  else showCorpus();
}

function liveStatus() {
  const L = st.live;
  $('live-bar').hidden = !L.view;
  $('live-state').textContent = {
    off: '', connecting: 'Live: connecting…', open: L.paused ? 'Live: paused' : 'Live: following',
    invalid: 'Live: waiting for a valid query', refused: 'Live: refused', ended: 'Live: ended',
  }[L.status];
  const kept = Math.min(L.rows.length, L.max);
  $('live-count').textContent = `${fmtInt(L.received)} new matching line${L.received === 1 ? '' : 's'}`
    + (L.paused && L.unseen ? ` (${fmtInt(L.unseen)} since the pause)` : '');
  const dropped = L.received - kept;
  $('live-dropped').textContent = dropped
    ? `${fmtInt(dropped)} older line${dropped === 1 ? '' : 's'} dropped (the view keeps the newest ${fmtInt(L.max)})` : '';
  $('live-msg').textContent = L.message;
  $('live-msg').className = L.info ? 'info' : '';
  liveControls();
}

function liveMessage(text, info = false) {
  st.live.message = text;
  st.live.info = info;
}

function liveAbort() {
  liveSeq++;
  if (liveCtl) liveCtl.abort();
  liveCtl = null;
  clearTimeout(liveRestartTimer);
}

// The query changed under a running live view: the old stream closes now,
// the new one opens once the edits pause.
function liveRestart(req) {
  liveAbort();
  const L = st.live;
  Object.assign(L, { status: 'connecting', paused: false, rows: [], received: 0, unseen: 0, key: liveKey(req) });
  liveMessage('The query changed: following it from now.', true);
  $('live-list').replaceChildren();
  liveStatus();
  liveRestartTimer = setTimeout(() => liveStart(request(), true), LIVE_RESTART_MS);
}

// Opens the tail of `req` (after closing any other); `restart` when the
// query changed under a running live view; `attempt` counts 429 retries.
function liveStart(req, restart = false, attempt = 0) {
  liveAbort();
  const L = st.live;
  const seq = liveSeq;
  const ctl = new AbortController();
  liveCtl = ctl;
  Object.assign(L, { on: true, view: true, paused: false, status: 'connecting', rows: [], received: 0, unseen: 0,
    key: liveKey(req), endReason: null });
  liveMessage(restart ? 'The query changed: following it from now.' : '', true);
  L.opened++;
  $('live-list').replaceChildren();
  liveShow(true);
  liveStatus();
  const mine = () => seq === liveSeq;
  server.tail(req, ctl.signal, {
    ready: (r) => {
      if (!mine()) return;
      L.files = r.files;
      L.status = 'open';
      const h = st.server.health;
      if (h && !h.follow) {
        liveMessage('This server does not follow its files (it was started without --follow): no new lines will come from them.', true);
      } else if (!restart) {
        liveMessage('');
      }
      liveStatus();
    },
    match: (d) => { if (mine()) liveAdd(d); },
  }).then(({ end }) => {
    L.closed++;
    if (!mine()) return;
    liveCtl = null;
    L.on = false;
    L.status = 'ended';
    L.endReason = end ? end.reason : null;
    if (end && end.reason === 'until') liveMessage(`The live view ended: the logs' time passed ${end.until}.`);
    else if (end) liveMessage('The server is stopping: the live view ended.');
    else liveMessage('The server closed the live stream (it stopped, or the connection dropped).');
    renderLive();
  }, (e) => {
    L.closed++;
    if (!mine() || e.name === 'AbortError') return;
    liveCtl = null;
    if (e.status === 429 && attempt < LIVE_RETRIES) {
      // Perhaps our own stream, just closed, still holds its slot.
      liveRestartTimer = setTimeout(() => { if (mine()) liveStart(req, restart, attempt + 1); }, 200 * (attempt + 1));
      return;
    }
    if (e.status === 400) {
      // Stays on: the next edit of the query tries again.
      L.status = 'invalid';
      liveMessage(`Live cannot follow this query: ${e.message}`);
    } else {
      L.on = false;
      L.status = e.status || e instanceof Unauthorized ? 'refused' : 'ended';
      if (e instanceof Unauthorized) {
        token.clear();
        askToken('The server refused this token: type the first line of its --token-file.');
        liveMessage('The server wants its token: Live again once it is given.');
      } else if (e.status === 429) {
        liveMessage(`The server refused the live view: ${e.message}`);
      } else if (e.status === 503) {
        liveMessage('The server is still loading its logs: try Live again once it is ready.');
      } else if (e.status) {
        liveMessage(`The server refused the live view (HTTP ${e.status}): ${e.message}`);
      } else {
        liveMessage(`The live stream failed: ${e.message}`);
      }
    }
    liveStatus();
  });
}

// The user turns Live off: the stream is closed, the results come back
// (searched again: lines were appended meanwhile).
function liveStop(search = true) {
  liveAbort();
  Object.assign(st.live, { on: false, view: false, paused: false, status: 'off' });
  liveMessage('');
  liveShow(false);
  liveStatus();
  if (search) schedule(0);
}

function liveAdd(data) {
  const L = st.live;
  L.rows.push(matchRow(L.received, data));
  L.received++;
  if (L.received === 1 && /^The query changed/.test(L.message)) liveMessage('');
  if (L.paused) L.unseen++;
  // Trimmed in steps, not per line: what is shown is the newest `max`.
  if (L.rows.length > L.max + 256) L.rows.splice(0, L.rows.length - L.max);
  if (!liveTimer) liveTimer = setTimeout(renderLive, 30);
}

function renderLive() {
  clearTimeout(liveTimer);
  liveTimer = 0;
  const L = st.live;
  liveStatus();
  if (L.paused) return;
  const list = $('live-list');
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 2 * ROW_H;
  const shown = L.rows.slice(-L.max);
  const first = shown.length ? shown[0].i : Infinity;
  while (list.firstElementChild && Number(list.firstElementChild.dataset.seq) < first) list.firstElementChild.remove();
  const last = list.lastElementChild ? Number(list.lastElementChild.dataset.seq) : -1;
  const names = L.files > 1;
  const frag = document.createDocumentFragment();
  for (const row of shown) {
    if (row.i <= last) continue;
    const el = rowEl(row, names);
    el.style.top = '';
    el.dataset.seq = String(row.i);
    frag.append(el);
  }
  list.append(frag);
  if (atBottom) list.scrollTop = list.scrollHeight;
}

$('live').addEventListener('click', () => {
  if (st.live.on) liveStop();
  else if (!liveUnavailable()) liveStart(request());
});
$('live-pause').addEventListener('click', () => {
  const L = st.live;
  L.paused = !L.paused;
  if (!L.paused) L.unseen = 0;
  renderLive();
});

// ---- start -------------------------------------------------------------------------

$('engine-choice').addEventListener('change', () => {
  if (st.live.view && !onServer()) liveStop(false);
  setLoading(false);
  showCorpus();
  if (!canSearch()) {
    st.result = null;
    for (const id of ['count', 'latency', 'backend']) $(id).textContent = '';
    $('hist').hidden = true;
    setRows(0);
  }
});
if (pageInfo.wasm) {
  startWorker();
} else {
  const why = 'The in-browser engine is not built (the page\'s WebAssembly: scripts/build-web.sh)';
  if (server) {
    // Nothing is missing for the server's logs: a quiet note where files
    // of one's own would be opened.
    tabNote(`${why}, so files of your own cannot be opened in this tab.`);
  } else {
    addNotice(`${why}, so files cannot be opened in this tab.`, 'warn', true);
  }
  for (const o of $('engine-choice').options) o.disabled = o.value !== 'server';
  $('load').classList.add('no-wasm');
}
setLoading(false);
showCorpus();
if (server) connectServer();
