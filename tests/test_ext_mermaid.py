"""kb.site.mermaid uses sphinxcontrib-mermaid's directive and node classes
without setting that extension up (its setup adds an inline loader script
and has no option against it: mgaitan/sphinxcontrib-mermaid#222), and
without changing any of its settings. These fail if its classes or the
visitors this relies on change."""

from __future__ import annotations

import re
from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)

pytest_plugins = ("sphinx.testing.fixtures",)


def test_diagram_page_loads_the_static_script_and_no_inline_one(build_root):
    app = build_root("ext-mermaid")
    assert "sphinxcontrib.mermaid" not in app.extensions
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert '<pre class="mermaid">graph LR\n  A --&gt; B</pre>' in html
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert [body for _, body in scripts if "mermaid" in body] == []  # the theme has its own
    assert any("kb-mermaid.js" in attrs and "data-kb-mermaid" in attrs for attrs, _ in scripts)
    plain = (Path(app.outdir) / "plain.html").read_text(encoding="utf-8")
    assert "kb-mermaid" not in plain


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
