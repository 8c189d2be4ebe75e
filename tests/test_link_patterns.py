"""KB045: linkcheck-ignore patterns that could keep make linkcheck busy for
ever on a link that almost matches (kb.core.data.link_pattern_problem)."""

from __future__ import annotations

import pytest
from kb.core.data import link_pattern_problem

REFUSED = {
    r"^https://example\.com/(a|a)+$": "repeats a group",
    r"^https://example\.com/(x+)*$": "repeats a group",
    r"^https://example\.com/(?>a+)+$": "repeats a group",
    r"^https://a*a*a*a*b": "has 4 repeats",
    r"^https://" + r"[^/]{0,999}" * 10 + r"\.example/": "has 10 repeats",
    r"^https://[^/]{1,50}[^/]{1,50}[^/]+[^/]*x": "has 4 repeats",
    r"^https://[^/]*[^/]*[^/]*\.example/": "has 3 repeats",
    r"^https://(a)\1": "refers back to a group",
    r"^https://(?P<h>a)(?P=h)": "refers back to a group",
    r"^https://(a)?(?(1)b|c)": "refers back to a group",
}
ALLOWED = [
    r"^https://github\.com/[^/]+/[^/]+/(edit|blob)/",
    r"^https?://example\.com/\d{4}/\d{2}/[^/]+$",
    r"^https://docs\.example\.com/(zh|en)/latest/",
]


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_a_pattern_that_could_backtrack_for_ever_is_refused(pattern):
    assert REFUSED[pattern] in (link_pattern_problem(pattern) or "")


@pytest.mark.parametrize("pattern", ALLOWED)
def test_patterns_of_links_pass(pattern):
    assert link_pattern_problem(pattern) is None
