// See kernels.html.
import init, { Sieve } from './pkg/logsieve_web.js';

const q = new URLSearchParams(location.search);
const num = (k, d) => (q.has(k) ? Number(q.get(k)) : d);
const LINES = num('lines', 100000), SEED = num('seed', 7), SEGMENT = num('segment', 16 << 20);
const BENCH = num('benchLines', 1000000), REPS = num('reps', 5);
const out = { params: { LINES, SEED, SEGMENT, BENCH, REPS }, ua: navigator.userAgent };
const progress = (s) => {
  console.log('STEP ' + s);
  fetch('/progress', { method: 'POST', body: s }).catch(() => {});
  fetch('/partial', { method: 'POST', body: JSON.stringify(out) }).catch(() => {});
};

const LIT = ['brute-line', 'brute-byte', 'two-phase', 'scan', 'signature'];
const MULTI = ['trie', 'ac', 'prefix-hash', 'bloom'];
const CASES = [
  ...['ERROR_503', '192.168.1', 'error', 'NullPointerException', 'x', 'e', 'GET /api', 'zzzqqq-none'].map(
    (p) => ({ name: p, req: { patterns: p }, kernels: LIT })),
  { name: '-i error', req: { patterns: 'error', ignoreCase: true }, kernels: LIT },
  { name: '-w error', req: { patterns: 'error', word: true }, kernels: LIT },
  { name: '-v ERROR_503', req: { patterns: 'ERROR_503', invert: true }, kernels: LIT },
  { name: 'multi 3', req: { patterns: 'ERROR_503\nNullPointerException\n192.168.1' }, kernels: MULTI },
  { name: 'multi 3 -i', req: { patterns: 'error_503\nnullpointerexception\nTIMEOUT', ignoreCase: true }, kernels: MULTI },
  { name: 'regex ERROR_50[0-4] .*timeout', req: { patterns: 'ERROR_50[0-4] .*timeout', syntax: 'regex' }, kernels: ['shift-and'] },
  { name: 'regex (GET|POST) /api/v[0-9]', req: { patterns: '(GET|POST) /api/v[0-9]', syntax: 'regex' }, kernels: ['shift-and'] },
  { name: 'wildcard GET /api/*/orders', req: { patterns: 'GET /api/*/orders', syntax: 'wildcard' }, kernels: ['shift-and'] },
  { name: 'fuzzy-1 NullPointerExeption', req: { patterns: 'NullPointerExeption', syntax: 'fuzzy', fuzzy: 1 }, kernels: ['bitap'] },
  { name: 'fuzzy-2 connection refused', req: { patterns: 'conection refusd', syntax: 'fuzzy', fuzzy: 2 }, kernels: ['bitap'] },
];

// Every matching line number of the last answer (rows in pages of 10,000),
// as a count and an FNV-1a hash, plus the first few.
function lineIds(s, count) {
  let h = 0x811c9dc5, n = 0;
  const first = [];
  for (let start = 0; start < count; start += 10000) {
    for (const r of JSON.parse(s.rows(start, 10000))) {
      h = Math.imul(h ^ r.n, 16777619) >>> 0;
      h = Math.imul(h ^ r.d, 16777619) >>> 0;
      if (first.length < 5) first.push(r.n);
      n++;
    }
  }
  return { n, hash: h.toString(16), first };
}

async function search(s, req) {
  const t0 = performance.now();
  const r = JSON.parse(await s.search(JSON.stringify(req)));
  r.e2eMs = performance.now() - t0;
  return r;
}

async function check(s, label) {
  const rows = [];
  let bad = 0, fellBack = 0;
  for (const c of CASES) {
    const cpu = await search(s, { ...c.req, backend: 'cpu' });
    const ref = lineIds(s, cpu.count);
    for (const k of c.kernels) {
      const g = await search(s, { ...c.req, backend: 'gpu', kernel: k });
      const ids = g.ok ? lineIds(s, g.count) : null;
      const same = g.ok && g.count === cpu.count && ids.n === ref.n && ids.hash === ref.hash;
      const onGpu = g.ok && g.backend === 'gpu/' + k;
      if (!same) bad++;
      if (!onGpu) fellBack++;
      rows.push({ case: c.name, kernel: k, cpuCount: cpu.count, gpuCount: g.count, same, backend: g.backend,
                  reason: g.reason, kernelMs: g.kernelMs, ms: g.ms, error: g.ok ? undefined : g.error });
    }
  }
  progress(`${label}: ${rows.length} comparisons, ${bad} differ, ${fellBack} not on the asked kernel`);
  return { label, comparisons: rows.length, differ: bad, notOnKernel: fellBack, rows };
}

const median = (a) => { const b = [...a].sort((x, y) => x - y); return b[b.length >> 1]; };

async function main() {
  progress('init');
  await init();
  const s = new Sieve();
  out.gen = JSON.parse(s.generate(LINES, SEED));
  const a = await navigator.gpu?.requestAdapter({ powerPreference: 'high-performance' });
  out.adapterInfo = a && a.info ? { vendor: a.info.vendor, architecture: a.info.architecture, device: a.info.device, description: a.info.description } : null;
  out.gpuInit = JSON.parse(await s.gpu_init());
  progress('gpu_init ' + JSON.stringify(out.gpuInit));
  if (!out.gpuInit.ok) return;
  out.upload = JSON.parse(await s.gpu_upload(() => {}, 0));
  progress('upload ' + JSON.stringify(out.upload));
  out.checks = [];
  if (out.upload.ok) out.checks.push(await check(s, `${LINES} lines, one segment per binding limit`));
  if (SEGMENT > 0) {
    out.uploadSplit = JSON.parse(await s.gpu_upload(() => {}, SEGMENT));
    progress('upload split ' + JSON.stringify(out.uploadSplit));
    if (out.uploadSplit.ok) out.checks.push(await check(s, `${LINES} lines, ${SEGMENT}-byte segments`));
  }
  if (BENCH > 0) {
    s.clear();
    const t0 = performance.now();
    out.benchGen = JSON.parse(s.generate(BENCH, SEED));
    out.benchGen.ms = performance.now() - t0;
    out.benchUpload = JSON.parse(await s.gpu_upload(() => {}, 0));
    progress('bench upload ' + JSON.stringify(out.benchUpload));
    out.bench = [];
    for (const p of ['ERROR_503', '192.168.1', 'error', 'NullPointerException', 'x']) {
      for (const [route, extra] of [['cpu', { backend: 'cpu' }], ['gpu/scan', { backend: 'gpu', kernel: 'scan' }], ['auto', { backend: 'auto' }]]) {
        const runs = [];
        for (let i = 0; i < REPS + 1; i++) runs.push(await search(s, { patterns: p, ...extra }));
        const rs = runs.slice(1); // the first run compiles pipelines / builds columns
        out.bench.push({ query: p, route, count: rs[0].count, backend: rs[0].backend, reason: rs[0].reason,
                         firstE2eMs: runs[0].e2eMs, e2eMs: median(rs.map((r) => r.e2eMs)), ms: median(rs.map((r) => r.ms)),
                         kernelMs: rs[0].kernelMs == null ? null : median(rs.map((r) => r.kernelMs)) });
      }
      progress('bench ' + p);
    }
  }
}

try { await main(); } catch (e) { out.error = String(e && e.stack || e); }
const text = JSON.stringify(out, null, 1);
document.getElementById('out').textContent = text;
console.log('KERNELS done');
await fetch('/result', { method: 'POST', body: text }).catch(() => {});
