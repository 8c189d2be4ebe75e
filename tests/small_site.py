"""A small knowledge base built with the repository's conf.py and extensions,
in this process, with any builder: for tests/test_builders.py and
tests/test_site_files.py.

The four pages of test_data_errors' tiny project, plus what the site
features and the other builders meet in the real pages: the all-articles
listing (its tag links), an article with an 编者注 (with a collapsed
explanation), a table, a code block, a mermaid diagram and a named author.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

from sphinx.cmd.build import build_main
from test_data_errors import ARTICLE as BASE_ARTICLE
from test_data_errors import INDEX, tiny_project

ARTICLE_TEXT = "让小显存也能用大 batch"
NOTE_VERDICT = "原文把累积步数说反了。"

# the data-error tests' article, with an author and what a page holds besides text
ARTICLE = (
    BASE_ARTICLE.replace(
        "summary: 用小显存模拟大 batch。\n", "summary: 用小显存模拟大 batch。\nauthor: 张三\n", 1
    )
    + """\

::::{editor-note}
:label: note-x-steps
:kind: fact
:date: 2026-12-01
**原文把累积步数说反了。** 累积步数越多，等效 batch 越大。

:::{details} 展开说明
等效 batch 等于每步 batch 乘以累积步数。
:::
::::

## 对比

| 方法 | 显存 |
| --- | --- |
| 直接大 batch | 多 |
| 梯度累积 | 少 |

```python
loss = model(x).sum()
loss.backward()
```

```{mermaid}
graph LR
  A[小批次] --> B[累积梯度]
```
"""
)

ARTICLES = """\
---
title: 全部文章
---

# 全部文章

```{kb-article-list}
```
"""


def make_small_site(root: Path) -> Path:
    tiny_project(root)
    (root / "docs/training/x.md").write_text(ARTICLE, encoding="utf-8")
    (root / "docs/articles.md").write_text(ARTICLES, encoding="utf-8")
    (root / "docs/index.md").write_text(INDEX.replace("glossary\n", "glossary\narticles\n"), encoding="utf-8")
    # the diagram's SVGs (make diagrams draws them: tests/diagram_fixtures.py)
    shutil.copytree(Path(__file__).with_name("diagrams"), root / "docs/_diagrams", dirs_exist_ok=True)
    return root


def build(root: Path, builder: str, *extra: str, out: Path | None = None) -> tuple[int, str, Path]:
    """Build `root` with `builder` as the Makefile builds (-W -n --keep-going,
    doctrees outside the output) into `out` (``_build/<builder>``); (exit
    code, output, output folder)."""
    out = out or root / "_build" / builder
    args = ["-b", builder, "-c", str(root), "-d", str(root / "_build/doctrees" / builder), "-W", "-n"]
    args += ["--keep-going", *extra, str(root / "docs"), str(out)]
    log = io.StringIO()
    with contextlib.chdir(root), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        code = build_main(args)
    return code, log.getvalue(), out
