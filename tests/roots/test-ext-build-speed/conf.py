# Five pages; which process reads and writes each is logged
# (tests/test_ext_build_speed.py).
import os
from pathlib import Path

project = "speed"
extensions = ["kb.site.build_speed"]
kb_parallel_threshold = 4


def _log(app, what, docname):
    with open(Path(app.srcdir) / f"{what}-by.txt", "a", encoding="utf-8") as f:
        f.write(f"{docname} {os.getpid()}\n")


# KB_TEST_FAIL_READ / KB_TEST_FAIL_WRITTEN=<docname>: a worker process fails on that page.
_MAIN = os.getpid()


def _fail(what, docname):
    if os.environ.get(f"KB_TEST_FAIL_{what.upper()}") == docname and os.getpid() != _MAIN:
        raise RuntimeError(f"a worker failed on {docname}")


def _read(app, docname, source):
    _fail("read", docname)
    _log(app, "read", docname)


def _written(app, pagename, templatename, context, doctree):
    if doctree is not None:
        _fail("written", pagename)
        _log(app, "written", pagename)


def setup(app):
    app.connect("source-read", _read)
    app.connect("html-page-context", _written)
