#!/usr/bin/python3
# Load an easypp-sim --report page in headless Chromium (Debian's chromium)
# and check it the way a reader would see it:
#   - no console error, no uncaught exception, no failed load;
#   - nothing requested but the page itself (self-contained: no network);
#   - every expected chart is there, has a drawn SVG of a sensible size,
#     and its screenshot is not blank.
#
#   check_report_page.py PAGE.html CHART-ID...
#
# Talks the DevTools protocol over --remote-debugging-pipe (file descriptors
# 3 and 4, NUL-separated JSON), so it needs nothing but Python and Pillow
# (python3-pil, which python3-matplotlib already pulls in). Prints one line
# per check ("ok ..." / "FAIL ..."); exit 0 when all pass.
import base64
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TIMEOUT = 60.0


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="easypp-chromium-")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def child_fds():
            # Chromium reads fd 3 and writes fd 4. Move both out of the way
            # first, in case a pipe end already sits on 3 or 4.
            r = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage",
             "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "--window-size=1280,900", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.from_r], [], [], left)
            if r:
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe (did it start?)")
                self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        want = self.send(method, params, session)
        deadline = time.time() + TIMEOUT
        while True:
            m = self.read_message(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session=None):
        deadline = time.time() + TIMEOUT
        for i, m in enumerate(self.events):
            if m.get("method") == method and (session is None or m.get("sessionId") == session):
                return self.events.pop(i)
        while True:
            m = self.read_message(deadline)
            if m.get("method") == method and (session is None or m.get("sessionId") == session):
                return m
            self.events.append(m)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


# For each chart: its figure's box, the size of its <svg>, and how many shapes
# the SVG draws.
PROBE = """
(() => {
  const out = {};
  for (const f of document.querySelectorAll('figure.chart')) {
    const svg = f.querySelector('svg');
    const r = f.getBoundingClientRect();
    const s = svg ? svg.getBoundingClientRect() : null;
    out[f.id] = {
      x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height,
      svg_w: s ? s.width : 0, svg_h: s ? s.height : 0,
      shapes: svg ? svg.querySelectorAll('path, rect, line, polyline, use').length : 0,
    };
  }
  return JSON.stringify({charts: out, scripts: document.scripts.length,
                         title: document.title});
})()
"""


def non_blank(png):
    """Share of pixels that are not (near) white, and the number of colours."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    img.thumbnail((400, 400))
    px = list(img.getdata())
    ink = sum(1 for r, g, b in px if min(r, g, b) < 235)
    return ink / float(len(px)), len(set(px))


def main(argv):
    if len(argv) < 3:
        print("usage: check_report_page.py PAGE.html CHART-ID...", file=sys.stderr)
        return 2
    page = os.path.abspath(argv[1])
    expected = argv[2:]
    url = "file://" + page
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            fails.append(what)

    b = Browser()
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sess = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(domain + ".enable", {}, sess)
        b.call("Page.navigate", {"url": url}, sess)
        b.wait_event("Page.loadEventFired", sess)
        probe = json.loads(b.call("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                                  sess)["result"]["value"])
        shots = {}
        for cid, c in probe["charts"].items():
            if c["w"] > 0 and c["h"] > 0:
                shot = b.call("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": c["x"], "y": c["y"], "width": c["w"], "height": c["h"], "scale": 1}},
                    sess)
                shots[cid] = base64.b64decode(shot["data"])
        # Let late messages arrive, then read every event so far.
        b.call("Runtime.evaluate", {"expression": "1"}, sess)
    finally:
        b.close()

    errors, requests = [], []
    for m in b.events:
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console: " + " ".join(str(a.get("value", a.get("description", "")))
                                                 for a in p.get("args", [])))
        elif meth == "Runtime.exceptionThrown":
            errors.append("exception: " + p.get("exceptionDetails", {}).get("text", "?"))
        elif meth == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", "?"))
        elif meth == "Network.loadingFailed":
            errors.append("load failed: " + p.get("errorText", "?"))
        elif meth == "Network.requestWillBeSent":
            requests.append(p.get("request", {}).get("url", "?"))

    check(not errors, "no console errors%s" % ("" if not errors else ": " + "; ".join(errors[:5])))
    foreign = [u for u in requests if u != url and not u.startswith("data:")]
    check(not foreign, "self-contained: nothing requested but the page%s" % (
        "" if not foreign else " (requested: %s)" % ", ".join(foreign[:5])))
    check(probe["scripts"] == 0, "no script in the page")
    charts = probe["charts"]
    for cid in expected:
        c = charts.get("chart-" + cid)
        if not c:
            check(False, "chart %s present" % cid)
            continue
        check(c["svg_w"] >= 300 and c["svg_h"] >= 150 and c["shapes"] >= 20,
              "chart %s present and drawn (svg %dx%d, %d shapes)" % (cid, c["svg_w"], c["svg_h"], c["shapes"]))
        png = shots.get("chart-" + cid)
        ink, colours = non_blank(png) if png else (0.0, 0)
        check(ink >= 0.02 and colours >= 3,
              "chart %s not blank on screen (%.1f%% inked pixels, %d colours)" % (cid, 100 * ink, colours))
    extra = sorted(set(charts) - {"chart-" + c for c in expected})
    check(not extra, "no unexpected chart%s" % ("" if not extra else " (%s)" % ", ".join(extra)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
