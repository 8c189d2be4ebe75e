"""Stable, readable ASCII anchors for the headings that carry no label.

A section without a ``(label)=`` gets its id from docutils, which keeps only
the ASCII letters of the title: a Chinese title gives nothing, so docutils
numbers it (``id7``). Numbers shift whenever a section is added above, and a
link someone shared, or a search result's section link, then lands in the
wrong place.

MyST already makes a slug of every heading up to ``myst_heading_anchors``
and adds it as a second id (its documented ``myst_heading_slug_func`` and
``myst_heading_anchors_html_ids``). Here the slug is the title in pinyin,
ASCII kebab-case like the site's file names (``消费级显卡`` →
``xiao-fei-ji-xian-ka``), and it becomes the section's first id, the one
that the permalink, the page's contents and the search index use. The
numbered id stays as a second anchor, so older links keep working.
"""

from __future__ import annotations

import re
import unicodedata

from docutils import nodes
from docutils.transforms import Transform
from sphinx.application import Sphinx


def heading_slug(title: str) -> str:
    """The title as an ASCII kebab-case anchor: Chinese in pinyin without
    tones, Latin letters and digits kept, everything else a separator
    ("6. 检查点 策略" → "6-jian-cha-dian-ce-lve"). Empty when nothing is left."""
    from pypinyin import lazy_pinyin

    # full-width letters and digits (ＧＰＵ，１) as their ASCII forms
    text = unicodedata.normalize("NFKC", title)
    words = lazy_pinyin(text, v_to_u=False)  # 绿 → lv: ASCII only
    return re.sub(r"[^a-z0-9]+", "-", "-".join(words).lower()).strip("-")


class SlugFirst(Transform):
    """Make a heading's slug its section's first id, unless a label named it.

    The id it replaces is the one docutils made from the title: numbered
    (``id7``) for a Chinese title, or only its ASCII letters (``AI 推理`` →
    ``ai``). Runs after MyST adds the slug ids (its ``AddSlugIds``, priority
    700); Sphinx's own ``SortIds`` (261) runs before the slugs exist.

    A ``[text](#slug)`` link still goes to the id that was first when MyST
    read the heading (it keeps that in its own record): an id the section
    keeps, so the link works. The pages link sections by label ({ref})."""

    default_priority = 701

    def apply(self, **kwargs) -> None:
        doc = self.document
        labelled = {doc.nameids.get(name) for name, explicit in doc.nametypes.items() if explicit}
        for section in doc.findall(nodes.section):
            ids, slug = section["ids"], section.get("slug")
            if ids and slug in ids and ids[0] not in labelled:
                ids.remove(slug)
                ids.insert(0, slug)


def setup(app: Sphinx) -> dict:
    app.add_transform(SlugFirst)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
