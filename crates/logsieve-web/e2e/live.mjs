// The page's live mode against `logsieve serve --follow`, end to end in
// headless Chromium (Debian's /usr/bin/chromium driven by playwright-core).
//
//   node live.mjs --bin target/release/logsieve --out target/web-screenshots
//
// Checks, with lines appended to a followed file and the CLI as the oracle:
//  1. standalone (no server behind the page): the Live toggle is disabled
//     and says why;
//  2. Live on with a literal query: exactly the appended lines the CLI
//     selects appear, in order, newest at the bottom, highlighted; none of
//     the others;
//  3. the query edited (regex, ignore case): the tail restarts and follows
//     it; an invalid regex is shown as the server's 400 and the next valid
//     edit follows again;
//  4. Pause freezes the list while lines are kept and counted; Resume
//     shows them;
//  5. --max-tails 1: a second tail is refused while the page holds one;
//     Live off closes the page's stream (client: the reader ended; server:
//     the slot is free again); the page shows the server's 429 when
//     another client holds the slot;
//  6. ?liveMax=5: the newest 5 kept, the older ones dropped and counted;
//  7. the server stopping ends the stream: the page says so, the server
//     exits.
//
// It cannot hang: every wait is bounded (WAIT_MS), the page is loaded with
// the default `load` event (never `networkidle`: an open event stream
// keeps the network busy for ever), the tail is opened only after the page
// has loaded, no page.evaluate awaits a stream, the test's own tails are
// fetches aborted by a timer, and a watchdog stops the server and exits
// (status 1) if the whole run takes longer than WATCHDOG_MS.

import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const BIN = resolve(arg('bin', 'target/release/logsieve'));
const OUT = resolve(arg('out', 'target/web-screenshots'));
const WWW = resolve(dirname(fileURLToPath(import.meta.url)), '../www');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT_MS = 20000;
const WATCHDOG_MS = 240000;
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

// Everything to stop, whatever happens.
const running = { serve: null, statics: null, browser: null };
function stopAll() {
  if (running.serve && running.serve.exitCode === null) running.serve.kill('SIGKILL');
  if (running.statics) running.statics.close();
}
const watchdog = setTimeout(() => {
  console.log(`  FAIL the live test ran past ${WATCHDOG_MS / 1000} s (watchdog): stopping`);
  stopAll();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();
// A test that dies (an exception, a closed stdout, a signal) leaves no
// server behind.
process.on('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));

// ---- data and the CLI ------------------------------------------------------------

const tmp = mkdtempSync(join(tmpdir(), 'logsieve-live-e2e-'));
const log = join(tmp, 'app.log');
execFileSync(BIN, ['gen', '--lines', '2000', '--seed', '3', '--output', log]);
const more = join(tmp, 'more.log');
execFileSync(BIN, ['gen', '--lines', '600', '--seed', '5', '--output', more]);
const moreLines = readFileSync(more, 'utf8').split('\n').filter(Boolean);
const noBundle = join(tmp, 'no-bundle');
mkdirSync(noBundle);
const lineCount = () => readFileSync(log, 'utf8').split('\n').length - 1;

// `-n` lines of the CLI's search of the followed file past line `after`.
function cliLines(flags, after) {
  let out = '';
  try {
    out = execFileSync(BIN, ['search', '--color', 'never', '-n', ...flags, log], { maxBuffer: 1 << 28 }).toString();
  } catch (e) {
    if (e.status !== 1) throw e;
  }
  return out.split('\n').filter(Boolean).filter((l) => Number(l.split(':')[0]) > after);
}

// Appends `lines` to the followed file in `bursts` writes.
async function appendLines(lines, bursts = 3) {
  const per = Math.ceil(lines.length / bursts);
  for (let i = 0; i < lines.length; i += per) {
    appendFileSync(log, lines.slice(i, i + per).map((l) => `${l}\n`).join(''));
    await new Promise((ok) => setTimeout(ok, 120));
  }
}

const tagged = (n, what) => Array.from({ length: n }, (_, k) =>
  `2026-11-21T10:00:${String(k % 60).padStart(2, '0')}.000Z web-01 ERROR [svc-live] ${what} ${k} ERROR_503 upstream`);

// ---- the server -----------------------------------------------------------------------

async function startServe(args) {
  const p = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--gpu', 'off', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  running.serve = p;
  const url = await new Promise((ok, fail) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) ok(m[1]);
    });
    p.on('exit', (c) => fail(new Error(`logsieve serve exited with ${c}`)));
    setTimeout(() => fail(new Error('logsieve serve printed no URL')), WAIT_MS);
  });
  return { p, url };
}

async function stopServe(s) {
  const exited = new Promise((ok) => {
    if (s.p.exitCode !== null) ok({ code: s.p.exitCode });
    s.p.on('exit', (code, sig) => ok({ code, sig }));
  });
  s.p.kill('SIGTERM');
  const r = await Promise.race([exited, new Promise((ok) => setTimeout(() => ok(null), 10000))]);
  if (!r) s.p.kill('SIGKILL');
  return r;
}

// A tail opened by the test itself (not the page): its status, and for a
// 200 a `close()` that aborts it. Bounded: the fetch and the read of the
// `ready` event are aborted after `ms`.
async function testTail(url, body, ms = 5000) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), ms);
  try {
    const r = await fetch(new URL('api/v1/tail', url), {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: ctl.signal,
    });
    if (r.status !== 200) {
      const text = await r.text();
      clearTimeout(timer);
      return { status: r.status, text, close() {} };
    }
    const reader = r.body.getReader();
    let buf = '';
    while (!buf.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString();
    }
    clearTimeout(timer);
    reader.read().catch(() => {});
    return { status: 200, text: buf, close: () => ctl.abort() };
  } catch (e) {
    clearTimeout(timer);
    return { status: 0, text: String(e && e.message), close() {} };
  }
}

// ---- the browser --------------------------------------------------------------------------

const FLAGS = ['--headless=new', '--no-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage'];

async function openPage(browser, url) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(WAIT_MS);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url, { waitUntil: 'load', timeout: WAIT_MS });
  return { page, errors };
}

const live = (page) => page.evaluate(() => {
  const L = window.__ls.live;
  return {
    on: L.on, view: L.view, paused: L.paused, status: L.status, received: L.received, unseen: L.unseen,
    opened: L.opened, closed: L.closed, message: L.message, endReason: L.endReason,
    rows: [...document.querySelectorAll('#live-list .row')].map((r) => ({
      ln: r.querySelector('.ln').textContent,
      text: r.querySelector('.tx').textContent,
      marks: [...r.querySelectorAll('mark')].map((m) => m.textContent),
    })),
    bar: document.getElementById('live-bar').textContent.replace(/\s+/g, ' ').trim(),
    button: { pressed: document.getElementById('live').getAttribute('aria-pressed'), disabled: document.getElementById('live').disabled },
    listHidden: document.getElementById('list').hidden,
    liveListHidden: document.getElementById('live-list').hidden,
  };
});

// Waits for `pred(live state)`; returns the last state seen (never throws).
async function waitLive(page, pred, ms = WAIT_MS) {
  const end = Date.now() + ms;
  let s = await live(page);
  while (!pred(s) && Date.now() < end) {
    await page.waitForTimeout(100);
    s = await live(page);
  }
  return s;
}

async function setQuery(page, req) {
  await page.check(`input[name=syntax][value=${req.syntax || 'literal'}]`);
  await page.setChecked('#icase', !!req.ignoreCase);
  await page.setChecked('#word', false);
  await page.setChecked('#invert', false);
  await page.fill('#q', req.patterns);
}

// The rows the page shows equal the CLI's lines (`N:text`), in order.
function sameRows(rows, want) {
  return rows.length === want.length && rows.every((r, k) => `${r.ln}:${r.text}` === want[k]);
}

async function settled(page, want, label) {
  // Every expected row, then a moment more: no extra row comes.
  let s = await waitLive(page, (x) => x.rows.length >= want.length);
  await page.waitForTimeout(700);
  s = await live(page);
  const ok = sameRows(s.rows, want);
  check(ok, `${label}: ${s.rows.length} live rows = the CLI's ${want.length} appended matching lines, in order`,
    ok ? '' : `\n    got  ${JSON.stringify(s.rows.slice(0, 4).map((r) => `${r.ln}:${r.text}`))}\n    want ${JSON.stringify(want.slice(0, 4))}`);
  return s;
}

// ---- run ---------------------------------------------------------------------------------

const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: false, timeout: WAIT_MS });
running.browser = browser;
try {
  // 1. Standalone: the page's files from a plain static server (no API).
  {
    const types = { html: 'text/html', js: 'text/javascript', css: 'text/css', json: 'application/json' };
    const statics = createServer((req, res) => {
      const name = new URL(req.url, 'http://x').pathname.replace(/^\/$/, '/index.html').slice(1);
      if (name === 'page.json') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"api":false,"wasm":false,"token":false}');
        return;
      }
      try {
        const body = readFileSync(join(WWW, name.replace(/\.\./g, '')));
        res.writeHead(200, { 'Content-Type': types[name.split('.').pop()] || 'application/octet-stream' });
        res.end(body);
      } catch (_) {
        res.writeHead(404);
        res.end();
      }
    });
    running.statics = statics;
    await new Promise((ok) => statics.listen(0, '127.0.0.1', ok));
    const { page, errors } = await openPage(browser, `http://127.0.0.1:${statics.address().port}/`);
    await page.waitForFunction(() => window.__ls, null, { timeout: WAIT_MS });
    const b = await page.evaluate(() => ({ disabled: document.getElementById('live').disabled,
      title: document.getElementById('live').title }));
    check(b.disabled && /not served by/.test(b.title), `standalone: Live disabled, "${b.title}"`);
    check(errors.length === 0, 'standalone: no page errors', JSON.stringify(errors));
    await page.close();
    statics.close();
    running.statics = null;
  }

  // 2-6. The page served by logsieve serve --follow (one tail at most).
  const srv = await startServe(['--follow', '--follow-interval', '0.1', '--max-tails', '1', '--web-dir', noBundle, log]);
  console.log(`serve --follow: ${srv.url}`);
  let { page, errors } = await openPage(browser, srv.url);
  const allErrors = errors;
  await page.waitForFunction(() => window.__ls.server && window.__ls.server.ready, null, { timeout: WAIT_MS });
  let s = await live(page);
  check(!s.button.disabled && s.button.pressed === 'false', 'served: Live enabled, off');

  // 2. A literal query.
  await setQuery(page, { patterns: 'ERROR_503' });
  await page.click('#live');
  s = await waitLive(page, (x) => x.status === 'open');
  check(s.status === 'open' && s.view && s.listHidden && !s.liveListHidden && s.button.pressed === 'true',
    `live on: stream open, the live list replaces the results (${s.status})`);
  let before = lineCount();
  await appendLines([...moreLines.slice(0, 200), ...tagged(4, 'literal')], 4);
  let want = cliLines(['-F', '-e', 'ERROR_503'], before);
  check(want.length >= 4 && want.length < 204, `literal: ${want.length} matching lines appended (of 204)`);
  s = await settled(page, want, 'literal');
  check(s.rows.length > 0 && s.rows.every((r) => r.marks.length > 0 && r.marks.every((m) => m === 'ERROR_503')),
    'literal: every live row highlights ERROR_503');
  check(new RegExp(`${want.length} new matching lines`).test(s.bar), `literal: the bar counts them: "${s.bar}"`);
  await page.screenshot({ path: join(OUT, 'live-literal.png') });

  // 3. The query edited: regex, ignore case; then an invalid one; then valid.
  const opened = s.opened;
  await setQuery(page, { patterns: 'error_50[0-4]', syntax: 'regex', ignoreCase: true });
  s = await waitLive(page, (x) => x.opened > opened && x.status === 'open');
  check(s.opened > opened && s.status === 'open' && s.rows.length === 0, `edited query: the tail restarts (${s.opened} opened)`);
  before = lineCount();
  await appendLines(moreLines.slice(200, 400), 3);
  want = cliLines(['-i', '-e', 'error_50[0-4]'], before);
  check(want.length > 0, `regex -i: ${want.length} matching lines appended (of 200)`);
  await settled(page, want, 'regex -i');
  await setQuery(page, { patterns: 'ERROR_50(3', syntax: 'regex' });
  s = await waitLive(page, (x) => x.status === 'invalid');
  check(s.status === 'invalid' && s.on && /unclosed|parse|regex/i.test(s.message),
    `invalid regex: shown, Live stays on: "${s.message.split('\n')[0]}"`);
  await setQuery(page, { patterns: 'ERROR_50[0-4]', syntax: 'regex' });
  s = await waitLive(page, (x) => x.status === 'open');
  check(s.status === 'open', 'a valid edit follows again');

  // 4. Pause and resume.
  before = lineCount();
  await page.click('#live-pause');
  await appendLines(tagged(3, 'paused').map((l) => l.replace('ERROR_503', 'ERROR_502')), 1);
  want = cliLines(['-e', 'ERROR_50[0-4]'], before);
  s = await waitLive(page, (x) => x.received >= want.length);
  await page.waitForTimeout(500);
  s = await live(page);
  check(s.paused && s.unseen === want.length && s.rows.length === 0 && /since the pause/.test(s.bar),
    `paused: ${s.unseen} lines kept, none shown: "${s.bar}"`);
  await page.click('#live-pause');
  s = await waitLive(page, (x) => x.rows.length >= want.length);
  check(!s.paused && sameRows(s.rows, want), `resumed: the ${want.length} lines shown`);

  // 5. --max-tails 1: the page holds the slot; Live off frees it.
  let t = await testTail(srv.url, { patterns: ['x'] });
  check(t.status === 429 && /too_many_tails/.test(t.text), `a second tail while the page's is open: ${t.status}`);
  await page.click('#live');
  s = await waitLive(page, (x) => x.closed === x.opened && x.status === 'off');
  check(s.status === 'off' && !s.view && !s.listHidden && s.closed === s.opened,
    `live off: the page's stream closed (${s.opened} opened, ${s.closed} closed), the results back`);
  const end = Date.now() + WAIT_MS;
  do {
    t = await testTail(srv.url, { patterns: ['x'] });
    if (t.status !== 429) break;
    await new Promise((ok) => setTimeout(ok, 100));
  } while (Date.now() < end);
  check(t.status === 200, `the server freed the page's slot (a new tail: ${t.status})`);
  // Another client holds the only slot: the page shows the 429.
  await page.click('#live');
  s = await waitLive(page, (x) => x.status === 'refused');
  check(s.status === 'refused' && !s.on && /--max-tails/.test(s.message) && /--max-tails/.test(s.bar),
    `refused: "${s.message}"`);
  await page.screenshot({ path: join(OUT, 'live-refused.png') });
  t.close();
  await page.close();

  // 6. The bounded buffer (?liveMax=5), then the server's end.
  ({ page, errors } = await openPage(browser, `${srv.url}?liveMax=5`));
  allErrors.push(...errors);
  await page.waitForFunction(() => window.__ls.server && window.__ls.server.ready, null, { timeout: WAIT_MS });
  await setQuery(page, { patterns: 'svc-live' });
  let opens = 0;
  do {
    // The test's aborted tail frees its slot at once, but retry a 429.
    await page.click('#live');
    s = await waitLive(page, (x) => x.status === 'open' || x.status === 'refused');
    if (s.status === 'open') break;
    await page.waitForTimeout(200);
  } while (++opens < 20);
  check(s.status === 'open', `liveMax=5: live on (${s.status})`);
  before = lineCount();
  await appendLines(tagged(12, 'buffer'), 3);
  want = cliLines(['-F', '-e', 'svc-live'], before);
  s = await waitLive(page, (x) => x.received >= want.length);
  await page.waitForTimeout(500);
  s = await live(page);
  check(want.length === 12 && s.received === 12 && sameRows(s.rows, want.slice(-5)),
    `liveMax=5: the newest 5 of ${s.received} shown, newest at the bottom`);
  check(/7 older lines dropped/.test(s.bar), `liveMax=5: "${s.bar}"`);
  await page.screenshot({ path: join(OUT, 'live-buffer.png') });

  // 7. The server stops: the stream ends, the page says so.
  const stopped = stopServe(srv);
  s = await waitLive(page, (x) => x.status === 'ended');
  check(s.status === 'ended' && !s.on && /stopping|closed/.test(s.message), `server stopped: "${s.message}"`);
  const r = await stopped;
  check(r && r.code === 0, `logsieve serve stops on SIGTERM with a live view open (exit ${r && r.code})`);
  allErrors.push(...errors.filter((e) => !allErrors.includes(e)));
  check(allErrors.every((e) => /status of (400|429)/.test(e)), 'no page errors but the refusals asked for (400, 429)',
    JSON.stringify(allErrors));
  await page.close();
} catch (e) {
  failures++;
  console.log(`  FAIL ${e && e.stack ? e.stack : e}`);
} finally {
  stopAll();
  await browser.close().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
const seconds = (Date.now() - T0) / 1000;
writeFileSync(join(OUT, 'live-results.json'), JSON.stringify({ date: new Date().toISOString(), checks, failures, seconds }, null, 2));
console.log(`\n${checks - failures}/${checks} live checks passed in ${seconds.toFixed(1)} s`);
process.exit(failures ? 1 : 0);
