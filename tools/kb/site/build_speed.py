"""Keep incremental builds of a large knowledge base fast.

Two costs dominate a one-page edit at 1,000 articles (``make bench``), and
neither changes the output:

- **Parallel reads of a few pages.** Sphinx 9 uses its worker processes for
  every read once ``-j`` is above 1, even for a single changed page; each
  worker then pickles the whole environment back to the main process. Below
  ``kb_parallel_threshold`` pages to read (default 20) this build reads
  serially, and writes serially unless it has that many pages to write;
  full builds stay parallel. tests/test_build_modes.py
  compares -j 1 and -j 2 output.
- **Garbage collection over the loaded environment.** The pickled
  environment of 1,000 articles unpickles into millions of objects that live
  until the process ends; Python's cyclic collector walks all of them again
  and again while they are loaded and while pages are written (about 3 s of
  a 12 s edit). The collector is paused from this extension's setup until
  the environment is loaded; then those objects move to the permanent
  generation (``gc.freeze()``), which the collector skips, and collection
  resumes for everything new.
"""

from __future__ import annotations

import gc
from typing import Any

from sphinx.util.parallel import parallel_available


def on_env_before_read_docs(app, env, docnames) -> None:
    if not gc.isenabled():  # paused in setup(), once per process
        gc.freeze()
        gc.enable()
    if app.parallel > 1 and len(docnames) < app.config.kb_parallel_threshold:
        allowed = (parallel_available and app.builder.allow_parallel
                   and app.is_parallel_allowed("write"))
        _write_in_parallel_when_many(app.builder, app.parallel, allowed,
                                     app.config.kb_parallel_threshold)
        app.parallel = 1  # Sphinx then decides to read and write serially


def _write_in_parallel_when_many(builder, jobs: int, allowed: bool, threshold: int) -> None:
    """Few pages read can still mean many pages to write (a title shown in
    100 相关文章 lists): those are written in parallel again, as Sphinx would."""
    serial_write = builder.write_documents

    def write_documents(docnames) -> None:
        if allowed and len(docnames) >= threshold:
            builder._app.parallel = jobs
            builder.parallel_ok = True
        serial_write(docnames)

    builder.write_documents = write_documents


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_parallel_threshold", 20, "", types=[int])
    app.connect("env-before-read-docs", on_env_before_read_docs)
    if gc.isenabled():
        gc.disable()  # until the environment is loaded (on_env_before_read_docs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
