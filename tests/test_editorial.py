"""One convention for corrected code and notes, as CONTRIBUTING.md describes it.

The body shows the corrected, tested code; the 编者注 under it says so and
quotes the author's original inside ``{original}``: collapsed, and each of its
code blocks shows 原文·勿照抄 next to the copy button. A Python original carries
``% skip: next "原文，已由上方更正版替代"`` (Sybil would run it); shell and YAML
originals carry none (they are checked, never run; see test_snippet_policy). No original is offered
for copying in the body. Notes read at the size of the article's own text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_site import articles

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL_SKIP = re.compile(r'^%\s*skip:\s*next\s+"原文')
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?")


def blocks(text: str):
    """(line, directive stack) of every code fence opening on a page, and of
    every editor-note with its options."""
    stack: list[tuple[str, str | None]] = []
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if not match:
            continue
        marker, name = match.group(2), match.group(4)
        rest = line.strip()[len(marker) :].strip()
        if stack and marker[0] == stack[-1][0][0] and len(marker) >= len(stack[-1][0]) and not rest:
            stack.pop()
            continue
        if marker[0] == ":" and not name:
            continue
        yield number, [n for _, n in stack], name, marker
        stack.append((marker, name or ("code" if marker[0] != ":" else None)))


def notes(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, body) of every 编者注 on a page."""
    out = []
    for match in re.finditer(r"^(:{3,})\{editor-note\}\n(.*?)^\1\s*$", text, re.S | re.M):
        kind = re.search(r"^:kind: (\w+)", match.group(2), re.M)
        out.append((text[: match.start()].count("\n") + 1, kind.group(1) if kind else "", match.group(2)))
    return out


@pytest.mark.parametrize("doc", articles())
def test_every_quoted_original_is_inside_original(doc):
    text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    problems = []
    for number, outer, name, _ in blocks(text):
        if name is not None and name not in ("code-block", "code"):
            continue
        before = next((lines[i].strip() for i in range(number - 2, -1, -1) if lines[i].strip()), "")
        is_original = bool(ORIGINAL_SKIP.match(before))
        if is_original and "original" not in outer:
            problems.append(
                f"docs/{doc}.md:{number}: the author's original code is not inside "
                "{original} (in the 编者注 under the corrected code)"
            )
        python = (
            name is None
            and lines[number - 1].strip().lstrip("`~").strip() == "python"
            or name in ("code-block", "code")
            and lines[number - 1].split("}", 1)[1].strip() == "python"
        )
        if "original" in outer and python and not is_original:
            problems.append(
                f"docs/{doc}.md:{number}: a Python block inside {{original}} must be "
                'skipped with % skip: next "原文，已由上方更正版替代"'
            )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("doc", articles())
def test_a_note_on_wrong_code_quotes_the_original_and_says_the_body_is_corrected(doc):
    text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
    problems = []
    for line, kind, body in notes(text):
        if kind != "code":
            continue
        verdict = re.sub(r"^:\w+:.*\n", "", body, flags=re.M).strip().split("\n")[0]
        if "{original}" in body and not re.search(r"已由编者更正|已更正|编者更正", verdict):
            problems.append(
                f"docs/{doc}.md:{line}: the note quotes an original, so its verdict "
                f"must say the code above is the editors' correction: {verdict[:60]}"
            )
        if re.match(r"\*\*原文[^*]*不能照抄", verdict):
            problems.append(
                f"docs/{doc}.md:{line}: a note under corrected code opens with "
                f"'原文…不能照抄': {verdict[:60]}"
            )
    assert problems == [], "\n".join(problems)


def test_no_original_is_offered_for_copying_in_the_body():
    for doc in articles():
        text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
        assert not re.search(r":caption:.*原文，写法有误", text), doc


def test_originals_are_collapsed_and_show_their_status(site):
    found = 0
    for doc in articles():
        html = (site / f"{doc}.html").read_text(encoding="utf-8")
        for quote in re.findall(r'<details class="kb-original-quote kb-details">(.*?)</details>', html, re.S):
            codes = quote.count('<div class="highlight">')
            assert codes and quote.count('<span class="kb-code-status">原文·勿照抄</span>') == codes
            found += 1
        assert not re.search(r"<details[^>]*\bopen\b", html), doc
    assert found >= 10  # the originals quoted in notes across the site


def test_a_notes_sources_are_left_out_of_the_search_and_nothing_else_is(site):
    """A note's 来源： paragraph (and a collapsed 展开说明：来源) names other
    sites' pages, which the 参考来源 list repeats: the search leaves it out
    (pagefind.yml's .kb-note-sources), so that a source's title does not
    answer a query. Every paragraph that starts with 来源： has the class, and
    nothing else has it."""
    pagefind = (ROOT / "pagefind.yml").read_text(encoding="utf-8")
    assert '- ".kb-note-sources"' in pagefind
    marked = 0
    for doc in articles():
        html = (site / f"{doc}.html").read_text(encoding="utf-8")
        for tag, attributes, text in re.findall(r"<(p|details)\b([^>]*)>(.*?)</\1>", html, re.S):
            plain = re.sub(r"<[^>]+>", "", text).strip()
            sources = plain.startswith("来源：") or (tag == "details" and plain.startswith("展开说明：来源"))
            assert sources == ("kb-note-sources" in attributes), (doc, attributes, plain[:80])
            marked += sources
    assert marked > 50


@pytest.mark.browser
def test_notes_read_at_the_size_of_the_article(page, server):
    page.goto(f"{server}/training/llm-training-troubleshooting.html")
    sizes = page.evaluate("""() => {
        const size = (el) => el && parseFloat(getComputedStyle(el).fontSize);
        const note = document.querySelector('.editor-note');
        return {
          body: size(document.querySelector('article section > p')),
          note: size(note.querySelector('p:not(.admonition-title)')),
          bodyCode: size([...document.querySelectorAll('article div.highlight pre')]
                         .find((pre) => !pre.closest('.admonition'))),
          noteCode: size(document.querySelector('.editor-note div.highlight pre')),
        };
    }""")
    assert sizes["note"] == sizes["body"], sizes
    assert sizes["noteCode"] == sizes["bodyCode"], sizes


VISIBLE_LIMIT = 320  # characters a note shows besides its verdict and its sources
_URL = re.compile(r"\]\((https?://[^)\s]+)\)|<https?://[^>\s]+>")


def visible_explanation(body: str) -> str:
    """What a note shows open, besides its bold verdict, its 来源 and code:
    the text before its first collapsed block ({details} or {original})."""
    body = re.sub(r"^:[\w-]+:.*\n", "", body, flags=re.M)
    body = re.split(r"^:{3,}\{(?:details|original)\}", body, flags=re.M)[0]
    body = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", "", body, flags=re.S | re.M)
    body = re.sub(r"^\s*\*\*.+?\*\*", "", body, flags=re.S)
    body = re.sub(r"来源[：:][^\n]*", "", body)
    return _URL.sub("]", body).strip()


@pytest.mark.parametrize("doc", articles())
def test_a_note_is_a_verdict_with_its_explanation_collapsed(doc):
    text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
    long = [
        f"docs/{doc}.md:{line}: {len(visible_explanation(body))} characters open; put the "
        "explanation in :::{details} 展开说明 under the verdict"
        for line, _, body in notes(text)
        if len(visible_explanation(body)) > VISIBLE_LIMIT
    ]
    assert long == [], "\n".join(long)
