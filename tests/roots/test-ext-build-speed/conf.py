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


def setup(app):
    app.connect("source-read", lambda app, docname, source: _log(app, "read", docname))
    app.connect(
        "html-page-context", lambda app, pagename, *args: _log(app, "written", pagename) if args[-1] else None
    )
