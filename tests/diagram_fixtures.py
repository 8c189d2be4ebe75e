"""Draw the diagram of the tests' small site (tests/small_site.py) into
tests/diagrams/, which make_small_site copies beside its pages: a build
fails (KB110) on a diagram without its SVGs, the small site's too.

Run:  python tests/diagram_fixtures.py     (make diagrams runs it)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = HERE / "diagrams"


def main() -> int:
    sys.path[:0] = [str(HERE), str(ROOT / "tools")]
    from small_site import make_small_site

    with tempfile.TemporaryDirectory() as tmp:
        root = make_small_site(Path(tmp) / "site")
        return subprocess.call(
            [
                sys.executable,
                str(ROOT / "tools/render_diagrams.py"),
                "--out",
                str(FIXTURES),
                str(root / "docs"),
            ],
            cwd=ROOT,
        )


if __name__ == "__main__":
    sys.exit(main())
