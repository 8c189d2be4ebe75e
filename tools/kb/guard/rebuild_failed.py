"""A build that ended with warnings is not trusted by the next one.

With ``-W --keep-going`` a build with warnings exits 1 but still saves the
environment and writes the pages. The next build reads only changed sources,
so the warnings of unchanged ones are not repeated: it would exit 0 and the
bad output would stay published (Sphinx forgets warnings,
sphinx-doc/sphinx#725). So this extension notes which documents warned, and
the next build reads, writes and checks them again, until they are fixed:

- every warning (and error) of the build is collected from the ``sphinx``
  logger and tied to its document: a ``(docname, line)`` location, a
  ``path:line`` of a source, a node, or a written page (``KB015`` reports
  ``_build/html/<page>.html:<line>``);
- a warning tied to no document (a data file, ``_static/``, an included
  file, no location at all) makes the next build read every document;
- at ``build-finished`` the set is saved next to the environment
  (``kb-warned.json``), and saved again for each warning that a later
  ``build-finished`` handler logs (kb.guard.html's KB015 among them), so
  the order of the handlers does not matter; the next build returns the
  set from ``env-get-outdated``.
  Each build marks the file unfinished before it reads: a build that never
  reached ``build-finished`` (Ctrl-C, a killed job; Sphinx keeps the
  environment it saved before writing) leaves the next one reading
  everything.

Sphinx has no public API for a build's warnings (sphinx-doc/sphinx#725 asks
for them to be kept across builds): the location is read from the log
record's ``location`` attribute, as Sphinx's own log filters do.
When that changes, every warning counts as tied to no document (a full
read: slower, never wrong), and tests/test_hostile_input.py fails on the
number of documents re-read.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.utils import get_source_line

from kb.core.log import getLogger

logger = getLogger(__name__)

STATE_FILE = "kb-warned.json"
EVERY = "*"  # a warning tied to no document


class _Collector(logging.Handler):
    """The locations of this build's warnings (raw, mapped at the end)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.locations: set[Any] = set()  # one entry per place, however many warnings it has
        self.app = None
        # once build-finished has saved the set: {"docs", "every"}, kept up
        # to date with the warnings logged after it
        self.finished: dict[str, Any] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.app is None or not self._counted(record):
            return
        location = getattr(record, "location", None)
        if isinstance(location, nodes.Node):  # mapped now: the node changes later
            source, line = get_source_line(location)
            location = f"{source}:{line or ''}" if source else None
        if self.finished is None:
            self.locations.add(location)
            return
        doc = docs_of(self.app, location, written_pages(self.app))
        if doc == EVERY:
            self.finished["every"] = True
        else:
            self.finished["docs"].add(doc)
        _save(self.app, complete=True, **self.finished)

    def _counted(self, record: logging.LogRecord) -> bool:
        """Not silenced by ``suppress_warnings`` (the documented matching)."""
        kind, sub = getattr(record, "type", None), getattr(record, "subtype", None)
        try:
            suppressed = set(self.app.config.suppress_warnings or ())
        except AttributeError:
            return True
        if not kind or not suppressed:
            return True
        return not ({kind, f"{kind}.*", f"{kind}.{sub}"} & suppressed)


_collector = _Collector()
_previous: dict[str, Any] = {"docs": set(), "every": True}


def _state_path(app) -> Path:
    return Path(app.doctreedir) / STATE_FILE


def _save(app, complete: bool, docs: set[str], every: bool) -> None:
    path = _state_path(app)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"complete": complete, "every": every, "docs": sorted(docs)}), encoding="utf-8")
    os.replace(tmp, path)


def _load(app) -> dict[str, Any]:
    """What the last build left; unknown (no file, an unfinished build): everything."""
    try:
        saved = json.loads(_state_path(app).read_text(encoding="utf-8"))
        if saved.get("complete") is True:
            return {"docs": set(saved["docs"]), "every": bool(saved["every"])}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return {"docs": set(), "every": True}


def on_env_get_outdated(app, env, added, changed, removed) -> set[str]:
    """Before anything is read, saved or written: what the last build left,
    and "unfinished" until this one reaches build-finished."""
    _collector.finished = None  # this build's warnings are collected from here
    _previous.update(_load(app))
    _save(app, complete=False, docs=_previous["docs"], every=True)
    if _previous["every"]:
        # no record of a clean finish: a fresh environment reads everything
        # anyway; a kept one (an interrupted or unknown build) must too
        if env.found_docs - added:
            logger.info(
                "the last build did not finish cleanly, or warned outside any "
                "document: reading every document again"
            )
        return set(env.found_docs)
    again = _previous["docs"] & env.found_docs
    if again:
        logger.info(
            "reading again %d document(s) that warned in the last build: %s",
            len(again),
            ", ".join(sorted(again)),
        )
    return again


def _within(path: Path, folder: Path) -> str | None:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return None


def docs_of(app, location: Any, pages: dict[str, str]) -> str:
    """The document a warning's location belongs to, or ``EVERY``;
    ``pages``: written page (relative to the output folder) -> docname."""
    env = app.env
    if isinstance(location, tuple) and len(location) == 2:
        docname = location[0]
        return docname if docname in env.found_docs else EVERY
    if not isinstance(location, str) or not location:
        return EVERY
    if ":" not in location:  # a bare docname, as Sphinx accepts it
        if location in env.found_docs:
            return location
        where = location
    else:
        where, _, tail = location.rpartition(":")
        if not (tail.isdigit() or tail == ""):
            where = location
    path = Path(os.path.abspath(where))
    page = _within(path, Path(os.path.abspath(app.outdir)))
    if page is not None:
        return pages.get(page, EVERY)
    if _within(path, Path(os.path.abspath(app.srcdir))) is not None:
        docname = env.path2doc(str(path))
        return docname if docname in env.found_docs else EVERY
    return EVERY


def written_pages(app) -> dict[str, str]:
    pages = {}
    for docname in app.env.found_docs:
        uri = app.builder.get_target_uri(docname)
        pages[uri + "index.html" if uri.endswith("/") else uri] = docname
    return pages


def on_build_finished(app, exception) -> None:
    pages = written_pages(app) if _collector.locations else {}
    warned = {docs_of(app, location, pages) for location in _collector.locations}
    _collector.locations = set()  # a next build of this application starts afresh
    every = EVERY in warned or exception is not None  # Sphinx drops the environment then
    _collector.finished = {"docs": warned - {EVERY}, "every": every}
    _save(app, complete=True, **_collector.finished)


def setup(app) -> dict[str, Any]:
    # Sphinx's logging setup clears this logger's handlers for each new
    # application, before extensions are set up: add ours once per application.
    sphinx_logger = logging.getLogger("sphinx")
    if _collector not in sphinx_logger.handlers:
        sphinx_logger.addHandler(_collector)
    # from here on: warnings of the configuration and of setup count too
    _collector.app, _collector.locations, _collector.finished = app, set(), None
    app.connect("env-get-outdated", on_env_get_outdated)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
