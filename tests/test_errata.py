"""The 勘误与编者注 page and {ref} to a note show whole verdict sentences.

Built on the tiny project of test_data_errors (the repository's conf.py,
extensions and data; two short pages), so each build takes about a second.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest
from one_build import TINY_ERRATA, register
from test_data_errors import ARTICLE, INDEX, build, tiny_project, write

NOTES = """
(x-numbers)=
## 数字

原文说显存减少 50%。

:::{editor-note}
:label: note-x-quote
:kind: fact
:date: 2026-12-01
**“地表最强”不是贾樟柯说的，而是冯骥说的。”** 后面的说明有第二句。来源：某报道（2026-12-01 查阅）。
:::

:::{editor-note}
:label: note-x-plain
:kind: unsourced
:date: 2026-11-30
这组数字没有来源！后面还有一句。
:::

::::{editor-note}
:label: note-x-details
:kind: clarification
:date: 2026-12-01
**只有激活值减半，模型状态仍约 16 字节/参数。**
:::{details}
很长的说明。
:::
::::
"""

OTHER = """\
---
title: 另一页
guide: training
tags: [memory]
summary: 引用编者注。
---

# 另一页

见{ref}`note-x-quote`。
"""

# a title, a section and a verdict with characters HTML escapes
MARKUP = """\
---
title: 标记 & <符号> @
guide: training
tags: [memory]
summary: 标记字符。
---

# 标记 & <符号> @

## 小节 "引号" & `<b>`

:::{editor-note}
:label: note-z-markup
:kind: code
:date: 2026-12-01
**`x < y && z > "w"` @ 不成立。**
:::
"""


def errata_project(root: Path, x: str, y: str, z: str) -> Path:
    """The tiny project with the 勘误 page and three articles x, y, z of the
    training guide (these texts), built once; its root."""
    root = tiny_project(root)
    for name, text in (("x", x), ("y", y), ("z", z)):
        write(root, f"docs/training/{name}.md", text)
    write(root, "docs/training/index.md", "# 训练\n\n```{toctree}\nx\ny\nz\n```\n")
    write(root, "docs/errata.md", TINY_ERRATA)
    write(root, "docs/index.md", INDEX.replace("glossary\n", "glossary\nerrata\n"))
    code, out = build(root)
    assert code == 0, out[-3000:]
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = errata_project(tmp_path_factory.mktemp("errata") / "kb", ARTICLE + NOTES, OTHER, MARKUP)
    return root / "_build" / "html"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_errata_groups_by_verdict_and_article_with_whole_sentences(built):
    html = (built / "errata.html").read_text(encoding="utf-8")
    body = _text(html[html.index("全站共") :])
    # verdicts in order, each with its count, the article's title under each
    assert body.index("更正（2 条）") < body.index("未能核实（1 条）") < body.index("补充说明（1 条）")
    assert body.count("梯度累积") >= 3
    # whole verdict sentences: a bold verdict ending in 。” is not cut, nor run on
    assert "“地表最强”不是贾樟柯说的，而是冯骥说的。”（数字 · 事实有误 · 2026-12-01）" in body, body
    assert "后面的说明有第二句" not in body
    assert "这组数字没有来源！（数字 · 未找到来源 · 2026-11-30）" in body, body
    assert "只有激活值减半，模型状态仍约 16 字节/参数。（数字 · 补充说明 · 2026-12-01）" in body
    assert "很长的说明" not in body
    # each entry links to its note; the erratum form link works
    assert 'href="training/x.html#note-x-quote"' in html
    assert 'href="https://github.com/51suanli/kb/issues/new?template=erratum.yml"' in html


# what no page can hold today (a page name or an anchor with markup
# characters, white space in a link), for the test below
HOSTILE_GROUPS = [
    (
        "更正 <b>&\"@'",
        [
            (
                '页 </strong><script>x</script> "a" @',
                [
                    ("p<&>\"'@.html#a b\n\tc\rd", '</a><img src=x onerror="y"> & @', '（"q" · <i> · 1）'),
                    ("", "", ""),
                ],
            )
        ],
    )
]


@pytest.mark.parametrize("builder", ["html", "dirhtml", "epub"])
def test_the_list_is_written_as_the_html_writer_writes_it_as_nodes(built, tmp_path, builder):
    """The 勘误 page's list is written as one string (notes.visit_notes_html,
    for speed): byte for byte what each HTML builder's writer makes of the
    same list as docutils nodes (notes.as_nodes, what other builders get):
    the list of the built page, and one with markup characters and white
    space in every field, the link included. Fails when a docutils or Sphinx
    upgrade changes how lists, links or rubrics are written, or escaped."""
    from kb.editorial import notes
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    root = built.parent.parent
    log = io.StringIO()
    # docutils_namespace: the nodes and directives the app registers go when it
    # is done, as after sphinx-build's own run (later builds in this process)
    with contextlib.chdir(root), docutils_namespace():
        if builder == "html":  # the built page's environment
            app = Sphinx(root / "docs", root, built, built / ".doctrees", builder, status=log, warning=log)
        else:
            app = Sphinx(
                root / "docs", root, tmp_path / "out", tmp_path / "d", builder, status=log, warning=log
            )
        html = app.builder.render_partial

        def both(groups):
            written = html(notes.editor_notes_html(groups=groups))["fragment"]
            return written, "".join(html(n)["fragment"] for n in notes.as_nodes(groups))

        if builder == "html":
            doctree = app.env.get_and_resolve_doctree("errata", app.builder, tags=app.tags)
            [node] = doctree.findall(notes.editor_notes_html)
            groups = node["groups"]
            assert sum(len(items) for _h, pages in groups for _t, items in pages) == 4
            written, as_nodes = both(groups)
            assert written == as_nodes
            assert "标记 &amp; &lt;符号&gt; &#64;" in written  # escaped by the writer's own encode
            assert "小节 &quot;引号&quot; &amp; &lt;b&gt;" in written
            assert written in (built / "errata.html").read_text(encoding="utf-8")
        written, as_nodes = both(HOSTILE_GROUPS)
    assert written == as_nodes
    assert 'href="p&lt;&amp;&gt;&quot;\'&#64;.html#a b  c d"' in written, written
    assert "<script>" not in written and "<img" not in written and "<i>" not in written


def test_a_ref_to_a_note_shows_its_verdict_not_its_label(built):
    html = _text((built / "training/y.html").read_text(encoding="utf-8"))
    assert "编者注：“地表最强”不是贾樟柯说的，而是冯骥说的。”" in html, html
    assert "note-x-quote" not in html


def test_the_guide_summaries_show_verdicts_not_labels(site):
    """The guides' 要点速览 tables show each note's verdict, never its raw label."""
    for guide in ("training", "inference", "hardware", "industry"):
        html = (site / guide / "index.html").read_text(encoding="utf-8")
        article = html[html.index("<article") : html.index("</article>")]
        shown = _text(article)
        assert not re.search(r"note-[a-z0-9]", shown), (guide, re.findall(r".{20}note-[a-z0-9-]+", shown))
        assert "编者注：" in shown, guide


# notes a build refuses, each at its own line: (a heading above it, label,
# kind, date, what the build says). Labels that docutils' make_id empties
# (no anchor) or makes equal (one anchor for two notes), that do not start
# with note-, or that are another element's id on the page; an empty note;
# notes without a kind or a date, or with one of another form.
KB022 = "KB022 编者注 :label: {!r} is not note- and ASCII kebab-case"
KB023 = "KB023 编者注 anchor {!r} is also the id of another element of this page"
KB021 = "KB021 编者注 needs :kind: (one of code, figure,"
BAD_NOTES = [
    ("", "编者注甲", "fact", "2026-12-01", KB022.format("编者注甲")),
    ("", "note-甲", "fact", "2026-12-01", KB022.format("note-甲")),
    ("", "note-乙", "fact", "2026-12-01", KB022.format("note-乙")),
    ("", "Note_X", "fact", "2026-12-01", KB022.format("Note_X")),
    ("", "2024-fix", "fact", "2026-12-01", KB022.format("2024-fix")),
    ("", "2025-fix", "fact", "2026-12-01", KB022.format("2025-fix")),
    ("", "fix-it", "fact", "2026-12-01", KB022.format("fix-it")),
    ("", "note-same", "fact", "2026-12-01", KB023.format("note-same")),
    ("", "note-same", "fact", "2026-12-01", KB023.format("note-same")),
    ("## Note Clash\n\n", "note-clash", "fact", "2026-12-01", KB023.format("note-clash")),
    # the page's first note without a label is editor-note-0
    ("## Editor Note 0\n\n", None, "fact", "2026-12-01", KB023.format("editor-note-0")),
    # a refused label is KB022's alone, even where its anchor is another note's
    ("", "Note-Y", "fact", "2026-12-01", KB022.format("Note-Y")),
    ("", "note-y", "fact", "2026-12-01", KB023.format("note-y")),
    ("", "note-no-kind", None, "2026-12-01", KB021 + " …"),
    ("", "note-no-date", "fact", None, KB021),
    ("", "note-bad-date", "fact", "2026-12", KB021),
    ("", "note-no-such-day", "fact", "2026-02-30", KB021),
    ("", "note-bad-kind", "typo", "2026-12-01", KB021),
    ("", "note-empty", "fact", "2026-12-01", "KB020 empty 编者注: say what is wrong"),
]


def _bad_notes(repo, at) -> tuple[str, list[int]]:
    page = repo / at.article()
    text = page.read_text(encoding="utf-8").rstrip("\n") + "\n"
    lines = []
    for heading, label, kind, date, _message in BAD_NOTES:
        text += "\n" + heading
        lines.append(text.count("\n") + 1)
        text += ":::{editor-note}\n" + (f":label: {label}\n" if label else "")
        text += f":kind: {kind}\n" if kind else ""
        text += f":date: {date}\n" if date else ""
        text += ("" if label == "note-empty" else "**原文有误。**\n") + ":::\n"
    page.write_text(text, encoding="utf-8")
    return at.article(), lines


# an article of its own in the build of the group "pages" (tests/one_build.py)
register("pages", "errata", {"bad-notes": _bad_notes})


def test_each_malformed_note_fails_at_its_line_with_what_to_write(one_build):
    """A note's label is its anchor: note- and ASCII kebab-case (KB022), or
    docutils would give it none, or one anchor to two notes; and no other
    element of the page has it as its id (KB023). A note says what is wrong
    (KB020) and has a kind and a reading date (KB021). Each is refused at its
    own note's line, without a traceback, and nothing else is said of them."""
    r = one_build("pages")["errata/bad-notes"]
    (page, lines), out = r.value, r.out
    assert r.run.proc.returncode != 0, out[-3000:]
    for (_heading, label, _kind, _date, message), line in zip(BAD_NOTES, lines, strict=True):
        assert f"{page}:{line}: WARNING: {message.removesuffix(' …')}" in out, (label, line, out[-4000:])
    said = [line for line in out.splitlines() if f"{page}:" in line]
    assert len(said) == len(BAD_NOTES) and all(": WARNING: KB02" in line for line in said), said
    assert "Traceback" not in out, out[-3000:]


def _label_on_two_pages(repo, at) -> tuple[str, str, int]:
    note = ":::{editor-note}\n:label: note-twice\n:kind: fact\n:date: 2026-12-01\n**原文有误。**\n:::\n"
    lines = []
    for name in (at.article(), at.page()):
        page = repo / name
        text = page.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
        lines.append(text.count("\n") + 1)
        page.write_text(text + note, encoding="utf-8")
    return at.article(), at.page(), lines


register("pages", "errata", {"label-on-two-pages": _label_on_two_pages})


def test_a_note_label_another_page_holds_too_fails_at_each_note(one_build):
    """Two pages with a note of the same label: {ref} and the 勘误 page can
    link to one only, and a parallel read (this build's) keeps one without a
    word. Each note is named at its line with the other page (KB024,
    kb.core.labels), and nothing else is said about them."""
    r = one_build("pages")["errata/label-on-two-pages"]
    (article, page, lines), out = r.value, r.out
    assert r.run.proc.returncode != 0, out[-3000:]
    said = sorted(line for line in out.splitlines() if "note-twice" in line)
    assert len(said) == 2, said
    for where, other in ((f"{article}:{lines[0]}", page), (f"{page}:{lines[1]}", article)):
        [line] = [line for line in said if f"{where}: WARNING: KB024 label 'note-twice'" in line]
        assert f"is defined on other pages too ({r.repo / other})" in line, said


def _note(label: str) -> str:
    return f"\n:::{{editor-note}}\n:label: {label}\n:kind: fact\n:date: 2026-12-01\n**原文有误。**\n:::\n"


@pytest.mark.slow
def test_a_note_label_that_moves_or_clashes_ends_as_a_full_build_makes_it(tmp_path):
    """One edit moves a note (its label) from one page to another read
    before it (a serial read, page by page): the build passes, holds the
    label where a full build does, and a page linking to it that did not
    change links to its new place (kb.core.labels), and shows its verdict
    once it is rewritten. A label another page holds fails (KB024) until the
    holder's note goes. Each time the site equals a full build."""
    from test_build_modes import tree

    x, y = "docs/training/x.md", "docs/training/y.md"
    root = errata_project(
        tmp_path / "kb",
        ARTICLE,
        OTHER.replace("见{ref}`note-x-quote`。", "正文。") + _note("note-moved") + _note("note-held"),
        # z links to the note and is never edited
        OTHER.replace("另一页", "第三页").replace("note-x-quote", "note-moved"),
    )

    def equals_a_full_build() -> None:
        full = tmp_path / f"full-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(root, full, symlinks=True, ignore=shutil.ignore_patterns("_build"))
        code, out = build(full)
        assert code == 0, out[-3000:]
        assert tree(root / "_build/html") == tree(full / "_build/html")

    # the note moves from y to x (x is read first), in one edit
    write(root, y, (root / y).read_text(encoding="utf-8").replace(_note("note-moved"), ""))
    write(root, x, ARTICLE + _note("note-moved"))
    code, out = build(root)
    assert code == 0, out[-3000:]
    assert 'href="training/x.html#note-moved"' in (root / "_build/html/errata.html").read_text(
        encoding="utf-8"
    )
    assert 'href="x.html#note-moved"' in (root / "_build/html/training/z.html").read_text(encoding="utf-8")
    equals_a_full_build()

    # its verdict changes: z shows the new one
    write(root, x, ARTICLE + _note("note-moved").replace("原文有误。", "原文的数字有误。"))
    code, out = build(root)
    assert code == 0, out[-3000:]
    assert "编者注：原文的数字有误。" in (root / "_build/html/training/z.html").read_text(encoding="utf-8")
    equals_a_full_build()

    # x takes a label y holds: refused at x's note, naming y, until y's note goes
    write(root, x, ARTICLE + _note("note-moved") + _note("note-held"))
    code, out = build(root)
    line = (ARTICLE + _note("note-moved")).count("\n") + 2
    assert code != 0 and f"training/x.md:{line}: WARNING: KB024 label 'note-held' is defined on" in out
    assert "duplicate label" not in out, out[-3000:]
    write(root, y, (root / y).read_text(encoding="utf-8").replace(_note("note-held"), ""))
    code, out = build(root)
    assert code == 0, out[-3000:]
    equals_a_full_build()

    # a label y holds (a paragraph's: no page's contents change) is added on x,
    # then taken off x again: refused at both (Sphinx keeps x's and forgets
    # y's), then y's, as a full build has it
    text_y = (root / y).read_text(encoding="utf-8")
    write(root, y, text_y + "\n(para-held)=\n这一段。\n")
    z = "docs/training/z.md"
    write(root, z, (root / z).read_text(encoding="utf-8") + "\n见{ref}`这一段 <para-held>`。\n")
    code, out = build(root)
    assert code == 0, out[-3000:]
    text_x = (root / x).read_text(encoding="utf-8")
    write(root, x, text_x + "\n(para-held)=\n另一段。\n")
    code, out = build(root)
    assert code != 0 and out.count("WARNING: KB024 label 'para-held'") == 2, out[-3000:]
    write(root, x, text_x)
    code, out = build(root)
    assert code == 0, out[-3000:]
    assert 'href="y.html#para-held"' in (root / "_build/html/training/z.html").read_text(encoding="utf-8")
    equals_a_full_build()
