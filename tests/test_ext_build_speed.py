"""kb.site.build_speed: below kb_parallel_threshold pages (4 here) to read,
they are read in the main process rather than by a worker that sends the
whole environment back, and still written; below it to write, they are
written in the main process too. At the threshold and above, Sphinx reads
and writes in parallel as usual. The garbage collector runs again once the
build is over. These fail if Sphinx stops honouring the builder's
``parallel_ok`` in write_documents, or the docnames list of
env-before-read-docs."""

from __future__ import annotations

import contextlib
import gc
import os
import re
from pathlib import Path

import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.site import build_speed
from sphinx.util.parallel import parallel_available

pytest_plugins = ("sphinx.testing.fixtures",)

pytestmark = pytest.mark.skipif(not parallel_available, reason="needs fork (parallel builds)")


def processes(srcdir: Path, what: str) -> dict[str, set[int]]:
    """docname -> the processes that read (what="read") or wrote it, since last asked."""
    log = srcdir / f"{what}-by.txt"
    found: dict[str, set[int]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        doc, pid = line.split()
        found.setdefault(doc, set()).add(int(pid))
    log.unlink()
    return found


def test_few_pages_are_read_and_written_here(build_root):
    app = build_root("ext-build-speed", parallel=2)
    srcdir = Path(app.srcdir)
    processes(srcdir, "read"), processes(srcdir, "written")
    (srcdir / "b.rst").write_text("Page b\n======\n\nEdited text.\n", encoding="utf-8")
    (srcdir / "c.rst").write_text("Page c\n======\n\nEdited too.\n", encoding="utf-8")
    app = build_root("ext-build-speed", parallel=2, freshenv=False)
    here = {os.getpid()}
    assert processes(srcdir, "read") == {"b": here, "c": here}
    # and the page that lists them (Sphinx writes it again with them)
    assert processes(srcdir, "written") == {"b": here, "c": here, "index": here}
    assert "Edited text." in (Path(app.outdir) / "b.html").read_text(encoding="utf-8")
    assert "Edited too." in (Path(app.outdir) / "c.html").read_text(encoding="utf-8")
    assert gc.isenabled()


def test_many_pages_are_read_and_written_in_parallel(build_root):
    app = build_root("ext-build-speed", parallel=2)
    srcdir = Path(app.srcdir)
    read, written = processes(srcdir, "read"), processes(srcdir, "written")
    assert set(read) == set(written) == {"index", "a", "b", "c", "d"}
    assert os.getpid() not in set().union(*read.values())
    assert set().union(*written.values()) - {os.getpid()}  # some in a worker
    assert gc.isenabled()


def test_pages_read_here_are_checked_before_they_are_read(build_root):
    """A page edited into another encoding, in a small incremental build: KB054
    at its line, not a traceback, whatever the order of the extensions."""
    from io import StringIO

    from kb.guard.silent_loss import BuildStopped

    app = build_root("ext-build-speed-guard", parallel=2)
    (Path(app.srcdir) / "b.rst").write_bytes("Page b\n======\n\n编辑\n".encode("gbk"))
    warnings = StringIO()
    with pytest.raises(BuildStopped):
        build_root("ext-build-speed-guard", parallel=2, freshenv=False, warning=warnings)
    assert "KB054 the page is not UTF-8" in warnings.getvalue()
    assert "b.rst:4" in warnings.getvalue()


@pytest.mark.parametrize("what", ["read", "written"])
def test_a_page_a_worker_failed_on_is_named_not_dropped(build_root, monkeypatch, what):
    """Sphinx 9's ParallelTasks can lose a failed worker's pages without a
    word (add_task catches the error and goes on). Simulated here by a join
    that swallows the failure as add_task does: the page is still named."""
    from io import StringIO

    from kb.guard.silent_loss import BuildStopped
    from sphinx.util.parallel import ParallelTasks

    join = ParallelTasks.join

    def swallowing_join(self):
        with contextlib.suppress(Exception):  # what add_task does with a worker's error
            join(self)

    app = build_root("ext-build-speed")  # serially; then four pages to read again, in parallel
    for name in "abcd":  # (the root page stays as read, or Sphinx stops without it)
        (Path(app.srcdir) / f"{name}.rst").write_text(f"Page {name}\n======\n\nEdited.\n", encoding="utf-8")
    monkeypatch.setattr(ParallelTasks, "join", swallowing_join)
    monkeypatch.setenv(f"KB_TEST_FAIL_{what.upper()}", "c")
    warnings = StringIO()
    if what == "read":  # and the build stops: the lost pages cannot be written
        with pytest.raises(BuildStopped):
            build_root("ext-build-speed", parallel=2, freshenv=False, warning=warnings)
    else:
        build_root("ext-build-speed", parallel=2, freshenv=False, warning=warnings)
    assert re.search(rf"c\.rst: WARNING: KB058 the page was not {what}", warnings.getvalue()), (
        warnings.getvalue()
    )


def test_the_collector_runs_every_few_pages_and_only_then(build_root, monkeypatch):
    """From the loaded environment (builder-inited) to the build's end,
    Python's collector runs only when GC_PAGES pages were read or prepared
    (never on its own, over half-processed doctrees); then it is back on."""
    monkeypatch.setattr(build_speed, "GC_PAGES", 2)
    window, runs = [False], []
    inited, finished = build_speed.on_builder_inited, build_speed.on_build_finished

    def on_builder_inited(app):
        inited(app)
        window[0] = True

    def on_build_finished(app, exception):
        window[0] = False
        finished(app, exception)

    def seen(phase, info):
        if phase == "start" and window[0]:
            runs.append(info["generation"])

    monkeypatch.setattr(build_speed, "on_builder_inited", on_builder_inited)
    monkeypatch.setattr(build_speed, "on_build_finished", on_build_finished)
    gc.callbacks.append(seen)
    try:
        build_root("ext-build-speed")  # 5 pages, read and written here (no -j)
    finally:
        gc.callbacks.remove(seen)
    assert gc.isenabled()
    assert runs == [2] * 5, runs  # 10 pages made: 5 read, 5 prepared to be written
