"""Tiny in-process Sphinx projects for tests/test_ext_*.py (sphinx.testing).

``build_root(name, **kwargs)`` copies ``tests/roots/test-<name>/`` into a
temporary folder and builds it with sphinx.testing's ``make_app`` (HTML,
warnings kept in ``app.warning``). Not the ``@pytest.mark.sphinx`` marker:
pytest.ini's ``--strict-markers`` would refuse it before the plugin loads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOTS = Path(__file__).parent / "roots"


@pytest.fixture
def build_root(make_app, tmp_path):
    def build(name: str, buildername: str = "html", **kwargs):
        src = tmp_path / name
        if not src.exists():
            shutil.copytree(ROOTS / f"test-{name}", src)
        app = make_app(buildername, srcdir=src, **kwargs)
        app.build()
        return app

    return build
