"""Keep incremental builds of a large knowledge base fast.

Two costs dominate a one-page edit at 1,000 articles (``make bench``), and
neither changes the output:

- **Parallel reads of a few pages.** Sphinx 9 reads in worker processes
  whenever ``-j`` is above 1, even a single changed page (since
  sphinx-doc/sphinx#12796, which dropped the old floor of six pages, with no
  setting for one); the worker then pickles the whole environment back to
  the main process, which unpickles it. Sphinx documents no way to read a
  page in the main process under ``-j``: what follows is its serial read,
  with one call outside its documented API (``env.clear_doc``) and one
  builder attribute outside it (``parallel_ok``); tests/test_ext_build_speed.py
  fails loudly if either goes. Below ``kb_parallel_threshold`` pages to read (default 20) this
  extension reads them itself, in the main process, exactly as Sphinx's
  serial read does (``env-purge-doc``, ``env.clear_doc``,
  ``builder.read_doc``), from ``env-before-read-docs``, whose list it then
  empties; ``env-updated`` hands the pages back to Sphinx to be written
  (its documented return value). Likewise, fewer pages than that to write
  are written in the main process: the HTML builder is Sphinx's, with
  ``write_documents`` (documented as the method to override) turning its
  ``parallel_ok`` off first; more pages are written in parallel as usual
  (a title shown in 100 相关文章 lists). A worker's exception can go
  unreported in Sphinx 9 (see KB058 below), so a few pages are also safer
  written here.
  tests/test_build_modes.py compares -j 1 and -j 2 output;
  tests/test_ext_build_speed.py checks which process reads and writes.
- **Pages a worker process failed to read or write.** When Sphinx 9 notices
  a worker's failure while ``ParallelTasks.add_task`` is still queuing
  chunks, it catches the error, terminates the workers already started and
  goes on (a failure first noticed in ``join`` stops the build): those
  workers' pages are neither read nor written, without a word. So every page
  handed to be read must have been read (recorded at ``doctree-read``, in
  the kb domain, which Sphinx merges from the workers), and every page
  handed to ``write_documents`` must have been written in this build;
  otherwise KB058 names it.
- **Garbage collection.** The pickled environment of 1,000 articles
  unpickles into millions of objects that live until the build ends, and
  every page read or written makes a doctree of some 10,000 objects that
  lives a few milliseconds. Python's cyclic collector, left to itself, runs
  whenever enough objects were made: it walks the environment again and
  again, and it moves half-processed doctrees into older generations whose
  collections then cost some 200 ms each (about 20 ms per page written, a
  third of what the main process does for a page of a parallel write,
  measured with ``gc.callbacks`` on the synthetic site). So the collector
  is paused from ``config-inited`` (the last event before Sphinx loads the
  environment) until the build ends (``build-finished``). At
  ``builder-inited`` the objects alive move to the permanent generation
  (``gc.freeze()``), which collections skip; then one collection runs every
  ``GC_PAGES`` pages a process has read (``doctree-read``) or prepared to
  be written (``doctree-resolved``), over the young objects only: doctrees
  are freed in batches, memory stays flat. Worker processes inherit the
  pause and collect likewise as they read; a write worker writes one chunk
  of pages and exits. A process that runs another build (the tests) hands
  the frozen objects back to the collector (``gc.unfreeze()``) when that
  build starts, so the earlier builds are freed; not at ``build-finished``,
  where a collection over the whole environment would cost seconds for
  nothing; the objects made during the build are frozen too, before the
  collector resumes at ``build-finished``.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.util.display import status_iterator

from kb.core.log import getLogger
from kb.core.store import documents
from kb.guard.silent_loss import BuildStopped

logger = getLogger(__name__)

# Whether this process's collector was paused here (and must be resumed),
# and the pages seen since the last collection.
_paused = {"gc": False, "pages": 0}
GC_PAGES = 50


def on_config_inited(app, config) -> None:
    gc.unfreeze()  # an earlier build of this process, if any
    if gc.isenabled():
        gc.disable()  # until the build ends; collected every GC_PAGES pages
        _paused.update(gc=True, pages=0)


def on_builder_inited(app) -> None:
    if _paused["gc"]:
        gc.freeze()


def collect_every_few_pages(app, *args) -> None:
    """doctree-read, doctree-resolved: a page's doctree was made."""
    if not _paused["gc"]:
        return
    _paused["pages"] += 1
    if _paused["pages"] >= GC_PAGES:
        _paused["pages"] = 0
        gc.collect()


def on_build_finished(app, exception) -> None:
    if _paused["gc"]:
        _paused["gc"] = False
        # what this build made moves to the permanent generation first: the
        # collector resumed would otherwise walk it at once (0.4 s at 1,000
        # articles, for a process about to exit); another build of the same
        # process hands it back (config-inited)
        gc.freeze()
        gc.enable()


def on_env_before_read_docs(app, env, docnames: list[str]) -> None:
    _read_here.clear()  # one build at a time: nothing from a build that stopped
    _to_read[id(env)] = list(docnames)
    if not docnames or len(docnames) >= app.config.kb_parallel_threshold:
        return
    read_here = list(docnames)
    docnames.clear()  # nothing left for worker processes
    for docname in status_iterator(
        read_here, "reading sources... ", "purple", len(read_here), app.config.verbosity
    ):
        app.emit("env-purge-doc", env, docname)
        env.clear_doc(docname)
        app.builder.read_doc(docname)
    _read_here[id(env)] = read_here


# What on_env_before_read_docs read, for env-updated of the same build.
_read_here: dict[int, list[str]] = {}


# The pages handed to be read in this build (by Sphinx or above).
_to_read: dict[int, list[str]] = {}


def on_doctree_read(app, doctree) -> None:
    documents(app.env, "read")[app.env.docname] = True
    collect_every_few_pages(app)


def _not_done(docname: str, what: str) -> None:
    logger.warning(
        "KB058 the page was not %s: a worker process of the parallel build failed "
        "and Sphinx went on without it; build again (with -j 1 to see the error)",
        what,
        location=(docname, None),
        type="kb",
        subtype="parallel",
    )


def on_env_updated(app, env) -> list[str]:
    """The pages read above: Sphinx writes them, as the ones it read itself.
    And every page handed to be read was read (KB058)."""
    read = documents(env, "read")
    lost = sorted(d for d in _to_read.pop(id(env), []) if d not in read)
    for docname in lost:
        _not_done(docname, "read")
    if lost:  # writing a page that was not read would stop with a traceback
        raise BuildStopped
    return _read_here.pop(id(env), [])


class HTMLBuilder(StandaloneHTMLBuilder):
    """Sphinx's HTML builder; below kb_parallel_threshold pages, it writes
    them in this process. Once a document's page is written, it emits
    ``kb-html-page-written`` (page name, file) in the process that wrote it
    (a worker process in a parallel write), for checks of the written bytes
    (kb.guard.html)."""

    def write_doc(self, docname: str, doctree) -> None:
        super().write_doc(docname, doctree)
        page = Path(self.get_outfilename(docname))
        if page.is_file():
            self.events.emit("kb-html-page-written", docname, page)

    def write_documents(self, docnames) -> None:
        if len(docnames) < self.config.kb_parallel_threshold:
            self.parallel_ok = False
        started = _file_clock(Path(self.outdir))
        super().write_documents(docnames)
        for docname in sorted(docnames):
            page = Path(self.outdir, self.get_target_uri(docname))
            if not page.is_file() or page.stat().st_mtime_ns < started:
                _not_done(docname, "written")


def _file_clock(folder: Path) -> int:
    """Now, as the file system of ``folder`` stamps files (its clock can lag
    Python's by a tick)."""
    stamp = folder / ".kb-write-started"
    stamp.touch()
    try:
        return stamp.stat().st_mtime_ns
    finally:
        stamp.unlink()


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.store")  # the pages read, merged from the workers
    app.add_config_value("kb_parallel_threshold", 20, "", types=[int])
    app.add_builder(HTMLBuilder, override=True)
    app.add_event("kb-html-page-written")
    app.connect("config-inited", on_config_inited)
    app.connect("builder-inited", on_builder_inited)
    # Last of the handlers of this event (the default is 500): the others see
    # the pages to read before they are read here and the list is emptied
    # (kb.guard.silent_loss refuses a page over 1 MiB or not UTF-8 there),
    # whatever the order of conf.py's extensions (tests/test_ext_build_speed.py).
    app.connect("env-before-read-docs", on_env_before_read_docs, priority=900)
    app.connect("env-updated", on_env_updated)
    app.connect("doctree-read", on_doctree_read)
    app.connect("doctree-resolved", collect_every_few_pages)
    app.connect("build-finished", on_build_finished)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
