"""What the written site shows of other pages, and which pages it holds,
kept in step with what is really on disk, however a build ends.

Pages show other pages: listings, 相关文章, the sidebar window and
previous / next all show titles. An incremental build writes a page again
when what it shows changed. Comparing with the environment does not tell
that: Sphinx saves the environment after reading and before writing, so a
build interrupted while writing (Ctrl-C, a killed CI job) would leave pages
with old titles that the next build believes are current. So each extension
compares with the state recorded here, which is saved only once a build has
written every page (``build-finished`` without an exception):

- ``before(app, key)``: what the pages showed after the last complete build
  (None: unknown, so every page concerned is written);
- ``record(app, key, value)``: what this build's pages show;
- ``current(app, key)``: what was recorded so far in this build (None if
  nothing), for the pages written in this build.

It also removes the static files the project no longer has, and the pages
of documents that no longer exist (deleted or
renamed sources, tags dropped from the vocabulary): Sphinx leaves their HTML
in the output folder, where readers and the search index would still find
them. A page is kept if a document or a generated page (``html-page-context``
in the main process) produced it; ``finish(app)`` tells the search index
how many went.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

from kb.core.log import getLogger

logger = getLogger(__name__)

STATE_FILE = "kb-output-state.pickle"
# Output folders that hold no pages of ours: assets, and the search index.
NOT_PAGES = ("_static", "_images", "_downloads", "_sources", "pagefind", ".doctrees")

# One build per process: what the last complete build recorded, what this
# build records, the generated pages it wrote, the pages it removed.
_state: dict[str, Any] = {"before": {}, "now": {}, "generated": set(), "removed": 0, "finished": False}


def _path(app) -> Path:
    return Path(app.doctreedir) / STATE_FILE


def before(app, key: str) -> Any:
    return _state["before"].get(key)


def record(app, key: str, value: Any) -> None:
    _state["now"][key] = value


def current(app, key: str) -> Any:
    return _state["now"].get(key)


def on_builder_inited(app) -> None:
    _state.update(before={}, now={}, generated=set(), removed=0, finished=False)
    if app.builder.format != "html":
        return
    try:
        with open(_path(app), "rb") as f:
            _state["before"] = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        _state["before"] = {}  # no complete build yet: every page is written


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is None:  # generated pages: written by the main process in every build
        _state["generated"].add(pagename)


def remove_stale_pages(app) -> int:
    """Delete HTML files that no document or generated page of this build made."""
    outdir = Path(app.outdir)
    pages = [*app.env.found_docs, *_state["generated"]]
    keep = {_written_file(app.builder.get_target_uri(page)) for page in pages}
    removed = 0
    for folder, subdirs, files in os.walk(outdir):
        if Path(folder) == outdir:
            subdirs[:] = [d for d in subdirs if d not in NOT_PAGES]
        for name in files:
            path = Path(folder) / name
            if name.endswith(".html") and path.relative_to(outdir).as_posix() not in keep:
                path.unlink()
                removed += 1
    return removed


def _written_file(uri: str) -> str:
    """The file a page's URI is written to: ``dirhtml`` links ``a/b/`` and
    writes ``a/b/index.html``; ``singlehtml`` links ``index.html#document-a``."""
    uri = uri.split("#", 1)[0]
    return uri + "index.html" if uri == "" or uri.endswith("/") else uri


def project_static_files(app) -> list[str]:
    """The files of the project's own static folders (relative entries of
    html_static_path), as paths under _static/."""
    names = []
    for entry in app.config.html_static_path:
        if os.path.isabs(entry):
            continue  # an extension's own folder
        folder = Path(app.confdir) / entry
        if folder.is_dir():
            names += [f.relative_to(folder).as_posix() for f in folder.rglob("*") if f.is_file()]
    return sorted(names)


def remove_stale_static(app) -> None:
    """Sphinx copies static files but never removes one: a file deleted from
    _static/ would stay published. What the last complete build copied from
    the project, and this one did not, goes."""
    now = project_static_files(app)
    record(app, "static-files", now)
    gone = set(before(app, "static-files") or []) - set(now)
    for name in sorted(gone):
        path = Path(app.outdir) / "_static" / name
        if path.is_file():
            path.unlink()
            logger.info("removed _static/%s, no longer in the project's static files", name)


def finish(app) -> int:
    """Once every page is written: remove stale pages, save what the pages
    show. Returns how many pages were removed. Runs once per build, from
    whichever ``build-finished`` handler asks first (kb.search.index asks before
    it indexes the site)."""
    if _state["finished"]:
        return _state["removed"]
    _state["finished"] = True
    _state["removed"] = remove_stale_pages(app)
    remove_stale_static(app)
    if _state["removed"]:
        logger.info("removed %d page(s) whose source no longer exists", _state["removed"])
    path = _path(app)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump({**_state["before"], **_state["now"]}, f, pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return _state["removed"]


def on_build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        finish(app)


def setup(app) -> dict[str, Any]:
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
