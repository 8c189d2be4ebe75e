"""Read and write serially when an incremental build touches only a few pages.

Sphinx 9 uses its worker processes for every read once ``-j`` is above 1,
even for a single changed page; each worker then pickles the whole
environment back to the main process. With 1,000 articles that costs a few
seconds per one-page edit, far more than reading the page itself. Below
``kb_parallel_threshold`` pages to read (default 20) this extension turns
parallelism off for that build; full builds stay parallel. The output is the
same either way (tests/test_build_modes.py compares -j 1 and -j 2).
"""

from __future__ import annotations

from typing import Any


def on_env_before_read_docs(app, env, docnames) -> None:
    if app.parallel > 1 and len(docnames) < app.config.kb_parallel_threshold:
        app.parallel = 1
        app.builder.parallel_ok = False


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_parallel_threshold", 20, "", types=[int])
    app.connect("env-before-read-docs", on_env_before_read_docs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
