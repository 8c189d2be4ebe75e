"""kb.site.mermaid uses sphinxcontrib-mermaid's directive and node classes
without setting that extension up (its setup adds an inline loader script
and mermaid itself), and without changing any of its settings. A diagram is
its SVG files drawn ahead of time (tests/roots/test-ext-mermaid/_diagrams).
These fail if its classes or the visitors this relies on change."""

from __future__ import annotations

import re
from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)

pytest_plugins = ("sphinx.testing.fixtures",)

DIGEST = "2a85913f13d91c04c882"


def test_diagram_page_shows_its_svgs_and_loads_no_script(build_root):
    app = build_root("ext-mermaid")
    assert "sphinxcontrib.mermaid" not in app.extensions
    assert app.warning.getvalue() == ""
    out = Path(app.outdir)
    html = (out / "index.html").read_text(encoding="utf-8")
    for variant in ("light", "dark"):
        assert f'<a class="kb-diagram-image only-{variant}" href="_images/{DIGEST}-{variant}.svg">' in html
        assert (
            f'<img src="_images/{DIGEST}-{variant}.svg" alt="图示（文字版见下方的“图示源码”）" width="120" height="40"'
            in html
        )
        assert (out / "_images" / f"{DIGEST}-{variant}.svg").is_file()
    assert "<pre>graph LR\n  A --&gt; B</pre>" in html
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert [(attrs, body) for attrs, body in scripts if "mermaid" in attrs + body] == []
    assert "kb-mermaid.css" in html
    plain = (out / "plain.html").read_text(encoding="utf-8")
    assert "kb-mermaid" not in plain


def test_a_missing_svg_is_kb110_at_the_diagram_and_the_page_shows_the_source(build_root, tmp_path):
    build_root("ext-mermaid", buildername="dummy")  # the copy of the root, in tmp_path
    (tmp_path / "ext-mermaid" / "_diagrams" / f"{DIGEST}-dark.svg").unlink()
    app = build_root("ext-mermaid", freshenv=True)
    warnings = app.warning.getvalue()
    assert re.search(
        r"index\.rst:\d+: WARNING: KB110 .*" + DIGEST + r"-dark\.svg.*run `make diagrams`", warnings
    )
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "<img" not in html.split('<div class="kb-diagram">')[1].split("</div>")[0]
    assert '<details class="kb-diagram-source" open>' in html


def test_epub_gets_the_light_svg_only(build_root):
    app = build_root("ext-mermaid", buildername="epub")
    html = (Path(app.outdir) / "index.xhtml").read_text(encoding="utf-8")
    assert f'src="_images/{DIGEST}-light.svg"' in html and "-dark.svg" not in html
    assert (Path(app.outdir) / "_images" / f"{DIGEST}-light.svg").is_file()


def test_other_formats_still_write_the_diagram(build_root):
    app = build_root("ext-mermaid", buildername="text")
    # sphinxcontrib-mermaid's text visitor: the diagram type in brackets
    assert "[graph]" in (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")


def test_latex_without_mermaid_cli_shows_the_diagrams_source(build_root):
    """No mermaid-cli here (it installs a browser of its own): the book shows
    the diagram's text, with no warning."""
    app = build_root("ext-mermaid", buildername="latex")
    assert app.warning.getvalue() == ""
    (tex,) = Path(app.outdir).glob("*.tex")
    assert "\\begin{sphinxVerbatim}" in tex.read_text(encoding="utf-8")  # the page has no other code


def test_latex_uses_mermaid_cli_settings_as_upstream(build_root):
    """With a mermaid-cli, its LaTeX visitor runs and reads mermaid-cli's
    settings: without them registered, -b latex on a page with a diagram was
    an AttributeError; here the command fails and it is sphinxcontrib-mermaid's
    own warning."""
    app = build_root("ext-mermaid", buildername="latex", confoverrides={"mermaid_cmd": "/bin/false"})
    assert "Mermaid exited with error" in app.warning.getvalue()


def test_an_svg_is_named_by_all_it_is_drawn_from():
    """A new mermaid (package.json), other settings (conf.py) or an edited
    text: another name, so the committed SVG no longer counts (KB110)."""
    from types import SimpleNamespace

    from kb.site.mermaid import diagram_digest, render_settings

    config = SimpleNamespace(
        mermaid_init_config={"startOnLoad": False, "securityLevel": "strict"},
        mermaid_light_theme="default",
        mermaid_dark_theme="dark",
    )
    settings = render_settings(config)
    assert diagram_digest("graph LR\n  A --> B", settings, "none") == DIGEST
    assert settings["light"]["htmlLabels"] is False and settings["dark"]["flowchart"]["htmlLabels"] is False
    assert settings["dark"]["theme"] == "dark" and settings["light"]["theme"] == "default"
    others = {
        diagram_digest("graph LR\n  A --> C", settings, "none"),
        diagram_digest("graph LR\n  A --> B", settings, "11.12.1"),
        diagram_digest(
            "graph LR\n  A --> B",
            render_settings(SimpleNamespace(**{**vars(config), "mermaid_dark_theme": "forest"})),
            "none",
        ),
    }
    assert DIGEST not in others and len(others) == 3


def test_the_images_resolve_from_every_page_layout(build_root):
    """html, dirhtml (a page is a folder) and singlehtml (one page): each
    <img> points at a copied SVG."""
    for builder in ("dirhtml", "singlehtml"):
        app = build_root("ext-mermaid", buildername=builder)
        out = Path(app.outdir)
        pages = [p for p in out.rglob("index.html") if "kb-diagram" in p.read_text(encoding="utf-8")]
        assert pages, builder
        for page in pages:
            for src in re.findall(r'<img src="([^"]+\.svg)"', page.read_text(encoding="utf-8")):
                assert (page.parent / src).resolve().is_file(), (builder, page, src)


def test_a_diagrams_words_are_its_labels_without_the_syntax():
    """What the search indexes of a diagram (its source is kept out)."""
    from kb.site.mermaid import diagram_words

    code = (
        'flowchart TD\n    start(["训练出问题"]) --> R{"能稳定复现吗？"}\n'
        '    R -- "否" --> LOG["加日志<br/>再复现"] --> R\n    R -->|是| K[现象]\n    K --> R\n'
    )
    assert diagram_words(code) == "训练出问题 能稳定复现吗？ 否 加日志 再复现 是 现象"
