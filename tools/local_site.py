"""A built site on 127.0.0.1, opened in Debian's chromium.

The one setup that the tests, ``bench_search.py`` and ``page_weight.py``
share: a quiet static server that answers a missing path with the site's
own ``404.html`` (as GitHub Pages does), and Playwright driving
``/usr/bin/chromium`` with the flags this workplace requires (never a
downloaded browser).
"""

from __future__ import annotations

import functools
import gzip
import http.server
import os
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("KB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, no request log, and the site's 404.html for a missing path.

    With `served` set to a list, each file sent is appended to it as
    (URL path, bytes sent: headers and body): what the browser downloaded,
    its workers' requests included, which Playwright's request events miss.
    """

    served: list | None = None

    def log_message(self, *args) -> None:
        pass

    def end_headers(self) -> None:
        self.header_bytes = sum(len(chunk) for chunk in getattr(self, "_headers_buffer", []))
        super().end_headers()

    def copyfile(self, source, outputfile) -> None:
        start = source.tell()
        super().copyfile(source, outputfile)
        if self.served is not None:
            path = self.path.split("?")[0]
            self.served.append((path, getattr(self, "header_bytes", 0) + source.tell() - start))

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.exists():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


# Sent as they are by a server that compresses text: compressed already.
PACKED = (
    ".woff",
    ".woff2",
    ".png",
    ".jpg",
    ".jpeg",
    ".webp",
    ".gif",
    ".pf_index",
    ".pf_fragment",
    ".pf_meta",
    ".pagefind",
)


def served_file(site: Path, url_path: str) -> Path:
    """The file of `site` that a URL path (as in QuietHandler.served) names."""
    file = site / urllib.parse.unquote(url_path).lstrip("/")
    return file / "index.html" if file.is_dir() else file


def gzip_size(file: Path) -> int:
    """Bytes of `file`'s body as a compressing server (GitHub Pages) sends
    it: text at gzip level 6, compressed formats as they are."""
    return _gzip_size(file, file.stat().st_mtime_ns)


@functools.cache
def _gzip_size(file: Path, mtime_ns: int) -> int:
    body = file.read_bytes()
    return len(body) if file.name.endswith(PACKED) else len(gzip.compress(body, 6))


@contextmanager
def serve(
    directory: Path, served: list | None = None, handler_class: type[QuietHandler] = QuietHandler
) -> Iterator[str]:
    """Serve `directory` on a free port; yields the base URL. With `served`,
    every file sent is appended to it (QuietHandler.served)."""
    handler = functools.partial(
        type("Handler", (handler_class,), {"served": served}), directory=str(directory)
    )
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def launch(playwright):
    """Debian's chromium, headless, with no background traffic."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
