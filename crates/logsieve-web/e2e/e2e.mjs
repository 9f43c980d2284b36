// End-to-end test of the logsieve page in headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core: no browser download).
//
//   node e2e.mjs --bin target/release/logsieve --dist target/web \
//                --out target/web-screenshots [--lines 250000]
//
// Serves the built page with `logsieve web`, loads a generated file through
// the file picker, types queries and checks every count, the first rows and
// their highlights, and the last row of a 100k+ hit list against the native
// CLI's answers. Then the same without WebGPU (Chromium started without
// --enable-unsafe-webgpu): the page must say it uses the CPU worker and still
// answer. With LOGSIEVE_REQUIRE_GPU=1 a missing WebGPU adapter is a failure.
// Writes screenshots and timings (results.json) to --out.

import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, mkdtempSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const BIN = resolve(arg('bin', 'target/release/logsieve'));
const DIST = resolve(arg('dist', 'target/web'));
const OUT = resolve(arg('out', 'target/web-screenshots'));
const LINES = Number(arg('lines', '250000'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const REQUIRE_GPU = process.env.LOGSIEVE_REQUIRE_GPU === '1';
mkdirSync(OUT, { recursive: true });

let failures = 0;
let checks = 0;
function check(ok, what, detail = '') {
  checks++;
  if (ok) {
    console.log(`  ok   ${what}`);
  } else {
    failures++;
    console.log(`  FAIL ${what} ${detail}`);
  }
}

// ---- the data and the CLI's answers ----------------------------------------

const tmp = mkdtempSync(join(tmpdir(), 'logsieve-e2e-'));
const big = join(tmp, 'big.log');
execFileSync(BIN, ['gen', '--lines', String(LINES), '--output', big]);
const small = join(tmp, 'small.log');
execFileSync(BIN, ['gen', '--lines', '3000', '--seed', '7', '--output', small]);
const smallGz = join(tmp, 'small2.log.gz');
const small2 = join(tmp, 'small2.log');
execFileSync(BIN, ['gen', '--lines', '2000', '--seed', '9', '--output', small2]);
writeFileSync(smallGz, gzipSync(readFileSync(small2)));
const binary = join(tmp, 'binary.dat');
writeFileSync(binary, Buffer.concat([Buffer.from('ERROR_503 in a binary\n'), Buffer.from([0, 1, 2, 255]), Buffer.from('\nERROR_503 again\n')]));
console.log(`data: ${big} (${(statSync(big).size / 1e6).toFixed(1)} MB, ${LINES} lines)`);

function cli(args, files) {
  try {
    return execFileSync(BIN, ['search', '--color', 'never', ...args, ...files], { maxBuffer: 1 << 30 }).toString();
  } catch (e) {
    if (e.status === 1) return ''; // no match
    throw e;
  }
}
const cliCount = (args, files) => cli(['-c', '-I', ...args], files)
  .split('\n').filter(Boolean).reduce((s, l) => s + Number(l), 0);

// The queries: [page request, CLI flags, engine expected with WebGPU].
const QUERIES = [
  [{ patterns: 'ERROR_503' }, ['-F', '-e', 'ERROR_503'], 'WebGPU'],
  [{ patterns: 'nullpointerexception', ignoreCase: true }, ['-F', '-i', '-e', 'nullpointerexception'], 'WebGPU'],
  [{ patterns: '192.168.1' }, ['-F', '-e', '192.168.1'], 'WebGPU'],
  [{ patterns: 'ERROR_50[0-4] .*timeout', syntax: 'regex' }, ['-e', 'ERROR_50[0-4] .*timeout'], 'WebGPU'],
  [{ patterns: 'ERROR_50[0-4].*latency_ms=\\d{3,}', syntax: 'regex' }, ['-e', 'ERROR_50[0-4].*latency_ms=\\d{3,}'], 'WebGPU'],
  [{ patterns: 'GET /api/*/orders', syntax: 'wildcard' }, ['--wildcard', '-e', 'GET /api/*/orders'], 'WebGPU'],
  [{ patterns: 'NullPointerExeption', syntax: 'fuzzy', fuzzy: 1 }, ['--fuzzy', '1', '-e', 'NullPointerExeption'], 'WebGPU'],
  [{ patterns: 'ERROR_503\nOutOfMemoryError' }, ['-F', '-e', 'ERROR_503', '-e', 'OutOfMemoryError'], 'CPU'],
  [{ patterns: 'e' }, ['-F', '-e', 'e'], 'WebGPU'],
];

// ---- the server ----------------------------------------------------------------

async function startServer() {
  const p = spawn(BIN, ['web', '--dir', DIST, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((ok, fail) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) ok(m[0]);
    });
    p.on('exit', (c) => fail(new Error(`logsieve web exited with ${c}`)));
    setTimeout(() => fail(new Error('logsieve web printed no URL')), 10000);
  });
  return { p, url };
}

// ---- driving the page -------------------------------------------------------------

const FLAGS = ['--headless=new', '--no-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage'];

async function openPage(url, webgpu) {
  const args = [...FLAGS];
  // LOGSIEVE_E2E_WEBGPU_FLAGS: more flags for the WebGPU browser (on a
  // GPU machine, scripts/gpu-browser.sh's Vulkan flags).
  if (webgpu) args.push('--enable-unsafe-webgpu', ...(process.env.LOGSIEVE_E2E_WEBGPU_FLAGS || '').split(' ').filter(Boolean));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args, headless: false });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const origin = new URL(url).origin;
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) {
      errors.push(`request left the machine: ${r.url()}`);
    }
  });
  await page.goto(url);
  await page.waitForFunction(() => window.__ls && window.__ls.ready, null, { timeout: 60000 });
  return { browser, page, errors };
}

async function loadFiles(page, files) {
  const t0 = Date.now();
  await page.setInputFiles('#file', files);
  await page.waitForFunction(() => window.__ls.loaded, null, { timeout: 300000 });
  return { wallMs: Date.now() - t0, ...(await page.evaluate(() => ({
    loadMs: window.__ls.loadMs, upload: window.__ls.upload, progress: window.__ls.progressSeen,
    files: window.__ls.files,
  }))) };
}

async function setOptions(page, req) {
  await page.selectOption('#engine-choice', req.backend || 'auto');
  await page.check(`input[name=syntax][value=${req.syntax || 'literal'}]`);
  if (req.syntax === 'fuzzy') await page.selectOption('#fuzzy-k', String(req.fuzzy || 1));
  await page.setChecked('#icase', !!req.ignoreCase);
  await page.setChecked('#word', !!req.word);
  await page.setChecked('#invert', !!req.invert);
}

// Types the query (as a user: key by key, debounced) and waits for the
// answer to exactly this query.
async function query(page, req, { type = false, keepOptions = false } = {}) {
  if (!keepOptions) await setOptions(page, req);
  const before = await page.evaluate(() => window.__ls.searchId);
  if (type) {
    await page.fill('#q', '');
    const lines = req.patterns.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (i > 0) await page.keyboard.press('Shift+Enter');
      await page.locator('#q').pressSequentially(lines[i], { delay: 15 });
    }
  } else {
    await page.fill('#q', req.patterns);
  }
  const key = (q) => JSON.stringify([q.patterns, q.syntax || 'literal', q.syntax === 'fuzzy' ? q.fuzzy || 1 : 1,
    !!q.ignoreCase, !!q.word, !!q.invert, q.backend || 'auto']);
  await page.waitForFunction(([k, b]) => {
    const s = window.__ls;
    const q = s.resultQuery;
    return s.searchId > b && s.result && s.result.id === s.searchId && q
      && JSON.stringify([q.patterns, q.syntax || 'literal', q.syntax === 'fuzzy' ? q.fuzzy || 1 : 1,
        !!q.ignoreCase, !!q.word, !!q.invert, q.backend || 'auto']) === k;
  }, [key(req), before], { timeout: 120000 });
  await page.waitForTimeout(50);
  return page.evaluate(() => ({ ...window.__ls.result }));
}

async function visibleRows(page, n) {
  return page.evaluate((n) => [...document.querySelectorAll('#spacer .row')]
    .sort((a, b) => Number(a.dataset.i) - Number(b.dataset.i))
    .slice(0, n)
    .map((r) => ({
      ln: r.querySelector('.ln').textContent,
      text: r.querySelector('.tx').textContent,
      marks: [...r.querySelectorAll('mark')].map((m) => m.textContent),
    })), n);
}

// The CLI's first `n` matching lines as "N:text".
function cliFirstLines(args, file, n) {
  return cli(['-n', '-I', '-m', String(n), ...args], [file]).split('\n').filter(Boolean);
}

async function checkQueries(page, label, gpuOk, timings, backend) {
  for (const [i, [req0, flags, engine]] of QUERIES.entries()) {
    const req = { ...req0, backend };
    const want = cliCount(flags, [big]);
    const r = await query(page, req, { type: i === 0 });
    const name = `${label}: ${JSON.stringify(req)}`;
    check(r.ok && r.count === want, `${name} count ${r.count} = CLI ${want}`);
    const wantEngine = gpuOk ? engine : 'CPU';
    check(r.engine === wantEngine, `${name} answered by ${r.engine} (${r.backend}), expected ${wantEngine}`, r.reason);
    timings.push({ label, query: req.patterns, syntax: req.syntax || 'literal', engine: r.engine, backend: r.backend,
      count: r.count, ms: r.ms, kernelMs: r.kernelMs, roundTripMs: r.roundTripMs });
    if (i === 0) {
      // The histogram of the matches over time accounts for every one
      // (every generated line has a timestamp).
      const hsum = r.histogram ? r.histogram.counts.reduce((a, b) => a + b, 0) : -1;
      check(hsum === want && await page.isVisible('#hist-bars'), `${label}: histogram holds all ${hsum} matches`);
      const lsum = (r.levels || []).reduce((a, [, n]) => a + n, 0);
      check(lsum === want, `${label}: level counts sum to ${lsum}`);
      // The first rows and their highlights, against the CLI's lines.
      const rows = await visibleRows(page, 5);
      const cliLines = cliFirstLines(flags, big, 5);
      check(rows.length === Math.min(5, want), `${label}: ${rows.length} rows rendered`);
      rows.forEach((row, k) => {
        check(`${row.ln}:${row.text}` === cliLines[k], `${label}: row ${k} = CLI line ${cliLines[k] && cliLines[k].slice(0, 40)}…`,
          `got ${row.ln}:${row.text.slice(0, 60)}`);
        check(row.marks.length > 0 && row.marks.every((m) => m === 'ERROR_503'), `${label}: row ${k} highlights ERROR_503`, JSON.stringify(row.marks));
      });
      await page.screenshot({ path: join(OUT, `${label}-literal.png`) });
      // Drag across the middle half of the histogram: the answer keeps the
      // matches stamped in that (bucket-aligned) range, which the
      // unfiltered histogram's interior buckets count independently.
      const box = await page.locator('#hist-bars').boundingBox();
      const waitNext = async (b) => {
        await page.waitForFunction((b0) => {
          const s = window.__ls;
          return s.searchId > b0 && s.result && s.result.id === s.searchId && document.body.dataset.state === 'done';
        }, b, { timeout: 120000 });
        return page.evaluate(() => ({ ...window.__ls.result, range: window.__ls.range }));
      };
      let before = await page.evaluate(() => window.__ls.searchId);
      await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 4 });
      await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 4 });
      await page.mouse.up();
      const rr = await waitNext(before);
      const h = r.histogram;
      const [a, b] = rr.range || [0, 0];
      const inRange = h.counts.reduce((sum, n, k) => {
        const t = h.start + k * h.bucket;
        return sum + (t >= a && t + h.bucket <= b ? n : 0);
      }, 0);
      check(rr.range && rr.count === inRange && rr.count > 0 && rr.count < want,
        `${label}: dragged time range keeps ${rr.count} of ${want} matches = ${inRange} in its buckets`, JSON.stringify(rr.range));
      check(await page.isVisible('#hist-range') && await page.isVisible('#hist-clear'), `${label}: the chosen range is shown`);
      await page.screenshot({ path: join(OUT, `${label}-time-range.png`) });
      before = await page.evaluate(() => window.__ls.searchId);
      await page.click('#hist-clear');
      const back = await waitNext(before);
      check(back.count === want && !back.range, `${label}: clearing the range brings back all ${want} matches`);
    }
    if (req.patterns === 'e') {
      // 100k+ hits: scroll to the end; the last row must be the CLI's last.
      check(r.count > 100000, `${label}: ${r.count} hits (> 100k) for the scrolling test`);
      const t0 = Date.now();
      await page.evaluate(() => { const l = document.getElementById('list'); l.scrollTop = l.scrollHeight; });
      await page.waitForFunction((n) => [...document.querySelectorAll('#spacer .row')]
        .some((r) => Number(r.dataset.i) === n - 1), r.rows, { timeout: 30000 });
      const scrollMs = Date.now() - t0;
      const rowsInDom = await page.evaluate(() => document.querySelectorAll('#spacer .row').length);
      check(rowsInDom < 200, `${label}: only visible rows in the DOM (${rowsInDom})`);
      const last = await page.evaluate(() => {
        const rows = [...document.querySelectorAll('#spacer .row')].sort((a, b) => Number(a.dataset.i) - Number(b.dataset.i));
        const r = rows[rows.length - 1];
        return `${r.querySelector('.ln').textContent}:${r.querySelector('.tx').textContent}`;
      });
      const cliAll = cli(['-n', '-I', ...flags], [big]).split('\n').filter(Boolean);
      check(last === cliAll[cliAll.length - 1], `${label}: last of ${r.count} rows = CLI's last line`, `got ${last.slice(0, 60)}`);
      timings.push({ label, query: 'scroll to row ' + r.rows, ms: scrollMs });
      await page.screenshot({ path: join(OUT, `${label}-scrolled.png`) });
    }
  }
}

// Clean timings: the same literal queries repeated with nothing else in
// flight (options set once; only the text changes), medians of 5.
async function timeQueries(page, label, backend) {
  const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const out = [];
  for (const pat of ['ERROR_503', 'NullPointerException', '192.168.1']) {
    await query(page, { patterns: `${pat} `, backend });
    const ms = [];
    const rt = [];
    let r;
    for (let k = 0; k < 5; k++) {
      r = await query(page, { patterns: k % 2 ? `${pat} ` : pat, backend }, { keepOptions: true });
      ms.push(r.ms);
      rt.push(r.roundTripMs);
    }
    out.push({ label, query: pat, engine: r.engine, backend: r.backend, medianMs: med(ms), medianRoundTripMs: med(rt) });
  }
  return out;
}

async function checkBadInput(page, label) {
  const r = await query(page, { patterns: 'ERROR_50(3', syntax: 'regex' });
  check(r.ok === false && r.kind === 'query', `${label}: invalid regex is an error`);
  const msg = await page.textContent('#qerror');
  const shown = await page.isVisible('#qerror');
  check(shown && /unclosed|error/i.test(msg), `${label}: inline message "${(msg || '').split('\n')[0]}"`);
  await page.screenshot({ path: join(OUT, `${label}-invalid-regex.png`) });
}

// ---- run ------------------------------------------------------------------------------

const results = { date: new Date().toISOString(), lines: LINES, bytes: statSync(big).size, runs: [] };
const { p: server, url } = await startServer();
console.log(`page: ${url}`);
try {
  // 1. With WebGPU (SwiftShader in headless Chromium).
  {
    // 16 MiB segments: the ~50 MB file is searched as several, as a
    // corpus larger than the adapter's binding limit would be.
    const { browser, page, errors } = await openPage(`${url}?maxSegment=${16 << 20}`, true);
    const gpu = await page.evaluate(() => window.__ls.gpu);
    const gpuOk = gpu && gpu.state === 'ok';
    if (!gpuOk) {
      const msg = `NO WEBGPU ADAPTER in Chromium with --enable-unsafe-webgpu (${gpu && gpu.note})`;
      if (REQUIRE_GPU) check(false, msg);
      else console.log(`\n!!!!!!!! ${msg}: the WebGPU half of this test only checks the CPU path !!!!!!!!\n`);
    } else {
      console.log(`WebGPU adapter: ${gpu.adapter}`);
    }
    const engineText = await page.textContent('#engine');
    check(!gpuOk || /WebGPU/.test(engineText), `webgpu: badge says "${engineText}"`);
    const load = await loadFiles(page, [big]);
    check(load.files.length === 1 && load.files[0].lines === LINES, `webgpu: loaded ${load.files[0] && load.files[0].lines} lines`);
    const chunks = Math.ceil(statSync(big).size / (8 << 20));
    check(load.progress.read >= chunks, `webgpu: read progress shown (${load.progress.read} updates for ${chunks} chunks)`);
    const soft = gpu && gpu.info && gpu.info.type === 'Cpu';
    const checkUpload = (up, progress, when) => {
      check(up && up.ok, `webgpu: corpus resident on the GPU ${when}`, JSON.stringify(up));
      const wantSegs = Math.ceil(statSync(big).size / (16 << 20));
      check(up && up.segments >= wantSegs, `webgpu: ${up && up.segments} GPU segments (>= ${wantSegs})`);
      check(progress.upload >= 2, `webgpu: upload progress shown (${progress.upload} updates)`);
      // After the upload the engine times the adapter and the CPU, and
      // auto routes by that (a web adapter names no class); a software
      // adapter, which auto never uses, is not probed.
      const p = up && up.probe;
      check(p && (soft ? p.skipped === 'a software adapter' : p.gpuMs > 0 && p.cpuMs >= 0 && p.cpuGbps > 0),
        `webgpu: the probe after the upload ${when}`, JSON.stringify(p));
    };
    if (gpuOk && soft) {
      // Auto never uses a software adapter: nothing is uploaded to it at
      // load (it cost 4-7 s on SwiftShader for nothing).
      check(load.upload && load.upload.skipped && !load.progress.upload,
        'webgpu: not uploaded to the software adapter at load (auto)', JSON.stringify(load.upload));
    } else if (gpuOk) {
      checkUpload(load.upload, load.progress, 'at load');
    }
    const latency = await page.textContent('#corpus');
    console.log(`  ${latency}`);
    const timings = [];
    // The query table on the WebGPU engine (forced: auto never picks a
    // software adapter such as SwiftShader, as the native planner). On a
    // software adapter the first forced query uploads.
    await checkQueries(page, 'webgpu', gpuOk, timings, 'gpu');
    if (gpuOk && soft) {
      const up = await page.evaluate(() => ({ upload: window.__ls.upload, progress: window.__ls.progressSeen }));
      checkUpload(up.upload, up.progress, 'once WebGPU was chosen');
    }
    const auto = await query(page, { patterns: 'ERROR_503' });
    check(auto.engine === (gpuOk && !soft ? 'WebGPU' : 'CPU'),
      `webgpu: auto picks ${auto.engine} on a ${soft ? 'software' : 'hardware'} adapter (${auto.reason})`);
    timings.push({ label: 'webgpu/auto', query: 'ERROR_503', engine: auto.engine, backend: auto.backend,
      count: auto.count, ms: auto.ms, roundTripMs: auto.roundTripMs });
    results.clean = [...(results.clean || []), ...(await timeQueries(page, 'webgpu', 'gpu')),
      ...(await timeQueries(page, 'webgpu-tab/cpu', 'cpu'))];
    await checkBadInput(page, 'webgpu');
    const lat = await query(page, { patterns: 'ERROR_503', backend: 'gpu' });
    const latencyText = await page.textContent('#latency');
    check(/\d+(\.\d+)? ms/.test(latencyText), `webgpu: latency shown "${latencyText}"`);
    if (gpuOk) {
      // A lost device: the next answer comes from the CPU, correct, with a
      // notice; then the page re-creates the device and re-uploads.
      const want = lat.count;
      await page.evaluate(() => window.__ls.worker.postMessage({ type: 'gpu-destroy' }));
      // Only the text changes (setting options would search already).
      const r = await query(page, { patterns: 'ERROR_503 ', backend: 'gpu' }, { keepOptions: true });
      const wantSpace = cliCount(['-F', '-e', 'ERROR_503 '], [big]);
      check(r.ok && r.count === wantSpace && r.engine === 'CPU', `webgpu: after device loss answered by ${r.engine}, count ${r.count} = ${wantSpace}`, JSON.stringify(r) + JSON.stringify(await page.evaluate(() => window.__ls.notices)));
      await page.waitForFunction(() => window.__ls.notices.some((n) => /re-uploaded|could not be restarted|upload failed/.test(n)), null, { timeout: 120000 });
      const notes = await page.evaluate(() => window.__ls.notices);
      check(notes.some((n) => /device was lost/.test(n)), 'webgpu: device loss is said');
      const again = await query(page, { patterns: 'ERROR_503', backend: 'gpu' });
      check(again.count === want && again.engine === 'WebGPU', `webgpu: after recovery count ${again.count} by ${again.engine}`);
      await page.screenshot({ path: join(OUT, 'webgpu-device-lost.png') });
    }
    check(errors.length === 0, 'webgpu: no page errors, no request left the machine', JSON.stringify(errors));
    results.runs.push({ label: 'webgpu', gpu, load, timings });
    await browser.close();
  }

  // 2. Without WebGPU: the CPU worker answers, and the page says so.
  {
    const { browser, page, errors } = await openPage(url, false);
    const gpu = await page.evaluate(() => window.__ls.gpu);
    check(gpu.state !== 'ok', `cpu: no WebGPU without the flag (${gpu.note})`);
    const note = await page.textContent('#notices');
    check(/CPU engine in a Web Worker/.test(note), `cpu: visible note "${note.slice(0, 80)}…"`);
    const engineText = await page.textContent('#engine');
    check(/CPU/.test(engineText), `cpu: badge says "${engineText}"`);
    const load = await loadFiles(page, [big]);
    check(load.files[0].lines === LINES, 'cpu: loaded');
    const timings = [];
    const want = cliCount(['-F', '-e', 'ERROR_503'], [big]);
    const r = await query(page, { patterns: 'ERROR_503' }, { type: true });
    check(r.ok && r.count === want && r.engine === 'CPU', `cpu: ERROR_503 count ${r.count} = CLI ${want} by ${r.engine}`);
    timings.push({ label: 'cpu', query: 'ERROR_503', engine: r.engine, backend: r.backend, count: r.count, ms: r.ms, roundTripMs: r.roundTripMs });
    await page.screenshot({ path: join(OUT, 'cpu-literal.png') });
    results.clean = [...(results.clean || []), ...(await timeQueries(page, 'no-webgpu', 'auto'))];
    // Several files at once, one gzip'd, and a binary one.
    const multi = await loadFiles(page, [small, smallGz, binary]);
    check(multi.files.length === 3 && multi.files[1].gzip === true, 'cpu: three files, one gzip');
    const wantMulti = cliCount(['-F', '-e', 'ERROR_503'], [small, small2, binary]);
    const rm = await query(page, { patterns: 'ERROR_503\n' });
    check(rm.count === wantMulti, `cpu: three files count ${rm.count} = CLI ${wantMulti}`);
    const notes = await page.evaluate(() => window.__ls.notices);
    check(notes.some((n) => /binary\.dat looks binary/.test(n)), 'cpu: binary file notice');
    await page.screenshot({ path: join(OUT, 'cpu-multi-file.png') });
    check(errors.length === 0, 'cpu: no page errors, no request left the machine', JSON.stringify(errors));
    results.runs.push({ label: 'cpu', gpu, load, timings });
    await browser.close();
  }
} finally {
  server.kill();
}
writeFileSync(join(OUT, 'results.json'), JSON.stringify(results, null, 2));
console.log(`\n${checks - failures}/${checks} checks passed; screenshots and results.json in ${OUT}`);
process.exit(failures ? 1 : 0);
