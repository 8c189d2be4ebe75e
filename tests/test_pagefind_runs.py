"""kb.search.pagefind: one index run at a time on a site, even when the
build folder is deleted while a background run goes on (``rm -r _build``
and build again): the new build's run waits, and the old one, whose site
is gone, leaves neither an index nor a failure behind."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
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


def test_a_run_that_takes_too_long_is_ended_and_named(tmp_path, monkeypatch):
    """Whatever slows Pagefind down (a page it reads in quadratic time), a run
    ends after PAGEFIND_SECONDS: KB098, no index, and the failure the next
    build reports."""
    confdir = tmp_path / "project"
    fake_pagefind(confdir, tmp_path / "runs.log", seconds=30)
    site = site_with(tmp_path / "build", "index.html")
    monkeypatch.setattr(kb_pagefind, "PAGEFIND_SECONDS", 1)
    output = kb_pagefind.index(site, confdir)
    assert output.startswith("KB098 Pagefind did not finish within 1 s")
    assert not (site / "pagefind").exists()
    assert kb_pagefind.failure_file(site).read_text(encoding="utf-8") == output


# Nesting Pagefind would read in quadratic time, written so that a simpler
# count would see less than a browser's or Pagefind's parser does (found by a
# security review). Each must be found.
N = 2_000
DEEP = {
    "plain": b"<div>" * N + b"</div>" * N,
    "quote in an attribute name": b'<p a">' + b"<div>" * N + b"</div>" * N + b'<p b">',
    "quote in an unquoted value": b'<p a=x">' + b"<div>" * N + b"</div>" * N + b'<p b=y">',
    "siblings Pagefind nests": b"<ul>" + b"<li>" * N + b"</li>" * N + b"</ul>",
    "a vertical tab is not a space in HTML": b"<div></div\x0b>" * N + b"</div>" * N,
    "... in a raw-text end tag": b"<div><noscript></noscript\x0b></div></noscript>" * N + b"</div>" * N,
    "'/>' closes nothing after <svg>": b"<svg><p>" + b"<section/>" * N + b"</section>" * N,
    "... nor in foreignObject": b"<svg><foreignObject>" + b"<section/>" * N + b"</section>" * N,
    "<!-->": b"<!-->" + b"<div>" * N + b"</div>" * N,
    "<!--->": b"<!--->" + b"<div>" * N + b"</div>" * N,
    "--!>": b"<!-- x --!>" + b"<div>" * N + b"</div>" * N,
    "<plaintext> in <svg>": b"<svg><plaintext></plaintext></svg>" + b"<div>" * N + b"</div>" * N,
    "end tags in a <script> close nothing": b"<div>" * 600 + b"<script>" + b"</div>" * 600 + b"</script>",
    "upper case": b"<DIV>" * N + b"</div>" * N,
    # found by a second review
    "a quote after a second '='": b'<i a=b=">' + b"<div>" * N + b"</div>" * N + b'"></i>',
    "a quote in a name that starts with '='": b'<i =">' + b"<div>" * N + b"</div>" * N + b'"></i>',
    "'<!--<script>' in a script": b'<div><script type="application/json"><!--<script></script></div>--></script>'
    * 600
    + b"</div>" * 600,
    "<style> in <svg> is markup": b"<div><svg><style><!--</style></div>-->" * 600 + b"</div>" * 600,
    # found by a third review
    "'/>' after a <p> left the svg": b"<svg><p></p>" + b"<section/>" * N + b"</section>" * N,
    "... or a </p>": b"<svg></p>" + b"<section/>" * N + b"</section>" * N,
    "... or a </br>": b"<svg></br>" + b"<section/>" * N + b"</section>" * N,
    "end tags in a CDATA section close nothing": b"<article><svg><![CDATA[></svg></article>]]></svg>" * 600
    + b"</article>" * 600,
}


@pytest.mark.parametrize("html", DEEP.values(), ids=DEEP.keys())
def test_nesting_past_what_browsers_build_is_found(html):
    line, depth = kb_pagefind.nesting(b"<!doctype html>\n<html><body>\n" + html)
    assert depth == kb_pagefind.MAX_NESTING + 1 and line == 3


@pytest.mark.parametrize(
    "html",
    [
        b"<div>" * 500 + b"</div>" * 500,  # with <html> and <body>: 502
        b"<ul>" + b"<li>x</li>" * 10_000 + b"</ul>",
        b"<svg>" + b"<path d='M0 0'/>" * 10_000 + b"</svg>",  # closed with their <svg>
        b"<p>" + b"<br>" * 10_000 + b"<img src=x.png>" * 10_000,  # void elements
        b"<div title='a>b' data-x=\"</div></div>\">" * 400 + b"</div>" * 400,
    ],
    ids=["500 levels", "long list", "svg paths", "void elements", "tags in attribute values"],
)
def test_pages_within_the_limit_pass(html):
    assert kb_pagefind.nesting(b"<html><body>" + html + b"</body></html>") is None


def test_the_site_is_checked_before_pagefind_runs(tmp_path):
    """A page too deep: no run, a failure at the page's line."""
    confdir = tmp_path / "project"
    fake_pagefind(confdir, tmp_path / "runs.log", seconds=0)
    site = site_with(tmp_path / "build", "index.html")
    (site / "deep.html").write_bytes(b"<html>\n<body>\n" + DEEP["quote in an attribute name"])
    output = kb_pagefind.index(site, confdir)
    assert output.startswith(f"{site / 'deep.html'}:3: KB015 elements nest more than 512 levels deep here")
    assert not (tmp_path / "runs.log").exists()  # Pagefind did not run


def test_formatting_elements_closed_by_another_end_tag_are_named():
    reopened = []
    assert kb_pagefind.nesting(b"<html><body>\n<p><b>x</p>\n<p><i>y</i></p></body></html>", reopened) is None
    assert reopened == [(2, b"b")]
    reopened = []
    kb_pagefind.nesting(b"<p><b>x</b> <a href=x>y</a></p><svg><g><text>z</g></svg>", reopened)
    assert reopened == []
    # <b> leaves the <svg> (a browser closes the svg), so </svg> and </p> close it
    reopened = []
    kb_pagefind.nesting(b"<p><svg><b class=c>x</svg></p>", reopened)
    assert reopened == [(1, b"b")]
    # ... and end tags in a CDATA section do not close it
    reopened = []
    kb_pagefind.nesting(b"<p><b class=c>x<svg><![CDATA[></b>]]></svg></p>", reopened)
    assert reopened == [(1, b"b")]
    # tags in a comment, a noscript or a script are not elements a browser reopens
    for html in (
        b'<div>\n<noscript><a href="/x">no JS</a></noscript>\n</div>',
        b'<div>\n<!-- <a href="/old">old</a> -->\n</div>',
        b'<div><script>x="<b>"</script></div>',
    ):
        reopened = []
        assert kb_pagefind.nesting(html, reopened) is None and reopened == [], html


def test_the_binary_run_is_the_one_pagefind_s_own_command_runs():
    """kb.search.pagefind runs Pagefind's binary without its node script
    (command()); the script, asked with --verbose, names the same binary.
    This fails when Pagefind moves its binaries or picks another one."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    run = subprocess.run(
        [str(kb_pagefind.binary(root)), "--verbose", "--version"], capture_output=True, text=True, check=True
    )
    named = [
        line.rsplit(" at ", 1)[1] for line in run.stdout.splitlines() if "Running the executable at" in line
    ]
    assert named == [str(kb_pagefind.command(root))], run.stdout
    assert kb_pagefind.command(root) != kb_pagefind.binary(root)
