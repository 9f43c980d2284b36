// The page against `logsieve serve`, end to end in headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core).
//
//   node serve.mjs --bin target/release/logsieve --out target/web-screenshots \
//                  [--lines 250000] [--dist target/web]
//
// Starts `logsieve serve` on 127.0.0.1 (port 0) over a generated file and
// stops it at the end:
//  1. without the wasm bundle (--web-dir of an empty folder): the page says
//     it has no in-browser engine and searches the server: counts and the
//     first rows with their highlights equal the CLI's on the same file,
//     the last of 100k+ rows too (paged from the server while scrolling),
//     the histogram and the level panel equal POST /api/v1/stats, a dragged
//     time range keeps the matches of its buckets, a bad regex shows the
//     server's caret message;
//  2. with --token-file: the page asks for the token once, refuses a wrong
//     one, keeps the right one for the tab (a reload does not ask again);
//  3. with --dist (a bundle built by scripts/build-web.sh): both engines,
//     files opened in the tab searched by the wasm engine, then the server
//     again.
// Screenshots and serve-results.json land in --out.

import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const BIN = resolve(arg('bin', 'target/release/logsieve'));
const OUT = resolve(arg('out', 'target/web-screenshots'));
const LINES = Number(arg('lines', '250000'));
const DIST = arg('dist', '') ? resolve(arg('dist', '')) : '';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
mkdirSync(OUT, { recursive: true });
const T0 = Date.now();

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

const tmp = mkdtempSync(join(tmpdir(), 'logsieve-serve-e2e-'));
const big = join(tmp, 'app.log');
execFileSync(BIN, ['gen', '--lines', String(LINES), '--output', big]);
const small = join(tmp, 'small.log');
execFileSync(BIN, ['gen', '--lines', '3000', '--seed', '7', '--output', small]);
const empty = join(tmp, 'no-bundle');
mkdirSync(empty);
const tokenFile = join(tmp, 'token');
writeFileSync(tokenFile, 's3cret-token\n');
console.log(`data: ${big} (${(statSync(big).size / 1e6).toFixed(1)} MB, ${LINES} lines)`);

function cli(args, files) {
  try {
    return execFileSync(BIN, ['search', '--color', 'never', ...args, ...files], { maxBuffer: 1 << 30 }).toString();
  } catch (e) {
    if (e.status === 1) return '';
    throw e;
  }
}
const cliCount = (args, files) => cli(['-c', '-I', ...args], files)
  .split('\n').filter(Boolean).reduce((s, l) => s + Number(l), 0);

// [page request, CLI flags]
const QUERIES = [
  [{ patterns: 'ERROR_503' }, ['-F', '-e', 'ERROR_503']],
  [{ patterns: 'nullpointerexception', ignoreCase: true }, ['-F', '-i', '-e', 'nullpointerexception']],
  [{ patterns: 'timeout', word: true }, ['-F', '-w', '-e', 'timeout']],
  [{ patterns: 'ERROR_50[0-4] .*timeout', syntax: 'regex' }, ['-e', 'ERROR_50[0-4] .*timeout']],
  [{ patterns: 'GET /api/*/orders', syntax: 'wildcard' }, ['--wildcard', '-e', 'GET /api/*/orders']],
  [{ patterns: 'NullPointerExeption', syntax: 'fuzzy', fuzzy: 1 }, ['--fuzzy', '1', '-e', 'NullPointerExeption']],
  [{ patterns: 'ERROR_503\nOutOfMemoryError' }, ['-F', '-e', 'ERROR_503', '-e', 'OutOfMemoryError']],
  [{ patterns: 'INFO', invert: true }, ['-F', '-v', '-e', 'INFO']],
  [{ patterns: 'e' }, ['-F', '-e', 'e']],
];

// ---- the server ------------------------------------------------------------------

async function startServe(args) {
  const p = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--gpu', 'off', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((ok, fail) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) ok(m[1]);
    });
    p.on('exit', (c) => fail(new Error(`logsieve serve exited with ${c}`)));
    setTimeout(() => fail(new Error('logsieve serve printed no URL')), 30000);
  });
  return { p, url };
}

async function stopServe(s) {
  const exited = new Promise((ok) => s.p.on('exit', (code, sig) => ok({ code, sig })));
  s.p.kill('SIGTERM');
  const r = await Promise.race([exited, new Promise((ok) => setTimeout(() => ok(null), 10000))]);
  check(r && r.code === 0, `logsieve serve stops on SIGTERM (exit ${r && r.code})`);
  if (!r) s.p.kill('SIGKILL');
}

async function api(url, path, body, tok) {
  const headers = { 'Content-Type': 'application/json' };
  if (tok) headers.Authorization = `Bearer ${tok}`;
  const r = await fetch(new URL(path, url), { method: 'POST', headers, body: JSON.stringify(body) });
  return r.json();
}

// ---- the browser ----------------------------------------------------------------------

const FLAGS = ['--headless=new', '--no-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage', '--enable-unsafe-webgpu'];

async function openPage(browser, url, ready = true) {
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
  if (ready) await page.waitForFunction(() => window.__ls && window.__ls.server && window.__ls.server.ready, null, { timeout: 120000 });
  return { page, errors };
}

async function setOptions(page, req) {
  await page.check(`input[name=syntax][value=${req.syntax || 'literal'}]`);
  if (req.syntax === 'fuzzy') await page.selectOption('#fuzzy-k', String(req.fuzzy || 1));
  await page.setChecked('#icase', !!req.ignoreCase);
  await page.setChecked('#word', !!req.word);
  await page.setChecked('#invert', !!req.invert);
}

const key = (q) => JSON.stringify([q.patterns, q.syntax || 'literal', q.syntax === 'fuzzy' ? q.fuzzy || 1 : 1,
  !!q.ignoreCase, !!q.word, !!q.invert]);

// Types the query and waits for the answer to exactly this query.
async function query(page, req, { type = false } = {}) {
  await setOptions(page, req);
  const before = await page.evaluate(() => window.__ls.searchId);
  if (type) {
    await page.fill('#q', '');
    await page.locator('#q').pressSequentially(req.patterns, { delay: 15 });
  } else {
    await page.fill('#q', req.patterns);
  }
  await page.waitForFunction(([k, b]) => {
    const s = window.__ls;
    const q = s.resultQuery;
    return s.searchId > b && s.result && s.result.id === s.searchId && q
      && JSON.stringify([q.patterns, q.syntax || 'literal', q.syntax === 'fuzzy' ? q.fuzzy || 1 : 1,
        !!q.ignoreCase, !!q.word, !!q.invert]) === k;
  }, [key(req), before], { timeout: 120000 });
  await page.waitForTimeout(50);
  return page.evaluate(() => ({ ...window.__ls.result, stats: undefined, firstRows: undefined }));
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

// The stats the page should show, asked of the server directly.
function statsBody(req, bucket) {
  const b = { patterns: [req.patterns], syntax: req.syntax || 'literal', ignore_case: !!req.ignoreCase,
    word: !!req.word, invert: !!req.invert, count_by: ['level'], histogram: `${bucket}ms` };
  if (req.syntax === 'fuzzy') b.fuzzy_k = req.fuzzy || 1;
  return b;
}

async function checkServerQueries(page, url, label, timings) {
  for (const [i, [req, flags]] of QUERIES.entries()) {
    const want = cliCount(flags, [big]);
    const r = await query(page, req, { type: i === 0 });
    const name = `${label}: ${JSON.stringify(req)}`;
    check(r.ok && r.count === want && r.engine === 'server', `${name} count ${r.count} = CLI ${want} (${r.engine} ${r.backend})`, r.error || '');
    timings.push({ label, query: req.patterns, syntax: req.syntax || 'literal', backend: r.backend, count: r.count,
      ms: r.ms, searchMs: r.searchMs, headersMs: r.headersMs, firstRowMs: r.firstRowMs, roundTripMs: r.roundTripMs });
    // The histogram and the level panel: what /api/v1/stats answers.
    const h = r.histogram;
    const s = await api(url, 'api/v1/stats', statsBody(req, h.bucket));
    const direct = new Array(h.counts.length).fill(0);
    for (const b of s.histogram.buckets) direct[Math.round((b.start_ms - h.start) / h.bucket)] += b.count;
    check(JSON.stringify(direct) === JSON.stringify(h.counts) && s.selected === want,
      `${label}: histogram of ${h.counts.length} buckets = /api/v1/stats (${s.selected} selected)`);
    const levels = s.groups.filter((g) => g.count > 0).map((g) => [g.key.level ?? '(none)', g.count])
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    check(JSON.stringify(levels) === JSON.stringify(r.levels), `${label}: level counts = /api/v1/stats ${JSON.stringify(levels).slice(0, 80)}`);
    if (i === 0) {
      const shown = await page.evaluate(() => ({
        bars: [...document.querySelectorAll('#hist-bars div')].map((d) => d.title),
        levels: [...document.querySelectorAll('#levels span')].map((s) => s.textContent),
        latency: document.getElementById('latency').textContent,
        backend: document.getElementById('backend').textContent,
      }));
      check(shown.bars.length === h.counts.length
        && shown.bars.every((t, k) => t.endsWith(`: ${h.counts[k].toLocaleString('en-US')}`)),
      `${label}: ${shown.bars.length} bars drawn with the stats' counts`);
      check(JSON.stringify(shown.levels) === JSON.stringify(levels.slice(0, 6).map(([n, c]) => `${n} ${c.toLocaleString('en-US')}`)),
        `${label}: level panel "${shown.levels.join(', ')}"`);
      check(/server search \d+(\.\d+)? ms/.test(shown.latency) && /server · /.test(shown.backend),
        `${label}: latency shown "${shown.latency}" (${shown.backend})`);
      const rows = await visibleRows(page, 5);
      const cliLines = cli(['-n', '-I', '-m', '5', ...flags], [big]).split('\n').filter(Boolean);
      check(rows.length === Math.min(5, want), `${label}: ${rows.length} rows rendered`);
      rows.forEach((row, k) => {
        check(`${row.ln}:${row.text}` === cliLines[k], `${label}: row ${k} = CLI line ${(cliLines[k] || '').slice(0, 40)}…`,
          `got ${row.ln}:${row.text.slice(0, 60)}`);
        check(row.marks.length > 0 && row.marks.every((m) => m === 'ERROR_503'), `${label}: row ${k} highlights ERROR_503`, JSON.stringify(row.marks));
      });
      await page.screenshot({ path: join(OUT, `${label}-literal.png`) });
      // Drag across the middle of the histogram: the bucket-aligned range
      // keeps the matches its buckets counted.
      const box = await page.locator('#hist-bars').boundingBox();
      const before = await page.evaluate(() => window.__ls.searchId);
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 6 });
      await page.mouse.up();
      await page.waitForFunction((b0) => {
        const s = window.__ls;
        return s.searchId > b0 && s.result && s.result.id === s.searchId && document.body.dataset.state === 'done';
      }, before, { timeout: 120000 });
      const rr = await page.evaluate(() => ({ count: window.__ls.result.count, range: window.__ls.range }));
      const [a, b] = rr.range || [0, 0];
      const inRange = h.counts.reduce((sum, n, k) => {
        const t = h.start + k * h.bucket;
        return sum + (t >= a && t + h.bucket <= b ? n : 0);
      }, 0);
      check(rr.range && rr.count === inRange && rr.count > 0 && rr.count < want,
        `${label}: dragged time range keeps ${rr.count} of ${want} = ${inRange} in its buckets`);
      await page.screenshot({ path: join(OUT, `${label}-time-range.png`) });
      await page.click('#hist-clear');
      await page.waitForFunction((w) => window.__ls.result && window.__ls.result.count === w && !window.__ls.range, want, { timeout: 60000 });
    }
    if (req.patterns === 'e') {
      check(r.count > 100000, `${label}: ${r.count} hits (> 100k) for the scrolling test`);
      const t0 = Date.now();
      await page.evaluate(() => { const l = document.getElementById('list'); l.scrollTop = l.scrollHeight; });
      await page.waitForFunction((n) => [...document.querySelectorAll('#spacer .row')]
        .some((row) => Number(row.dataset.i) === n - 1), r.rows, { timeout: 60000 });
      timings.push({ label, query: `scroll to row ${r.rows}`, ms: Date.now() - t0 });
      const last = await page.evaluate(() => {
        const rows = [...document.querySelectorAll('#spacer .row')].sort((x, y) => Number(x.dataset.i) - Number(y.dataset.i));
        const row = rows[rows.length - 1];
        return `${row.querySelector('.ln').textContent}:${row.querySelector('.tx').textContent}`;
      });
      const cliAll = cli(['-n', '-I', ...flags], [big]).split('\n').filter(Boolean);
      check(last === cliAll[cliAll.length - 1], `${label}: last of ${r.count} rows = CLI's last line`, `got ${last.slice(0, 60)}`);
      await page.screenshot({ path: join(OUT, `${label}-scrolled.png`) });
    }
  }
  const bad = await query(page, { patterns: 'ERROR_50(3', syntax: 'regex' });
  const msg = await page.textContent('#qerror');
  check(bad.ok === false && bad.kind === 'query' && await page.isVisible('#qerror') && /unclosed/i.test(msg),
    `${label}: invalid regex shown inline "${(msg || '').split('\n')[0]}"`);
}

// ---- run ------------------------------------------------------------------------------

const results = { date: new Date().toISOString(), lines: LINES, bytes: statSync(big).size, timings: [] };
const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: false });
try {
  // 1. No wasm bundle: the server engine alone.
  {
    const srv = await startServe(['--web-dir', empty, big]);
    console.log(`serve (no wasm bundle): ${srv.url}`);
    const t0 = Date.now();
    const { page, errors } = await openPage(browser, srv.url);
    results.readyMs = Date.now() - t0;
    const st = await page.evaluate(() => ({ page: window.__ls.page, worker: !!window.__ls.worker,
      engine: document.getElementById('engine-choice').value, badge: document.getElementById('engine').textContent,
      corpus: document.getElementById('corpus').textContent, notices: window.__ls.notices,
      fileDisabled: document.getElementById('file').disabled }));
    check(st.page.api && !st.page.wasm && !st.worker, 'no-wasm: /page.json says api, no wasm; no worker started');
    check(st.engine === 'server' && /logsieve serve/.test(st.badge), `no-wasm: engine "server", badge "${st.badge}"`);
    check(st.notices.some((n) => /in-browser engine is not built/.test(n)) && st.fileDisabled, 'no-wasm: says files cannot be opened here');
    check(new RegExp(`${LINES.toLocaleString('en-US')} lines`).test(st.corpus), `no-wasm: corpus "${st.corpus}"`);
    await checkServerQueries(page, srv.url, 'serve', results.timings);
    // The only errors: the invalid regex's two 400s (search and stats).
    const others = errors.filter((e) => !/status of 400/.test(e));
    check(others.length === 0 && errors.length - others.length <= 2,
      'no-wasm: no page errors but the invalid regex\'s 400s, no request left the machine', JSON.stringify(errors));
    await page.close();
    await stopServe(srv);
  }

  // 2. A token: asked once, kept for the tab.
  {
    const srv = await startServe(['--web-dir', empty, '--token-file', tokenFile, small]);
    const { page, errors } = await openPage(browser, srv.url, false);
    await page.waitForSelector('#token-form:not([hidden])', { timeout: 30000 });
    check(true, 'token: the page asks for the token');
    await page.fill('#token', 'wrong');
    await page.press('#token', 'Enter');
    await page.waitForFunction(() => /refused/.test(document.getElementById('token-why').textContent)
      && !document.getElementById('token-form').hidden, null, { timeout: 30000 });
    check(true, 'token: a wrong token is refused and asked again');
    await page.fill('#token', 's3cret-token');
    await page.press('#token', 'Enter');
    await page.waitForFunction(() => window.__ls.server.ready, null, { timeout: 60000 });
    const want = cliCount(['-F', '-e', 'ERROR_503'], [small]);
    let r = await query(page, { patterns: 'ERROR_503' });
    check(r.count === want, `token: count ${r.count} = CLI ${want}`);
    await page.reload();
    await page.waitForFunction(() => window.__ls && window.__ls.server && window.__ls.server.ready, null, { timeout: 60000 });
    check(await page.isHidden('#token-form'), 'token: kept for the tab (a reload does not ask again)');
    r = await query(page, { patterns: 'ERROR_503' });
    check(r.count === want, `token: after a reload count ${r.count} = CLI ${want}`);
    await page.screenshot({ path: join(OUT, 'serve-token.png') });
    // The only errors: the refused token's 401.
    check(errors.every((e) => /401/.test(e)), 'token: no page errors but the refused token\'s 401', JSON.stringify(errors));
    await page.close();
    await stopServe(srv);
  }

  // 3. With the wasm bundle: the server's corpus beside files opened here.
  if (DIST) {
    const srv = await startServe(['--web-dir', DIST, big]);
    const { page, errors } = await openPage(browser, srv.url);
    await page.waitForFunction(() => window.__ls.ready, null, { timeout: 60000 });
    const opts = await page.evaluate(() => [...document.getElementById('engine-choice').options].filter((o) => !o.disabled).map((o) => o.value));
    check(JSON.stringify(opts) === JSON.stringify(['server', 'auto', 'gpu', 'cpu']), `both: engines ${opts.join(', ')}`);
    const wantSmall = cliCount(['-F', '-e', 'ERROR_503'], [small]);
    const wantBig = cliCount(['-F', '-e', 'ERROR_503'], [big]);
    await page.setInputFiles('#file', [small]);
    await page.waitForFunction(() => window.__ls.loaded, null, { timeout: 120000 });
    check(await page.inputValue('#engine-choice') === 'auto', 'both: opening files switches to the tab\'s engine');
    let r = await query(page, { patterns: 'ERROR_503' });
    check(r.count === wantSmall && r.engine !== 'server', `both: the tab's file: ${r.count} = CLI ${wantSmall} (${r.engine})`);
    await page.selectOption('#engine-choice', 'server');
    await page.waitForFunction((w) => window.__ls.result && window.__ls.result.engine === 'server' && window.__ls.result.count === w, wantBig, { timeout: 60000 });
    check(true, `both: back on the server: ${wantBig} = CLI`);
    await page.screenshot({ path: join(OUT, 'serve-both-engines.png') });
    check(errors.length === 0, 'both: no page errors', JSON.stringify(errors));
    await page.close();
    await stopServe(srv);
  }
} finally {
  await browser.close();
}
results.seconds = (Date.now() - T0) / 1000;
writeFileSync(join(OUT, 'serve-results.json'), JSON.stringify(results, null, 2));
console.log(`\n${checks - failures}/${checks} checks passed in ${results.seconds.toFixed(1)} s; screenshots and serve-results.json in ${OUT}`);
process.exit(failures ? 1 : 0);
