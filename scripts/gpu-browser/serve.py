#!/usr/bin/env python3
"""Serves a folder on 127.0.0.1, opens one page of it in a browser, and
waits until the page POSTs its result to /result (or the time runs out).
POSTs to /partial replace FILE.partial; to any other path, append a line
to FILE.<path>.

  serve.py --root DIR --page PAGE --out FILE [--timeout S] -- BROWSER ARGS...

The page's URL is appended to the browser's arguments. The result is
written to FILE; the exit status is 0 when one came, 2 when none did.
Wasm is served as application/wasm (the engine's module needs it)."""
import argparse, http.server, os, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument('--root', required=True)
ap.add_argument('--page', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--timeout', type=float, default=60)
ap.add_argument('browser', nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.browser[1:] if a.browser[:1] == ['--'] else a.browser
done = threading.Event()


class H(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      '.wasm': 'application/wasm', '.js': 'text/javascript', '.mjs': 'text/javascript'}

    def __init__(self, *x, **k):
        super().__init__(*x, directory=a.root, **k)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        name = self.path.strip('/')
        whole = name in ('result', 'partial')  # replaced each time; others are appended to
        path = a.out if name == 'result' else a.out + '.' + ''.join(c for c in name if c.isalnum())
        with open(path, 'wb' if whole else 'ab') as f:
            f.write(body if whole else body + b'\n')
        self.send_response(204)
        self.end_headers()
        if name == 'result':
            done.set()

    def log_message(self, *x):
        pass


srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f'http://127.0.0.1:{srv.server_address[1]}/{a.page}'
t0 = time.time()
p = subprocess.Popen(cmd + [url])
while not done.is_set() and time.time() - t0 < a.timeout and p.poll() is None:
    done.wait(0.2)
got = done.is_set()
print(f'serve.py: {"result" if got else "NO result"} after {time.time() - t0:.1f} s; browser '
      f'{"exited " + str(p.returncode) if p.poll() is not None else "still running, stopped"}', flush=True)
if p.poll() is None:
    p.terminate()
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
srv.shutdown()
sys.exit(0 if got else 2)
