"""Hostile and broken contributions, through `make html` on a copy of the repository.

A pull request is untrusted input to a build that runs with CI's
credentials and publishes a site. Each case applies one contribution to a
copy of the repository and runs what CI runs: the build must fail with the
page and line and a KB code, print no traceback, and write nothing that
should not be published (a secret next to the repository never reaches any
output file, the search index included).

Cases that need only their own pages share one build (tests/one_build.py:
group "pages", each case on an article or page of its own, `make html`
once with ``--keep-going``); cases that stop the build before the others
would be read share a small group of their own ("symlinks", "stopped",
"toctree", "static-link"). Tests that build several times in a row (a
deleted page, an interrupted build; the three failed builds share one
sequence) keep a copy each, of a repository whose
docs/ has four pages (one_build.tiny_repo: what one build leaves to the next
does not depend on the number of pages).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from one_build import SECRET, register
from one_build import tiny_repo as _one_build_tiny
from test_build_modes import tree
from test_contributor_kit import _append, _make

from conftest import sphinx_build

pytestmark = pytest.mark.slow
# The article of the tiny repository (one_build.tiny_repo) that tests building
# several times in a row change.
TINY_PAGE = "docs/training/x.md"


def assert_refused(proc, *messages: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    for message in messages:
        assert message in out, out[-3000:]
    return out


def _relative_from_page(repo: Path, target: Path, page: str) -> str:
    return os.path.relpath(target, (repo / page).parent)


def _html(page: str) -> str:
    """The written page of a source page (docs/training/x.md -> training/x.html)."""
    return page.removeprefix("docs/").removesuffix(".md") + ".html"


# -- 1. files from outside the repository ------------------------------------------


def _include_from_outside(markup: str, extra_line: int = 0):
    """A case appending ``markup`` (with {rel}: the secret, relative to the page)."""

    def apply(repo, at):
        page = at.article()
        rel = _relative_from_page(repo, at.secret, page)
        return _append(repo, markup.format(rel=rel), page) + extra_line

    return apply


OUTSIDE = {
    "literalinclude": _include_from_outside("```{{literalinclude}} {rel}\n```\n"),
    "myst-include": _include_from_outside("```{{include}} {rel}\n```\n"),
    "myst-include-literal": _include_from_outside(":::{{include}} {rel}\n:literal:\n:::\n"),
    "rst-include": _include_from_outside("```{{eval-rst}}\n.. include:: {rel}\n   :literal:\n```\n", 1),
    "download": _include_from_outside("{{download}}`配置文件 <{rel}>`\n"),
    "csv-table-file": _include_from_outside("```{{csv-table}} 表\n:file: {rel}\n```\n"),
}
register("pages", "outside", OUTSIDE)


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_a_file_from_outside_the_repository_is_refused_and_not_published(one_build, case):
    r = one_build("pages")[f"outside/{case}"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB011")
    assert SECRET not in r.run.published


# A symlink stops the build before anything is read: these share a build of their own.
SYMLINKS_OUT = ["docs/training/leak.md", "docs/training/diagram.png", "_static/leak.css", "data/leak.yaml"]
register(
    "symlinks",
    "outside",
    {
        where: (lambda where: lambda repo, at: (repo / where).symlink_to(at.secret))(where)
        for where in SYMLINKS_OUT
    },
)


@pytest.mark.parametrize("where", SYMLINKS_OUT)
def test_a_symlink_out_of_the_repository_stops_the_build_before_it_reads(one_build, where):
    r = one_build("symlinks")[f"outside/{where}"]
    assert_refused(r.run.proc, f"{where}:1: WARNING: KB011")
    assert SECRET not in r.run.published


# -- 2. scripts, redirects and third-party requests -----------------------------------


def _rst(repo, body: str, page: str) -> int:
    """An {eval-rst} block; returns the line of its first rST line."""
    return _append(repo, "```{eval-rst}\n" + body + "```\n", page) + 1


def _unsafe_rst(body: str, extra_line: int = 0):
    return lambda repo, at: _rst(repo, body, at.article()) + extra_line


UNSAFE = {
    "rst-javascript-link": (_unsafe_rst("`点我 <javascript:alert(1)>`_\n"), "KB012", "javascript:"),
    # a named target: its reference may become a link within the page, unreported
    "rst-javascript-target": (_unsafe_rst("点 t_\n\n.. _t: javascript:alert(2)\n", 2), "KB012", "alert(2)"),
    # urlsplit fails on it: the link checker's worker died and linkcheck waited for ever
    "rst-unreadable-address": (_unsafe_rst("`h <http://[127.0.0.1/h>`_\n"), "KB012", "[127.0.0.1/h"),
    "rst-tab-in-scheme": (_unsafe_rst("`点我 <java\tscript:alert(1)>`_\n"), "KB012", "script:alert"),
    "image-target-javascript": (
        _unsafe_rst(".. image:: ../../_static/favicon.svg\n   :target: javascript:alert(2)\n", 1),
        "KB012",
        "javascript:",
    ),
    "rst-data-link": (_unsafe_rst("`看 <data:text/html;base64,PHNjcmlwdD4=>`_\n"), "KB012", "data:text/html"),
    "meta-refresh": (
        _unsafe_rst(".. meta::\n   :http-equiv=refresh: 0; url=https://evil.example/\n", 1),
        "KB013",
        "evil.example",
    ),
    "remote-image": (
        lambda repo, at: _append(repo, "![图](https://tracker.example/pixel.png)\n", at.article()),
        "KB014",
        "tracker.example",
    ),
    "remote-figure": (_unsafe_rst(".. figure:: //tracker.example/f.png\n"), "KB014", "tracker.example"),
    "csv-table-url": (
        _unsafe_rst(".. csv-table:: t\n   :url: http://127.0.0.1:9/t.csv\n"),
        "KB014",
        "127.0.0.1:9",
    ),
    "raw-directive": (_unsafe_rst(".. raw:: html\n\n   <script>alert(3)</script>\n"), "KB010", "alert(3)"),
}
register("pages", "unsafe", {case: add for case, (add, _, _) in UNSAFE.items()})


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_scripts_redirects_and_remote_resources_are_refused_and_not_written(one_build, case):
    _, code, trace = UNSAFE[case]
    r = one_build("pages")[f"unsafe/{case}"]
    page = r.at.article()
    assert_refused(r.run.proc, f"{page}:{r.value}: WARNING: {code}")
    assert trace not in (r.repo / "_build/html" / _html(page)).read_text(encoding="utf-8")


# -- 3. nothing dropped without a word ------------------------------------------------

DEEP_LIST = "".join("  " * depth + f"- 第 {depth + 1} 层\n" for depth in range(11))
register(
    "pages",
    "dropped",
    {
        "deep-list": lambda repo, at: (
            _append(repo, DEEP_LIST + "\n## 后面的小节\n\n正文。\n", at.article()) + 9
        ),
        "deep-include": lambda repo, at: (
            (repo / f"docs/training/deep-{at.tag}.inc").write_text(
                DEEP_LIST + "\n## 标题\n\n正文。\n", encoding="utf-8"
            ),
            _append(repo, f"```{{include}} deep-{at.tag}.inc\n```\n", at.article()),
            f"docs/training/deep-{at.tag}.inc",
        )[-1],
    },
)


def test_a_list_nested_deeper_than_the_parser_keeps_fails_at_its_line(one_build):
    r = one_build("pages")["dropped/deep-list"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB053")


def _not_utf8(repo, at) -> int:
    page = repo / at.article()
    page.write_bytes(page.read_bytes() + "\n正文\n".encode("gbk"))
    return page.read_bytes().count(b"\n")


# KB054, KB056 and KB057 stop the build before any page is read: they share
# the group "stopped" (with a _headers file that has no policy, checked earlier still).
register(
    "stopped",
    "page",
    {
        "not-utf8": _not_utf8,
        "over-size": lambda repo, at: _append(repo, "正文。" * 120_000 + "\n", at.article()),
    },
)


def test_a_page_that_is_not_utf8_fails_with_its_name_and_line(one_build):
    r = one_build("stopped")["page/not-utf8"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB054")


# KB055 is found once every page is read, and stops the build before any is written.
register(
    "toctree",
    "circular",
    {
        "self": lambda repo, at: _append(repo, "```{toctree}\n:hidden:\n\nindex\n```\n", at.article()) + 3,
    },
)


def test_a_circular_toctree_fails_at_the_entry_not_with_recursion(one_build):
    r = one_build("toctree")["circular/self"]
    out = assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB055")
    assert "RecursionError" not in out


@pytest.mark.timeout(300, method="thread")  # built in this process
def test_a_chain_of_toctrees_fails_at_the_entry_not_with_recursion(tmp_path):
    """Pages listing pages 300 deep: the writers walk the contents with Python
    calls, and passed the recursion limit (a traceback)."""
    from test_data_errors import assert_fails_at, tiny_project

    root = tiny_project(tmp_path / "kb")
    guide = root / "docs/training"
    for i in range(300):
        listed = f"\n```{{toctree}}\nc{i + 1}\n```\n" if i < 299 else ""
        (guide / f"c{i}.md").write_text(
            f"---\ntitle: 链{i}\nguide: training\ntags: [memory]\nsummary: 摘要。\n---\n\n# 链{i}\n\n正文。\n{listed}",
            encoding="utf-8",
        )
    index = guide / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8").replace("\nx\n```", "\nx\nc0\n```", 1), encoding="utf-8"
    )
    out = assert_fails_at(root, "docs/training/c10.md:13: WARNING: KB055 toctrees nested")
    assert "RecursionError" not in out


@pytest.mark.timeout(300, method="thread")  # built in this process
def test_raw_html_in_a_heading_reaches_no_other_page(tmp_path):
    """The page title the navigation of every other page shows is collected
    from the heading: it must be collected without the refused raw HTML."""
    from test_data_errors import assert_fails_at, tiny_project

    root = tiny_project(tmp_path / "kb")
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("# 梯度累积", "# 梯度累积<script>alert(7)</script>", 1), encoding="utf-8")
    line = text.split("\n").index("# 梯度累积") + 1
    assert_fails_at(root, f"docs/training/x.md:{line}: WARNING: KB010 raw HTML (<script>)")
    written = [
        p
        for p in (root / "_build/html").rglob("*.html")
        if "<script>alert(7)" in p.read_text(encoding="utf-8")
    ]
    assert written == []


# -- 2b. what templates, the theme or conf.py write into the pages ---------------------------
# All of them share the build of the group "pages": each template case adds its
# own line to one extrahead block, so each is found at its own line of the
# written index.html (two cases give the same message). Hosts differ from
# the page cases' evil.example, which those look for in their own pages.


def _head(html: str):
    return lambda repo, at: at.template_head(html)


def _drop_policy(repo, at) -> None:
    page = repo / "_templates/page.html"
    meta = '<meta http-equiv="Content-Security-Policy" content="{{ kb_csp_meta|e }}">'
    assert meta in page.read_text(encoding="utf-8")
    page.write_text(page.read_text(encoding="utf-8").replace(meta, ""), encoding="utf-8")


# case: (change, what the warning says, text of the written line it is at; None: line 1)
WRITTEN = {
    "template-inline-script": (
        _head("<script>fetch('//x.example')</script>"),
        "inline <script>",
        "<script>fetch('//x.example')</script>",
    ),
    "template-event-handler": (
        _head('<img src="x.png" onerror="alert(1)">'),
        "event handler onerror=",
        'onerror="alert(1)"',
    ),
    "template-meta-refresh": (
        _head('<meta http-equiv="refresh" content="0; url=https://refresh.invalid/">'),
        "<meta http-equiv='refresh'>",
        "url=https://refresh.invalid/",
    ),
    "conf-remote-stylesheet": (
        lambda repo, at: _append(
            repo, '\nhtml_css_files = [*html_css_files, "https://cdn.example/theme.css"]\n', page="conf.py"
        ),
        "makes the reader's browser call another host",
        "https://cdn.example/theme.css",
    ),
    # tags a browser reads (html.parser too) that a regex for tags with spaces missed,
    # and a template that drops the policy <meta>
    "template-script-slash": (
        _head("<script/x>alert(1)</script>"),
        "inline <script>",
        "<script/x>alert(1)</script>",
    ),
    "template-meta-slash": (
        _head('<meta/http-equiv="refresh"/content="0;url=https://slash.invalid/">'),
        "<meta http-equiv='refresh'>",
        "url=https://slash.invalid/",
    ),
    "template-drops-policy": (
        _drop_policy,
        'lacks the site\'s <meta http-equiv="Content-Security-Policy">',
        None,
    ),
}
register("pages", "written", {case: change for case, (change, _, _) in WRITTEN.items()})


@pytest.mark.parametrize("case", sorted(WRITTEN))
def test_what_templates_or_settings_write_is_checked_in_the_written_pages(one_build, case):
    _, what, text = WRITTEN[case]
    r = one_build("pages")[f"written/{case}"]
    out = assert_refused(r.run.proc)
    lines = (r.repo / "_build/html/index.html").read_text(encoding="utf-8").split("\n")
    at = [n for n, line in enumerate(lines, 1) if text in line] if text else [1]
    assert len(at) == 1, at
    assert re.search(rf"_build/html/index\.html:{at[0]}: WARNING: KB015 .*" + re.escape(what), out), out[
        -3000:
    ]


# -- 4. the second round: what an independent probe found past the first guards ----------

PAYLOAD = "{{ lipsum.__globals__['os'].popen('touch PWNED').read() }}"


def _jinja(repo, at) -> None:
    _append(repo, f"运行 {PAYLOAD} 试试。\n", at.article())
    glossary = repo / "data/glossary.yaml"
    # the first entry's definition (test_hostile_files changes the last one's)
    glossary.write_text(
        glossary.read_text(encoding="utf-8").replace(
            "def: ", f'def: "{PAYLOAD.replace(chr(39), chr(39))}" ', 1
        ),
        encoding="utf-8",
    )


register("pages", "jinja", {"page-and-glossary": _jinja})


def test_jinja_in_a_page_is_text_and_never_runs(one_build):
    """MyST substitutions evaluate {{ … }} without a sandbox: they are off, so the
    braces are text, and nothing runs on the machine that builds."""
    r = one_build("pages")["jinja/page-and-glossary"]
    assert not list(r.repo.rglob("PWNED"))
    assert "Traceback" not in r.out


SETTINGS = [
    "myst:\n  enable_extensions: [substitution]\n",
    "myst:\n  substitutions:\n    x: '<script>alert(1)</script>'\n",
    "html_meta:\n  http-equiv=refresh: 0; url=https://evil.example/\n",
]


def _page_setting(key: str, kind: str):
    def apply(repo, at):
        page = at.article() if kind == "article" else at.page()
        path = repo / page
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("---\n", "---\n" + key, 1) + f"\n{PAYLOAD}\n", encoding="utf-8")

    return apply


register(
    "pages",
    "settings",
    {
        f"{kind}-{n}": _page_setting(key, kind)
        for n, key in enumerate(SETTINGS)
        for kind in ("page", "article")
    },
)


@pytest.mark.parametrize("key", range(len(SETTINGS)), ids=["myst", "substitutions", "html_meta"])
@pytest.mark.parametrize("kind", ["page", "article"])
def test_page_level_myst_settings_are_refused(one_build, key, kind):
    r = one_build("pages")[f"settings/{kind}-{key}"]
    page = r.at.article() if kind == "article" else r.at.page()
    # an article's front matter is checked field by field first: unknown fields are KB006
    code = "KB016 front matter key" if kind == "page" else "KB006 unknown field(s)"
    assert_refused(r.run.proc, f"{page}:2: WARNING: {code} '{SETTINGS[key].split(':')[0]}'")
    assert not list(r.repo.rglob("PWNED"))
    assert "<script>alert(1)" not in (r.repo / "_build/html" / _html(page)).read_text(encoding="utf-8")


SYMLINKS_IN = [
    ("_static/gitcfg.txt", "../.git/config"),
    ("_templates/gitcfg.html", "../.git/config"),
    ("docs/training/notes.md", "../../README.md"),
    ("data/extra", "../docs"),
]


def _git_config(repo) -> None:
    """The checkout's .git as a CI runner's may be: a repository whose
    config holds a token (what the cases try to read)."""
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    with (repo / ".git/config").open("a", encoding="utf-8") as config:
        config.write(f"[http]\n\textraheader = AUTHORIZATION: {SECRET}\n")


register(
    "symlinks",
    "inside",
    {
        where: (
            lambda where, target: lambda repo, at: (_git_config(repo), (repo / where).symlink_to(target))
        )(where, target)
        for where, target in SYMLINKS_IN
    },
)


@pytest.mark.parametrize("where, target", SYMLINKS_IN)
def test_a_symlink_inside_the_repository_stops_the_build_too(one_build, where, target):
    r = one_build("symlinks")[f"inside/{where}"]
    assert os.readlink(r.repo / where) == target
    assert_refused(r.run.proc, f"{where}:1: WARNING: KB011")
    assert SECRET not in r.run.published


def _static_symlink(repo, at) -> None:
    shutil.move(repo / "_static", repo / "static-real")
    (repo / "_static").symlink_to("static-real")


register("static-link", "folder", {"_static": _static_symlink})


def test_a_static_folder_that_is_a_symlink_stops_the_build(one_build):
    r = one_build("static-link")["folder/_static"]
    assert_refused(r.run.proc, "_static:1: WARNING: KB011")


def _svg_image(repo, at) -> str:
    name = f"evil-{at.tag}.svg"
    (repo / "docs/training" / name).write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'
    )
    _append(repo, f"![图]({name})\n", at.article())
    return name


ACTIVE = {
    # (an .html file in _static/ or as a download is refused by type first:
    # test_hostile_files, KB018; an SVG image is a type pages may use, so it is read)
    "svg-image": (_svg_image, "_build/html/_images/{name}:1", "inline <script>"),
}
register("pages", "active", {case: add for case, (add, _, _) in ACTIVE.items()})


@pytest.mark.parametrize("case", sorted(ACTIVE))
def test_documents_a_browser_would_run_are_checked_wherever_they_are_published(one_build, case):
    _, where, what = ACTIVE[case]
    r = one_build("pages")[f"active/{case}"]
    out = assert_refused(r.run.proc)
    where = where.format(name=r.value)
    assert re.search(re.escape(where) + r": WARNING: KB015 .*" + re.escape(what), out), out[-3000:]


def test_nesting_too_deep_in_an_included_file_fails_at_its_line(one_build):
    r = one_build("pages")["dropped/deep-include"]
    assert_refused(r.run.proc, f"{r.value}:10: WARNING: KB053")


INCLUDE_NAMES = ["INCLUDE", "Include", "包含"]
register(
    "pages",
    "include-name",
    {name: _include_from_outside(f"```{{{{{name}}}}} {{rel}}\n```\n") for name in INCLUDE_NAMES},
)


@pytest.mark.parametrize("name", INCLUDE_NAMES)
def test_an_include_under_another_name_is_refused_at_its_line(one_build, name):
    r = one_build("pages")[f"include-name/{name}"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB011")
    assert SECRET not in r.run.published


register(
    "pages",
    "figure",
    {
        "remote-with-target": _unsafe_rst(
            ".. figure:: https://tracker.example/f.png\n   :target: https://example.com/\n\n   图注\n"
        )
    },
)


def test_a_remote_figure_with_a_target_is_refused_without_a_traceback(one_build):
    r = one_build("pages")["figure/remote-with-target"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB014")


def _control_character(repo, at) -> int:
    page = repo / at.article()
    text = page.read_text(encoding="utf-8")
    line = text.split("\n").index(next(l for l in text.split("\n") if l.startswith("summary:"))) + 1
    # written as YAML's escape in a quoted string: the parser gives the character itself
    page.write_text(
        re.sub(r"^summary: (.*)$", r'summary: "\1\\x0b"', text, count=1, flags=re.M), encoding="utf-8"
    )
    return line


register("pages", "front-matter", {"control-character": _control_character})


def test_a_control_character_in_the_front_matter_is_refused_at_its_line(one_build):
    r = one_build("pages")["front-matter/control-character"]
    assert_refused(
        r.run.proc,
        f"{r.at.article()}:{r.value}: WARNING: KB006 field 'summary' holds the control character U+000B",
    )


def test_a_page_over_the_size_limit_stops_the_build_at_once(one_build):
    r = one_build("stopped")["page/over-size"]
    assert_refused(r.run.proc, f"{r.at.article()}:1: WARNING: KB056 the page is 1.")


# -- 4. the output follows the sources, however builds end ----------------------------------


def _search_pages(site: Path) -> set[str]:
    """The page URLs in the search index."""
    urls = set()
    for fragment in (site / "pagefind/fragment").glob("*.pf_fragment"):
        data = gzip.decompress(fragment.read_bytes()).decode("utf-8")
        urls.add(json.loads(data.removeprefix("pagefind_dcd"))["url"])
    return urls


def test_a_deleted_or_renamed_article_leaves_the_site_and_the_index(tiny_repo):
    import new_article
    from kb.search import pagefind as kb_pagefind

    repo = tiny_repo
    for slug in ("zebra-one", "zebra-two"):
        new_article.scaffold(repo, "training", slug, f"斑马 {slug}", ["gpu"], "斑马测试。")
    assert _make(repo, "html").returncode == 0
    site = repo / "_build/html"
    kb_pagefind.wait(site)
    assert {"zebra-one.html", "zebra-two.html"} <= {u.rsplit("/", 1)[-1] for u in _search_pages(site)}
    # one deleted, one renamed (its toctree entry follows)
    index = repo / "docs/training/index.md"
    (repo / "docs/training/zebra-one.md").unlink()
    (repo / "docs/training/zebra-two.md").rename(repo / "docs/training/zebra-three.md")
    index.write_text(
        index.read_text(encoding="utf-8").replace("zebra-one\n", "").replace("zebra-two\n", "zebra-three\n"),
        encoding="utf-8",
    )
    proc = _make(repo, "html")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    kb_pagefind.wait(site)
    assert sorted(p.name for p in (site / "training").glob("zebra-*")) == ["zebra-three.html"]
    pages = {u.rsplit("/", 1)[-1] for u in _search_pages(site)}
    assert "zebra-three.html" in pages and not {"zebra-one.html", "zebra-two.html"} & pages
    assert "zebra-one" not in (site / "training/index.html").read_text(encoding="utf-8")


INTERRUPT = '''
"""Test only: Ctrl-C while the named page is written (KB_INTERRUPT_AT)."""
import os


def setup(app):
    def interrupt(app, pagename, *args):
        if pagename == os.environ.get("KB_INTERRUPT_AT"):
            raise KeyboardInterrupt
    app.connect("html-page-context", interrupt)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
'''


def test_an_interrupted_build_then_make_html_equals_a_full_build(tiny_repo, tmp_path, monkeypatch):
    repo = tiny_repo
    (repo / "tools/kb_interrupt_for_test.py").write_text(INTERRUPT, encoding="utf-8")
    with open(repo / "conf.py", "a", encoding="utf-8") as conf:
        conf.write('\nextensions.append("kb_interrupt_for_test")\n')
    assert _make(repo, "html").returncode == 0
    page = repo / TINY_PAGE
    text = page.read_text(encoding="utf-8")
    old = "梯度累积"
    page.write_text(
        text.replace(f"title: {old}", "title: 十个训练技巧", 1).replace(f"# {old}", "# 十个训练技巧", 1),
        encoding="utf-8",
    )
    # pages are written in name order: the guide's listing is written, the article interrupts
    monkeypatch.setenv("KB_INTERRUPT_AT", "training/x")
    interrupted = _make(repo, "html")
    assert interrupted.returncode != 0 and "Interrupted" in interrupted.stdout + interrupted.stderr
    site = repo / "_build/html"
    assert "十个训练技巧" in (site / "training/index.html").read_text(encoding="utf-8")
    assert "十个训练技巧" not in (site / "training/x.html").read_text(encoding="utf-8")
    monkeypatch.delenv("KB_INTERRUPT_AT")
    assert _make(repo, "html").returncode == 0
    full = tmp_path / "full"
    shutil.copytree(repo / "docs", full / "docs")

    proc = sphinx_build(full / "docs", full / "html", "-j", "auto", conf=repo)
    assert proc.returncode == 0, proc.stderr
    incremental, clean = tree(repo / "_build/html"), tree(full / "html")
    stale = [f for f in clean if incremental.get(f) != clean[f] and f != ".kb-built"]
    assert stale == []


# -- 5. data embedded in pages is escaped for where it lands ------------------------------------


def test_hostile_glossary_text_cannot_break_out_of_the_search_page_data(tiny_repo):
    repo = tiny_repo
    glossary = repo / "data/glossary.yaml"
    # raw HTML in a definition is refused (KB010); as code it is text, and lands
    # in the search page's embedded data as it is
    hostile = "`<!--<script>` 与 `</script><script>alert(1)</script>` & \u2028\u2029"
    glossary.write_text(
        glossary.read_text(encoding="utf-8")
        + (
            "- id: hostile\n  zh: 恶意术语\n  en: hostile term\n"
            f"  def: {json.dumps(hostile, ensure_ascii=False)}\n"
        ),
        encoding="utf-8",
    )
    proc = _make(repo, "html")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    html = (repo / "_build/html/search.html").read_text(encoding="utf-8")
    data = re.search(
        r'<script type="application/json" id="kb-search-aliases">(.*?)</script>', html, re.S
    ).group(1)
    # inside <script>, only "<" can change how the HTML parser reads on
    assert not re.search("[<>&\u2028\u2029]", data)
    entry = next(e for e in json.loads(data) if "恶意术语" in e["names"])
    written = next(e for e in yaml.safe_load(glossary.read_text(encoding="utf-8")) if e["id"] == "hostile")
    assert entry["def"] == written["def"] and "<!--<script>" in entry["def"]
    assert html.count("</script>") == html.count("<script")


# -- 6. a build that failed fails again until its input is fixed ---------------------------
# With -W --keep-going a build with warnings still saves the environment and
# writes the pages; the next `make html` must not pass on the unchanged pages
# (kb.guard.rebuild_failed).


def _warnings(proc, repo: Path) -> set[str]:
    """The build's KB warnings as "path:line: WARNING: KBnnn", paths relative to the copy."""
    out = (proc.stdout + proc.stderr).replace(f"{repo}/", "")
    return set(re.findall(r"^(\S+:\d+: WARNING: KB\d+)", out, re.M))


def _documents(warnings: set[str]) -> set[str]:
    """The documents the warnings are at (a source page, or the page written from it)."""
    docs = set()
    for warning in warnings:
        path = warning.split(":", 1)[0]
        if path.startswith("docs/") and path.endswith(".md"):
            docs.add(path.removeprefix("docs/").removesuffix(".md"))
        elif path.startswith("_build/html/") and path.endswith(".html"):
            docs.add(path.removeprefix("_build/html/").removesuffix(".html"))
    return docs


FAILED_BUILDS = {
    # the math role would load MathJax from a CDN: refused where it is written
    "math-from-a-cdn": (
        lambda repo, secret: _append(repo, "质能方程 {math}`E=mc^2`。\n", page="docs/errata.md"),
        "docs/errata.md",
        r"docs/errata\.md:\d+: WARNING: KB090 math",
    ),
    "toctree-javascript-entry": (
        lambda repo, secret: _append(
            repo, "```{toctree}\n点我 <javascript://%0aalert(document.domain)>\n```\n", page="docs/errata.md"
        ),
        "docs/errata.md",
        # at the entry's line (it once reached the written pages' check, KB015)
        r"docs/errata\.md:\d+: WARNING: KB012 link to 'javascript://%0aalert\(document\.domain\)' in a toctree",
    ),
    "include-from-outside": (
        lambda repo, secret: _rst(
            repo, f".. include:: {_relative_from_page(repo, secret, TINY_PAGE)}\n", TINY_PAGE
        ),
        TINY_PAGE,
        rf"{re.escape(TINY_PAGE)}:\d+: WARNING: KB011",
    ),
}


@pytest.fixture(scope="module")
def failed_builds(tmp_path_factory, secret) -> dict:
    """One tiny repository through the whole sequence, every case at once: a
    passing build; the cases added: a failing build, then two more with nothing
    changed; the cases removed: a passing build, then a full build to compare.
    Each case's test checks its own warning in each run (a page that is not
    read again loses its warning in the reruns)."""
    repo = _one_build_tiny(tmp_path_factory.mktemp("failed") / "kb")
    runs: dict = {"repo": repo}
    runs["initial"] = _make(repo, "html")
    originals = {page: (repo / page).read_text(encoding="utf-8") for _, page, _ in FAILED_BUILDS.values()}
    for add, _, _ in FAILED_BUILDS.values():
        add(repo, secret)
    runs["first"] = _make(repo, "html")
    # Twice: the first rerun may come within kb.guard.html's 2 s of the page being written.
    runs["reruns"] = [_make(repo, "html") for _ in range(2)]
    for page, text in originals.items():
        (repo / page).write_text(text, encoding="utf-8")
    runs["fixed"] = _make(repo, "html")
    full = tmp_path_factory.mktemp("failed-full")
    shutil.copytree(repo / "docs", full / "docs")
    runs["full"] = sphinx_build(full / "docs", full / "html", "-j", "auto", conf=repo)
    from kb.search import pagefind as kb_pagefind

    kb_pagefind.wait(repo / "_build/html")
    runs["trees"] = tree(repo / "_build/html"), tree(full / "html")
    return runs


@pytest.mark.parametrize("case", sorted(FAILED_BUILDS))
def test_a_failed_build_fails_again_until_fixed_then_equals_a_full_build(failed_builds, case):
    runs, repo = failed_builds, failed_builds["repo"]
    _, page, expected = FAILED_BUILDS[case]
    assert runs["initial"].returncode == 0, (runs["initial"].stdout + runs["initial"].stderr)[-3000:]
    first = runs["first"]
    assert first.returncode != 0
    assert re.search(expected, first.stdout + first.stderr), (first.stdout + first.stderr)[-3000:]
    # nothing changed: the same failure, at the same place, and only the pages
    # that warned are read again (a full read here means the warnings' locations
    # were not understood: see kb.guard.rebuild_failed's docstring).
    for again in runs["reruns"]:
        out = again.stdout + again.stderr
        assert again.returncode != 0, out[-3000:]
        assert _warnings(again, repo) == _warnings(first, repo), out[-3000:]
        assert re.search(expected, out), out[-3000:]
    warned = _documents(_warnings(first, repo))
    assert page.removeprefix("docs/").removesuffix(".md") in warned
    for again in runs["reruns"]:
        out = again.stdout + again.stderr
        assert f"reading again {len(warned)} document(s) that warned in the last build" in out, out[-3000:]
    # fixed: the next incremental build passes and equals a full build
    fixed = runs["fixed"]
    assert fixed.returncode == 0, (fixed.stdout + fixed.stderr)[-3000:]
    assert runs["full"].returncode == 0, runs["full"].stderr
    incremental, clean = runs["trees"]
    stale = [
        f
        for f in clean.keys() | incremental.keys()
        if incremental.get(f) != clean.get(f) and f != ".kb-built"
    ]
    assert stale == []


def test_a_warning_outside_any_page_fails_again_and_reads_every_page(tiny_repo):
    """A warning tied to no document (here at a line of an included file, which
    is no page) makes the next build read every page again, and fail again."""
    repo = tiny_repo
    assert _make(repo, "html").returncode == 0
    included = repo / "docs/training/deep.inc"
    items = "".join("  " * depth + f"- 第 {depth + 1} 层\n" for depth in range(11))
    included.write_text(items + "\n## 标题\n\n正文。\n", encoding="utf-8")
    _append(repo, "```{include} deep.inc\n```\n", TINY_PAGE)
    first = _make(repo, "html")
    assert first.returncode != 0
    assert "docs/training/deep.inc:10: WARNING: KB053" in first.stdout + first.stderr
    reruns = [_make(repo, "html") for _ in range(2)]
    for again in reruns:
        out = again.stdout + again.stderr
        assert again.returncode != 0, out[-3000:]
        assert _warnings(again, repo) == _warnings(first, repo), out[-3000:]
    for again in reruns:
        out = again.stdout + again.stderr
        assert "reading every document again" in out, out[-3000:]
    included.write_text("- 一层\n\n## 标题\n\n正文。\n", encoding="utf-8")
    fixed = _make(repo, "html")
    assert fixed.returncode == 0, (fixed.stdout + fixed.stderr)[-3000:]


def test_a_static_file_removed_from_the_project_leaves_the_site(tiny_repo):
    repo = tiny_repo
    (repo / "_static/old-notes.txt").write_text("旧文件\n", encoding="utf-8")
    proc = _make(repo, "html")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert (repo / "_build/html/_static/old-notes.txt").exists()
    (repo / "_static/old-notes.txt").unlink()
    # file times tick in jiffies: make must see the folder changed after its stamp
    later = (repo / "_build/doctrees/html.built").stat().st_mtime + 1
    os.utime(repo / "_static", (later, later))
    proc = _make(repo, "html")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert not (repo / "_build/html/_static/old-notes.txt").exists(), (proc.stdout + proc.stderr)[-2000:]
    assert (repo / "_build/html/_static/kb.css").exists()
