"""Tiny in-process Sphinx projects for tests/test_ext_*.py (sphinx.testing).

``build_root(name, **kwargs)`` copies ``tests/roots/test-<name>/`` into a
temporary folder and builds it with sphinx.testing's ``make_app`` (HTML,
warnings kept in ``app.warning``). A root's own ``data/`` folder is given
the repository's ``data/schemas/``: data is checked against the schemas of
its folder (kb.core.data.schema_path), and a root holds only the data its
test is about. Not the ``@pytest.mark.sphinx`` marker:
pytest.ini's ``--strict-markers`` would refuse it before the plugin loads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOTS = Path(__file__).parent / "roots"
SCHEMAS = Path(__file__).resolve().parent.parent / "data" / "schemas"


@pytest.fixture
def build_root(make_app, tmp_path):
    def build(name: str, buildername: str = "html", **kwargs):
        src = tmp_path / name
        if not src.exists():
            shutil.copytree(ROOTS / f"test-{name}", src)
            if (src / "data").is_dir() and not (src / "data" / "schemas").exists():
                shutil.copytree(SCHEMAS, src / "data" / "schemas")
        app = make_app(buildername, srcdir=src, **kwargs)
        app.build()
        return app

    return build


def myst_env(folder: Path, extensions: list[str], language: str = "zh_CN"):
    """The build environment of a project with MyST (and these MyST extensions),
    set up and not built: the domains and settings kb.core.markdown reads.
    What the project registered with docutils is undone at once
    (SphinxTestApp.cleanup), so that builds after it in this process start
    clean; so a directive that Sphinx adds to docutils' registry
    (``code-block``) is unknown here, and a domain's (``py:function``) known."""
    from sphinx.testing.util import SphinxTestApp

    (folder / "conf.py").write_text(
        f"extensions = ['myst_parser']\nlanguage = {language!r}\nmyst_enable_extensions = {extensions!r}\n",
        encoding="utf-8",
    )
    app = SphinxTestApp("html", srcdir=folder)
    app.cleanup()
    return app.env
