"""axe-core (from node_modules, never downloaded) in a Playwright page: the
serious and critical WCAG 2.1 AA findings, as lines to assert on. One place
for the rules every accessibility test applies."""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
OPTIONS = f"{{resultTypes: ['violations'], runOnly: {{type: 'tag', values: {TAGS}}}}}"
# axe's default rules, best practices included (the key pages' check)
EVERY_RULE = "{resultTypes: ['violations']}"
# The rules of TAGS that read colours (axe's own category tag cat.color:
# color-contrast, link-in-text-block), as the page's axe lists them.
COLOUR_OPTIONS = (
    f"{{resultTypes: ['violations'], runOnly: {{type: 'rule', values: axe.getRules({TAGS})"
    ".filter(r => r.tags.includes('cat.color')).map(r => r.ruleId)}}"
)
# What furo shows in one colour scheme only (the diagrams' drawings)
ONE_SCHEME = ".only-light, .only-dark"
# The findings the tests fail on
SERIOUS = ["serious", "critical"]


def preload(context) -> None:
    """axe in every page the browser context opens, compiled with the page:
    sending it to each page (add_script_tag) costs about 0.1 s of CPU a
    page, more than a page load of the site."""
    context.add_init_script(path=str(AXE))


def _run(context: str, options: str) -> str:
    """A JavaScript expression: axe.run without the CSS selectors of the
    elements it found (a third of its time on the site's pages), then,
    only when a finding is serious, again with them, to name the elements.
    Every finding of the first run is kept: the second only adds the names
    (`selectors` is one of axe.run's documented options)."""
    return (
        f"axe.run({context}, {{...{options}, selectors: false}}).then(first =>"
        f" !first.violations.some(v => {SERIOUS}.includes(v.impact)) ? first :"
        f" axe.run({context}, {options}).then(named => ({{violations: first.violations.map(v =>"
        " named.violations.find(n => n.id === v.id) || v)})))"
    )


def settle(page) -> None:
    """Wait for the colour transitions a change of theme or scheme started
    (furo's copy button fades its colour): a check that runs before they
    end reads the colours in between."""
    page.evaluate(
        "() => Promise.all(document.getAnimations()"
        ".filter(a => a instanceof CSSTransition).map(a => a.finished.catch(() => null)))"
    )


def switch_scheme(page, scheme: str) -> None:
    """Show the open page in the colour scheme ``scheme`` ("light", "dark"),
    its transitions ended. The site's colours follow the scheme in CSS
    alone, so this is the page as opened in that scheme; a lazy image of the
    other scheme's diagram may not have loaded yet, which no rule of these
    checks reads."""
    page.emulate_media(color_scheme=scheme)
    settle(page)


def start(page, include: str | None = None, colours: bool = False, every_rule: bool = False) -> None:
    """Start axe on the page (on `include`, a CSS selector, or the whole
    document) without waiting for it (`serious` does). The rules of TAGS,
    or with every_rule=True axe's default ones.

    colours=True: for a page already checked in the other colour scheme,
    only what the scheme changes: the rules that read colours, on the whole
    page, and every rule on what furo shows in one scheme only (ONE_SCHEME).
    Every other rule reads the document's structure, which the scheme does
    not change."""
    if not page.evaluate("() => typeof window.axe?.run === 'function'"):  # not preloaded
        page.add_script_tag(path=str(AXE))
    context = f"{{include: [[{include!r}]]}}" if include else "document"
    if not colours:
        options = EVERY_RULE if every_rule else OPTIONS
        page.evaluate(f"() => {{ window.kbAxe = {_run(context, options)}; }}")
        return
    page.evaluate(
        f"""() => {{
        window.kbAxe = {_run(context, COLOUR_OPTIONS)}.then(async colours => {{
            if (!document.querySelector({ONE_SCHEME!r})) return colours;
            const shown = await {_run(f"{{include: [[{ONE_SCHEME!r}]]}}", OPTIONS)};
            return {{violations: [...colours.violations, ...shown.violations]}};
        }});
    }}"""
    )


def serious(page) -> list[str]:
    """The serious and critical findings of the run `start` began."""
    result = page.evaluate("() => window.kbAxe")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n.get('target') for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in SERIOUS
    ]


def check(page, include: str | None = None, colours: bool = False, every_rule: bool = False) -> list[str]:
    """Run axe on the page now; its serious and critical findings."""
    start(page, include, colours, every_rule)
    return serious(page)
