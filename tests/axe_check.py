"""axe-core (from node_modules, never downloaded) in a Playwright page: the
serious and critical WCAG 2.1 AA findings, as lines to assert on. One place
for the rules every accessibility test applies."""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
OPTIONS = "{resultTypes: ['violations'], runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}}"


def start(page, include: str | None = None) -> None:
    """Start axe on the page (on `include`, a CSS selector, or the whole
    document) without waiting: pages in other tabs can run at the same time."""
    page.add_script_tag(path=str(AXE))
    context = f"{{include: [[{include!r}]]}}" if include else "document"
    page.evaluate(f"() => {{ window.kbAxe = axe.run({context}, {OPTIONS}); }}")


def serious(page) -> list[str]:
    """The serious and critical findings of the run `start` began."""
    result = page.evaluate("() => window.kbAxe")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def check(page, include: str | None = None) -> list[str]:
    """Run axe on the page now; its serious and critical findings."""
    start(page, include)
    return serious(page)
