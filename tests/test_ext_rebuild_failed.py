"""kb.guard.rebuild_failed records the documents that warned, whatever the
order of the build-finished handlers that warn (no handler priority)."""

from __future__ import annotations

import json
from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.guard.rebuild_failed import STATE_FILE

pytest_plugins = ("sphinx.testing.fixtures",)


def test_warnings_of_later_build_finished_handlers_count(build_root):
    app = build_root("ext-rebuild-failed")
    saved = json.loads((Path(app.doctreedir) / STATE_FILE).read_text(encoding="utf-8"))
    assert saved == {"complete": True, "every": False, "docs": ["early", "late"]}
    # and the next build reads them again, not the page that did not warn
    again = build_root("ext-rebuild-failed", freshenv=False)
    assert "reading again 2 document(s) that warned in the last build: early, late" in again.status.getvalue()
