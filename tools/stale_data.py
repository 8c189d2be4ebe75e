"""Report price and spec claims whose data is more than 12 months old.

Run by the scheduled workflow (.github/workflows/stale-data.yml), never by
the build: a build must not break because of the calendar. The pages say
so themselves (kb.editorial.claims adds a notice under such tables); this makes the
editors see it.

Run:  python tools/stale_data.py [--today YYYY-MM-DD]
Prints ``data/claims/…yaml:LINE: docs/…md: claim (data as of …)`` per claim;
exit status 1 if any is stale.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from kb.editorial import claims as kb_claims

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    parser.add_argument("--data", type=Path, default=ROOT / "data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stale = kb_claims.stale_claims(args.data, args.today)
    for doc, entry in stale:
        where = Path(entry["file"]).resolve().relative_to(args.data.resolve().parent).as_posix()
        print(
            f"{where}:{entry['line']}: docs/{doc}.md: {entry['claim']} "
            f"(data as of {entry['as_of']}, more than {kb_claims.MONTHS_OLD} months before "
            f"{args.today})"
        )
    undated = kb_claims.undated_claims(args.data)
    print(
        f"{len(stale)} stale price/spec claim(s); {len(undated)} undated (the pages say so; "
        "date them when a source is found)"
    )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
