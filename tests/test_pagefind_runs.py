"""kb.search.pagefind: one index run at a time on a site, even when the
build folder is deleted while a background run goes on (``rm -r _build``
and build again): the new build's run waits, and the old one, whose site
is gone, leaves neither an index nor a failure behind."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from kb.search import pagefind as kb_pagefind

# A stand-in for Pagefind: it records when it starts and ends, takes its
# time, and writes an index named after the page it found.
FAKE = """#!/bin/sh
echo "start $$" >> "{log}"
sleep {seconds}
out="$4"
mkdir -p "$out"
ls "$2" > "$out/pagefind-entry.json"
echo "end $$" >> "{log}"
"""


def fake_pagefind(confdir: Path, log: Path, seconds: float) -> None:
    binary = kb_pagefind.binary(confdir)
    binary.parent.mkdir(parents=True)
    binary.write_text(FAKE.format(log=log, seconds=seconds), encoding="utf-8")
    binary.chmod(0o755)


def site_with(build: Path, page: str) -> Path:
    site = build / "html"
    site.mkdir(parents=True)
    (site / page).write_text("<html></html>", encoding="utf-8")
    return site


def wait_for(predicate, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "the background run did not start"
        time.sleep(0.05)


def background_run(tmp_path: Path, seconds: float) -> tuple[Path, Path, Path, Path]:
    """A background run of a fake Pagefind that takes `seconds`, once it has
    started: (project folder, the runs' log, the build folder, the site)."""
    confdir, log = tmp_path / "project", tmp_path / "runs.log"
    fake_pagefind(confdir, log, seconds=seconds)
    build = confdir / "_build"
    site = site_with(build, "old.html")
    kb_pagefind.index_in_background(site, confdir, tmp_path / "background.log")
    wait_for(lambda: log.exists() and "start" in log.read_text())
    return confdir, log, build, site


def test_a_run_started_after_the_build_folder_was_deleted_waits_for_the_one_in_progress(tmp_path):
    confdir, log, build, site = background_run(tmp_path, seconds=2)
    shutil.rmtree(build)  # rm -r _build, and build again
    site = site_with(build, "new.html")
    assert kb_pagefind.index(site, confdir) is None
    runs = [line.split()[0] for line in log.read_text().splitlines()]
    assert runs == ["start", "end", "start", "end"], (runs, (tmp_path / "background.log").read_text())
    kb_pagefind.wait(site)
    assert (site / "pagefind/pagefind-entry.json").read_text().split() == ["new.html"]
    assert not kb_pagefind.failure_file(site).exists()
    assert sorted(p.name for p in build.iterdir()) == [".html.pagefind-inputs", "html"]


def test_a_run_whose_site_was_deleted_leaves_no_index_and_no_failure(tmp_path):
    _, log, build, site = background_run(tmp_path, seconds=1)
    shutil.rmtree(site)
    site.mkdir()  # another folder at the same path, not yet built
    kb_pagefind.wait(site)
    assert log.read_text().split()[::2] == ["start", "end"]
    assert list(site.iterdir()) == []
    assert not kb_pagefind.failure_file(site).exists()
    assert sorted(p.name for p in build.iterdir()) == ["html"]


def test_the_lock_is_a_private_file_outside_the_build_folder(tmp_path):
    site = tmp_path / "_build/html"
    lock = kb_pagefind.lock_file(site)
    assert tmp_path not in lock.parents
    assert lock == kb_pagefind.lock_file(tmp_path / "_build/../_build/html")
    assert lock != kb_pagefind.lock_file(tmp_path / "_build/epub")
    assert lock.parent.stat().st_mode & 0o777 == 0o700
