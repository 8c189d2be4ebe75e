"""Hostile contributions found by the second independent probe: ways to read
files, run code at build time, or publish documents that run script.

Each case runs `make html` on a copy of the repository (as
test_hostile_input does): the build fails at the file and line with a KB
code, prints no traceback, and publishes nothing it should not.
"""

from __future__ import annotations

import re

import pytest

from test_contributor_kit import PAGE, _append, _make, repo  # noqa: F401  (fixture)
from test_hostile_input import SECRET, _rst, assert_refused, published_text, secret  # noqa: F401


def _git_config(repo) -> None:
    (repo / ".git").mkdir(exist_ok=True)
    (repo / ".git/config").write_text(f"[http]\n\textraheader = AUTHORIZATION: {SECRET}\n")


FILES = {
    # docutils joins <…> onto its own folder: any path
    "standard-include-code": lambda repo, secret: _rst(
        repo, f".. include:: <{secret}>\n   :code: text\n"),
    "standard-include-literal": lambda repo, secret: _rst(
        repo, f".. include:: <../../../../../../../../..{secret}>\n   :literal:\n"),
    "myst-standard-include": lambda repo, secret: _append(
        repo, f"```{{include}} <{secret}>\n:literal:\n```\n"),
    "literalinclude-diff": lambda repo, secret: (_git_config(repo), _append(
        repo, "```{literalinclude} ../glossary.md\n:diff: ../../.git/config\n```\n"))[1],
    "mermaid-file": lambda repo, secret: (_git_config(repo), _append(
        repo, "```{mermaid} ../../.git/config\n```\n"))[1],
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_every_way_to_read_a_file_is_confined(repo, secret, case):
    line = FILES[case](repo, secret)
    out = assert_refused(_make(repo, "html"), f"{PAGE}:{line}: WARNING: KB011")
    assert "extraheader" not in out  # a refusal never quotes the file into CI's log
    if (repo / "_build/html").exists():
        assert SECRET not in published_text(repo / "_build/html")


def test_autoclasstree_would_import_modules_and_is_refused(repo):
    line = _rst(repo, ".. autoclasstree:: this\n")
    out = assert_refused(_make(repo, "html"), f"{PAGE}:{line}: WARNING: KB017")
    assert "Beautiful is better than ugly" not in out  # `import this` never ran


TYPES = {
    "download-xht": ("x.xht", '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)'
                              "</script></html>", "{download}`下载 <x.xht>`"),
    "download-js": ("x.js", "alert(1)\n", "{download}`下载 <x.js>`"),
    "download-html": ("x.html", '<body onload="alert(1)">hi</body>', "{download}`下载 <x.html>`"),
    "image-svgz": ("x.svgz", "not really gzip", "![图](x.svgz)"),
    "image-html": ("x.html", "<script>alert(1)</script>", "![图](x.html)"),
}


@pytest.mark.parametrize("case", sorted(TYPES))
def test_images_and_downloads_are_types_a_browser_does_not_run(repo, case):
    name, content, markup = TYPES[case]
    (repo / "docs/training" / name).write_text(content, encoding="utf-8")
    line = _append(repo, markup + "\n")
    assert_refused(_make(repo, "html"), f"{PAGE}:{line}: WARNING: KB018")
    assert not list((repo / "_build/html").rglob(name)) if (repo / "_build/html").exists() else True


SVGS = {
    "prefixed-script": ('<svg xmlns="http://www.w3.org/2000/svg">\n<h:script xmlns:h='
                        '"http://www.w3.org/1999/xhtml">alert(1)</h:script></svg>\n', 2, "<script>"),
    "script-in-style": ('<svg xmlns="http://www.w3.org/2000/svg"><style><script>alert(1)</script>'
                        "</style></svg>\n", 1, "<script>"),
    "xml-stylesheet": ('<?xml-stylesheet type="text/xsl" href="x.xsl"?>\n<svg xmlns='
                       '"http://www.w3.org/2000/svg"/>\n', 1, "xml-stylesheet"),
    "remote-image": ('<svg xmlns="http://www.w3.org/2000/svg"><image href='
                     '"https://tracker.example/p.png"/></svg>\n', 1, "another host"),
}


@pytest.mark.parametrize("case", sorted(SVGS))
def test_an_svg_is_read_as_xml_wherever_it_is_published(repo, case):
    content, line, what = SVGS[case]
    (repo / "docs/training/x.svg").write_text(content, encoding="utf-8")
    _append(repo, "![图](x.svg)\n")
    out = assert_refused(_make(repo, "html"))
    assert re.search(rf"_build/html/_images/x\.svg:{line}: WARNING: KB015 .*{re.escape(what)}", out), \
        out[-3000:]


HEADERS = {
    "refresh": ("  Refresh: 0; url=https://evil.example/\n", "header 'Refresh'"),
    "remote-script": (None, "script-src allows https://evil.example"),
    "no-policy": ("", "no Content-Security-Policy"),
}


@pytest.mark.parametrize("case", sorted(HEADERS))
def test_the_shipped_headers_are_checked(repo, case):
    added, what = HEADERS[case]
    headers = repo / "_static/_headers"
    text = headers.read_text(encoding="utf-8")
    if case == "remote-script":
        text = text.replace("script-src 'self'", "script-src 'self' https://evil.example")
    elif case == "no-policy":
        text = "\n".join(l for l in text.split("\n") if "Content-Security-Policy" not in l)
    else:
        text += added
    headers.write_text(text, encoding="utf-8")
    out = assert_refused(_make(repo, "html"))
    assert re.search(r"_static/_headers:\d+: WARNING: KB015 .*" + re.escape(what), out), out[-3000:]


# -- round 3 ----------------------------------------------------------------------------

PAYLOAD = "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}"


@pytest.mark.parametrize("key", ['"myst"', "'myst'", "? myst\n:"])
def test_page_settings_are_read_as_yaml_not_matched_as_text(repo, key):
    index = repo / "docs/training/index.md"
    text = index.read_text(encoding="utf-8")
    front = f"{key}: {{enable_extensions: [substitution]}}\n" if not key.startswith("?") else \
        "? myst\n: {enable_extensions: [substitution]}\n"
    index.write_text(text.replace("---\n", "---\n" + front, 1) + f"\n{PAYLOAD}\n", encoding="utf-8")
    out = assert_refused(_make(repo, "html"), "docs/training/index.md:2: WARNING: KB016")
    assert not list(repo.rglob("PWNED")), out[-2000:]


def test_a_flow_mapping_front_matter_is_read_too(repo):
    index = repo / "docs/training/index.md"
    text = index.read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    index.write_text("---\n{title: 训练, myst: {enable_extensions: [substitution]}}\n---\n" + body
                     + f"\n{PAYLOAD}\n", encoding="utf-8")
    assert_refused(_make(repo, "html"), "docs/training/index.md:2: WARNING: KB016")
    assert not list(repo.rglob("PWNED"))


@pytest.mark.parametrize("name, content", [
    ("leak.txt_t", '{% include "../.git/config" %}'),
    ("x.html", "<!--><img src=x onerror=alert(1)>-->"),
    ("x.xsd", '<r xmlns:h="http://www.w3.org/1999/xhtml"><h:script>alert(1)</h:script></r>'),
])
def test_static_files_are_only_types_a_browser_uses_as_they_are(repo, name, content):
    _git_config(repo)
    (repo / "_static" / name).write_text(content, encoding="utf-8")
    out = assert_refused(_make(repo, "html"), f"_static/{name}:1: WARNING: KB018")
    assert SECRET not in out
    assert not (repo / "_build/html/_static" / name.removesuffix("_t")).exists()


def test_csv_table_file_is_resolved_as_docutils_resolves_it(repo):
    """In an included rST file, :file: is relative to that file, not the page."""
    _git_config(repo)
    (repo / "docs/inc.rst").write_text(".. csv-table:: t\n   :file: ../.git/config\n   :delim: =\n",
                                       encoding="utf-8")
    _append(repo, "```{eval-rst}\n.. include:: ../inc.rst\n```\n")
    assert_refused(_make(repo, "html"), "WARNING: KB011 csv-table file")
    if (repo / "_build/html").exists():
        assert SECRET not in published_text(repo / "_build/html")


def test_an_svg_animating_a_link_is_refused(repo):
    (repo / "docs/training/a.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" '
        'to="javascript:alert(1)"/><text x="1" y="1">x</text></a></svg>\n', encoding="utf-8")
    _append(repo, "![图](a.svg)\n")
    out = assert_refused(_make(repo, "html"))
    assert "_build/html/_images/a.svg:1: WARNING: KB015 <set attributeName='href'>" in out, out[-3000:]


def test_a_stylesheet_loading_from_another_host_is_refused(repo):
    css = repo / "_static/kb.css"
    css.write_text(css.read_text(encoding="utf-8") + "\n@import \"https://evil.example/x.css\";\n",
                   encoding="utf-8")
    out = assert_refused(_make(repo, "html"))
    assert re.search(r"_build/html/_static/kb\.css:\d+: WARNING: KB015 .*evil\.example", out), \
        out[-3000:]


@pytest.mark.parametrize("markup, code", [
    ("```{image} https://evil.example/x.png\n:name: n1\n```\n", "KB014"),
    ("[链接](e%00f.txt)\n", "KB012"),
    ("```{mermaid}\n:config: {bad json\ngraph TD\n  A-->B\n```\n", "KB060"),
])
def test_hostile_markup_fails_at_its_line_without_a_traceback(repo, markup, code):
    line = _append(repo, markup)
    assert_refused(_make(repo, "html"), f"{PAGE}:{line}: WARNING: {code}")


def test_a_csv_table_file_that_is_not_utf8_fails_at_its_line(repo):
    (repo / "docs/training/t.csv").write_bytes("名称,值\n".encode("gbk"))
    line = _append(repo, "```{csv-table} 表\n:file: t.csv\n```\n")
    assert_refused(_make(repo, "html"), f"{PAGE}:{line}: WARNING: KB054")


# -- round 4 ----------------------------------------------------------------------------

ROUND4 = {
    "mermaid-img-label": ("```{mermaid}\nflowchart TD\n  A[\"x\"] --> B[\"<img src='https://evil.example/E.png'>\"]\n```\n",
                          "KB014"),
    "mermaid-image-shape": ("```{mermaid}\nflowchart TD\n  A@{ img: \"https://evil.example/E.png\", label: \"x\" }\n```\n",
                            "KB014"),
    "meta-og-url": ("```{eval-rst}\n.. meta::\n   :property=og:url: https://evil.example/\n   :name=robots: noindex\n```\n",
                    "KB013"),
    "contents": ("```{eval-rst}\n.. contents::\n```\n", "KB017"),
    "footer": ("```{eval-rst}\n.. footer:: 页脚文字\n```\n", "KB017"),
}


@pytest.mark.parametrize("case", sorted(ROUND4))
def test_round_four_markup_is_refused_at_its_line(repo, case):
    markup, code = ROUND4[case]
    line = _append(repo, markup)
    # rST directives are reported at their own line inside {eval-rst}
    line += 1 if markup.startswith("```{eval-rst}") else 0
    out = assert_refused(_make(repo, "html"), f"{PAGE}:")
    assert re.search(rf"{re.escape(PAGE)}:{line}: WARNING: {code}", out), out[-3000:]
    if (repo / "_build/html").exists():
        assert "evil.example" not in published_text(repo / "_build/html")


def test_a_tag_that_yaml_reads_as_a_boolean_fails_at_its_line(repo):
    tags = repo / "data/tags.yaml"
    tags.write_text(tags.read_text(encoding="utf-8") + "yes: 是\n", encoding="utf-8")
    line = tags.read_text(encoding="utf-8").count("\n")
    assert_refused(_make(repo, "html"), f"data/tags.yaml:{line}: WARNING: KB043 tag 'yes' is read as a bool")


@pytest.mark.parametrize("name", ["search", "404"])
def test_a_page_named_like_a_generated_page_is_refused(repo, name):
    (repo / f"docs/{name}.md").write_text(f"---\ntitle: 页\n---\n\n# 页\n\n正文。\n", encoding="utf-8")
    index = repo / "docs/index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("glossary\n", f"glossary\n{name}\n", 1),
                     encoding="utf-8")
    assert_refused(_make(repo, "html"), f"docs/{name}.md:1: WARNING: KB057")


@pytest.mark.parametrize("pattern, url", [("'^(.*.*.*.*.*.*.*.*)*X$'", None), ("'(['", None),
                                          (None, '"http://x\\njavascript:alert(1)"')])
def test_claims_patterns_and_urls_are_checked_before_they_run(pattern, url):
    from kb.editorial import claims as claims
    from pathlib import Path as _Path
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = _Path(tmp) / "claims" / "training"
        folder.mkdir(parents=True)
        entry = "- {claim: 10 个技巧, kind: count, verdict: derived, promised: 10, pattern: %s}\n" % (
            pattern or "'^## 技巧 \\\\d+：'")
        if url:
            entry = ("- claim: 显存 80GB\n  kind: spec\n  verdict: verified\n  as_of: '2024'\n"
                     f"  source: [{{title: t, url: {url}, accessed: '2026-12-01'}}]\n")
        (folder / "x.yaml").write_text(entry, encoding="utf-8")
        _, problems = claims.load(_Path(tmp))
    assert problems and all(p.line >= 1 for p in problems), problems
    assert any("pattern" in p.message or "url" in p.message or "does not match" in p.message
               for p in problems), problems


def test_a_front_matter_source_that_looks_like_a_path_fails_without_a_traceback(repo):
    page = repo / PAGE
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("---\n", "---\nsource: '/etc/passwd'\n", 1), encoding="utf-8")
    out = assert_refused(_make(repo, "html"))
    assert "WARNING: KB011" in out or "WARNING: KB006" in out, out[-3000:]
    assert "root:x:0" not in published_text(repo / "_build/html")


def test_a_refused_glossary_definition_is_reported_at_its_yaml_line(repo):
    glossary = repo / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    lines = text.split("\n")
    at = next(i for i, l in enumerate(lines) if l.lstrip().startswith("def: "))
    lines[at] = lines[at].split("def: ")[0] + "def: '见 ![图](https://tracker.example/p.png)。'"
    glossary.write_text("\n".join(lines), encoding="utf-8")
    out = assert_refused(_make(repo, "html"))
    entry = max(i for i in range(at + 1) if lines[i].startswith("- "))  # the entry's first line
    assert re.search(rf"data/glossary\.yaml:{entry + 1}: WARNING: KB014", out), out[-3000:]
