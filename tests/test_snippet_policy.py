"""Every fenced block in docs/ is accounted for: executed, checked, or illustrative.

- Python blocks run under pytest (Sybil, conftest.py) unless a
  ``% skip: next "reason"`` comment precedes them; every Python block,
  skipped or not, must compile.
- A skipped block is illustrative: its reason must be one of SKIP_REASONS and
  be visible on the page, as the caption of a ``{code-block}`` — or the block
  is the author's original, kept inside an 编者注 under its corrected version.
- Shell is checked with ``bash -n``; YAML is parsed, Kubernetes manifests are
  validated against the API schema offline, ``prometheus.yml`` keys are
  checked (tests/snippet_checks.py).
- ``text`` blocks are output, formulas or diagrams: nothing to run.
- Any other fence language fails (Sybil silently ignores ```` ```py ````), as
  does a skip without a reason (Sybil would skip silently).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kb.core.markdown import colon_directives
from markdown_it import MarkdownIt
from snippet_checks import check_bash, check_k8s_manifest, check_prometheus

ROOT = Path(__file__).resolve().parent.parent
# checks the samples with their libraries (kubernetes-validate): requirements-snippets.txt
pytestmark = pytest.mark.snippet
DOCS = ROOT / "docs"

ORIGINAL = "原文，已由上方更正版替代"
SKIP_REASONS = {
    "需要 CUDA GPU",
    "需要 CUDA GPU 和模型权重",
    "需要下载模型权重",
    "需要昇腾 NPU",
    "需要 NVIDIA GPU 和驱动",
    "需要 Kubernetes 集群",
    "需要安装 albumentations",
    ORIGINAL,
}
# Fences that are directives, not code: Sphinx's and mermaid's, and every
# directive the kb package registers (read from its source, so that a new
# directive is known here the day it is added).
KB_PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "kb"
DIRECTIVES = {"toctree", "mermaid"} | {
    name
    for source in KB_PACKAGE.rglob("*.py")
    for name in re.findall(r'add_directive\(\s*"([a-z][a-z0-9-]*)"', source.read_text(encoding="utf-8"))
}
_SKIP = re.compile(r"^%\s*skip:\s*next(?:\s+(?P<reason>.*))?$")


@dataclass
class Block:
    path: Path
    line: int
    language: str
    code: str
    caption: str
    skip: str | None
    skip_line: int | None
    in_note: bool

    def where(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a page, with their skip comment and 编者注 context."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    in_note = ["editor-note" in names for names in colon_directives(lines)] + [False]
    out = []
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type != "fence":
            continue
        info = tok.info.strip()
        match = re.match(r"^\{code-block\}\s+(\S+)", info)
        language = match.group(1) if match else info
        caption = ""
        code = tok.content
        if match:
            opts = re.findall(r"^:(\w+):\s*(.*)$", code, re.M)
            caption = dict(opts).get("caption", "")
            code = re.sub(r"^(:\w+:.*\n)+", "", code)
        start = tok.map[0]
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        skip = skip_line = None
        found = _SKIP.match(lines[prev].strip()) if prev >= 0 else None
        if found:
            skip = (found.group("reason") or "").strip()
            skip_line = prev + 1
        out.append(Block(path, start + 1, language, code, caption, skip, skip_line, in_note[start]))
    return out


def all_blocks() -> list[Block]:
    return [b for p in sorted(DOCS.rglob("*.md")) for b in blocks(p)]


def classify(block: Block) -> tuple[str, list[str]]:
    """(kind, problems): kind is executed, checked, illustrative, text or directive."""
    lang = block.language
    if lang.startswith("{"):
        name = lang[1:].split("}", 1)[0]  # "{calculator} rent-vs-buy": the name, not its argument
        if name in DIRECTIVES:
            return "directive", []
        return "unknown", [f"unknown directive fence {lang!r}"]
    if lang == "python":
        problems = []
        try:
            compile(block.code, block.where(), "exec")
        except SyntaxError as error:
            problems.append(f"Python does not compile: {error.msg} (line {error.lineno} of the block)")
        if block.skip is None:
            return "executed", problems
        reason = block.skip.strip("\"'")
        if not block.skip:
            problems.append(
                'skip without a reason: write % skip: next "需要 CUDA GPU" (or another '
                "reason from tests/test_snippet_policy.py)"
            )
        elif reason not in SKIP_REASONS:
            problems.append(f"skip reason {reason!r} is not one of: {', '.join(sorted(SKIP_REASONS))}")
        elif reason == ORIGINAL and not block.in_note:
            problems.append("an original kept for comparison must sit inside its 编者注")
        elif reason != ORIGINAL and reason not in block.caption:
            problems.append(
                f"show the reason on the page: use ```{{code-block}} python with :caption: 示意代码：{reason}"
            )
        return "illustrative", problems
    if block.skip is not None and lang not in ("python", "text") and not lang.startswith("{"):
        # Sybil's skip applies to the next *Python* example: before a shell or
        # YAML block it would silently skip the next Python block of the page.
        return "checked", [
            f"% skip: next (line {block.skip_line}) is only for Python blocks: "
            f"before a {lang} block it skips the next Python block instead; "
            f"remove it ({lang} blocks are checked, never run)"
        ]
    if lang in ("bash", "sh", "shell"):
        return "checked", check_bash(block.code)
    if lang == "yaml":
        try:
            docs = [d for d in yaml.safe_load_all(block.code) if d is not None]
        except yaml.YAMLError as error:
            return "checked", [f"YAML does not parse: {error}"]
        problems = []
        for doc in docs:
            if isinstance(doc, dict) and "apiVersion" in doc:
                problems += check_k8s_manifest(doc)
            elif isinstance(doc, dict) and "scrape_configs" in doc:
                problems += check_prometheus(doc)
        return "checked", problems
    if lang == "text":
        return "text", []
    return "unknown", [f"unknown fence language {lang!r}: use python, bash, yaml or text"]


def test_every_block_is_executed_checked_or_illustrative(capsys):
    counts, problems = Counter(), []
    for block in all_blocks():
        kind, found = classify(block)
        counts[kind] += 1
        problems += [f"{block.where()}: {p}" for p in found]
    code = counts["executed"] + counts["checked"] + counts["illustrative"]
    with capsys.disabled():
        print(
            f"\ncode blocks: {code} (executed {counts['executed']}, checked "
            f"{counts['checked']}, illustrative {counts['illustrative']}); "
            f"text {counts['text']}, directives {counts['directive']}"
        )
    assert not problems, "\n".join(problems)
    assert counts["executed"] > 0 and counts["checked"] > 0


@pytest.mark.parametrize(
    "fence, words",
    [
        ("```py\nx = 1\n```", "unknown fence language 'py'"),
        ("% skip: next\n```python\nx = 1\n```", "skip without a reason"),
        ('% skip: next "以后再说"\n```python\nx = 1\n```', "is not one of"),
        ('% skip: next "需要 CUDA GPU"\n```python\nx = 1\n```', "show the reason on the page"),
        ("```python\ndef f(:\n```", "Python does not compile"),
        ('% skip: next "原文，已由上方更正版替代"\n```bash\necho hi\n```', "only for Python blocks"),
        (
            '% skip: next "原文，已由上方更正版替代"\n```python\nx = 1\n```',
            "an original kept for comparison must sit inside its 编者注",
        ),
        ("```bash\nif then fi\n```", "syntax error"),
        (
            "```yaml\napiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n"
            "    spec:\n      containers: [{name: c, image: i}]\n```",
            "restartPolicy",
        ),
        (
            "```yaml\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
            "  - name: c\n    image: i\n    resourcez: {}\n```",
            "resourcez",
        ),
        ("```yaml\nscrape_configs:\n  - job_name: a\n    static_config: []\n```", "static_config"),
    ],
)
def test_policy_rejects_each_kind_of_mistake(tmp_path, fence, words):
    page = tmp_path / "page.md"
    page.write_text(f"# 标题\n\n{fence}\n", encoding="utf-8")
    found = [p for b in blocks(page) for p in classify(b)[1]]
    assert any(words in p for p in found), found


def test_an_original_inside_original_inside_a_note_is_accepted(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "::::{editor-note}\n:label: n\n**上面的代码已由编者更正。**\n:::{original}\n"
        '% skip: next "原文，已由上方更正版替代"\n```python\nx = 1\n```\n:::\n'
        '正文。\n::::\n\n% skip: next "原文，已由上方更正版替代"\n```python\ny = 1\n```\n',
        encoding="utf-8",
    )
    found = [classify(b) for b in blocks(page)]
    assert found[0] == ("illustrative", []), found
    assert "sit inside its 编者注" in found[1][1][0], found  # after the note closed


def test_policy_accepts_a_visible_illustrative_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        '% skip: next "需要 CUDA GPU"\n```{code-block} python\n'
        ":caption: 示意代码：需要 CUDA GPU\nx = 1\n```\n",
        encoding="utf-8",
    )
    assert [classify(b) for b in blocks(page)] == [("illustrative", [])]
