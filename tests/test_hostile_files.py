"""Hostile contributions found by the second independent probe: ways to read
files, run code at build time, or publish documents that run script.

Each case is a contribution to a copy of the repository built with `make
html` (as in test_hostile_input): the build fails at the file and line with
a KB code, prints no traceback, and publishes nothing it should not. Cases
share builds (tests/one_build.py): most the group "pages", each on pages
and files of its own; the static files refused before anything is read the
group "static-types"; pages named like generated pages and a _headers file
without a policy the group "stopped".
"""

from __future__ import annotations

import re

import pytest
from one_build import SECRET, register
from test_contributor_kit import _append
from test_data_errors import add_to_page, assert_fails_at, tiny_project
from test_hostile_input import _git_config, _rst, assert_refused


def _literalinclude_diff(repo, at):
    _git_config(repo)
    return _append(repo, "```{literalinclude} ../glossary.md\n:diff: ../../.git/config\n```\n", at.article())


def _mermaid_file(repo, at):
    _git_config(repo)
    return _append(repo, "```{mermaid} ../../.git/config\n```\n", at.article())


FILES = {
    # docutils joins <…> onto its own folder: any path
    "standard-include-code": lambda repo, at: _rst(
        repo, f".. include:: <{at.secret}>\n   :code: text\n", at.article()
    ),
    "standard-include-literal": lambda repo, at: _rst(
        repo, f".. include:: <../../../../../../../../..{at.secret}>\n   :literal:\n", at.article()
    ),
    "myst-standard-include": lambda repo, at: _append(
        repo, f"```{{include}} <{at.secret}>\n:literal:\n```\n", at.article()
    ),
    "literalinclude-diff": _literalinclude_diff,
    "mermaid-file": _mermaid_file,
    # Sphinx reads an absolute :file: that exists as it is, not from docs/
    "csv-table-absolute-file": lambda repo, at: _append(
        repo, f"```{{csv-table}} 表\n:file: {at.secret}\n```\n", at.article()
    ),
    # the page language's name: docutils' own csv-table, unless registered under it too
    "csv-table-chinese-name": lambda repo, at: _rst(
        repo, f".. csv表格:: 表\n   :file: {at.secret}\n", at.article()
    ),
}
register("pages", "files", FILES)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(FILES))
def test_every_way_to_read_a_file_is_confined(one_build, case):
    r = one_build("pages")[f"files/{case}"]
    out = assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB011")
    assert "extraheader" not in out  # a refusal never quotes the file into CI's log
    assert SECRET not in r.run.published


register(
    "pages",
    "refused",
    {"autoclasstree": lambda repo, at: _rst(repo, ".. autoclasstree:: this\n", at.article())},
)


register(
    "pages",
    "refused",
    {
        "include-parser": lambda repo, at: _rst(
            repo, ".. include:: ../glossary.md\n   :parser: this\n", at.article()
        ),
        # MyST's include reads the option with the same class: it must not import either
        "myst-include-parser": lambda repo, at: _append(
            repo, "```{include} ../glossary.md\n:parser: this\n```\n", at.article()
        ),
    },
)


@pytest.mark.slow
def test_include_parser_would_import_a_module_and_is_refused(one_build):
    r = one_build("pages")["refused/include-parser"]
    out = assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB017 include's :parser:")
    assert "Beautiful is better than ugly" not in out  # `import this` never ran


@pytest.mark.slow
def test_autoclasstree_would_import_modules_and_is_refused(one_build):
    r = one_build("pages")["refused/autoclasstree"]
    out = assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB017")
    assert "Beautiful is better than ugly" not in out  # `import this` never ran


TYPES = {
    "download-xht": (
        "x.xht",
        '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>',
        "{{download}}`下载 <{name}>`",
    ),
    "download-js": ("x.js", "alert(1)\n", "{{download}}`下载 <{name}>`"),
    "download-html": ("x.html", '<body onload="alert(1)">hi</body>', "{{download}}`下载 <{name}>`"),
    "image-svgz": ("x.svgz", "not really gzip", "![图]({name})"),
    "image-html": ("x.html", "<script>alert(1)</script>", "![图]({name})"),
}


def _typed_file(case: str):
    def apply(repo, at):
        stem, content, markup = TYPES[case]
        name = stem.replace("x.", f"x-{at.tag}.")  # a name of its own in the shared build
        (repo / "docs/training" / name).write_text(content, encoding="utf-8")
        return name, _append(repo, markup.format(name=name) + "\n", at.article())

    return apply


register("pages", "types", {case: _typed_file(case) for case in TYPES})


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(TYPES))
def test_images_and_downloads_are_types_a_browser_does_not_run(one_build, case):
    r = one_build("pages")[f"types/{case}"]
    name, line = r.value
    assert_refused(r.run.proc, f"{r.at.article()}:{line}: WARNING: KB018")
    assert not list((r.repo / "_build/html").rglob(name))


def test_a_refusal_names_the_line_of_the_role_not_an_earlier_mention(tmp_path):
    """A role's node carries its paragraph's line, so the place is found by
    its text in the page: the first mention on or after that line, not the
    page's first mention of the same name (a sentence that talks about the
    file, lines before the download)."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/x.js").write_text("alert(1)\n", encoding="utf-8")
    (root / "docs/training/y.html").write_text("<b>hi</b>\n", encoding="utf-8")
    first = add_to_page(
        root,
        "文中提到 x.js、y.html 和 http://127.0.0.1:9/a 三处。\n\n"
        "另一段，\n第二行 {download}`下载 <x.js>`\n\n"
        "第三段\n第二行 ![图](y.html)\n\n"
        "[链接](http://127.0.0.1:9/a)\n",
    )
    out = assert_fails_at(
        root,
        f"docs/training/x.md:{first + 3}: WARNING: KB018 download of 'x.js'",
        f"docs/training/x.md:{first + 6}: WARNING: KB018 image 'y.html'",
        f"docs/training/x.md:{first + 8}: WARNING: KB012 link to 'http://127.0.0.1:9/a'",
    )
    assert f"docs/training/x.md:{first}: " not in out


def test_a_refusal_in_an_included_file_is_named_there_whatever_the_page_says(tmp_path):
    """An image of an included file is refused at that file's line, even
    where the page also mentions the same address (as code)."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/README.md").write_text(
        "# 附录\n\n![图](https://evil.example/x.png)\n", encoding="utf-8"
    )
    add_to_page(root, "```{include} README.md\n```\n\n另见 `https://evil.example/x.png`。\n")
    assert_fails_at(root, "docs/training/README.md:3: WARNING: KB014 image 'https://evil.example/x.png'")


@pytest.mark.parametrize("path", ["../../../../../etc/passwd", "./sub/../../../conf.py", "/../conf.py"])
def test_a_refused_csv_table_file_is_quoted_as_the_page_writes_it(tmp_path, path):
    """The path worked out from the page's folder is what is checked; the
    message quotes what the contributor wrote, to find it in the page."""
    root = tiny_project(tmp_path / "kb")
    line = add_to_page(root, f":::{{csv-table}}\n:file: {path}\n:::\n")
    assert_fails_at(root, f"docs/training/x.md:{line}: WARNING: KB011 csv-table file '{path}' lies outside")


def test_a_missing_csv_table_file_is_reported_once(tmp_path):
    """The table's size and cells are checked before docutils builds it;
    a file that cannot be read is docutils' error, reported once."""
    root = tiny_project(tmp_path / "kb")
    line = add_to_page(root, ":::{csv-table}\n:file: no-such.csv\n:::\n")
    out = assert_fails_at(root, f"docs/training/x.md:{line}: CRITICAL: KB103")
    assert out.count("No such file or directory") == 1, out[-3000:]


SVGS = {
    "prefixed-script": (
        '<svg xmlns="http://www.w3.org/2000/svg">\n<h:script xmlns:h='
        '"http://www.w3.org/1999/xhtml">alert(1)</h:script></svg>\n',
        2,
        "<script>",
    ),
    "script-in-style": (
        '<svg xmlns="http://www.w3.org/2000/svg"><style><script>alert(1)</script></style></svg>\n',
        1,
        "<script>",
    ),
    "xml-stylesheet": (
        '<?xml-stylesheet type="text/xsl" href="x.xsl"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>\n',
        1,
        "xml-stylesheet",
    ),
    "remote-image": (
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://tracker.example/p.png"/></svg>\n',
        1,
        "another host",
    ),
    # an element of HTML's namespace under a prefix: a browser honours it
    "prefixed-meta-refresh": (
        '<svg xmlns="http://www.w3.org/2000/svg"><h:meta xmlns:h="http://www.w3.org/1999/xhtml" '
        'http-equiv="refresh" content="0;url=https://evil.example/"/></svg>\n',
        1,
        "<meta http-equiv='refresh'> can redirect",
    ),
    # attributes of another namespace named like the real ones, which a browser ignores
    "decoy-attributes": (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="urn:x"><h:meta xmlns:h="http://www.w3.org/1999/xhtml" '
        'http-equiv="refresh" content="0;url=https://evil.example/" x:http-equiv="Content-Security-Policy"/></svg>\n',
        1,
        "<meta http-equiv='refresh'> can redirect",
    ),
    # expat stops reading declarations after an unread parameter entity; browsers do not
    "doctype-entities": (
        '<!DOCTYPE svg [ <!ENTITY % ext SYSTEM "nothing.dtd"> %ext; <!ENTITY s "<h:meta '
        "xmlns:h='http://www.w3.org/1999/xhtml' http-equiv='refresh' content='0;url=https://evil.example/'/>\"> ]>\n"
        '<svg xmlns="http://www.w3.org/2000/svg">&s;</svg>\n',
        1,
        "a DOCTYPE with declarations",
    ),
    # read as Shift_JIS, "ぁ]" loses its "]": the CDATA ends later, and the comment is markup
    "declared-shift-jis": (
        '<?xml version="1.0" encoding="Shift_JIS"?>\n<svg xmlns="http://www.w3.org/2000/svg"><text>'
        "<![CDATA[ ぁ]]><!-- ]]></text><script>alert(1)</script><text> --></text></svg>\n",
        1,
        "declares the encoding 'Shift_JIS'",
    ),
    "prefixed-link": (
        '<svg xmlns="http://www.w3.org/2000/svg"><h:link xmlns:h="http://www.w3.org/1999/xhtml" '
        'rel="stylesheet" href="https://evil.example/track.css"/></svg>\n',
        1,
        "another host",
    ),
}


def _svg(content: str):
    def apply(repo, at):
        name = f"x-{at.tag}.svg"
        (repo / "docs/training" / name).write_text(content, encoding="utf-8")
        _append(repo, f"![图]({name})\n", at.article())
        return name

    return apply


register("pages", "svg", {case: _svg(content) for case, (content, _, _) in SVGS.items()})


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SVGS))
def test_an_svg_is_read_as_xml_wherever_it_is_published(one_build, case):
    _, line, what = SVGS[case]
    r = one_build("pages")[f"svg/{case}"]
    out = assert_refused(r.run.proc)
    assert re.search(
        rf"_build/html/_images/{re.escape(r.value)}:{line}: WARNING: KB015 "
        rf".*{re.escape(what)}",
        out,
    ), out[-3000:]


def _headers(change):
    def apply(repo, at):
        headers = repo / "_static/_headers"
        headers.write_text(change(headers.read_text(encoding="utf-8")), encoding="utf-8")

    return apply


HEADERS = {
    # the first two share the group "pages": the policy stays, and goes into every
    # page's <meta> (so its host is not the page cases' evil.example)
    "refresh": (
        "pages",
        _headers(lambda text: text + "  Refresh: 0; url=https://evil.example/\n"),
        "header 'Refresh'",
    ),
    "remote-script": (
        "pages",
        _headers(lambda text: text.replace("script-src 'self'", "script-src 'self' https://scripts.invalid")),
        "script-src allows https://scripts.invalid",
    ),
    # without a policy no page has to carry one: a group of its own
    "no-policy": (
        "stopped",
        _headers(lambda text: "\n".join(l for l in text.split("\n") if "Content-Security-Policy" not in l)),
        "no Content-Security-Policy",
    ),
}
for _case, (_group, _change, _) in HEADERS.items():
    register(_group, "headers", {_case: _change})


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(HEADERS))
def test_the_shipped_headers_are_checked(one_build, case):
    group, _, what = HEADERS[case]
    r = one_build(group)[f"headers/{case}"]
    out = assert_refused(r.run.proc)
    assert re.search(r"_static/_headers:\d+: WARNING: KB015 .*" + re.escape(what), out), out[-3000:]


# -- round 3 ----------------------------------------------------------------------------

PAYLOAD = "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}"
KEYS = ['"myst"', "'myst'", "? myst\n:"]


def _page_setting(key: str):
    def apply(repo, at):
        page = repo / at.page()  # a page that is no article, as a guide's index.md
        text = page.read_text(encoding="utf-8")
        front = (
            f"{key}: {{enable_extensions: [substitution]}}\n"
            if not key.startswith("?")
            else "? myst\n: {enable_extensions: [substitution]}\n"
        )
        page.write_text(text.replace("---\n", "---\n" + front, 1) + f"\n{PAYLOAD}\n", encoding="utf-8")

    return apply


def _flow_mapping(repo, at):
    page = repo / at.page()
    text = page.read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    page.write_text(
        f"---\n{{title: 页面 {at.tag}, myst: {{enable_extensions: [substitution]}}}}\n"
        "---\n" + body + f"\n{PAYLOAD}\n",
        encoding="utf-8",
    )


register(
    "pages",
    "yaml-settings",
    {**{f"key-{n}": _page_setting(key) for n, key in enumerate(KEYS)}, "flow-mapping": _flow_mapping},
)


@pytest.mark.slow
@pytest.mark.parametrize("key", range(len(KEYS)), ids=KEYS)
def test_page_settings_are_read_as_yaml_not_matched_as_text(one_build, key):
    r = one_build("pages")[f"yaml-settings/key-{key}"]
    out = assert_refused(r.run.proc, f"{r.at.page()}:2: WARNING: KB016")
    assert not list(r.repo.rglob("PWNED")), out[-2000:]


@pytest.mark.slow
def test_a_flow_mapping_front_matter_is_read_too(one_build):
    r = one_build("pages")["yaml-settings/flow-mapping"]
    assert_refused(r.run.proc, f"{r.at.page()}:2: WARNING: KB016")
    assert not list(r.repo.rglob("PWNED"))


STATIC = [
    ("leak.txt_t", '{% include "../.git/config" %}'),
    ("x.html", "<!--><img src=x onerror=alert(1)>-->"),
    ("x.xsd", '<r xmlns:h="http://www.w3.org/1999/xhtml"><h:script>alert(1)</h:script></r>'),
]
# refused when the build starts, before anything is read: a group of their own
register(
    "static-types",
    "static",
    {
        name: (
            lambda name, content: (
                lambda repo, at: (
                    _git_config(repo),
                    (repo / "_static" / name).write_text(content, encoding="utf-8"),
                )
            )
        )(name, content)
        for name, content in STATIC
    },
)


@pytest.mark.slow
@pytest.mark.parametrize("name, content", STATIC)
def test_static_files_are_only_types_a_browser_uses_as_they_are(one_build, name, content):
    r = one_build("static-types")[f"static/{name}"]
    assert (r.repo / "_static" / name).read_text(encoding="utf-8") == content
    out = assert_refused(r.run.proc, f"_static/{name}:1: WARNING: KB018")
    assert SECRET not in out
    assert not (r.repo / "_build/html/_static" / name.removesuffix("_t")).exists()


def _csv_in_included_file(repo, at):
    _git_config(repo)
    name = f"inc-{at.tag}.rst"
    (repo / "docs" / name).write_text(
        ".. csv-table:: t\n   :file: ../.git/config\n   :delim: =\n", encoding="utf-8"
    )
    _append(repo, f"```{{eval-rst}}\n.. include:: ../{name}\n```\n", at.article())
    return name


register("pages", "csv", {"in-included-file": _csv_in_included_file})


@pytest.mark.slow
def test_csv_table_file_is_resolved_as_docutils_resolves_it(one_build):
    """In an included rST file, :file: is relative to that file, not the page."""
    r = one_build("pages")["csv/in-included-file"]
    out = assert_refused(r.run.proc)
    # reported at the directive in docs/inc-….rst, naming the file as written there (from
    # the page, ../.git/config would be docs/.git/config: a missing file, not KB011)
    assert f"docs/{r.value}:1: WARNING: KB011 csv-table file '../.git/config'" in out, out[-3000:]
    assert SECRET not in r.run.published


def _animated_link(repo, at):
    name = f"a-{at.tag}.svg"
    (repo / "docs/training" / name).write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" '
        'to="javascript:alert(1)"/><text x="1" y="1">x</text></a></svg>\n',
        encoding="utf-8",
    )
    _append(repo, f"![图]({name})\n", at.article())
    return name


def _css_import(repo, at):
    css = repo / "_static/kb.css"
    css.write_text(
        css.read_text(encoding="utf-8") + '\n@import "https://evil.example/x.css";\n', encoding="utf-8"
    )


register("pages", "active", {"svg-animated-link": _animated_link, "css-import": _css_import})


@pytest.mark.slow
def test_an_svg_animating_a_link_is_refused(one_build):
    r = one_build("pages")["active/svg-animated-link"]
    out = assert_refused(r.run.proc)
    assert f"_build/html/_images/{r.value}:1: WARNING: KB015 <set attributeName='href'>" in out, out[-3000:]


@pytest.mark.slow
def test_a_stylesheet_loading_from_another_host_is_refused(one_build):
    r = one_build("pages")["active/css-import"]
    out = assert_refused(r.run.proc)
    assert re.search(r"_build/html/_static/kb\.css:\d+: WARNING: KB015 .*evil\.example", out), out[-3000:]


MARKUP = [
    ("```{image} https://evil.example/x.png\n:name: n1\n```\n", "KB014"),
    ("[链接](e%00f.txt)\n", "KB012"),
    ("```{mermaid}\n:config: {bad json\ngraph TD\n  A-->B\n```\n", "KB060"),
]
register(
    "pages",
    "markup",
    {
        code: (lambda markup: lambda repo, at: _append(repo, markup, at.article()))(markup)
        for markup, code in MARKUP
    },
)


@pytest.mark.slow
@pytest.mark.parametrize("markup, code", MARKUP)
def test_hostile_markup_fails_at_its_line_without_a_traceback(one_build, markup, code):
    r = one_build("pages")[f"markup/{code}"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: {code}")


def _csv_not_utf8(repo, at):
    name = f"t-{at.tag}.csv"
    (repo / "docs/training" / name).write_bytes("名称,值\n".encode("gbk"))
    return _append(repo, f"```{{csv-table}} 表\n:file: {name}\n```\n", at.article())


register("pages", "csv", {"not-utf8": _csv_not_utf8})


@pytest.mark.slow
def test_a_csv_table_file_that_is_not_utf8_fails_at_its_line(one_build):
    r = one_build("pages")["csv/not-utf8"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: KB054")


# -- round 4 ----------------------------------------------------------------------------

ROUND4 = {
    "mermaid-img-label": (
        '```{mermaid}\nflowchart TD\n  A["x"] --> B["<img src=\'https://evil.example/E.png\'>"]\n```\n',
        "KB014",
    ),
    "mermaid-image-shape": (
        '```{mermaid}\nflowchart TD\n  A@{ img: "https://evil.example/E.png", label: "x" }\n```\n',
        "KB014",
    ),
    "meta-og-url": (
        "```{eval-rst}\n.. meta::\n   :property=og:url: https://evil.example/\n   :name=robots: noindex\n```\n",
        "KB013",
    ),
    "contents": ("```{eval-rst}\n.. contents::\n```\n", "KB017"),
    "footer": ("```{eval-rst}\n.. footer:: 页脚文字\n```\n", "KB017"),
    # the page language's names (zh_CN) of refused directives
    "contents-chinese-name": ("```{eval-rst}\n.. 目录::\n```\n", "KB017"),
    "footer-chinese-name": ("```{eval-rst}\n.. 页脚:: 页脚文字\n```\n", "KB017"),
    # its definitions are Markdown that the nesting bounds (KB053) do not see
    "glossary": ("```{glossary}\n术语\n  定义\n```\n", "KB017"),
    "raw-chinese-name": ("```{原文} html\n:url: http://evil.example/x.html\n```\n", "KB010"),
    # make linkcheck (CI) would request it: the cloud machine's metadata service
    "link-to-metadata-service": ("[元数据](http://169.254.169.254/latest/meta-data/)\n", "KB012"),
    "link-to-localhost": ("[本机](http://127.1:8080/)\n", "KB012"),
    # Alibaba Cloud's metadata service, in the carriers' shared 100.64.0.0/10
    "link-to-aliyun-metadata": ("[元数据](http://100.100.100.200/latest/meta-data/)\n", "KB012"),
    "link-to-gce-metadata": ("[元数据](http://metadata.google.internal/computeMetadata/v1/)\n", "KB012"),
    # Sphinx links a download of a web address like any link (linkcheck requests it)
    "download-from-localhost": ("{download}`包 <http://127.0.0.1:8765/dl.zip>`\n", "KB012"),
    # make linkcheck matches every link against every ignore pattern
    "link-too-long": ("[长](https://evil.example/" + "a" * 2100 + ")\n", "KB012"),
    # ideographic full stops: requests reads the host as 127.0.0.1 (IDNA UTS #46)
    "rst-link-full-width-host": ("```{eval-rst}\n见 `本机 <http://127。0。0。1:8765/x>`_\n```\n", "KB012"),
    # shown reversed, copied as stored (Trojan Source)
    "bidi-override": ("运行 `echo \u202ehello` 即可。\n", "KB095"),
    # invisible: readers see nothing, llms-full.txt and the search keep it (tag characters)
    "invisible-tag-characters": (
        "证\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 可见。\n",
        "KB095",
    ),
}


def _round4(case: str):
    def apply(repo, at):
        # a host of its own: other cases of the shared build publish evil.example
        host = f"evil-{at.tag}.example"
        markup = ROUND4[case][0].replace("evil.example", host)
        line = _append(repo, markup, at.article())
        # rST directives are reported at their own line inside {eval-rst}
        return line + (1 if markup.startswith("```{eval-rst}") else 0), host

    return apply


register("pages", "round4", {case: _round4(case) for case in ROUND4})


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(ROUND4))
def test_round_four_markup_is_refused_at_its_line(one_build, case):
    code = ROUND4[case][1]
    r = one_build("pages")[f"round4/{case}"]
    line, host = r.value
    page = r.at.article()
    out = assert_refused(r.run.proc, f"{page}:")
    assert re.search(rf"{re.escape(page)}:{line}: WARNING: {code}", out), out[-3000:]
    assert host not in r.run.published


# What the book hands to LaTeX as it is: ``\\input`` would print any file
# into the published PDF. (markup with {secret}, line offset of the report, code)
LATEX = {
    "math-role": ("数学 {{math}}`\\input{{{secret}}}` 完。\n", 0, "KB090"),
    "math-directive": ("```{{math}}\n\\input{{{secret}}}\n```\n", 0, "KB090"),
    "math-rst": ("```{{eval-rst}}\n:math:`\\input{{{secret}}}`\n```\n", 1, "KB090"),
    "raw-latex-role": (
        "```{{eval-rst}}\n.. role:: tex(raw)\n   :format: latex\n\n文本 :tex:`\\input{{{secret}}}` 完。\n```\n",
        4,
        "KB010",
    ),
    "tabularcolumns": (
        "```{{eval-rst}}\n.. tabularcolumns:: |p{{\\input{{{secret}}}}}|l|\n\n"
        ".. list-table::\n\n   * - a\n     - b\n```\n",
        1,
        "KB017",
    ),
}
register(
    "pages",
    "latex",
    {
        case: (
            lambda markup, offset: (
                lambda repo, at: _append(repo, markup.format(secret=at.secret), at.article()) + offset
            )
        )(markup, offset)
        for case, (markup, offset, _) in LATEX.items()
    },
)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LATEX))
def test_latex_the_book_would_run_is_refused_at_its_line(one_build, case):
    r = one_build("pages")[f"latex/{case}"]
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: {LATEX[case][2]}")


# Sphinx lists every line a spec names, docutils and Sphinx widen every tab
# as :tab-width: says: a memory bomb each (a MemoryError traceback, or the
# machine's memory). (markup, line offset of the report)
BOMBS = {
    "emphasize-lines": ("```{code-block} python\n:emphasize-lines: 1-99999999999\n\nx = 1\n```\n", 0),
    "literalinclude-lines": ("```{literalinclude} ../glossary.md\n:lines: 1-99999,1-99999\n```\n", 0),
    "literalinclude-tab-width": ("```{literalinclude} ../glossary.md\n:tab-width: 100000\n```\n", 0),
    "include-tab-width": (
        "```{eval-rst}\n.. include:: ../glossary.md\n   :literal:\n   :tab-width: 100000\n```\n",
        1,
    ),
}
# 150 lists in each other: docutils passes Python's recursion limit at about
# a hundred; refused at the 33rd level (line 65 of the block)
BOMBS["deep-rst"] = ("```{eval-rst}\n" + "".join("  " * i + "- x\n\n" for i in range(150)) + "```\n", 65)
# and 150 directives in each other: MyST passes it at about 120
BOMBS["deep-directives"] = (
    "".join(":" * (153 - i) + "{note}\n" for i in range(150))
    + "x\n"
    + "".join(":" * (3 + i) + "\n" for i in range(150)),
    0,
)
register(
    "pages",
    "bombs",
    {
        case: (lambda markup, offset: lambda repo, at: _append(repo, markup, at.article()) + offset)(
            markup, offset
        )
        for case, (markup, offset) in BOMBS.items()
    },
)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BOMBS))
def test_a_line_spec_or_tab_width_that_would_fill_memory_is_refused(one_build, case):
    r = one_build("pages")[f"bombs/{case}"]
    code = "KB053" if case.startswith("deep-") else "KB094"
    assert_refused(r.run.proc, f"{r.at.article()}:{r.value}: WARNING: {code}")


def _boolean_tag(repo, at):
    tags = repo / "data/tags.yaml"
    tags.write_text(tags.read_text(encoding="utf-8") + "yes: 是\n", encoding="utf-8")
    return tags.read_text(encoding="utf-8").count("\n")


# An unusable tags.yaml leaves tags unchecked (the build fails on it anyway), which
# would hide the unknown tag of another case: the group "stopped" (reported when
# the configuration is read, before the build stops).
register("stopped", "data", {"boolean-tag": _boolean_tag})


@pytest.mark.slow
def test_a_tag_that_yaml_reads_as_a_boolean_fails_at_its_line(one_build):
    r = one_build("stopped")["data/boolean-tag"]
    assert_refused(r.run.proc, f"data/tags.yaml:{r.value}: WARNING: KB043 tag 'yes' is read as a bool")


def _generated_name(name: str):
    def apply(repo, at):
        (repo / f"docs/{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (repo / f"docs/{name}.md").write_text("---\ntitle: 页\n---\n\n# 页\n\n正文。\n", encoding="utf-8")
        index = repo / "docs/index.md"
        index.write_text(
            index.read_text(encoding="utf-8").replace("glossary\n", f"glossary\n{name}\n", 1),
            encoding="utf-8",
        )

    return apply


# refused before any page is read (KB057): the group "stopped". Besides the
# generated pages, folders the build fills with its own files: a page there
# was read by the HTML guard as a copied asset, or not at all (_sources/), and
# pagefind/ is replaced whole by the search index.
GENERATED = ["search", "404", "_sources/p", "_images/p", "pagefind/p", "downloads/p", ".hidden/p"]
register("stopped", "generated", {name: _generated_name(name) for name in GENERATED})


# A page's name is its address: one a URL spells otherwise was written, then
# not found under its encoded name (KB058 blamed a parallel worker, at -j 1
# too) and deleted as the page of a removed source.
ODD_NAMES = ["odd/两个 字", 'odd/q"><b>', "odd/a:b"]
register("stopped", "page-name", {name: _generated_name(name) for name in ODD_NAMES})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("group", "name", "code"),
    [
        *(("generated", name, "KB057") for name in GENERATED),
        *(("page-name", name, "KB093") for name in ODD_NAMES),
    ],
)
def test_a_page_whose_name_the_site_cannot_take_is_refused(one_build, group, name, code):
    r = one_build("stopped")[f"{group}/{name}"]
    assert_refused(r.run.proc, f"docs/{name}.md:1: WARNING: {code}")


# The book writes an image's file name into its LaTeX as it is: this one
# prints the secret into the PDF (^^2f is "/").
def _latex_file_name(repo, at):
    page = repo / at.article()
    name = "a}}\\input{" + str(at.secret).replace("/", "^^2f") + "}{{b.png"
    (page.parent / name).write_bytes((repo / "_static/favicon.svg").read_bytes())
    _append(repo, f"```{{image}} {name.replace(chr(92), chr(92) * 2)}\n:alt: 图\n```\n", at.article())
    return (page.parent / name).relative_to(repo).as_posix()


register("pages", "names", {"latex-image": _latex_file_name})


@pytest.mark.slow
def test_a_file_name_latex_would_run_is_refused(one_build):
    r = one_build("pages")["names/latex-image"]
    assert_refused(r.run.proc, f"{r.value}:1: WARNING: KB091")


@pytest.mark.parametrize(
    "pattern, url",
    [("'^(.*.*.*.*.*.*.*.*)*X$'", None), ("'(['", None), (None, '"http://x\\njavascript:alert(1)"')],
)
def test_claims_patterns_and_urls_are_checked_before_they_run(pattern, url):
    import tempfile
    from pathlib import Path as _Path

    from kb.editorial import claims as claims
    from test_claims import with_schemas

    with tempfile.TemporaryDirectory() as tmp:
        folder = _Path(tmp) / "claims" / "training"
        folder.mkdir(parents=True)
        with_schemas(_Path(tmp))
        entry = "- {claim: 10 个技巧, kind: count, verdict: derived, promised: 10, pattern: %s}\n" % (
            pattern or "'^## 技巧 \\\\d+：'"
        )
        if url:
            entry = (
                "- claim: 显存 80GB\n  kind: spec\n  verdict: verified\n  as_of: '2024'\n"
                f"  source: [{{title: t, url: {url}, accessed: '2026-12-01'}}]\n"
            )
        (folder / "x.yaml").write_text(entry, encoding="utf-8")
        _, problems = claims.load(_Path(tmp))
    assert problems and all(p.line >= 1 for p in problems), problems
    assert any(
        "pattern" in p.message or "url" in p.message or "does not match" in p.message for p in problems
    ), problems


def _source_path(repo, at):
    page = repo / at.article()
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("---\n", "---\nsource: '/etc/passwd'\n", 1), encoding="utf-8")


register("pages", "front-matter", {"source-path": _source_path})


@pytest.mark.slow
def test_a_front_matter_source_that_looks_like_a_path_fails_without_a_traceback(one_build):
    r = one_build("pages")["front-matter/source-path"]
    out = assert_refused(r.run.proc)
    page = re.escape(r.at.article())
    # (the KB011 of a front-matter source names the page but no line)
    assert re.search(rf"{page}(:\d+)?: WARNING: KB0(11|06)", out), out[-3000:]
    assert "root:x:0" not in r.run.published


def _glossary_definition(repo, at):
    glossary = repo / "data/glossary.yaml"
    lines = glossary.read_text(encoding="utf-8").split("\n")
    # the last entry's definition (test_hostile_input's jinja case changes the first one's)
    at_line = max(i for i, l in enumerate(lines) if l.lstrip().startswith("def: "))
    lines[at_line] = lines[at_line].split("def: ")[0] + "def: '见 ![图](https://tracker.example/p.png)。'"
    glossary.write_text("\n".join(lines), encoding="utf-8")
    return max(i for i in range(at_line + 1) if lines[i].startswith("- ")) + 1  # the entry's line


register("pages", "data", {"glossary-definition": _glossary_definition})


@pytest.mark.slow
def test_a_refused_glossary_definition_is_reported_at_its_yaml_line(one_build):
    r = one_build("pages")["data/glossary-definition"]
    out = assert_refused(r.run.proc)
    assert re.search(rf"data/glossary\.yaml:{r.value}: WARNING: KB014", out), out[-3000:]
