"""The rendered book, checked as a reader sees it: offline, in headless Chromium.

Runs only against a built book: set ``DPCORE_BOOK_HTML`` to the HTML folder
(``.ci/run`` does, after ``tasks.py book``); otherwise every test here is
skipped. Needs Debian's ``chromium`` (``.ci/run`` installs it).

Static checks (no browser): no page loads anything from another host (no CDN:
MathJax is served from ``_static/mathjax``); every link from the ledger and
errata pages to a chapter cell points at an anchor that exists; every public
name of :mod:`dpcore` is documented on the API page.

Browser checks, for every page of the book: equations typeset by MathJax
(every Sphinx math element holds a MathJax container, no MathJax error, no raw
TeX left in the text), every image loaded (``naturalWidth > 0``), no console
error or uncaught exception, and no request to any host but the local test
server. Chromium is driven through the DevTools protocol over a pipe
(``--remote-debugging-pipe``), so the test needs no extra package and opens no
debugging port. Screenshots of the first chapter (whole page) and of the top of the ledger
are kept under ``<html>/_artifacts/``.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HTML_ENV = os.environ.get("DPCORE_BOOK_HTML")
pytestmark = pytest.mark.skipif(not HTML_ENV, reason="set DPCORE_BOOK_HTML to a built book's HTML folder")
HTML = Path(HTML_ENV or ".").resolve()
SKIP_PAGES = {"genindex.html", "search.html", "py-modindex.html"}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--window-size=1280,1000",
    "--remote-debugging-pipe",
]


def book_pages() -> list[Path]:
    pages = [p for p in sorted(HTML.rglob("*.html")) if p.name not in SKIP_PAGES]
    # Jupyter Book writes index.html as a bare redirect to the root page (checked itself)
    pages = [p for p in pages if 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8", errors="replace")[:500]]
    return [p for p in pages if not {"_static", "_sources", "_artifacts", "_images"} & set(p.relative_to(HTML).parts)]


# --------------------------------------------------------------------------- static checks
REMOTE_LOAD = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed)\b[^>]*?\b(?:src|href|data)\s*=\s*[\"']((?:https?:)?//[^\"']+)",
    re.I,
)
CDN_NAMES = re.compile(
    r"cdn\.jsdelivr|cdnjs\.|unpkg\.com|googleapis\.com|gstatic\.com|mathjax\.org/|polyfill\.io", re.I
)


def test_built_html_requests_nothing_from_a_cdn() -> None:
    pages = list(HTML.rglob("*.html"))
    assert pages, f"no HTML under {HTML}"
    offenders = {}
    for page in pages:
        text = page.read_text(encoding="utf-8", errors="replace")
        found = REMOTE_LOAD.findall(text) + [m.group(0) for m in CDN_NAMES.finditer(text)]
        if found:
            offenders[str(page.relative_to(HTML))] = sorted(set(found))[:5]
    assert not offenders, f"pages that load from other hosts: {offenders}"
    mathjax = HTML / "_static" / "mathjax" / "tex-mml-chtml.js"
    assert mathjax.is_file(), "MathJax is not served from the build (_static/mathjax)"
    chapter = next(iter(sorted((HTML / "chapters").glob("*.html"))))
    assert "_static/mathjax/tex-mml-chtml.js" in chapter.read_text(encoding="utf-8")


def test_every_chapter_shows_its_figures() -> None:
    """Each chapter draws at least one matplotlib figure; it must reach the HTML as an image.

    (A non-inline matplotlib backend in the kernels, e.g. ``MPLBACKEND=Agg``, silently drops
    every figure from the book while all other checks still pass.)
    """
    chapters = sorted((HTML / "chapters").glob("*.html"))
    assert chapters, "no chapter pages were built"
    figure = re.compile(r"<img[^>]+src=\"[^\"]*_images/[^\"]+\.png")
    missing = [p.name for p in chapters if not figure.search(p.read_text(encoding="utf-8"))]
    assert not missing, f"chapters without a rendered figure: {missing}"


def test_ledger_and_errata_links_reach_their_anchors() -> None:
    checked = 0
    for name in ("ledger.html", "errata.html"):
        page = HTML / name
        assert page.is_file(), f"{name} was not built"
        text = page.read_text(encoding="utf-8")
        assert "not recorded in this build" not in text, f"{name}: a declared claim has no result"
        for href in re.findall(r'href="(chapters/[^"#]+\.html)#(ledger-[a-z0-9-]+)"', text):
            target, anchor = href
            assert f'id="{anchor}"' in (HTML / target).read_text(encoding="utf-8"), f"{name}: {target}#{anchor}"
            checked += 1
    from dpbook import ledger

    if ledger.claims():
        assert checked > 0, "the ledger links to no cell at all"


def test_api_page_documents_every_public_name() -> None:
    import dpcore

    text = (HTML / "api.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="([^"]+)"', text))
    missing = []
    for name in dpcore.__all__:
        obj = getattr(dpcore, name)
        if isinstance(obj, type(dpcore)):
            ok = f"module-{obj.__name__}" in ids
        else:
            ok = any(i.startswith("dpcore.") and i.endswith("." + name) for i in ids)
        if not ok:
            missing.append(name)
    assert not missing, f"public names of dpcore missing from the API page: {missing}"


# --------------------------------------------------------------------------- a tiny CDP client
class Chromium:
    """Chromium with the DevTools protocol on fds 3/4 (``--remote-debugging-pipe``)."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="dpcore-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: commands on fd 3, responses on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 60.0
    ) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            ev = self._read_message(deadline)
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:  # noqa: BLE001 - it may already be gone
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("Debian's chromium is not installed (apt-get install -y chromium)")
    chromium = Chromium(binary)
    yield chromium
    chromium.close()


# Runs in the page once it has loaded: waits for MathJax and the images, then reports.
PAGE_REPORT_JS = r"""
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const hasMath = document.querySelector('.math') !== null;
  let t0 = Date.now();
  while (hasMath && !(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() - t0 < 20000) {
    await sleep(50);
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const imgs = Array.from(document.images);
  await Promise.race([
    Promise.all(imgs.map(i => i.complete ? 1 : new Promise(r => {
      i.addEventListener('load', r); i.addEventListener('error', r); }))),
    sleep(20000)]);
  const mathEls = Array.from(document.querySelectorAll('.math'));
  const untypeset = mathEls.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80));
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, textarea, .highlight, .search-button-field')
       .forEach(e => e.remove());
  const text = clone.textContent;
  const rawTex = [];
  const re = /\\\(|\\\[|\$\$|\\begin\{|\\frac\b|\\mathrm\b|\\varepsilon\b|(^|[^\\\w])\$[^$\s][^$\n]{0,200}\$/g;
  let m;
  while ((m = re.exec(text)) !== null && rawTex.length < 5) {
    rawTex.push(text.slice(Math.max(0, m.index - 30), m.index + 50).replace(/\s+/g, ' '));
  }
  return {
    title: document.title,
    mathjax: !!window.MathJax,
    math: mathEls.length,
    containers: document.querySelectorAll('mjx-container').length,
    untypeset: untypeset.slice(0, 5),
    merrors: Array.from(document.querySelectorAll('mjx-merror')).map(e => e.textContent.slice(0, 80)).slice(0, 5),
    rawTex: rawTex,
    images: imgs.map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0})),
    height: Math.ceil(document.documentElement.scrollHeight),
  };
})()
"""


def test_every_page_renders_offline(server: str, browser: Chromium) -> None:
    pages = book_pages()
    chapters = [p for p in pages if p.parent.name == "chapters"]
    assert chapters, f"no chapter pages under {HTML / 'chapters'}"
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable", session=session)

    problems: dict[str, list[str]] = {}
    artifacts = HTML / "_artifacts"
    artifacts.mkdir(exist_ok=True)
    for page in pages:
        rel = page.relative_to(HTML).as_posix()
        browser.events.clear()
        browser.send("Page.navigate", {"url": server + rel}, session=session)
        browser.wait_event("Page.loadEventFired", timeout=60)
        report = browser.send(
            "Runtime.evaluate",
            {"expression": PAGE_REPORT_JS, "awaitPromise": True, "returnByValue": True},
            session=session,
            timeout=90,
        )
        if "exceptionDetails" in report:
            problems[rel] = [f"report script failed: {report['exceptionDetails']}"]
            continue
        r = report["result"]["value"]
        time.sleep(0.2)  # let late console messages arrive
        browser.send("Runtime.evaluate", {"expression": "1"}, session=session)  # flush pending events
        issues: list[str] = []
        if r["math"] and not r["mathjax"]:
            issues.append("the page has math but MathJax did not load")
        if r["untypeset"]:
            issues.append(f"math not typeset: {r['untypeset']}")
        if r["math"] and r["containers"] < r["math"]:
            issues.append(f"{r['math']} math elements but only {r['containers']} MathJax containers")
        if r["merrors"]:
            issues.append(f"MathJax errors: {r['merrors']}")
        if r["rawTex"]:
            issues.append(f"raw TeX left in the text: {r['rawTex']}")
        bad_imgs = [i["src"] for i in r["images"] if not i["ok"]]
        if bad_imgs:
            issues.append(f"images that did not load: {bad_imgs}")
        for ev in browser.events:
            method, params = ev.get("method"), ev.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                issues.append(f"console.{params['type']}: {args[:200]}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                issues.append(f"uncaught exception: {details.get('exception', {}).get('description', details)}"[:300])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                issues.append(f"console error: {entry.get('text', '')[:200]} {entry.get('url', '')}")
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if not url.startswith((server, "data:", "blob:", "about:")):
                    issues.append(f"request leaves the machine: {url}")
        if issues:
            problems[rel] = issues
        if page == chapters[0] or rel == "ledger.html":
            height = min(max(r["height"], 1000), 12000 if page == chapters[0] else 4000)
            browser.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
            browser.send("Emulation.clearDeviceMetricsOverride", session=session)
            (artifacts / f"{page.stem}.png").write_bytes(base64.b64decode(shot["data"]))
    assert not problems, "pages that do not render cleanly offline:\n" + json.dumps(problems, indent=1)
    assert (artifacts / f"{chapters[0].stem}.png").stat().st_size > 10_000
