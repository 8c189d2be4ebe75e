"""Run the code samples of every page in docs/ under pytest (Sybil).

What runs: ```` ```python ```` blocks and ```` ```{code-block} python ```` blocks,
``>>>`` doctests, and hidden setup in ``% invisible-code-block: python``
comments (fixtures: a tiny model, a tiny data loader; the page still reads
like the article). Blocks of one page share a namespace, top to bottom.

What does not: a block preceded by ``% skip: next "需要 CUDA GPU"`` (the
reason must be one that tests/test_snippet_policy.py allows, and be shown on
the page); shell, YAML and other languages, which that policy test checks.

Samples run on the CPU and offline; a DeprecationWarning or FutureWarning
raised by a sample is an error, so the pages show current APIs. A failure is
reported as ``docs/…/page.md:LINE`` with the traceback.

A sample is a pull request's code: it runs only in the sandbox of
tools/run_samples.py (``make snippets``, ``make test``), which sets
KB_SAMPLE_SANDBOX. Asked to collect a page anywhere else, pytest reports an
error that says so, and runs nothing of it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.myst import ClearNamespaceParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent

# sphinx.testing's fixtures (app, make_app, …) and its `sphinx` marker, for the
# extensions' in-process tests on tiny projects (tests/roots/test-*/; the
# rootdir fixture is in tests/conftest.py). Loaded here, before collection, so
# that --strict-markers knows the marker.
pytest_plugins = ("sphinx.testing.fixtures",)

# No sample may reach a model hub or the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DOCS = (ROOT / "docs").resolve()

_collect_samples = Sybil(
    parsers=[PythonCodeBlockParser(), SkipParser(), ClearNamespaceParser()],
    patterns=["*.md"],
    path=str(DOCS),
    excludes=["README.md"],
).pytest()


class OutsideTheSandbox(Exception):
    """A page's samples asked for outside tools/run_samples.py."""


def pytest_collect_file(file_path: Path, parent):
    if os.environ.get("KB_SAMPLE_SANDBOX") == "1":
        return _collect_samples(file_path, parent)
    if file_path.suffix == ".md" and DOCS in file_path.resolve().parents:
        raise OutsideTheSandbox(
            f"{file_path}: a page's code samples run only in the sandbox: "
            "make snippets PAGES=docs/<guide>/<page>.md (tools/run_samples.py)"
        )
    return None


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if type(item).__name__ == "SybilItem":
            item.add_marker(pytest.mark.snippet)
            item.add_marker(pytest.mark.filterwarnings("error::DeprecationWarning"))
            item.add_marker(pytest.mark.filterwarnings("error::FutureWarning"))


def pytest_runtest_makereport(item, call):
    """Name the page and line of a failing sample the way editors and CI parse it."""
    if call.when == "call" and call.excinfo is not None and type(item).__name__ == "SybilItem":
        example = item.example
        path = Path(example.path).relative_to(DOCS.parent)
        item.add_report_section("call", "sample", f"{path}:{example.line}: sample failed")
