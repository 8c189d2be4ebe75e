"""`make new` passes every argument verbatim: no make expansion, no shell.

Each test runs the real `make new` on a copy of the repository (the `repo`
fixture of test_contributor_kit) with the same -o stamps as its `_make`, so the
copy never reinstalls .venv or node_modules. Command injection is detected by
marker files that an injected command would create.
"""

from __future__ import annotations

import re
import runpy
from html.parser import HTMLParser
from pathlib import Path

import new_article
import pytest
import yaml
from one_build import make, register
from test_contributor_kit import ROOT


def tree(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes() for p in sorted((repo / "docs").rglob("*")) if p.is_file()
    }


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
    return (
        f"a $ b $2 `touch {markers}/backtick` 'single' \"double\" "
        f"$(touch {markers}/dollar) $(shell touch {markers}/shell) ${{HOME}} "
        f'; touch {markers}/semicolon && touch {markers}/and " ; touch {markers}/quote ; "'
    )


def test_documented_usage_still_works(repo):
    proc = make(repo, "new", "GUIDE=training", "SLUG=my-topic", "TITLE=标题", "TAGS=memory")
    assert proc.returncode == 0, proc.stderr
    page = repo / "docs/training/my-topic.md"
    assert front_matter(page) == {
        "title": "标题",
        "guide": "training",
        "tags": ["memory"],
        "summary": new_article.DEFAULT_SUMMARY,
    }
    assert h1_line(page) == "# 标题"
    assert "my-topic\n```" in (repo / "docs/training/index.md").read_text(encoding="utf-8")


def test_title_and_summary_arrive_verbatim_and_run_nothing(repo, markers):
    title = "标题 " + injections(markers)
    summary = "摘要 " + injections(markers) + " 结束。"
    proc = make(
        repo,
        "new",
        "GUIDE=training",
        "SLUG=verbatim",
        f"TITLE={title}",
        "TAGS=memory,distributed-training",
        f"SUMMARY={summary}",
    )
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
    assert {"GUIDE": "KB077 unknown guide", "SLUG": "KB076 slug", "TAGS": "KB004 unknown tag"}[
        variable
    ] in proc.stderr
    assert sorted(markers.iterdir()) == []
    assert tree(repo) == before


@pytest.mark.parametrize(
    "title, words",
    [
        ("", "KB075 empty title"),
        ("   ", "KB075 empty title"),
        ("第一行\n第二行", "KB075 the title '第一行\\n第二行' holds a control character"),
    ],
)
def test_empty_or_multiline_title_is_refused(repo, markers, title, words):
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", "SLUG=some-topic", f"TITLE={title}", "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: {words}" in proc.stderr, proc.stderr
    assert tree(repo) == before


def test_injected_newline_title_runs_nothing(repo, markers):
    before = tree(repo)
    proc = make(
        repo,
        "new",
        "GUIDE=training",
        "SLUG=some-topic",
        f"TITLE=x\n\ttouch {markers}/recipe\n$(shell touch {markers}/shell)",
        "TAGS=memory",
    )
    assert proc.returncode == 2 and "KB075" in proc.stderr, proc.stderr
    assert sorted(markers.iterdir()) == []
    assert tree(repo) == before


@pytest.mark.parametrize(
    "slug, where",
    [
        ("glossary", "docs/glossary.md"),
        ("errata", "docs/errata.md"),
        ("articles", "docs/articles.md"),
        ("search", "a page the build generates"),
        ("tags", "a page the build generates"),
    ],
)
def test_slug_naming_a_site_page_is_refused(repo, slug, where):
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", f"SLUG={slug}", "TITLE=标题", "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: KB076 slug '{slug}' is the name of {where}; pick another" in proc.stderr
    assert tree(repo) == before


MARKUP_TITLE = (
    "#1 C++ *不是粗体* _不是斜体_ `不是代码` {ref}`不是角色` {{ 不是替换 }} "
    "<script>alert(1)</script> [不是链接](https://x.y) a|b ~c~ !d & &amp; \\ \"引号\" 'x' "
    "-- ... 结尾 #"
)


def _markup_title(repo, at):
    proc = make(
        repo,
        "new",
        "GUIDE=training",
        "SLUG=markup-title",
        f"TITLE={MARKUP_TITLE}",
        "TAGS=memory",
        "SUMMARY=摘要 *也* `原样` {{ x }}。",
    )
    return proc, front_matter(repo / "docs/training/markup-title.md") if proc.returncode == 0 else None


# Articles `make new` writes are valid contributions: they share one `make html`
# (the group "valid" of tests/one_build.py), which must pass.
register("valid", "make-new", {"markup-title": _markup_title})


def test_title_with_markup_builds_and_shows_as_typed(one_build):
    r = one_build("valid")["make-new/markup-title"]
    proc, fm = r.value
    assert proc.returncode == 0, proc.stderr
    assert fm["title"] == MARKUP_TITLE
    build = r.run.proc
    assert build.returncode == 0, (build.stdout + build.stderr)[-3000:]
    h1 = _Text("h1")
    h1.feed((r.repo / "_build/html/training/markup-title.html").read_text(encoding="utf-8"))
    shown = re.sub(r"\s+", " ", "".join(h1.found)).strip().removesuffix("¶").strip()
    assert shown == MARKUP_TITLE


# -- values that must be refused or arrive verbatim ----------------------------


def test_slug_with_a_trailing_newline_is_refused(repo):
    # "$" in a regular expression also matches before a final newline.
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", "SLUG=nl-slug\n", "TITLE=标题", "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error: KB076 slug 'nl-slug\\n' is not ASCII kebab-case" in proc.stderr, proc.stderr
    assert tree(repo) == before


# Starts that MyST reads as block syntax on the `> ` lead line (and that a
# title must not turn into either): comments, rules, block breaks, targets,
# list items, fences, field lists, tables, headings, quotes, definitions.
SYNTAX_STARTS = [
    "% 提速 50%",
    "%",
    "---",
    "- - -",
    "***",
    "___",
    "+++",
    "+++ 分隔",
    "(label)=",
    "(摘要)= 目标",
    "# 不是标题",
    "> 不是引用",
    "- 不是列表",
    "-",
    "* 不是列表",
    "+ 不是列表",
    "1. 不是列表",
    "1) 不是列表",
    "2024. 年度回顾",
    ":::",
    ":::{note} 不是指令",
    "```",
    "~~~",
    "$$ x $$",
    ":作者: 不是字段",
    ": 不是定义",
    "| 不是 | 表格 |",
    "===",
    "<!-- 不是注释 -->",
    "\\ 反斜杠",
]


def _myst_text(markdown: str, node_class) -> str:
    """The text of the first ``node_class`` node MyST (with the site's
    extensions) makes of ``markdown``, warnings included."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser
    from sphinx.util.tags import Tags

    # conf.py as Sphinx runs it: with the build's tags (-t book) in its namespace
    extensions = runpy.run_path(str(ROOT / "conf.py"), init_globals={"tags": Tags()})[
        "myst_enable_extensions"
    ]
    doctree = publish_doctree(
        markdown,
        parser=Parser(),
        settings_overrides={"myst_enable_extensions": extensions, "report_level": 5, "halt_level": 5},
    )
    found = next(doctree.findall(getattr(nodes, node_class)), None)
    return "(nothing)" if found is None else found.astext()


@pytest.mark.parametrize("text", SYNTAX_STARTS)
def test_markdown_text_at_the_start_of_a_line_renders_as_typed(text):
    assert _myst_text(f"> {new_article.markdown_text(text)}\n", "block_quote") == text
    assert _myst_text(f"# {new_article.markdown_text(text)}\n", "title") == text


class _Text(HTMLParser):
    """The text of every ``tag`` element, in order."""

    def __init__(self, tag: str):
        super().__init__()
        self.tag, self.depth, self.found = tag, 0, []

    def handle_starttag(self, tag, attrs):
        if tag == self.tag and not self.depth:
            self.found.append("")
        if tag == self.tag or self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.found[-1] += data


def _shown(html: str, tag: str) -> str:
    parser = _Text(tag)
    parser.feed(html)
    return re.sub(r"\s+", " ", parser.found[0]).strip().removesuffix("¶").strip()


def _syntax_starts(repo, at):
    made = {}
    for number, text in enumerate(SYNTAX_STARTS):
        slug = f"syntax-start-{number}"
        proc = make(
            repo, "new", "GUIDE=training", f"SLUG={slug}", f"TITLE={text}", "TAGS=memory", f"SUMMARY={text}"
        )
        fm = front_matter(repo / f"docs/training/{slug}.md") if proc.returncode == 0 else None
        made[text] = (slug, proc, fm)
    return made


register("valid", "make-new", {"syntax-starts": _syntax_starts})


def test_summary_and_title_starting_with_syntax_build_and_show_as_typed(one_build):
    r = one_build("valid")["make-new/syntax-starts"]
    for text, (_slug, proc, fm) in r.value.items():
        assert proc.returncode == 0, (text, proc.stderr)
        assert fm["title"] == text and fm["summary"] == text
    build = r.run.proc
    wrong = {}  # what the pages show instead (-W still writes them on a warning)
    for text, (slug, _, _) in r.value.items():
        page = r.repo / f"_build/html/training/{slug}.html"
        if not page.exists():
            wrong[text] = "no page"
            continue
        html = page.read_text(encoding="utf-8")
        body = html[html.index("<article") :]
        shown = {"h1": _shown(body, "h1"), "lead": _shown(body, "blockquote")}
        if shown != {"h1": text, "lead": text}:
            wrong[text] = shown
    assert (build.returncode, wrong) == (0, {}), build.stderr[-2000:]


@pytest.mark.parametrize(
    "variable, value",
    [
        ("TITLE", "标题\x85结尾"),  # NEL: a line break to YAML and docutils (KB051)
        ("TITLE", "标题\x85"),  # at the end, where strip() would remove it
        ("TITLE", "\x1b[31m红色标题"),
        ("TITLE", "标题\x7f"),
        ("TITLE", "标题\x9b"),
        ("TITLE", "标题\t制表符"),
        ("SUMMARY", "摘要\u2028第二行"),
        ("SUMMARY", "摘要\u2029"),
        ("SUMMARY", "摘要\x01"),
        ("SLUG", "nel-slug\x85"),
        ("SLUG", "ls-slug\u2028"),
        ("GUIDE", "training\x85"),
        ("TAGS", "memory\x85"),
        ("TAGS", "memory,\u2029distributed-training"),
    ],
)
def test_control_characters_are_refused_by_name(repo, variable, value):
    values = {
        "GUIDE": "training",
        "SLUG": "some-topic",
        "TITLE": "标题",
        "TAGS": "memory",
        "SUMMARY": "摘要。",
    }
    values[variable] = value
    char = next(c for c in value if not c.isprintable())
    bad = next(p for p in value.split(",") if char in p) if variable == "TAGS" else value
    before = tree(repo)
    proc = make(repo, "new", *[f"{k}={v}" for k, v in values.items()])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    held = (
        f"a line or paragraph separator (U+{ord(char):04X})"
        if char in "\u2028\u2029"
        else f"a control character (U+{ord(char):04X})"
    )
    expected = {
        "TITLE": f"KB075 the title {bad!r} holds {held}",
        "SUMMARY": f"KB075 the summary {bad!r} holds {held}",
        "SLUG": f"KB076 slug {bad!r} is not ASCII kebab-case (e.g. zero-offload): it holds {held}",
        "GUIDE": f"KB077 unknown guide {bad!r}: it holds {held}",
        "TAGS": f"KB004 unknown tag {bad!r}: it holds {held}",
    }[variable]
    assert f"error: {expected}" in proc.stderr, proc.stderr
    assert tree(repo) == before


def test_title_that_is_not_utf8_is_refused_and_writes_nothing(repo):
    # Python hands on the byte 0xFF from the environment as U+DCFF.
    before = tree(repo)
    proc = make(repo, "new", "GUIDE=training", "SLUG=some-topic", "TITLE=标题\udcff", "TAGS=memory")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error: KB075 the title '标题\\udcff' holds the byte 0xFF, which is not UTF-8" in proc.stderr, (
        proc.stderr
    )
    assert tree(repo) == before
