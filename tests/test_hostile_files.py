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
