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
