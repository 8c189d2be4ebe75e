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
numbered id stays as a second anchor, so links to it keep working. (The
Unicode slugs MyST made before, ``#消费级显卡``, are not kept: the site never
showed them.)

Links between pages go through labels ({ref}): a Markdown link to a heading's
anchor (``[text](#slug)``, ``[text](page.md#slug)``) is refused (KB097), as
MyST resolves it to the id the heading had when MyST read it, which is the
numbered one, and an incremental build does not write the linking page again
when the other page changes.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from docutils import nodes
from docutils.transforms import Transform
from sphinx import addnodes
from sphinx.application import Sphinx

from kb.core.log import getLogger

logger = getLogger(__name__)

# the ids docutils numbers when a title gives none (its auto_id_prefix under Sphinx)
NUMBERED = re.compile(r"id\d+")
# an anchor is part of every link to the section: long enough to tell
# headings apart, short enough to share
MAX_SLUG = 80

# The ids of what the site adds to a page once it is read (kb.pages.tags: the
# keywords, whose id tells the search page where the text ends;
# kb.editorial.claims: the sources): no element of the page's own may carry
# them (kb.guard.untrusted, KB085)
KEYWORDS_ID = "kb-keywords"
SOURCES_ID = "kb-sources"
SITE_IDS = frozenset({KEYWORDS_ID, SOURCES_ID})
# The ids every page's template gives its own elements around the text (furo's
# page.html, partials/icons.html and sidebar/search.html: the skip link's
# target, the drawers' switches, the icons; kb-terms.js: the term tip), and
# furo's sidebar its switches (toctree-checkbox-1 …). A heading or label that
# took one would take its links: KB085 too. tests/test_site.py fails when a
# page of the site has an id outside its text that these do not name.
TEMPLATE_IDS = frozenset(
    {
        "furo-main-content",
        "__navigation",
        "__toc",
        "searchbox",
        "kb-term-tip",
        *(
            f"svg-{icon}"
            for icon in (
                "toc",
                "menu",
                "arrow-right",
                "sun",
                "moon",
                "sun-with-moon",
                "moon-with-sun",
                "pencil",
                "eye",
            )
        ),
    }
)
TEMPLATE_ID_PATTERN = re.compile(r"toctree-checkbox-\d+")


def site_id(node_id: str) -> bool:
    """Whether the site gives ``node_id`` to an element of its own on every page."""
    return node_id in SITE_IDS or node_id in TEMPLATE_IDS or bool(TEMPLATE_ID_PATTERN.fullmatch(node_id))


def heading_slug(title: str) -> str:
    """The title as an ASCII kebab-case anchor: Chinese in pinyin without
    tones, Latin letters and digits kept, everything else a separator
    ("6. 检查点 策略" → "6-jian-cha-dian-ce-lve"), cut at a hyphen after at
    most MAX_SLUG characters. Empty when nothing is left."""
    from pypinyin import lazy_pinyin

    # full-width letters and digits (ＧＰＵ，１) as their ASCII forms
    text = unicodedata.normalize("NFKC", title[: MAX_SLUG * 4])
    words = lazy_pinyin(text, v_to_u=False)  # 绿 → lv: ASCII only
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(words).lower()).strip("-")
    if len(slug) > MAX_SLUG:
        slug = slug[: MAX_SLUG + 1].rsplit("-", 1)[0] if "-" in slug[:MAX_SLUG] else slug[:MAX_SLUG]
    return slug


def _labelled(doc: nodes.document) -> set[str | None]:
    """The ids that a label (``(name)=``) gave."""
    return {doc.nameids.get(name) for name, explicit in doc.nametypes.items() if explicit}


def _title(heading: nodes.Element) -> nodes.Element | None:
    """A section's title node, or the rubric itself."""
    return heading.next_node(nodes.title) if isinstance(heading, nodes.section) else heading


class SlugFirst(Transform):
    """Make a heading's slug its first id, unless a label named it.

    The id it replaces is the one docutils made from the title: numbered
    (``id7``) for a Chinese title, or only its ASCII letters (``AI 推理`` →
    ``ai``). Headings are sections, and rubrics (a heading inside a
    directive). Runs after MyST adds the slug ids (its ``AddSlugIds``,
    priority 700); Sphinx's own ``SortIds`` (261) runs before the slugs exist.

    A Markdown heading MyST gave no slug id (a title with no letters or
    digits, ``## 🚀``, or one whose slug another element of the page already
    has, ``## GPU`` after ``## GPU 显存``) gets one from its title all the
    same: the slug with a number, or ``h-`` and a digest of the title. It
    does not depend on the headings above it, as docutils' number does.

    MyST keeps a heading's slug in the node's ``slug`` attribute, which its
    documentation does not name: tests/test_ext_anchors.py fails if that
    changes (no upstream issue asks to document it yet).
    """

    default_priority = 701

    def apply(self, **kwargs) -> None:
        doc = self.document
        labelled = _labelled(doc)
        for heading in doc.findall(lambda n: isinstance(n, (nodes.section, nodes.rubric))):
            ids = heading["ids"]
            if not ids or ids[0] in labelled:
                continue
            slug = heading.get("slug")
            if slug and slug in ids:
                ids.remove(slug)
                ids.insert(0, slug)
            elif NUMBERED.fullmatch(ids[0]) and (slug or _is_markdown_heading(heading)):
                title = _title(heading)
                text = title.astext() if title is not None else ""
                base = slug or "h-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
                anchor, n = base, 1
                while anchor in doc.ids:
                    anchor, n = f"{base}-{n}", n + 1
                ids.insert(0, anchor)
                doc.ids[anchor] = heading


def _is_markdown_heading(node: nodes.Element) -> bool:
    """A section, or a rubric MyST made of a Markdown heading inside a
    directive (it records the heading's ``level``)."""
    return isinstance(node, nodes.section) or node.get("level") is not None


class NoHeadingLinks(Transform):
    """Refuse Markdown links to a heading's anchor (KB097): see the module's
    docstring. Runs after MyST resolves in-page links (its
    ``ResolveAnchorIds``, priority 879)."""

    default_priority = 880

    def apply(self, **kwargs) -> None:
        doc = self.document
        labelled = _labelled(doc)
        for ref in doc.findall(nodes.reference):
            # an in-page [text](#anchor), resolved by MyST to the id it recorded
            target = doc.ids.get(ref.get("refid"))
            if target is not None and target.get("slug") and ref["refid"] not in labelled:
                title = _title(target)
                self._refuse(ref, repr(title.astext()[:40]) if title is not None else f"#{ref['refid']}")
        for ref in doc.findall(addnodes.pending_xref):
            # [text](page.md#anchor): MyST's cross-page link keeps the anchor
            # in ``reftargetid`` (its own attribute)
            if ref.get("reftype") == "myst" and ref.get("reftargetid"):
                self._refuse(ref, f"{ref.get('reftarget')}#{ref['reftargetid']}")

    @staticmethod
    def _refuse(ref: nodes.Element, target: str) -> None:
        logger.warning(
            "KB097 the link %r goes to the heading %s by its anchor: add a label such as "
            "(my-label)= on the line above the heading and write {ref}`text <my-label>`, which "
            "stays right when headings change",
            ref.astext()[:40],
            target,
            location=ref,
            type="kb",
            subtype="anchor",
        )


def setup(app: Sphinx) -> dict:
    app.add_transform(SlugFirst)
    app.add_transform(NoHeadingLinks)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
