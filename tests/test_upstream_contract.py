"""Behaviour of Sphinx and MyST that the kb package relies on without a documented
API for it, pinned here so that an upgrade fails loudly, with the module to
mend, instead of changing the site quietly. (Others are pinned beside their
module: tests/test_ext_store.py (toctrees), tests/test_ext_build_speed.py
(reading in the main process), tests/test_ext_navigation.py (furo's sidebar
call), tests/test_ext_mermaid.py (sphinxcontrib-mermaid's classes),
tests/js/fragment.test.mjs (Pagefind's fragment files).)"""

from __future__ import annotations

from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from sphinx.builders.html import StandaloneHTMLBuilder

pytest_plugins = ("sphinx.testing.fixtures",)


def test_a_builder_without_search_writes_no_sphinx_index(build_root):
    """kb.search.index turns Sphinx's search off with the builder's ``search``
    attribute (as Sphinx's epub builder and sphinxcontrib's htmlhelp builder do; not in the builder
    API reference), so that Pagefind's index is the only one. If this fails,
    find Sphinx's new switch and use it there."""
    assert StandaloneHTMLBuilder.search is True
    with_search = build_root("ext-with-search")
    assert (Path(with_search.outdir) / "searchindex.js").exists()
    without = build_root("ext-no-search")
    assert not (Path(without.outdir) / "searchindex.js").exists()
    assert not (Path(without.outdir) / "search.html").exists()


def test_the_std_domain_keeps_labels_as_page_anchor_and_title(build_root):
    """kb.core.labels and kb.editorial.notes read the std domain's ``labels``
    (name -> page, anchor, title) and ``anonlabels`` (name -> page, anchor):
    public attributes of Sphinx's StandardDomain that its documentation does
    not describe (only a comment in its source). If this fails, mend both."""
    app = build_root("ext-store")
    src = Path(app.srcdir)
    (src / "a.rst").write_text(".. _lbl-a:\n\nPage A\n======\n\nText.\n")
    app = build_root("ext-store", freshenv=False)
    std = app.env.get_domain("std")
    assert std.labels["lbl-a"] == ("a", "lbl-a", "Page A")
    assert std.anonlabels["lbl-a"] == ("a", "lbl-a")


def test_myst_reads_option_keys_with_options_to_tokens_and_keeps_the_last(tmp_path):
    """kb.guard.silent_loss (KB065) reads a directive's option block with
    MyST's own reader, ``options_to_tokens`` (not in MyST's documented API),
    because MyST keeps only the last value of a key given twice, without a
    word. If this fails: MyST changed its reader (mend _option_block and
    repeated_options), or it now reports or keeps a repeated key itself (then
    KB065 may go)."""
    from docutils.parsers.rst.directives.admonitions import Admonition
    from myst_parser.parsers.directives import parse_directive_text
    from myst_parser.parsers.options import options_to_tokens

    pairs, _state = options_to_tokens('class: a\n"cl\\x61ss": b\nname: "x\n  y"\nclass: c')
    assert [(k.value, k.start.line) for k, _v in pairs] == [
        ("class", 0),
        ("class", 1),
        ("name", 2),
        ("class", 4),
    ]
    result = parse_directive_text(Admonition, "标题", ":class: a\n:class: b\n\n正文")
    assert result.options["class"] == ["b"] and result.warnings == []


def test_the_option_block_is_where_myst_finds_it():
    """kb.guard.silent_loss._option_block finds a directive's
    option block as myst_parser's _parse_directive_options does (the lines
    starting with ":" but not ":::", or a "---" block, dedented). If this
    fails, MyST moved the block: mend it."""
    from docutils.parsers.rst.directives.admonitions import Admonition
    from kb.guard.silent_loss import _option_block
    from myst_parser.parsers.directives import _parse_directive_options
    from myst_parser.parsers.options import options_to_tokens

    for body in [
        ":class: a\n:name: n\n\ntext",
        "  :class: a\n:::{note}\n:::",
        "---\n  class: a\n  name: n\n---\ntext",
        "----\nclass: a\n---\ntext\n",
        "text\n:class: a",
        ":class: a\n:name: n",
        "---\nclass: a\n---",
    ]:
        myst = _parse_directive_options(body, Admonition, as_yaml=False, line=1)
        block = _option_block(body)
        assert (block is not None) == myst.has_options, body
        assert (block[2] if block else 0) == myst.option_line_count, body
        if block:
            keys = [k.value for k, _v in options_to_tokens(block[0])[0]]
            assert keys == list(myst.options), body


# What MyST parses as Markdown on its own, each with the line of the page it
# starts on (a paragraph MARK in each); and fences that are no such text.
WALKED = {
    "div": ":::any\nMARK\n:::\n",
    "div-from-info": ":::{note}x\nMARK\n:::\n",
    "first-line": ":::{note} MARK\n:::\n",
    "after-options": "```{note}\n:class: a\n\nMARK\n```\n",
    "after-yaml": "```{note}\n---\nclass: a\n---\nMARK\n```\n",
    "after-argument": "```{admonition} 标题\nMARK\n```\n",
    "nested-colon": "::::{note}\n:::{tip}\nMARK\n:::\n::::\n",
    "closing-text": "```{note}\n---\nclass: a\n--- MARK\n```\n",
    "code": "```{note}x\nMARK\n```\n",
    "missing-argument": "```{admonition}\nMARK\n```\n",
}


def test_the_walk_finds_each_text_myst_parses_on_its_own_at_its_line(tmp_path):
    """kb.core.markdown.walk reads each directive's body as MyST cuts it
    (myst_parser.parsers.directives.parse_directive_text, in MyST's API
    reference), and the text of a colon fence that is no directive (a div),
    as myst_parser's render_colon_fence and render_fence treat fences (not
    documented). Checked against MyST's own parse: each paragraph MARK of
    the walk is on the line MyST gives it, and the walk finds none where MyST
    shows MARK as code or reports the directive. If this fails, mend walk."""
    from docutils.core import publish_doctree
    from docutils.nodes import paragraph
    from ext_helpers import myst_env
    from kb.core import markdown as kb_markdown
    from myst_parser.parsers.docutils_ import Parser

    extensions = ["colon_fence", "deflist", "fieldlist"]
    env = myst_env(tmp_path, extensions)
    md = kb_markdown.parser(extensions)
    for name, text in WALKED.items():
        page = "前文\n\n" + text
        walked = {
            found.line(token.map[0]) + 1
            for found in kb_markdown.walk(md, env, page)
            if found.depth
            for token in found.tokens
            if token.type == "inline" and token.content == "MARK"
        }
        doctree = publish_doctree(
            page,
            parser=Parser(),
            settings_overrides={"myst_enable_extensions": extensions, "report_level": 5, "halt_level": 5},
        )
        # MyST counts the line it adds before a nested colon fence (the walk
        # gives the line of the page)
        shift = 1 if name == "nested-colon" else 0
        myst = {node.line - shift for node in doctree.findall(paragraph) if node.astext() == "MARK"}
        assert walked == myst, (name, walked, myst)
        assert bool(myst) == (name not in ("code", "missing-argument")), (name, myst)


# (directive, body): MARK is dropped by MyST exactly when attribution_cut says so
QUOTES = {
    "after": ("epigraph", "引文\n\n-- 作者\n\nMARK"),
    "after-continued": ("epigraph", "引文\n\n-- 作者\n   续行\n\nMARK"),
    "em-dash": ("pull-quote", "引文\n\n\u2014 作者\nMARK"),
    "three-dashes": ("highlights", "引文\n\n--- 作者\n\n- MARK"),
    "before": ("epigraph", "MARK\n\n-- 作者"),
    "no-blank-before": ("epigraph", "引文\n-- 作者\n\nMARK"),
    "four-dashes": ("epigraph", "引文\n\n---- 不是署名\n\nMARK"),
}


def test_myst_drops_a_quotes_text_after_its_attribution_where_kb069_says():
    """kb.guard.silent_loss.attribution_cut (KB069) follows the rule of
    MyST's block_quote for epigraph, highlights and pull-quote (not in MyST's
    API): the lines after an attribution are dropped. If this fails, MyST
    changed the rule (mend attribution_cut) or keeps those lines now (then
    KB069 may go)."""
    from docutils.core import publish_doctree
    from kb.guard.silent_loss import attribution_cut
    from myst_parser.parsers.docutils_ import Parser

    for name, (directive, body) in QUOTES.items():
        doctree = publish_doctree(
            f"```{{{directive}}}\n{body}\n```\n",
            parser=Parser(),
            settings_overrides={"report_level": 5, "halt_level": 5},
        )
        kept = "MARK" in doctree.astext()
        cut = attribution_cut(body.split("\n"))
        assert kept == (cut is None), (name, kept, cut)
        if cut is not None:
            assert "MARK" in body.split("\n")[cut], (name, cut)
