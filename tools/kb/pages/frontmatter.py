"""Read and validate the front matter of every knowledge-base article.

An article is any page under ``docs/<guide>/`` other than the guide's
``index``. Its front matter (MyST's YAML block between ``---`` lines) must
follow ``data/front-matter.schema.json``; the allowed tags come from
``data/tags.yaml``::

    ---
    title: 梯度累积实战
    guide: training
    tags: [memory, training-optimization]
    summary: 用小显存模拟大 batch。
    ---

The YAML is read by ``kb_data.parse_yaml`` (the project's one safe YAML
reader): anchors, aliases, tags, deep nesting and a block over 16 KiB are
refused before any object is built (KB009), a key given twice is an error
(KB008) rather than "the last one wins". A refused block is blanked out of
the source before MyST reads it, so MyST never parses it either.

Every page must have a title (a first heading, KB050); an article's body
must not be empty (KB052) and its first heading must be the ``title`` field
(KB051): the listings show the field, the page shows the heading.

Each violation is a warning at the offending line, e.g.
``docs/training/x.md:3: WARNING: KB003 unknown guide 'traning' …``, so
``-W`` fails the build. Valid data is kept per document in the ``pages``
store of kb.core.store, for the listings, tags and feeds.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from docutils import nodes

from kb.core import data as kb_data
from kb.core.log import getLogger
from kb.core.store import documents, rebuild_when_changed

logger = getLogger(__name__)

# The repository's data/: what the scripts in tools/ go by (GUIDES, is_article's
# default); a build goes by its own kb_data_dir.
REPO_DATA = Path(__file__).resolve().parents[3] / "data"

# Codes are stable: contributors and CONTRIBUTING.md refer to them.
CODES = {
    "syntax": "KB001",
    "required": "KB002",
    "guide": "KB003",
    "tag": "KB004",
    "date": "KB005",
    "field": "KB006",
    "folder": "KB007",
    "duplicate": "KB008",
    "unsafe": "KB009",
    "bidi": "KB095",
    "no_title": "KB050",
    "title": "KB051",
    "empty": "KB052",
}


def load_guides(data_dir: Path) -> list[dict]:
    """data/guides.yaml: the guides in home-page order (key, title, blurb).

    Only the valid entries; problems are reported by kb.core.data at config time.
    """
    return kb_data.guides(data_dir).data


def load_tags(data_dir: Path) -> dict[str, str]:
    """data/tags.yaml: tag slug -> Chinese name ({} when the file is unusable)."""
    return kb_data.tags(data_dir).data


def guide_keys(data_dir: Path = REPO_DATA) -> tuple[str, ...]:
    return tuple(g["key"] for g in load_guides(data_dir))


def __getattr__(name: str):
    # GUIDES, read when first used: importing this module never fails,
    # even when guides.yaml is broken (the build reports that at its line).
    if name == "GUIDES":
        return guide_keys()
    raise AttributeError(name)


def load_schemas(data_dir: Path) -> tuple[dict, dict]:
    """The article schema with the tag vocabulary and the guides filled in,
    then the one the code was written for (kb.core.data.floor_schema): a
    front matter must satisfy both, so that a loosened or unusable
    data/front-matter.schema.json never lets through a shape the code cannot
    read (a list as title: a traceback; review 19)."""
    tags, guides = kb_data.tags(data_dir), kb_data.guides(data_dir)
    return _filled_schema(kb_data.front_matter_schema(data_dir), tags, guides), _filled_floor(tags, guides)


@functools.lru_cache(maxsize=16)
def _filled_floor(tags: kb_data.Loaded, guides: kb_data.Loaded) -> dict:
    floor = kb_data.floor_schema(FLOOR)
    return {"type": "object"} if floor is None else _fill(floor, tags, guides)


@functools.lru_cache(maxsize=16)
def _filled_schema(schema: kb_data.Loaded, tags: kb_data.Loaded, guides: kb_data.Loaded) -> dict:
    # Unusable data files are reported by kb.core.data; validate what can be.
    if schema.data is None:
        return {"type": "object"}
    return _fill(schema.data, tags, guides)


FLOOR = "front-matter.schema.json"


def _fill(schema: dict, tags: kb_data.Loaded, guides: kb_data.Loaded) -> dict:
    filled = copy.deepcopy(schema)
    props = filled["properties"]
    if not tags.problems:
        props["tags"]["items"] = {"enum": sorted(tags.data)}
    if guides.data:
        keys = [g["key"] for g in guides.data]
        props["guide"]["enum"] = keys
        props["also_in"]["items"] = {"enum": keys}
    return filled


@dataclasses.dataclass
class FrontMatter:
    """Where a page's front matter is: its YAML text and lines (1-based)."""

    text: str
    first: int  # line of the first YAML line
    end: int  # line of the closing '---' (or the last line if unclosed)
    closed: bool


def find_front_matter(text: str) -> FrontMatter | None:
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return FrontMatter("\n".join(lines[1:i]), 2, i + 1, True)
    return FrontMatter("\n".join(lines[1:]), 2, len(lines), False)


def split_front_matter(text: str) -> tuple[str, int] | None:
    """Return the YAML text of the front matter and its first line (1-based)."""
    found = find_front_matter(text)
    return (found.text, found.first) if found and found.closed else None


def _line_of(root, path: list, first_line: int) -> int:
    """Line (1-based) in the file of the YAML node at ``path``."""
    return kb_data.line_of(root, path, first_line)


def _message(err: jsonschema.ValidationError, tags: dict[str, str], guides) -> tuple[str, list]:
    """A contributor-facing message and the path of the offending value."""
    path = list(err.absolute_path)
    field = path[0] if path else None
    if err.validator == "required":
        missing = err.message.split("'")[1]
        return f"{CODES['required']} missing required field '{missing}'; add it to the front matter", []
    if err.validator == "additionalProperties":
        extra = sorted(set(map(str, err.instance)) - set(err.schema.get("properties", {})))
        return (
            f"{CODES['field']} unknown field(s) {', '.join(map(repr, extra))}; "
            f"allowed: {', '.join(err.schema.get('properties', {}))}",
            extra[:1],
        )
    if field in ("guide", "also_in") and err.validator == "enum":
        return (f"{CODES['guide']} unknown guide {err.instance!r}; use one of: {', '.join(guides)}", path)
    if field == "tags" and err.validator == "enum":
        return (
            f"{CODES['tag']} unknown tag {err.instance!r}; use a tag from data/tags.yaml "
            f"({', '.join(sorted(tags))}) or add it there with a Chinese name",
            path,
        )
    if field == "date":
        return (
            f"{CODES['date']} date {err.instance!r} is not YYYY-MM or YYYY-MM-DD; "
            "give the date the article states, or leave the field out",
            path,
        )
    return f"{CODES['field']} field '{field}': {err.message}", path


def _shape(data: Any) -> str:
    if data is None:
        return "it is empty"
    return f"it is a {type(data).__name__} ({str(data)[:40]!r})"


def parse(found: FrontMatter) -> tuple[Any, Any, list[tuple[int, str]]]:
    """(node tree, mapping, errors) of a front matter; errors mean it is unusable."""
    if not found.closed:
        return (
            None,
            None,
            [
                (
                    1,
                    f"{CODES['syntax']} the front matter opened on line 1 is never "
                    "closed; add a '---' line after its last field",
                )
            ],
        )
    try:
        root, data = kb_data.parse_front_matter(found.text)  # found.first is line 2
    except kb_data.YamlProblem as exc:
        code = CODES[exc.kind]
        what = "front matter is " + exc.message if exc.kind == "syntax" else exc.message
        return None, None, [(exc.line, f"{code} {what}")]
    if not isinstance(data, dict):
        return (
            None,
            None,
            [
                (
                    found.first,
                    f"{CODES['syntax']} front matter must be a mapping of "
                    f"fields (title: …, guide: …), but {_shape(data)}",
                )
            ],
        )
    return root, data, []


def validate(text: str, docname: str, data_dir: Path) -> tuple[dict | None, list[tuple[int, str]]]:
    """Validate one article's source; return (front matter or None, [(line, message)])."""
    found = find_front_matter(text)
    if found is None:
        return None, [
            (
                1,
                f"{CODES['syntax']} no front matter: start the page with a '---' "
                "block holding title, guide, tags and summary",
            )
        ]
    root, data, errors = parse(found)
    if errors:
        return None, errors
    return check_fields(root, data, found.first, docname, data_dir)


def check_fields(
    root, data: dict, first: int, docname: str, data_dir: Path
) -> tuple[dict | None, list[tuple[int, str]]]:
    """The fields of a parsed front matter against the schema and the page's folder."""
    errors = []
    tags = load_tags(data_dir)
    guides = guide_keys(data_dir)
    fields = set()
    for schema in load_schemas(data_dir):
        found = sorted(
            kb_data.validator(schema).iter_errors(data), key=lambda e: list(map(str, e.absolute_path))
        )
        for err in found:
            msg, path = _message(err, tags, guides)
            errors.append((_line_of(root, path, first) if path else first, msg))
            fields.update(list(err.absolute_path)[:1])
        if found:
            break  # the editable schema's findings; the code's own only when it has none
    # tags and guides name pages and folders (tags/<tag>.html): a slug, never
    # ../index, whatever the editable schema and data files say
    for field, path, value in _slug_fields(data):
        if field not in fields and not (isinstance(value, str) and kb_data.SLUG.fullmatch(value)):
            fields.add(field)
            code = CODES["tag"] if field == "tags" else CODES["guide"]
            errors.append(
                (
                    _line_of(root, path, first),
                    f"{code} {field} {value!r} is not a usable name: {kb_data.SLUG_RULE}",
                )
            )
    for path, char in _control_characters(data):
        errors.append(
            (
                _line_of(root, path, first),
                f"{CODES['field']} field '{'.'.join(map(str, path))}' holds the control "
                f"character U+{ord(char):04X}, which feeds and pages cannot carry; remove it",
            )
        )
    folder = docname.split("/")[0]
    if isinstance(data.get("guide"), str) and data["guide"] in guides and data["guide"] != folder:
        errors.append(
            (
                _line_of(root, ["guide"], first),
                f"{CODES['folder']} guide '{data['guide']}' does not match the page's "
                f"folder docs/{folder}/; move the page or fix the field",
            )
        )
    return (None if errors else data), errors


def _slug_fields(data: dict):
    """(field, path, value) of the guide, and of each of tags and also_in."""
    if "guide" in data:
        yield "guide", ["guide"], data["guide"]
    for field in ("tags", "also_in"):
        if field in data:
            value = data[field]
            if isinstance(value, list):
                yield from ((field, [field, i], item) for i, item in enumerate(value))
            else:
                yield field, [field], value


CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _control_characters(value, path=()):
    """(path, character) of each string in the front matter holding a control
    character (tab, newline and carriage return are text)."""
    if isinstance(value, str):
        found = CONTROL.search(value)
        if found:
            yield list(path), found.group()
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _control_characters(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _control_characters(item, (*path, index))


def is_article(docname: str, data_dir: Path = REPO_DATA) -> bool:
    parts = docname.split("/")
    return len(parts) >= 2 and parts[0] in guide_keys(data_dir) and parts[-1] != "index"


# -- titles --------------------------------------------------------------------------


@dataclasses.dataclass
class TitleCheck:
    """What source-read learnt for doctree-read's title checks (same process)."""

    article: bool
    body_line: int  # first line of text after the front matter
    body_empty: bool
    title: str | None = None  # the article's `title` field, if any
    title_line: int = 1


# docname -> TitleCheck, from source-read to doctree-read of the same document
# (both run in the process that reads it, so parallel reads are safe).
_PENDING: dict[str, TitleCheck] = {}


def _blank_out(source: list[str], found: FrontMatter) -> None:
    """Keep MyST from parsing a front matter with errors; line numbers stay the same.

    Its lines, fences included, become empty lines: the page then has no
    front matter at all (an unclosed one runs to the end of the page).
    """
    lines = source[0].split("\n")
    lines[: found.end] = [""] * found.end
    source[0] = "\n".join(lines)


def on_source_read(app, docname: str, source: list[str]) -> None:
    article = is_article(docname, Path(app.config.kb_data_dir))
    # read without bidirectional controls, which kb.guard.untrusted reports
    # (KB095) and removes from the page: the fields reach meta tags, listings,
    # the feed and llms.txt from here
    text = kb_data.BIDI.sub("", source[0])
    found = find_front_matter(text)
    root, data, errors = parse(found) if found else (None, None, [])
    usable = not errors
    if article and found is None:
        errors = validate(text, docname, Path(app.config.kb_data_dir))[1]
    elif article and usable:
        data, errors = check_fields(root, data, found.first, docname, Path(app.config.kb_data_dir))
    for line, msg in errors:
        logger.warning(msg, location=(docname, line), type="kb", subtype="frontmatter")
    if article and data is not None:
        documents(app.env, "pages")[docname] = data
    if found and errors:
        _blank_out(source, found)  # MyST would trip over it again, or half-read it
    if not usable:
        return  # the front matter is unusable: no title checks on top of that
    _PENDING[docname] = _title_check(text, found, article, root)


def _title_check(text: str, found: FrontMatter | None, article: bool, root) -> TitleCheck:
    after = found.end if found else 0
    body = text.split("\n")[after:]
    # the first line of text after the front matter: where a title belongs
    first_text = next((i for i, line in enumerate(body) if line.strip()), None)
    check = TitleCheck(article, after + 1 + (first_text or 0), first_text is None)
    if article and isinstance(root, yaml.MappingNode):
        node = next((v for k, v in root.value if getattr(k, "value", None) == "title"), None)
        if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":str"):
            check.title = node.value
            check.title_line = found.first + node.start_mark.line
    return check


def on_doctree_read(app, doctree: nodes.document) -> None:
    docname = app.env.docname
    check = _PENDING.pop(docname, None)
    if check is None:
        return
    section = doctree.next_node(nodes.section)
    if section is None:
        if check.article and check.body_empty:
            logger.warning(
                f"{CODES['empty']} the article has front matter but no text: add a "
                "'# 标题' line (the same text as title) and the article after the "
                "front matter",
                location=(docname, max(check.body_line - 1, 1)),
                type="kb",
                subtype="title",
            )
        else:
            logger.warning(
                f"{CODES['no_title']} page has no title: start it with a `# 标题` line",
                location=(docname, check.body_line),
                type="kb",
                subtype="title",
            )
        return
    heading = section.next_node(nodes.title)
    text = heading.astext().strip() if heading is not None else ""
    if check.title is not None and text != check.title.strip():
        logger.warning(
            f"{CODES['title']} title {check.title!r} differs from the page's first "
            f"heading {text!r}; make them the same text (a shorter name for "
            "listings goes in listing_title)",
            location=(docname, check.title_line),
            type="kb",
            subtype="title",
        )


# What validation reads besides the page: when one changes, every page is
# read (and validated) again.
# (The schemas of tags.yaml and guides.yaml decide whether those are usable.)
VALIDATION_DATA = (
    "tags.yaml",
    "guides.yaml",
    "front-matter.schema.json",
    "schemas/tags.schema.json",
    "schemas/guides.schema.json",
)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.data")  # kb_data_dir; data files checked at config time
    rebuild_when_changed(
        app,
        "kb_validation_data_digest",
        "env",
        lambda app: (Path(app.config.kb_data_dir) / n for n in VALIDATION_DATA),
    )
    app.setup_extension("kb.core.store")
    app.connect("source-read", on_source_read)
    app.connect("doctree-read", on_doctree_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
