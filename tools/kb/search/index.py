"""Site search with Pagefind: Chinese, English and mixed queries, offline.

Replaces Sphinx's own search (whose zh index segments with jieba and whose
browser side does not segment queries at all; see issue 3's measurements):

- Sphinx's index is not built; ``search.html`` comes from
  ``_templates/search.html`` and runs ``_static/kb-search.js``;
- after an HTML build, Pagefind (npm ``pagefind``, the extended binary with
  Chinese segmentation; config in ``pagefind.yml``) indexes the pages'
  ``data-pagefind-body`` into ``<outdir>/pagefind/`` (``kb.search.pagefind``): in
  the build when there is no index yet (a build from scratch, as in CI),
  otherwise after it, in the background, so that an incremental build
  returns once the HTML is written (``KB_SEARCH_SYNC=1`` makes every build
  wait for its index);
- each section heading carries its section's id, so Pagefind can point a
  result at the matching section;
- pages hold only the text a reader sees: the glossary's names
  (``data/glossary.yaml``: Chinese name, English name, abbreviations and
  synonyms) reach the search page as alias groups, and the search page
  expands a query that names a term into its other names (query-time
  expansion: ``mixed precision`` also searches 混合精度). The groups also
  show a matching term's definition above the results. Everyday words
  readers type for what the pages say otherwise (``data/search-synonyms.yaml``:
  闲着 for 空闲, 机房 for 数据中心) come as groups of their own, searched
  from the reader's word to the pages' word only, with no definition.

Nothing to write in pages. A missing Pagefind is a warning (``-W`` fails):
run ``npm ci``, as ``make html`` does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.writers.html5 import HTML5Translator

from kb.core import data as kb_data
from kb.core.builders import is_website
from kb.core.i18n import _
from kb.core.log import getLogger
from kb.guard.silent_loss import BuildStopped
from kb.pages.glossary import term_anchors
from kb.search import pagefind as kb_pagefind
from kb.site import output_state as kb_output_state

logger = getLogger(__name__)

# Pages whose text is a listing of other pages: not indexed, so that the
# articles themselves rank first.
# The glossary is not indexed either: the search page shows a matching term's
# definition above the results instead (it would otherwise outrank articles).
NOT_INDEXED = {"search", "genindex", "articles", "glossary", "errata"}
# Of those, the pages a reader may search for by name (勘误, 术语表, 全部文章):
# their title is indexed, and only their title.
FOUND_BY_TITLE = {"articles", "glossary", "errata"}
# set on that title's node: an attribute, not a class, that no page can set
TITLE_MARK = "kb_search_title"


class IndexedPageTranslator(HTML5Translator):
    """Give each section heading its section's id (``<h2 id="…">``).

    Pagefind makes a sub-result for every heading with an id; Sphinx puts
    the id on the ``<section>`` only. The id moves to the heading, so anchors
    keep working and no id appears twice.
    """

    def visit_section(self, node: nodes.section) -> None:
        ids = node["ids"]
        node["ids"] = []
        super().visit_section(node)
        node["ids"] = ids

    def starttag(
        self, node: nodes.Element, tagname: str, suffix: str = "\n", empty: bool = False, **attributes
    ):
        if isinstance(node, nodes.title) and node.get(TITLE_MARK):
            attributes["data-pagefind-body"] = ""  # the page's one indexed text
        return super().starttag(node, tagname, suffix, empty, **attributes)

    def visit_title(self, node: nodes.title) -> None:
        if isinstance(node.parent, nodes.section) and node.parent["ids"] and not node["ids"]:
            node["ids"] = list(node.parent["ids"])
            super().visit_title(node)
            node["ids"] = []
        else:
            super().visit_title(node)


def load_aliases(data_dir: Path) -> list[dict]:
    """Glossary entries for the search page: names (Chinese, English,
    abbreviations, synonyms), definition and anchor on the glossary page."""
    if not (data_dir / "glossary.yaml").exists():
        return []
    from kb.pages.glossary import load_glossary, names

    return [{"names": names(term), "def": term["def"]} for term in load_glossary(data_dir)]


def load_synonyms(data_dir: Path) -> list[dict]:
    """The groups of data/search-synonyms.yaml for the search page: the pages'
    word first, then words readers type for it (searched as the first)."""
    return [{"names": group, "synonym": True} for group in kb_data.search_synonyms(data_dir).data]


# What pagefind.yml may set. Pagefind runs on CI with the build's rights and
# reads any of its options there: ``serve`` starts a web server (the build
# never ends), ``logfile`` and ``output_path`` write where they say,
# ``write_playground`` publishes a page of its own, ``glob``, ``root_selector``
# and broad ``exclude_selectors`` leave pages or their text out of the index.
PAGEFIND_CONFIG = "pagefind.yml"
# the other names Pagefind reads its configuration from, beside this one
PAGEFIND_OTHER_CONFIGS = ("pagefind.yaml", "pagefind.json", "pagefind.toml")
# The selectors of what the index may leave out, reviewed: a broader one
# (``main``, ``.kb-article``) leaves the pages' text out of the search.
PAGEFIND_SELECTORS = frozenset(
    {
        ".headerlink",
        ".kb-article-list",
        ".kb-guides",
        ".kb-count",
        ".kb-tags",
        ".seealso",
        ".kb-article-footer",
        ".kb-note-ref",
        ".copybtn",
        ".kb-diagram-source",
        ".kb-page-meta",
        ".kb-sources",
        ".kb-note-sources",
    }
)


def pagefind_config_problems(confdir: Path) -> list[tuple[str, int, str]]:
    """(file, line, problem) for each setting Pagefind must not be given."""
    problems = [
        (name, 1, f"Pagefind reads its settings from {name} too; put them in {PAGEFIND_CONFIG}")
        for name in PAGEFIND_OTHER_CONFIGS
        if (confdir / name).exists()
    ]
    path = confdir / PAGEFIND_CONFIG
    if not path.is_symlink() and not path.exists():
        return problems
    if path.is_symlink():
        return [*problems, (PAGEFIND_CONFIG, 1, "is a symlink: commit the file itself")]
    # a regular file of at most a data file's size, read without waiting on a FIFO
    text, problem = kb_data.read_text(path)
    if problem is not None:
        return [*problems, (PAGEFIND_CONFIG, problem.line, problem.message)]
    try:
        root, config = kb_data.parse_yaml(text)
    except kb_data.YamlProblem as exc:
        return [*problems, (PAGEFIND_CONFIG, exc.line, exc.message)]
    if config is None:
        return problems
    if not isinstance(config, dict):
        return [*problems, (PAGEFIND_CONFIG, 1, "must be a mapping of settings")]
    for key, value in config.items():
        line = kb_data.line_of(root, [key])
        if key == "keep_index_url":
            if not isinstance(value, bool):
                problems.append((PAGEFIND_CONFIG, line, "keep_index_url must be true or false"))
        elif key == "exclude_selectors":
            values = value if isinstance(value, list) else [value]
            for i, selector in enumerate(values):
                if not isinstance(selector, str) or selector not in PAGEFIND_SELECTORS:
                    problems.append(
                        (
                            PAGEFIND_CONFIG,
                            kb_data.line_of(root, [key, i]) if isinstance(value, list) else line,
                            f"exclude_selectors entry {selector!r} is not among the reviewed ones "
                            "(a broad one leaves the pages' text out of the search index); ask a "
                            "maintainer to add it to PAGEFIND_SELECTORS in tools/kb/search/index.py",
                        )
                    )
        else:
            problems.append(
                (
                    PAGEFIND_CONFIG,
                    line,
                    f"setting {key!r} is not allowed (the build runs Pagefind with CI's rights: "
                    "it could write files, start a server or leave pages out of the index)",
                )
            )
    return problems


def check_pagefind_config(app) -> None:
    """Stop before anything is built if Pagefind would be given a setting
    other than the two this site uses."""
    problems = pagefind_config_problems(Path(app.confdir))
    for name, line, problem in problems:
        logger.warning(
            "KB092 %s: %s; pagefind.yml may set only keep_index_url and exclude_selectors",
            name,
            problem,
            location=f"{name}:{line}",
            type="kb",
            subtype="search",
        )
    if problems:
        raise BuildStopped


def on_builder_inited(app) -> None:
    if not is_website(app.builder):  # epub, singlehtml …: no search page, no index
        return
    check_pagefind_config(app)
    # Pagefind replaces Sphinx's index: the attribute Sphinx's own builders
    # without search set to False (epub; sphinxcontrib's htmlhelp, qthelp, applehelp). (Not in Sphinx's builder
    # API reference; tests/test_upstream_contract.py fails if it goes.)
    app.builder.search = False


def on_collect_pages(app):
    """The search page (_templates/search.html), written through the
    documented html-collect-pages event, on websites only."""
    if is_website(app.builder):
        yield "search", {}, "search.html"


# Sphinx's own search scripts: highlighting of its search terms and the
# translations it uses. Pagefind replaced that search; no page needs them.
UNUSED_SCRIPTS = ("_static/sphinx_highlight.js", "_static/doctools.js", "_static/translations.js")


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if getattr(js, "filename", None) not in UNUSED_SCRIPTS]
    context["kb_search_indexed"] = (
        is_website(app.builder) and doctree is not None and pagename not in NOT_INDEXED
    )
    # Landing pages summarise the articles: they rank below the articles.
    context["kb_search_weight"] = "0.5" if pagename.split("/")[-1] == "index" else ""
    if pagename == "search":
        glossary = app.builder.get_relative_uri("search", "glossary")
        anchors = {name: anchor for name, (_kind, anchor) in term_anchors(app.env).items()}
        aliases = [
            {**entry, "url": f"{glossary}#{_term_id(anchors, entry)}"}
            for entry in load_aliases(Path(app.config.kb_data_dir))
        ] + load_synonyms(Path(app.config.kb_data_dir))
        context["kb_search_aliases"] = json_for_script(aliases)
        context["kb_search_text"] = json_for_script(search_text())


def search_text() -> dict[str, str]:
    """What the search page says, for _static/kb-search.js ("{name}": a value
    the script puts in)."""
    return {
        "enterQuery": _("请输入关键词。"),
        "hint": _("在上面的搜索框输入中文或英文关键词，例如：混合精度、NCCL 超时、mixed precision。"),
        "searching": _("正在搜索……"),
        "failed": _("搜索索引加载失败，请刷新页面重试。"),
        "none": _("没有找到相关页面。"),
        "noneFor": _("没有找到与“{query}”相关的页面。换个说法，或试试英文名、缩写，也可以浏览全部文章。"),
        "cut": _("查询太长，只搜索了前 {max} 个字。"),
        "title": _("搜索"),
        "titleFor": _("{query} - 搜索"),
        "partial": _("没有页面含有“{query}”：下面的页面只含其中的部分字词。"),
        "found": _("找到 {total} 篇相关页面。"),
        "foundSome": _("找到 {total} 篇相关页面，显示前 {shown} 篇。"),
        "more": _("显示更多结果"),
        "term": _("术语："),  # before a glossary entry's names, above the results
    }


# Inside <script>, "</script", "<!--" and "<script" change how the HTML
# parser reads what follows; "&" matters to XHTML readers; U+2028/U+2029 end
# a line in older JavaScript. JSON lets each be written as \uXXXX instead.
SCRIPT_UNSAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})


def json_for_script(value) -> str:
    """JSON that can stand inside a <script> element whatever its strings hold."""
    return json.dumps(value, ensure_ascii=False).translate(SCRIPT_UNSAFE)


def _term_id(anchors: dict[str, str], entry: dict) -> str:
    """The anchor Sphinx gives the glossary term (its first name found)."""
    for name in entry["names"]:
        if name.lower() in anchors:
            return anchors[name.lower()]
    if anchors:  # a site without a glossary page (a test's) links no term at all
        logger.warning(
            "KB109 glossary entry %r is not a term on the glossary page: its search result would link nowhere",
            entry["names"][0],
            type="kb",
            subtype="search",
        )
    return ""


def _stale_pages(app, outdir: Path) -> int | None:
    """How many indexed pages were written since the index was built
    (None: there is no index).

    Only the documents' pages count: generated pages (tags, 404, search) are
    written on every build but never indexed.
    """
    entry = outdir / "pagefind" / "pagefind-entry.json"
    if not entry.exists():
        return None
    built = entry.stat().st_mtime_ns
    stale = 0
    for doc in app.env.found_docs:
        if doc in NOT_INDEXED:
            continue
        page = outdir / app.builder.get_target_uri(doc)
        if not page.exists() or page.stat().st_mtime_ns > built:
            stale += 1
    return stale


def on_build_finished(app, exception) -> None:
    """Index the site: in a build from scratch, after an incremental one."""
    if exception is not None or not is_website(app.builder):
        return
    outdir = Path(app.outdir)
    confdir = Path(app.confdir)
    if not kb_pagefind.binary(confdir).exists():
        logger.warning(
            "KB109 Pagefind is not installed (%s): run `npm ci` (make html does) to build the search index",
            kb_pagefind.binary(confdir),
            type="kb",
            subtype="search",
        )
        return
    # pages of removed sources are deleted first; then the index must forget them
    removed = kb_output_state.finish(app)
    failed = kb_pagefind.failure_file(outdir)
    if failed.exists():
        logger.warning(
            "KB109 the search index update after the previous build failed:\n%s\nIt is rebuilt now.",
            failed.read_text(encoding="utf-8"),
            type="kb",
            subtype="search",
        )
        failed.unlink()
        stale = None
    else:
        stale = _stale_pages(app, outdir)
        if stale is not None and kb_pagefind.indexed_with(outdir) != kb_pagefind.inputs(confdir):
            # pagefind.yml or Pagefind changed: every page is indexed again
            stale = sum(1 for doc in app.env.found_docs if doc not in NOT_INDEXED)
        elif stale is not None:
            stale += removed
    if stale == 0:
        return
    try:
        if stale is not None and not os.environ.get("KB_SEARCH_SYNC"):
            kb_pagefind.index_in_background(outdir, confdir, outdir.parent / f".{outdir.name}.pagefind-log")
            logger.info("搜索索引在后台更新（%d 个页面有改动）", stale)
            return
        output = kb_pagefind.index(outdir, confdir)
    except kb_pagefind.LockFolderError as exc:
        logger.warning(
            "KB109 the search index was not built: %s (runs on one site take turns through a lock "
            "file there); remove that folder, or set TMPDIR to a folder of your own",
            exc,
            type="kb",
            subtype="search",
        )
        return
    if output:
        logger.warning("KB109 Pagefind failed to index %s:\n%s", outdir, output, type="kb", subtype="search")


def on_doctree_resolved(app, doctree, docname: str) -> None:
    """The title of a page found by its name only (FOUND_BY_TITLE)."""
    if docname in FOUND_BY_TITLE and is_website(app.builder):
        title = next(doctree.findall(nodes.title), None)
        if title is not None:
            title[TITLE_MARK] = True


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.i18n")
    app.setup_extension("kb.pages.frontmatter")  # provides kb_data_dir
    app.setup_extension("kb.site.output_state")
    app.set_translator("html", IndexedPageTranslator)
    app.set_translator("dirhtml", IndexedPageTranslator)
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-collect-pages", on_collect_pages)
    app.connect("html-page-context", on_page_context)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 3}
