"""KB059: a pull request that commits files into the build folders is
refused before anything there is trusted (kb.guard.committed_build).

- Sphinx's environment is a pickle: a committed one would run its code when
  the build loads it. The build stops at the file, exit status 2, and the
  pickle is never loaded.
- make's stamp and a committed site: ``make html`` would call the build done
  and leave the committed pages to be published. It stops at the files too.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess

import pytest
from kb.guard import committed_build
from one_build import make, tiny_repo
from test_data_errors import ROOT, assert_fails_at, build, tiny_project

pytestmark = pytest.mark.slow


def commit(root, *paths: str) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-f", *paths], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "contribution"], cwd=root, check=True)


class Planted:
    """What a planted pickle runs when it is loaded: it leaves a file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.makedirs, (self.marker,))


def test_a_committed_environment_is_refused_before_it_is_loaded(tmp_path):
    root = tiny_project(tmp_path / "kb")
    marker = tmp_path / "the-pickle-ran"
    env = root / "_build/html/.doctrees/environment.pickle"
    env.parent.mkdir(parents=True)
    env.write_bytes(pickle.dumps(Planted(str(marker))))
    commit(root, "_build/html/.doctrees/environment.pickle")
    out = assert_fails_at(
        root, "_build/html/.doctrees/environment.pickle:1: WARNING: KB059 ", "git rm --cached", timeout=300
    )
    assert out.count("KB059") == 1, out[-3000:]
    assert not marker.exists()
    # an untracked build folder is the build's own: no refusal
    subprocess.run(["git", "rm", "-q", "--cached", "-r", "_build"], cwd=root, check=True)
    shutil.rmtree(root / "_build")
    code, log = build(root)
    assert code == 0 and "KB059" not in log, log[-3000:]


def test_make_html_refuses_a_committed_stamp_and_site(tmp_path):
    repo = tiny_repo(tmp_path / "kb")
    site = repo / "_build/html/index.html"
    site.parent.mkdir(parents=True)
    site.write_text("<script>alert(1)</script>\n", encoding="utf-8")
    stamp = repo / "_build/doctrees/html.built"
    stamp.parent.mkdir(parents=True)
    stamp.touch()  # newer than every input: make would call the site built
    commit(repo, "_build")
    proc = make(repo, "html")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "_build/doctrees/html.built:1: KB059 " in out and "_build/html/index.html:1: KB059 " in out, out[
        -3000:
    ]
    assert "Traceback" not in out


def test_a_committed_build_folder_that_is_a_link_is_refused(tmp_path):
    """The way to the build folder counts: a committed _build that links to a
    folder outside the checkout (holding a planted environment) is refused
    at the link, not followed."""
    root = tiny_project(tmp_path / "kb")
    elsewhere = tmp_path / "elsewhere"
    marker = tmp_path / "the-pickle-ran"
    (elsewhere / "html/.doctrees").mkdir(parents=True)
    (elsewhere / "html/.doctrees/environment.pickle").write_bytes(pickle.dumps(Planted(str(marker))))
    (root / "_build").symlink_to(elsewhere)
    commit(root, "_build")
    assert_fails_at(root, "_build:1: WARNING: KB059 ", timeout=300)
    assert not marker.exists()


def test_make_html_refuses_a_committed_file_where_the_build_folder_goes(tmp_path):
    """(Sphinx itself stops with its crash report when it cannot make the
    output folder, before any extension runs: make's check comes first.)"""
    repo = tiny_repo(tmp_path / "kb")
    (repo / "_build").write_text("not a folder\n", encoding="utf-8")
    commit(repo, "_build")
    proc = make(repo, "html")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "_build:1: KB059 " in out and "Traceback" not in out, out[-3000:]
    # a build folder deeper down (BUILDDIR=_build/site, or Sphinx's _build/html): the file on its way
    found = committed_build.problems([repo / "_build/site"], repo)
    assert [
        (location.endswith("_build:1"), message.startswith("KB059 a file")) for location, message in found
    ] == [(True, True)]


def test_a_checkout_git_cannot_list_is_refused_not_trusted(tmp_path, monkeypatch):
    """Inside a checkout, "git could not say" is no "nothing is committed"."""
    root = tiny_project(tmp_path / "kb")
    commit(root, "docs")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "no-such-git-dir"))
    out = assert_fails_at(root, "KB059 git cannot list the files of this checkout", timeout=300)
    assert "safe.directory" in out


@pytest.mark.parametrize("folder", [".venv/bin", "node_modules/.bin", "tools/node_modules/happy-dom"])
def test_committed_tools_stop_make_before_it_runs_them(tmp_path, folder):
    """make runs .venv/bin/python and node_modules' programs as the tools it
    installed: committed ones would be a pull request's own programs."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    tool = tmp_path / folder / "python"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho PWNED\n", encoding="utf-8")
    tool.chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run(["make", "help"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr  # not committed: make goes on
    subprocess.run(["git", "add", "-f", folder], cwd=tmp_path, check=True)
    proc = subprocess.run(["make", "html"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "PWNED" not in proc.stdout + proc.stderr
    assert ".venv:1: KB059 files under .venv/ or a node_modules/ folder are committed" in proc.stdout, (
        proc.stdout
    )


def test_a_committed_link_named_node_modules_stops_make(tmp_path):
    """A link is one entry to git, not a folder of files: node_modules -> zz
    (zz/.installed newer than package.json) had make skip npm ci and run
    zz/.bin/pagefind."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "zz" / ".bin").mkdir(parents=True)
    (tmp_path / "zz" / ".installed").write_text("", encoding="utf-8")
    (tmp_path / "node_modules").symlink_to("zz")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-f", "zz", "node_modules"], cwd=tmp_path, check=True)
    proc = subprocess.run(["make", "-n", "html"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "KB059" in proc.stdout, proc.stdout + proc.stderr
