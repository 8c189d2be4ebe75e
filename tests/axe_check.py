"""axe-core (from node_modules, never downloaded) in a Playwright page: the
serious and critical WCAG 2.1 AA findings, as lines to assert on. One place
for the rules every accessibility test applies."""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
OPTIONS = f"{{resultTypes: ['violations'], runOnly: {{type: 'tag', values: {TAGS}}}}}"
# The rules of TAGS that read colours (axe's own category tag cat.color:
# color-contrast, link-in-text-block), as the page's axe lists them.
COLOUR_OPTIONS = (
    f"{{resultTypes: ['violations'], runOnly: {{type: 'rule', values: axe.getRules({TAGS})"
    ".filter(r => r.tags.includes('cat.color')).map(r => r.ruleId)}}"
)
# What furo shows in one colour scheme only (the diagrams' drawings)
ONE_SCHEME = ".only-light, .only-dark"


def start(page, include: str | None = None, colours: bool = False) -> None:
    """Start axe on the page (on `include`, a CSS selector, or the whole
    document) without waiting: pages in other tabs can run at the same time.

    colours=True: for a page already checked in the other colour scheme,
    only what the scheme changes: the rules that read colours, on the whole
    page, and every rule on what furo shows in one scheme only (ONE_SCHEME).
    Every other rule reads the document's structure, which the scheme does
    not change."""
    page.add_script_tag(path=str(AXE))
    context = f"{{include: [[{include!r}]]}}" if include else "document"
    if not colours:
        page.evaluate(f"() => {{ window.kbAxe = axe.run({context}, {OPTIONS}); }}")
        return
    page.evaluate(
        f"""() => {{
        window.kbAxe = axe.run({context}, {COLOUR_OPTIONS}).then(async colours => {{
            if (!document.querySelector({ONE_SCHEME!r})) return colours;
            const shown = await axe.run({{include: [[{ONE_SCHEME!r}]]}}, {OPTIONS});
            return {{violations: [...colours.violations, ...shown.violations]}};
        }});
    }}"""
    )


def serious(page) -> list[str]:
    """The serious and critical findings of the run `start` began."""
    result = page.evaluate("() => window.kbAxe")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def check(page, include: str | None = None, colours: bool = False) -> list[str]:
    """Run axe on the page now; its serious and critical findings."""
    start(page, include, colours)
    return serious(page)
