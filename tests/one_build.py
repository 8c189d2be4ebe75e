"""Many contributions, one `make` run: the bad-input matrix without a build per case.

A case is a function ``apply(repo, at)`` that changes a copy of the
repository the way one pull request would, and returns what its test needs
to know afterwards (usually the line it wrote). Cases register under a
group; the first test that asks for a group copies the repository once,
applies every case of the group, each on pages and files of its own (`At`
hands them out), and runs the group's make target once (``make html``:
``-W --keep-going``, so every case's warning is printed). Each case's test
then asserts its own ``path:LINE: KBnnn`` line, the exit status, and that
nothing of that case was published.

Cases that stop the build before the others would be read (a symlink, a
page over the size limit, a page named like a generated one), that change
the same file in ways that exclude each other, or that would hide another
case (an unusable tags.yaml leaves tags unchecked) go to groups of their
own. Valid contributions share the group "valid", whose build must pass;
the mistakes in code samples the group "snippets" (`make snippets`). Which
cases share a group is written next to them in the test files.

A case that needs a file name or a host of its own uses ``at.tag``, so that
a leaked host fails that case's test. The secret outside the copy is one for
all cases (the ``secret`` fixture): a leak of it fails every test that looks
for it, and the case is found from the published file that holds it.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import new_article

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
# -o: the copy shares the project's .venv and node_modules; never reinstall them
# from a copy (npm ci would delete node_modules through the symlink).
STAMPS = [
    "node_modules/.installed",
    f"{VENV}/bin/.installed",
    f"{VENV}/bin/.installed-dev",
    f"{VENV}/bin/.installed-snippets",
]
# What a file outside the repository holds (the `secret` fixture writes it):
# it must never reach any output file, nor the build's log.
SECRET = "KB-SECRET-7f3a"
# What the build and the make targets read.
REPO_FILES = [
    "conf.py",
    "_static",
    "_templates",
    "locale",
    "data",
    "tools",
    "docs",
    "tests",
    "pagefind.yml",
    "Makefile",
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-snippets.txt",
    "package.json",
    "package-lock.json",
    "conftest.py",
    "pytest.ini",
    ".pymarkdown.json",
    ".codespellrc",
    "README.md",
    "CONTRIBUTING.md",
]


def copy_repo(dest: Path) -> Path:
    """A copy of what the build and the make targets read (mtimes kept), with
    the project's node_modules linked in."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in REPO_FILES:
        src = ROOT / name
        if not src.exists():
            continue
        (shutil.copytree if src.is_dir() else shutil.copy2)(
            src, dest / name, **({"ignore": shutil.ignore_patterns("*.pyc.*")} if src.is_dir() else {})
        )
    (dest / "node_modules").symlink_to(ROOT / "node_modules")
    return dest


TINY_ERRATA = """\
---
title: 勘误与编者注
---

# 勘误与编者注

```{kb-editor-notes}
```
"""


def tiny_repo(dest: Path) -> Path:
    """A repository whose docs/ is the tiny project of test_data_errors (home,
    glossary, errata, one guide with one article: docs/training/x.md) and which
    `make html` builds in a few seconds: for tests that build several times in
    a row to check what one build leaves to the next."""
    from test_data_errors import INDEX, tiny_project

    root = tiny_project(dest)
    for name in (
        "Makefile",
        "requirements.txt",
        "requirements-dev.txt",
        "requirements-snippets.txt",
        "package-lock.json",
    ):
        shutil.copy2(ROOT / name, root / name)
    (root / "docs/errata.md").write_text(TINY_ERRATA, encoding="utf-8")
    (root / "docs/index.md").write_text(INDEX.replace("glossary\n", "glossary\nerrata\n"), encoding="utf-8")
    return root


def make(repo: Path, target: str, *variables: str) -> subprocess.CompletedProcess:
    """Run a make target in a copy, as a contributor (and CI) would."""
    # NO_COLOR: Sphinx colours its output when CI=true (as CI sets it), and the
    # tests read the "path:LINE: WARNING: KBnnn" lines as text
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    for name in ("GUIDE", "SLUG", "TITLE", "TAGS", "SUMMARY", "MAKEFLAGS"):
        env.pop(name, None)
    return subprocess.run(
        [
            "make",
            "-s",
            *[f"-o{s}" for s in STAMPS],
            target,
            f"VENV={VENV}",
            f"BUILDDIR={repo / '_build'}",
            *variables,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )


def published_text(site: Path) -> str:
    """Everything the build wrote, search-index fragments decompressed."""
    out = []
    for path in site.rglob("*"):
        if path.is_file() and ".doctrees" not in path.parts:
            data = path.read_bytes()
            if path.suffix in (".pf_fragment", ".pf_index", ".pf_meta", ".pf_filter"):
                data = gzip.decompress(data)
            out.append(data.decode("utf-8", "replace"))
    return "\n".join(out)


class At:
    """The places one case may change: pages of its own, created on first use."""

    def __init__(self, repo: Path, number: int, secret: Path, heads: list[str]):
        self.repo, self.number, self.secret = repo, number, secret
        self._heads = heads
        self._article: str | None = None
        self._page: str | None = None

    @property
    def tag(self) -> str:
        """A name no other case of the run uses (for files and hosts)."""
        return f"c{self.number:03d}"

    @property
    def has_article(self) -> bool:
        return self._article is not None

    def article(self) -> str:
        """A valid article of its own (as `make new` writes it), in the reading order."""
        if self._article is None:
            path = new_article.scaffold(
                self.repo,
                "training",
                f"case-{self.tag}",
                f"用例 {self.tag}",
                ["memory"],
                f"用例 {self.tag} 的摘要。",
            )
            self._article = path.relative_to(self.repo).as_posix()
        return self._article

    def page(self) -> str:
        """A page that is no article (as docs/errata.md is), listed under the home page."""
        if self._page is None:
            name = f"page-{self.tag}"
            (self.repo / "docs" / f"{name}.md").write_text(
                f"---\ntitle: 页面 {self.tag}\n---\n\n# 页面 {self.tag}\n\n正文。\n", encoding="utf-8"
            )
            index = self.repo / "docs/index.md"
            text = index.read_text(encoding="utf-8")
            index.write_text(text.replace("glossary\n", f"glossary\n{name}\n", 1), encoding="utf-8")
            self._page = f"docs/{name}.md"
        return self._page

    def template_head(self, html: str) -> None:
        """A line for _templates/page.html's extrahead block (one block for all cases)."""
        self._heads.append(html)


@dataclasses.dataclass
class Result:
    """What one case returned when applied, and the run it was part of."""

    value: Any
    at: At
    run: Run

    @property
    def out(self) -> str:
        return self.run.out

    @property
    def repo(self) -> Path:
        return self.run.repo


@dataclasses.dataclass
class Run:
    repo: Path
    proc: subprocess.CompletedProcess
    results: dict[str, Result]

    @property
    def out(self) -> str:
        return self.proc.stdout + self.proc.stderr

    @functools.cached_property
    def published(self) -> str:
        """Everything the run wrote into the site (published_text)."""
        return published_text(self.repo / "_build/html")

    def __getitem__(self, case: str) -> Result:
        return self.results[case]


Apply = Callable[[Path, At], Any]
# group -> {case: apply}; (group -> make target)
GROUPS: dict[str, dict[str, Apply]] = {}
TARGETS: dict[str, str] = {}


def register(group: str, prefix: str, cases: dict[str, Apply], target: str = "html") -> None:
    """Add cases to a group (their keys become ``prefix/name``)."""
    assert TARGETS.setdefault(group, target) == target, group
    for name, apply in cases.items():
        key = f"{prefix}/{name}"
        assert key not in GROUPS.setdefault(group, {}), key
        GROUPS[group][key] = apply


def run_group(group: str, folder: Path, secret: Path) -> Run:
    """Copy the repository, apply every case of the group, run its target once."""
    repo = copy_repo(folder / "repo")
    heads: list[str] = []
    applied = {}
    cases = GROUPS.get(group, {})  # none registered (a test file run alone): the repository as it is
    for number, key in enumerate(sorted(cases)):
        at = At(repo, number, secret, heads)
        applied[key] = (cases[key](repo, at), at)
    if heads:
        page = repo / "_templates/page.html"
        page.write_text(
            page.read_text(encoding="utf-8")
            + "\n{% block extrahead %}\n"
            + "\n".join(heads)
            + "\n{% endblock %}\n",
            encoding="utf-8",
        )
    target = TARGETS.get(group, "html")
    # the samples of the cases' own pages (the repository's pages run in the session)
    pages = sorted({at.article() for _, at in applied.values() if at.has_article})
    variables = [f"PAGES={' '.join(pages)}"] if target == "snippets" and pages else []
    run = Run(repo, make(repo, target, *variables), {})
    run.results = {key: Result(value, at, run) for key, (value, at) in applied.items()}
    return run
