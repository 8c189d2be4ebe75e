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

Each violation is a warning at the offending line, e.g.
``docs/training/x.md:3: WARNING: KB003 unknown guide 'traning' …``, so
``-W`` fails the build. Valid data is kept per document on
``env.kb_pages`` (merged and purged per document, so parallel reads are
safe) for the listing directives in ``kb_listings``.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from sphinx.util import logging

from kb_envstore import per_document, rebuild_when_changed

logger = logging.getLogger(__name__)


@functools.cache
def load_guides(data_dir: Path) -> list[dict]:
    """data/guides.yaml: the guides in home-page order (key, title, blurb)."""
    return yaml.safe_load((data_dir / "guides.yaml").read_text(encoding="utf-8"))


# The guide keys: folders under docs/ and values of `guide:` (the repo's data/).
GUIDES = tuple(g["key"] for g in load_guides(Path(__file__).resolve().parents[2] / "data"))

# Codes are stable: contributors and CONTRIBUTING.md refer to them.
CODES = {
    "syntax": "KB001",
    "required": "KB002",
    "guide": "KB003",
    "tag": "KB004",
    "date": "KB005",
    "field": "KB006",
    "folder": "KB007",
}


@functools.cache
def load_schema(data_dir: Path) -> dict:
    """The article schema with the tag vocabulary filled in."""
    schema = json.loads((data_dir / "front-matter.schema.json").read_text(encoding="utf-8"))
    tags = load_tags(data_dir)
    schema["properties"]["tags"]["items"] = {"enum": sorted(tags)}
    guides = [g["key"] for g in load_guides(data_dir)]
    schema["properties"]["guide"]["enum"] = guides
    schema["properties"]["also_in"]["items"] = {"enum": guides}
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@functools.cache
def load_tags(data_dir: Path) -> dict[str, str]:
    return yaml.safe_load((data_dir / "tags.yaml").read_text(encoding="utf-8")) or {}


def split_front_matter(text: str) -> tuple[str, int] | None:
    """Return the YAML text of the front matter and its first line (1-based)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "\n".join(lines[1:i]), 2
    return None


def _line_of(root: yaml.Node | None, path: list, first_line: int) -> int:
    """Line (1-based) in the file of the YAML node at ``path``."""
    node, line = root, first_line
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = [v for k, v in node.value if k.value == key]
            if not match:
                break
            node = match[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    if node is not None:
        line = first_line + node.start_mark.line
    return line


def _message(err: jsonschema.ValidationError, tags: dict[str, str]) -> tuple[str, list]:
    """A contributor-facing message and the path of the offending value."""
    path = list(err.absolute_path)
    field = path[0] if path else None
    if err.validator == "required":
        missing = err.message.split("'")[1]
        return f"{CODES['required']} missing required field '{missing}'; add it to the front matter", []
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema["properties"]))
        return (f"{CODES['field']} unknown field(s) {', '.join(map(repr, extra))}; "
                f"allowed: {', '.join(err.schema['properties'])}", [extra[0]])
    if field in ("guide", "also_in") and err.validator == "enum":
        return (f"{CODES['guide']} unknown guide {err.instance!r}; "
                f"use one of: {', '.join(GUIDES)}", path)
    if field == "tags" and err.validator == "enum":
        return (f"{CODES['tag']} unknown tag {err.instance!r}; use a tag from data/tags.yaml "
                f"({', '.join(sorted(tags))}) or add it there with a Chinese name", path)
    if field == "date":
        return (f"{CODES['date']} date {err.instance!r} is not YYYY-MM or YYYY-MM-DD; "
                "give the date the article states, or leave the field out", path)
    return f"{CODES['field']} field '{field}': {err.message}", path


def validate(text: str, docname: str, data_dir: Path) -> tuple[dict | None, list[tuple[int, str]]]:
    """Validate one article's source; return (front matter or None, [(line, message)])."""
    found = split_front_matter(text)
    if found is None:
        return None, [(1, f"{CODES['syntax']} no front matter: start the page with a '---' "
                          "block holding title, guide, tags and summary")]
    yaml_text, first = found
    try:
        root = yaml.compose(yaml_text)
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first + mark.line if mark else first
        return None, [(line, f"{CODES['syntax']} front matter is not valid YAML: "
                             f"{getattr(exc, 'problem', exc)}")]
    if not isinstance(data, dict):
        return None, [(first, f"{CODES['syntax']} front matter must be a mapping of fields")]
    if isinstance(data.get("date"), (dt.date, dt.datetime)):
        data["date"] = data["date"].isoformat()[:10]
    tags = load_tags(data_dir)
    errors = []
    validator = jsonschema.Draft202012Validator(load_schema(data_dir))
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        msg, path = _message(err, tags)
        errors.append((_line_of(root, path, first) if path else first, msg))
    folder = docname.split("/")[0]
    if data.get("guide") in GUIDES and data["guide"] != folder:
        errors.append((_line_of(root, ["guide"], first),
                       f"{CODES['folder']} guide '{data['guide']}' does not match the page's "
                       f"folder docs/{folder}/; move the page or fix the field"))
    return (None if errors else data), errors


def is_article(docname: str) -> bool:
    parts = docname.split("/")
    return len(parts) >= 2 and parts[0] in GUIDES and parts[-1] != "index"


def on_source_read(app, docname: str, source: list[str]) -> None:
    if not is_article(docname):
        return
    data, errors = validate(source[0], docname, Path(app.config.kb_data_dir))
    for line, msg in errors:
        logger.warning(msg, location=(docname, line), type="kb", subtype="frontmatter")
    if data is not None:
        app.env.kb_pages[docname] = data


# What validation reads besides the page: when one changes, every page is
# read (and validated) again.
VALIDATION_DATA = ("tags.yaml", "guides.yaml", "front-matter.schema.json")


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_data_dir", "data", "env", types=[str])
    rebuild_when_changed(app, "kb_validation_data_digest", "env",
                         lambda app: (Path(app.config.kb_data_dir) / n for n in VALIDATION_DATA))
    per_document(app, "kb_pages", shown_in_listings=True)
    app.connect("source-read", on_source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
