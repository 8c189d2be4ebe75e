"""KB045: linkcheck-ignore patterns that could keep make linkcheck busy for
ever on a link that almost matches (kb.core.data.link_pattern_problem)."""

from __future__ import annotations

import pytest
from kb.core.data import link_pattern_problem

REFUSED = {
    r"^https://example\.com/(a|a)+$": "repeats a group",
    r"^https://example\.com/(x+)*$": "repeats a group",
    r"^https://example\.com/(?>a+)+$": "repeats a group",
    r"^https://a*a*a*a*b": "too many choices",
    r"^https://" + r"[^/]{0,999}" * 10 + r"\.example/": "too many choices",
    r"^https://[^/]*[^/]*[^/]*\.example/": "too many choices",
    # a fixed repeat is walked again on every try: 0.19 s a link of 2,048
    # characters, and 1,000 times that on a redirect's 64 KB address
    r"[^/]*[^/]*a{1000}": "too many choices",
    r"^https://x\.example/" + "a?" * 40 + "a" * 40 + "$": "too many choices",
    r"^https://x\.example/" + "(?:a|.)" * 28 + "Z": "too many choices",
    r"^https://(?=" + "a?" * 30 + ")": "too many choices",
    r"^https://[^" + "".join(chr(0x10000 + 2 * i) for i in range(50)) + "]*x": "beyond U+FFFF",
    r"^https://example\.com/" + "a" * 300: "characters long",
    r"^https://(a)\1": "refers back to a group",
    r"^https://(?P<h>a)(?P=h)": "refers back to a group",
    r"^https://(a)?(?(1)b|c)": "refers back to a group",
}
ALLOWED = [
    r"^https://github\.com/[^/]+/[^/]+/(edit|blob)/",
    r"^https?://example\.com/\d{4}/\d{2}/[^/]+$",
    r"^https://docs\.example\.com/(zh|en)/latest/",
    r"^https?://github\.com/[^/]+/[^/]+/(edit|blob)/",
    r"^https://example\.com/v\d+\.\d+/",
]


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_a_pattern_that_could_backtrack_for_ever_is_refused(pattern):
    assert REFUSED[pattern] in (link_pattern_problem(pattern) or "")


@pytest.mark.parametrize("pattern", ALLOWED)
def test_patterns_of_links_pass(pattern):
    assert link_pattern_problem(pattern) is None
