// The server engine: when `logsieve serve` serves this page, its corpus is
// searched through its API (same origin). The answers take the shapes the
// wasm worker gives the page, so the same list, histogram and level panel
// show them:
//   count and the first rows: POST /api/v1/search (NDJSON in ripgrep's
//     --json schema, read as it streams; x-logsieve-total is the count);
//   histogram and levels: POST /api/v1/stats (histogram + count_by level);
//   more rows when the list scrolls: the same search with limit + cursor;
//   corpus size and load progress: GET /api/v1/health;
//   the live view: POST /api/v1/tail (server-sent events read from a fetch
//     body, so the token header goes with it; an EventSource cannot send
//     one).

const ROWS = 200;            // rows per page, as the worker's first answer
// Rows cut as the wasm engine cuts them (engine.rs: SHOW_BYTES, HEAD_BYTES,
// LEAD_BYTES): a long line keeps its head (the timestamp) and a window
// around its first match.
const SHOW_BYTES = 2000;
const HEAD_BYTES = 64;
const LEAD_BYTES = 200;
const TOKEN_KEY = 'logsieve-token';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: false });

export class Unauthorized extends Error {}

// A round bucket width (ms) giving at most ~60 buckets (engine.rs: nice_bucket).
export function niceBucket(span) {
  const S = 1000;
  const widths = [S, 5 * S, 10 * S, 30 * S, 60 * S, 300 * S, 600 * S, 900 * S, 1800 * S, 3600 * S,
    3 * 3600 * S, 6 * 3600 * S, 12 * 3600 * S, 86400 * S, 7 * 86400 * S, 30 * 86400 * S];
  const s = Math.max(1, span);
  return widths.find((w) => Math.floor(s / w) < 60) || Math.max(1, Math.floor(s / 60));
}

// The token: kept for this tab only (sessionStorage), sent as a bearer.
export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || '',
  set: (t) => sessionStorage.setItem(TOKEN_KEY, t),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

async function api(path, body, signal) {
  const headers = {};
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (res.status === 401) throw new Unauthorized('the server wants its token');
  if (!res.ok) {
    let e = { kind: 'http', message: `HTTP ${res.status}` };
    try { e = (await res.json()).error || e; } catch (_) { /* not JSON */ }
    const err = new Error(e.message);
    err.kind = e.kind;
    err.status = res.status;
    throw err;
  }
  return res;
}

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
const bytesOf = (d) => (d.text !== undefined ? enc.encode(d.text) : b64bytes(d.bytes || ''));
const textOf = (d) => (d.text !== undefined ? d.text : dec.decode(b64bytes(d.bytes || '')));

function shownRanges(n, first) {
  if (n <= SHOW_BYTES) return [[0, n]];
  if (first !== null && first + 1 > SHOW_BYTES - LEAD_BYTES) {
    const start = Math.max(first - LEAD_BYTES, HEAD_BYTES);
    return [[0, HEAD_BYTES], [start, Math.min(start + SHOW_BYTES - HEAD_BYTES, n)]];
  }
  return [[0, SHOW_BYTES]];
}

// A `match` message as the worker's row: {i, name, n, p: [[text, hit]…]}.
// Offsets are bytes (rg's), so the line is cut as bytes and each piece
// decoded.
export function matchRow(i, data) {
  let line = bytesOf(data.lines);
  if (line.length && line[line.length - 1] === 10) line = line.subarray(0, line.length - 1);
  const subs = (data.submatches || []).map((m) => [m.start, m.end]);
  const ranges = shownRanges(line.length, subs.length ? subs[0][0] : null);
  const p = [];
  const text = (a, b) => dec.decode(line.subarray(a, b));
  let shownTo = 0;
  ranges.forEach(([rs, re], k) => {
    if (k > 0 && rs > ranges[k - 1][1]) p.push([` … (${rs - ranges[k - 1][1]} bytes) … `, 0]);
    shownTo = re;
    let at = rs;
    for (const [ms, me] of subs) {
      if (me <= rs || ms >= re) continue;
      const [s, e] = [Math.max(ms, rs), Math.min(me, re)];
      if (s > at) p.push([text(at, s), 0]);
      if (e > s) p.push([text(s, e), 1]);
      at = Math.max(at, e);
    }
    if (at < re) p.push([text(at, re), 0]);
  });
  if (line.length > shownTo) p.push([` … (${line.length - shownTo} more bytes)`, 0]);
  return { i, name: textOf(data.path), n: data.line_number, p };
}

// Reads an NDJSON body as it arrives, calling `each(obj)` per line.
async function ndjson(res, each) {
  const reader = res.body.getReader();
  let buf = '';
  const sd = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf += sd.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line) each(JSON.parse(line));
    }
    if (done) break;
  }
  if (buf.trim()) each(JSON.parse(buf));
}

// Reads a text/event-stream body as it arrives, calling `each(event,
// data)` per event (comments, such as the keep-alives, skipped; an event
// without a name is "message").
async function sse(res, each) {
  const reader = res.body.getReader();
  const sd = new TextDecoder();
  let buf = '';
  let event = '';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf += sd.decode(value, { stream: true });
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      // A \r at the end may be the first half of a \r\n.
      if (nl === buf.length - 1 && buf[nl] === '\r' && !done) break;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (data.length || event) each(event || 'message', data.join('\n'));
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      let v = c < 0 ? '' : line.slice(c + 1);
      if (v.startsWith(' ')) v = v.slice(1);
      if (field === 'event') event = v;
      else if (field === 'data') data.push(v);
    }
    if (done) return;
  }
}

const iso = (ms) => new Date(ms).toISOString();

// The page's request (app.js `request()`) as the API's fields.
function apiQuery(req) {
  const q = {
    patterns: [req.patterns.replace(/[\r\n]+$/, '')],
    syntax: req.syntax,
    ignore_case: !!req.ignoreCase,
    word: !!req.word,
    invert: !!req.invert,
  };
  if (req.syntax === 'fuzzy') q.fuzzy_k = req.fuzzy;
  if (req.sinceMs !== undefined) {
    q.since = iso(req.sinceMs);
    q.until = iso(req.untilMs);
  }
  return q;
}

export class ServerEngine {
  constructor() {
    this.health = null;
    this.axis = null;       // {start, bucket, n}: the histogram's fixed grid
    this.controller = null; // the search in flight (aborted by a newer one)
  }

  async fetchHealth() {
    this.health = await (await api('api/v1/health')).json();
    return this.health;
  }

  // Once ready: the corpus's time span, for a histogram grid that stays
  // put from query to query (as the wasm engine's).
  async prepare() {
    const s = await (await api('api/v1/stats', {})).json();
    if (s.oldest && s.newest) {
      const bucket = niceBucket(s.newest.ms - s.oldest.ms);
      const start = Math.floor(s.oldest.ms / bucket) * bucket;
      this.axis = { start, bucket, n: Math.floor((s.newest.ms - start) / bucket) + 1 };
    } else {
      this.axis = null;
    }
    return s;
  }

  // One search: the count and the first rows (streamed: `onRows` is called
  // as they arrive), the histogram and level counts. Resolves to the
  // summary the page renders, in the worker's shape.
  async search(req, onRows) {
    if (this.controller) this.controller.abort();
    const controller = new AbortController();
    this.controller = controller;
    const { signal } = controller;
    const q = apiQuery(req);
    const t0 = performance.now();
    const statsBody = { ...q, count_by: ['level'] };
    if (this.axis) statsBody.histogram = `${this.axis.bucket}ms`;
    const statsP = api('api/v1/stats', statsBody, signal).then((r) => r.json());
    // A rejected stats call must not be unhandled while the search runs.
    statsP.catch(() => {});
    const res = await api('api/v1/search', { ...q, output: 'lines', limit: ROWS }, signal);
    const headersMs = performance.now() - t0;
    const count = Number(res.headers.get('x-logsieve-total'));
    const backend = res.headers.get('x-logsieve-backend') || '';
    const rows = [];
    let searchMs = null;
    let firstRowMs = null;
    await ndjson(res, (m) => {
      if (m.type === 'match') {
        if (firstRowMs === null) firstRowMs = performance.now() - t0;
        rows.push(matchRow(rows.length, m.data));
        if (rows.length === 1 || rows.length % 50 === 0) onRows(rows);
      } else if (m.type === 'summary') {
        const e = m.data.stats.elapsed;
        searchMs = e.secs * 1e3 + e.nanos / 1e6;
      }
    });
    onRows(rows);
    const stats = await statsP;
    const ms = performance.now() - t0;
    return {
      ok: true,
      count,
      rows: count,
      firstRows: rows,
      engine: 'server',
      backend,
      reason: `logsieve serve: ${backend}`,
      ms,
      searchMs,
      headersMs,
      firstRowMs,
      histogram: this.histogram(stats),
      levels: levels(stats),
      stats,
      range: req.sinceMs !== undefined ? [req.sinceMs, req.untilMs] : null,
    };
  }

  // A live tail of the query (no time window: it selects lines appended
  // from now on). Resolves when the stream ends: `{end}` is the server's
  // `event: end` data (`{reason: "until" | "closed"}`) or null when the
  // stream closed without one. Calls `on.ready({files})` once and
  // `on.match(data)` per ripgrep `match` object. Throws as `api` does on a
  // refusal (status 400, 401, 429, 503) and with an AbortError when
  // `signal` aborts it (the fetch is cancelled: the connection closes and
  // the server frees the tail's slot).
  async tail(req, signal, on) {
    const q = apiQuery({ ...req, sinceMs: undefined, untilMs: undefined });
    const res = await api('api/v1/tail', q, signal);
    let end = null;
    await sse(res, (event, data) => {
      if (event === 'ready') on.ready(JSON.parse(data));
      else if (event === 'match') on.match(JSON.parse(data).data);
      else if (event === 'end') end = JSON.parse(data);
    });
    return { end };
  }

  // Rows start..start+count of the same search (a page: limit + cursor).
  async rows(req, start, count) {
    const q = apiQuery(req);
    const res = await api('api/v1/search', { ...q, output: 'lines', limit: count, cursor: String(start) });
    const out = [];
    await ndjson(res, (m) => {
      if (m.type === 'match') out.push(matchRow(start + out.length, m.data));
    });
    return out;
  }

  // The stats answer's histogram on the fixed grid: {start, bucket, counts}.
  histogram(stats) {
    const a = this.axis;
    if (!a || !stats.histogram) return null;
    const counts = new Array(a.n).fill(0);
    for (const b of stats.histogram.buckets) {
      const k = Math.round((b.start_ms - a.start) / a.bucket);
      counts[Math.min(a.n - 1, Math.max(0, k))] += b.count;
    }
    return { start: a.start, bucket: a.bucket, counts };
  }
}

// count_by level as the worker's [[name, n]…], most first.
function levels(stats) {
  if (!stats.groups) return null;
  return stats.groups
    .filter((g) => g.count > 0)
    .map((g) => [g.key.level === null ? '(none)' : g.key.level, g.count])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
