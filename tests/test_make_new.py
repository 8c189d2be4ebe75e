"""`make new` passes every argument verbatim: no make expansion, no shell.

Each test runs the real `make new` on a copy of the repository (the `repo`
fixture of test_contributor_kit) with the same -o stamps as its `_make`, so the
copy never reinstalls .venv or node_modules. Command injection is detected by
marker files that an injected command would create.
"""

from __future__ import annotations

import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

import new_article
from test_contributor_kit import ROOT, repo  # noqa: F401  (repo is a fixture)

VENV = ROOT / ".venv"
STAMPS = ["node_modules/.installed", f"{VENV}/bin/.installed", f"{VENV}/bin/.installed-dev"]


def make(repo: Path, target: str, *variables: str) -> subprocess.CompletedProcess:
    """Run make in the copy; ``variables`` are NAME=value words, passed without a shell."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("GUIDE", "SLUG", "TITLE", "TAGS", "SUMMARY", "MAKEFLAGS"):
        env.pop(name, None)
    return subprocess.run(["make", "-s", *[f"-o{s}" for s in STAMPS], target, f"VENV={VENV}",
                           f"BUILDDIR={repo / '_build'}", *variables],
                          cwd=repo, capture_output=True, text=True, env=env)


def tree(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes()
            for p in sorted((repo / "docs").rglob("*")) if p.is_file()}


def front_matter(page: Path) -> dict:
    return yaml.safe_load(page.read_text(encoding="utf-8").split("---\n")[1])


def h1_line(page: Path) -> str:
    return next(x for x in page.read_text(encoding="utf-8").split("\n") if x.startswith("# "))


@pytest.fixture
def markers(tmp_path) -> Path:
    """A folder where an injected command would leave a file."""
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


def injections(markers: Path) -> str:
    """Everything make or a shell would run or drop, in one string."""
    return (f"a $ b $2 `touch {markers}/backtick` 'single' \"double\" "
            f"$(touch {markers}/dollar) $(shell touch {markers}/shell) ${{HOME}} "
            f"; touch {markers}/semicolon && touch {markers}/and \" ; touch {markers}/quote ; \"")


def test_documented_usage_still_works(repo):
    proc = make(repo, "new", "GUIDE=training", "SLUG=my-topic", "TITLE=标题", "TAGS=memory")
    assert proc.returncode == 0, proc.stderr
    page = repo / "docs/training/my-topic.md"
    assert front_matter(page) == {"title": "标题", "guide": "training", "tags": ["memory"],
                                  "summary": new_article.DEFAULT_SUMMARY}
    assert h1_line(page) == "# 标题"
    assert "my-topic\n```" in (repo / "docs/training/index.md").read_text(encoding="utf-8")


def test_title_and_summary_arrive_verbatim_and_run_nothing(repo, markers):
    title = "标题 " + injections(markers)
    summary = "摘要 " + injections(markers) + " 结束。"
    proc = make(repo, "new", "GUIDE=training", "SLUG=verbatim", f"TITLE={title}",
                "TAGS=memory,distributed-training", f"SUMMARY={summary}")
    assert proc.returncode == 0, proc.stderr
    assert sorted(markers.iterdir()) == []  # no command ran
    page = repo / "docs/training/verbatim.md"
    fm = front_matter(page)
    assert fm["title"] == title and fm["summary"] == summary
    assert h1_line(page) == "# " + new_article.markdown_text(title)


@pytest.mark.parametrize("variable", ["GUIDE", "SLUG", "TAGS"])
def test_injection_in_other_variables_is_refused_and_runs_nothing(repo, markers, variable):
    values = {"GUIDE": "training", "SLUG": "safe-slug", "TITLE": "标题", "TAGS": "memory"}
    values[variable] = injections(markers)
    before = tree(repo)
    proc = make(repo, "new", *[f"{k}={v}" for k, v in values.items()])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert {"GUIDE": "KB077 unknown guide", "SLUG": "KB076 slug",
            "TAGS": "KB004 unknown tag"}[variable] in proc.stderr
    assert sorted(markers.iterdir()) == []
    assert tree(repo) == before


@pytest.mark.parametrize("title, words", [
    ("", "KB075 empty title"),
    ("   ", "KB075 empty title"),
    ("第一行\n第二行", "KB075 the title '第一行\\n第二行' holds a control character"),
])
def test_empty_or_multiline_title_is_refused(repo, markers, title, words):
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", "SLUG=some-topic", f"TITLE={title}",
                "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: {words}" in proc.stderr, proc.stderr
    assert tree(repo) == before


def test_injected_newline_title_runs_nothing(repo, markers):
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", "SLUG=some-topic",
                f"TITLE=x\n\ttouch {markers}/recipe\n$(shell touch {markers}/shell)", "TAGS=memory")
    assert proc.returncode == 2 and "KB075" in proc.stderr, proc.stderr
    assert sorted(markers.iterdir()) == []
    assert tree(repo) == before


@pytest.mark.parametrize("slug, where", [
    ("glossary", "docs/glossary.md"),
    ("errata", "docs/errata.md"),
    ("articles", "docs/articles.md"),
    ("search", "a page the build generates"),
    ("tags", "a page the build generates"),
])
def test_slug_naming_a_site_page_is_refused(repo, slug, where):
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", f"SLUG={slug}", "TITLE=标题", "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: KB076 slug '{slug}' is the name of {where}; pick another" in proc.stderr
    assert tree(repo) == before


class _H1(HTMLParser):
    def __init__(self):
        super().__init__()
        self.depth, self.text = 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "h1" or self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


MARKUP_TITLE = ("#1 C++ *不是粗体* _不是斜体_ `不是代码` {ref}`不是角色` {{ 不是替换 }} "
                "<script>alert(1)</script> [不是链接](https://x.y) a|b ~c~ !d & &amp; \\ \"引号\" 'x' "
                "-- ... 结尾 #")


def test_title_with_markup_builds_and_shows_as_typed(repo):
    proc = make(repo, "new", "GUIDE=training", "SLUG=markup-title", f"TITLE={MARKUP_TITLE}",
                "TAGS=memory", f"SUMMARY=摘要 *也* `原样` {{{{ x }}}}。")
    assert proc.returncode == 0, proc.stderr
    assert front_matter(repo / "docs/training/markup-title.md")["title"] == MARKUP_TITLE
    build = make(repo, "html")
    assert build.returncode == 0, (build.stdout + build.stderr)[-3000:]
    h1 = _H1()
    h1.feed((repo / "_build/html/training/markup-title.html").read_text(encoding="utf-8"))
    shown = re.sub(r"\s+", " ", "".join(h1.text)).strip().removesuffix("¶").strip()
    assert shown == MARKUP_TITLE
