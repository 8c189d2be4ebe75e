"""One loader for the project's data files (``data/*.yaml``, ``data/*.json``).

Every pull request is untrusted input to a build that runs with CI
credentials, and the data files are part of it. PyYAML on its own is not a
safe reader for that:

- it silently keeps the last of two equal keys, so two readers of the same
  file can disagree about its content;
- anchors and aliases let a kilobyte of text expand to gigabytes
  ("billion laughs"), and deep nesting ends in ``RecursionError``;
- a malformed file ends the build with a Python traceback that names
  neither the file nor the line.

So every YAML text (a data file, or a page's front matter through
``kb.pages.frontmatter``) goes through :func:`parse_yaml`: it first scans the
*events* of the text — nothing is constructed yet — and refuses anchors,
aliases, explicit tags and nesting deeper than a cap, then composes the
node tree to find duplicate keys, and only then builds Python objects. Its
errors carry the line; :func:`line_of` maps a path inside the data (e.g. a
jsonschema error's ``absolute_path``) back to the line of its YAML node.

The data files are checked against JSON schemas in ``data/schemas/`` and
for the rules a schema cannot state (unique ids and names, regexes that
compile), and for the rules the build's safety rests on, which are kept in
Python because a pull request can edit the schemas: tag keys, guide keys
and glossary ids are slugs (they name files and URLs). The schema files are
untrusted too (:func:`schema_file`): a ``$ref`` may only point inside its
own file (nothing is fetched, neither a URL nor a file:// path), and a
``pattern`` must be one of SAFE_PATTERNS (a backtracking regex can hang the
build). Each problem is a warning at ``data/<file>:LINE`` with a KB04x
code, logged when the configuration is read; the readers then go on with
what is usable (the valid entries, or empty data), so ``-W`` fails the
build at the end with every problem listed, and never with a traceback.
(Raising a ``SphinxError`` would stop the build at once, but Sphinx 9
prints it with a traceback frame and an invitation to report a Sphinx bug.)

Reads are cached on the file's path, size and modification time, so a
build of a thousand pages reads each file once.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
import yaml

from kb.core.log import getLogger

logger = getLogger(__name__)

# Codes are stable: CONTRIBUTING.md lists them.
CODES = {
    "syntax": "KB040",  # not UTF-8, not valid YAML/JSON, missing
    "duplicate": "KB041",  # a key given twice in one mapping
    "unsafe": "KB042",  # anchors, aliases, tags, nesting, size
    "schema": "KB043",  # wrong shape, missing field, wrong type
    "unique": "KB044",  # an id or name used by two entries
    "regex": "KB045",  # a pattern that does not compile
    "meta": "KB046",  # a schema file is no usable JSON schema
    "pattern": "KB047",  # a schema file's regular expression is not one known to be safe
    "bidi": "KB095",  # a bidirectional control or invisible character (kb.guard.untrusted: in pages)
}

# Bidirectional embeddings, overrides and isolates: text shown in another
# order than it is stored and copied ("Trojan Source"). And the characters
# that show nothing at all but stay in what is copied, searched and read by
# programs (llms-full.txt), which could carry text hidden from readers (such
# as instructions to a language model): Unicode's Default_Ignorable_Code_Point
# characters (DerivedCoreProperties.txt: soft hyphen, combining grapheme
# joiner, zero-width space and non-joiner, word joiner and invisible
# operators, variation selectors, the byte order mark inside text, Hangul
# fillers, Mongolian and Khmer fillers, shorthand format controls, musical
# format controls, the tag and variation-selector planes), and the
# interlinear annotation controls. Kept: the zero-width joiner and the emoji
# and text presentation selectors (U+FE0E, U+FE0F), which emoji need; a tag
# flag (England, Scotland, Wales) is refused with its tags. Chinese and
# English need none of these; kb.guard.untrusted strips them from pages with
# the same KB095.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
INVISIBLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u2060-\u2065\u206a-\u206f"
    "\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
# The zero-width joiner and the presentation selectors are kept where emoji
# use them (❤️, 1️⃣, 👨‍💻, 🏳️‍🌈): not at the start of the text, nor after a
# letter or a space, nor in a run (a selector after any of the three, a
# joiner after a joiner or a text selector), which could spell out bits that
# show nothing
JOINERS = "\u200d\ufe0e\ufe0f"
# One character class first, so that the engine scans for the few
# characters at all quickly (a look-behind at every position cost 25 times
# as much), then what makes one of them wrong there.
BIDI = re.compile(
    f"[{BIDI_CONTROLS}{INVISIBLE}{JOINERS}]"
    f"(?:(?<=[{BIDI_CONTROLS}{INVISIBLE}])"  # wrong anywhere
    f"|(?<![\\s\\S].)|(?<=\\s.)|(?<=[^\\W\\d_].)"  # a joiner first, after a space or a letter
    f"|(?<=[{JOINERS}][\\ufe0e\\ufe0f])|(?<=[\\u200d\\ufe0e]\\u200d))"  # in a run
)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def hidden_character(character: str) -> tuple[str, str]:
    """What KB095 says of a character BIDI found: what it is, and why it is refused."""
    if character in JOINERS:
        return (
            f"zero-width joiner or presentation selector U+{ord(character):04X} where no emoji needs it",
            "readers see nothing, but it is copied, searched and read by programs (llms-full.txt), and a "
            "run of them can spell out words readers never see",
        )
    if _INVISIBLE.match(character):
        return (
            f"invisible character U+{ord(character):04X}",
            "readers see nothing, but it is copied, searched and read by programs (llms-full.txt) with the "
            "text, and can carry words readers never see",
        )
    return (
        f"bidirectional control character U+{ord(character):04X}",
        "the text is shown in another order than it is copied (a code sample could show one command "
        "and copy another)",
    )


MAX_DEPTH = 32
MAX_DATA_BYTES = 2 * 1024 * 1024
# A front matter holds a handful of short fields; anything much bigger or
# deeper is a mistake or an attack on the build.
FRONT_MATTER_BYTES = 16 * 1024
FRONT_MATTER_DEPTH = 8


def schema_path(data_dir: Path, name: str) -> Path:
    """The schema of a data file: ``schemas/<name>`` in the project's own data
    folder (kb_data_dir), never the folder this module was imported from."""
    return (Path(data_dir) / "schemas" / name).resolve()


# Tag keys, guide keys and glossary ids become file names and URLs
# (tags/<tag>.html, docs/<guide>/, #term-<id>). The rule is enforced here,
# whatever the (editable) schema files say: "../index" or "../../x" as a tag
# would write a page over the home page or outside the output folder.
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SLUG_RULE = "ASCII kebab-case: lowercase letters and digits, words joined by single hyphens (gpu-memory)"

# The regular expressions a schema file may use ("pattern", "patternProperties").
# jsonschema runs them with Python's backtracking re, which a hostile pattern
# such as ^(a|a)+$ keeps busy for ever on a short string (and re cannot be
# interrupted, nor given a time limit). Telling safe patterns from unsafe ones
# by their form is a research problem; a short list of patterns reviewed for
# backtracking is simple and cannot be wrong. A schema change that needs a new
# pattern adds it here, where a reviewer of Python code sees it.
SAFE_PATTERNS = frozenset(
    {
        r"\n| : ",
        r"^(\d{4}(-\d{2}){0,2}|undated)$",
        r"^[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$",
        r"^[A-Za-z0-9_.:-]+$",
        r"^[^\n]+$",
        r"^[a-z0-9]+(-[a-z0-9]+)*$",
        r"^[a-z]+/[a-z0-9-]+$",
        r"^\S(.*\S)?$",
        r"^\^#{1,6} [^()|*+?{}\[\]\\.$]*(\\d\+)?[^()|*+?{}\[\]\\.$]*$",
        r"^\d{4}-\d{2}-\d{2}$",
        r'^https?://[^\s"<>]+$',
    }
)
SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"  # SLUG as a schema pattern (in SAFE_PATTERNS)
# A NUL, or %00 which a link target decodes to one, means nothing in a text
# and stops the build with a traceback in a link (as kb.guard.untrusted.strip_nul).
NUL = re.compile(r"\x00|%00", re.IGNORECASE)


def _refuse_retrieval(uri: str):
    """jsonschema would fetch a ``$ref`` it cannot resolve in the schema itself
    with urlopen, which reads file:// URLs as well as the network: a schema
    file could publish any file of the CI machine in the log. Nothing is
    fetched: a reference must point inside its own schema (#...)."""
    raise LookupError(f"{uri}: the build fetches no schema from outside the schema file")


# The meta-schemas of jsonschema's drafts (bundled, no fetch), and nothing else.
REGISTRY = referencing.Registry(retrieve=_refuse_retrieval)


def validator(schema: dict) -> jsonschema.Draft202012Validator:
    """The one way the project makes a validator: references resolve only
    inside the schema (REGISTRY); use it on a schema from :func:`schema_file`."""
    return jsonschema.Draft202012Validator(schema, registry=REGISTRY)


# libyaml's parser (PyYAML's C loader, yaml.CSafeLoader; libyaml is built into its wheels)
# reads a data file about 15 times faster than the pure-Python one; every
# build reads the claims registers and every page's front matter.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """SafeLoader that leaves dates as text.

    ``date: 2026-13-45`` would otherwise raise ValueError (not a YAMLError)
    while constructing; as text, the schema's pattern reports it.
    """


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class YamlProblem(Exception):
    """A YAML text refused by :func:`parse_yaml`.

    ``kind`` is "syntax", "duplicate", "unsafe" or "bidi"; callers turn it into
    their own code (front matter: KB001/KB008/KB009; data files: KB04x).
    """

    def __init__(self, kind: str, line: int, message: str):
        super().__init__(message)
        self.kind, self.line, self.message = kind, line, message


# -- the YAML safety core ---------------------------------------------------------


def _event_line(event, first_line: int) -> int:
    return first_line + event.start_mark.line


def _scan_events(text: str, first_line: int, max_depth: int) -> None:
    """Refuse anchors, aliases, tags and deep nesting before building anything."""
    try:
        _check_events(yaml.parse(text, Loader=_Loader), first_line, max_depth)
    except yaml.MarkedYAMLError as exc:
        # libyaml's scanner counts nesting ahead of the events, with a limit
        # of its own (1,000 levels): the same refusal, for the same reason
        if "nesting depth" not in str(exc.problem):
            raise
        raise YamlProblem(
            "unsafe",
            first_line + (exc.problem_mark.line if exc.problem_mark else 0),
            f"YAML nested more than {max_depth} levels deep; flatten it",
        ) from None


def _check_events(events, first_line: int, max_depth: int) -> None:
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise YamlProblem(
                "unsafe",
                _event_line(event, first_line),
                "YAML anchors (&name) and aliases (*name) are not allowed; write each value out in full",
            )
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)) and event.tag:
            raise YamlProblem(
                "unsafe",
                _event_line(event, first_line),
                f"YAML tag {event.tag!r} is not allowed; remove it and write "
                "a plain value (quote it to keep it as text)",
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlProblem(
                    "unsafe",
                    _event_line(event, first_line),
                    f"YAML nested more than {max_depth} levels deep; flatten it",
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _duplicate_keys(root: yaml.Node | None, first_line: int) -> None:
    """Refuse a mapping that gives the same key twice (PyYAML keeps the last)."""
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    line = first_line + key.start_mark.line
                    if (key.tag, key.value) in seen:
                        raise YamlProblem(
                            "duplicate",
                            line,
                            f"key {key.value!r} is given twice (first on line "
                            f"{seen[key.tag, key.value]}); YAML keeps only the last, "
                            "so remove or merge one of them",
                        )
                    seen[key.tag, key.value] = line
                stack += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def _syntax_problem(exc: Exception, first_line: int) -> YamlProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = first_line + mark.line if mark is not None else first_line
    problem = getattr(exc, "problem", None) or str(exc)
    return YamlProblem("syntax", line, f"not valid YAML: {problem}")


@functools.lru_cache(maxsize=64)
def parse_front_matter(text: str) -> tuple[yaml.Node | None, Any]:
    """A page's front matter (the YAML between its ``---`` lines, from line 2),
    with the front-matter limits: parsed once per text, however many checks
    read it (kb.pages.frontmatter, kb.guard.untrusted). The result is shared:
    read it, never change it. Raises :class:`YamlProblem` as parse_yaml does."""
    return parse_yaml(text, 2, max_bytes=FRONT_MATTER_BYTES, max_depth=FRONT_MATTER_DEPTH)


def parse_yaml(
    text: str, first_line: int = 1, *, max_bytes: int = MAX_DATA_BYTES, max_depth: int = MAX_DEPTH
) -> tuple[yaml.Node | None, Any]:
    """Return (node tree, data) of a YAML text whose first line is ``first_line``.

    Raises :class:`YamlProblem` for anything unsafe or invalid; never
    another exception for any input text.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YamlProblem(
            "unsafe", first_line, f"YAML block is {size} bytes, more than the limit of {max_bytes}"
        )
    try:
        _scan_events(text, first_line, max_depth)
        root = yaml.compose(text, Loader=_Loader)
        _duplicate_keys(root, first_line)
        _no_bidi(root, first_line)
        _no_huge_numbers(root, first_line)
        # the data, from the nodes just composed (not a second parse)
        data = None if root is None else _Loader("").construct_document(root)
    except yaml.YAMLError as exc:
        raise _syntax_problem(exc, first_line) from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise YamlProblem("syntax", first_line, f"not valid YAML: {exc}") from None
    return root, data


# Digits an integer may have: Python refuses to print one of more than 4,300
# decimal digits (a hexadecimal or binary one is read without that limit, and a
# message that shows it later would end in a traceback); no value here needs 30.
MAX_INT_DIGITS = 30
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"


def _scalars(root: yaml.Node | None):
    """Every scalar node of a YAML tree, keys included."""
    nodes_left = [root] if root is not None else []
    while nodes_left:
        node = nodes_left.pop()
        if isinstance(node, yaml.ScalarNode):
            yield node
        elif isinstance(node, yaml.SequenceNode):
            nodes_left += node.value
        elif isinstance(node, yaml.MappingNode):
            nodes_left += [part for pair in node.value for part in pair]


def _no_huge_numbers(root: yaml.Node | None, first_line: int) -> None:
    for node in _scalars(root):
        if node.tag == _INT_TAG and len(node.value) > MAX_INT_DIGITS:
            raise YamlProblem(
                "unsafe",
                first_line + node.start_mark.line,
                f"a number of {len(node.value)} characters (more than {MAX_INT_DIGITS}); "
                "write a smaller one, or quote it if it is text",
            )
        elif node.tag == _FLOAT_TAG and not math.isfinite(_Loader("").construct_yaml_float(node)):
            # .inf, .nan, 1e999: no figure of this site is one, and the code that
            # formats figures cannot (OverflowError, review 19)
            raise YamlProblem(
                "unsafe",
                first_line + node.start_mark.line,
                f"{node.value!r} is not a finite number; write the figure (quote it if it is text)",
            )


def _no_bidi(root: yaml.Node | None, first_line: int) -> None:
    """A bidirectional control in any value or key, written as it is or as an
    escape ("\\u202E"), refuses the text at its line (KB095)."""
    for node in _scalars(root):
        found = BIDI.search(str(node.value))
        if found:
            raise YamlProblem(
                "bidi",
                first_line + node.start_mark.line,
                "{}: {}; remove it".format(*hidden_character(found.group())),
            )


def line_of(root: yaml.Node | None, path, first_line: int = 1) -> int:
    """Line (1-based) of the node at ``path`` (keys and indexes), or of its nearest
    parent. A mapping's value that is a block (a list or mapping on the lines
    below) is placed at its key's line, where the contributor wrote it."""
    node, line = root, first_line
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if getattr(k, "value", None) == str(key)]
            if not match:
                break
            key_node, node = match[0]
            if (
                isinstance(node, (yaml.MappingNode, yaml.SequenceNode))
                and node.start_mark.line != key_node.start_mark.line
                and key == path[-1]
            ):
                node = key_node
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    if node is not None:
        line = first_line + node.start_mark.line
    return line


# -- data files -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem in a data file: where, which code, what to do."""

    path: Path
    line: int
    code: str
    message: str
    entry: int | None = None  # index of the list entry the problem is in

    def location(self, root: Path | None = None) -> str:
        path = self.path
        if root is not None and path.is_relative_to(root):
            path = path.relative_to(root)
        return f"{path.as_posix()}:{self.line}"

    def __str__(self) -> str:
        return f"{self.location()}: {self.code} {self.message}"


@dataclasses.dataclass(eq=False)  # hashed by identity: cached results are cache keys
class Loaded:
    """A data file as read: usable data, the problems found, node lines."""

    data: Any
    problems: list[Problem]
    root: yaml.Node | None = None
    lines: list[int] = dataclasses.field(default_factory=list)  # per kept entry


class DataError(Exception):
    """Raised by :func:`load_yaml` when a file has problems."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


def read_text(path: Path) -> tuple[str | None, Problem | None]:
    """The text of a data or schema file: a regular file (a FIFO would keep
    the build waiting) of at most MAX_DATA_BYTES, in UTF-8, without
    bidirectional controls."""
    try:
        with open(path, "rb", opener=_nonblocking) as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, Problem(path, 1, CODES["unsafe"], "not a regular file; commit the file itself")
            raw = file.read(MAX_DATA_BYTES + 1)
    except OSError as exc:
        return None, Problem(path, 1, CODES["syntax"], f"cannot read the file: {exc.strerror}")
    if len(raw) > MAX_DATA_BYTES:
        return None, Problem(
            path, 1, CODES["unsafe"], f"larger than {MAX_DATA_BYTES >> 20} MiB, more than a data file may be"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, Problem(
            path, line, CODES["syntax"], f"not UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        )
    bidi = BIDI.search(text)
    if bidi:
        return None, Problem(
            path,
            text.count("\n", 0, bidi.start()) + 1,
            CODES["bidi"],
            "{}: {}; remove it".format(*hidden_character(bidi.group())),
        )
    return text, None


def _where(path) -> str:
    parts = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f"at {parts.lstrip('.')}: " if parts else ""


def schema_problems(path: Path, data: Any, root, schema: dict, first_line: int = 1) -> list[Problem]:
    """Each jsonschema error as a KB043 problem at its node's line."""
    out = []
    try:
        errors = sorted(validator(schema).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    except referencing.exceptions.Unresolvable as exc:
        # schema_file() refuses such schemas; never a traceback all the same
        return [
            Problem(
                path, first_line, CODES["meta"], f"its schema has a reference that does not resolve: {exc}"
            )
        ]
    for err in errors:
        hint = err.schema.get("description") if isinstance(err.schema, dict) else None
        where = list(err.absolute_path)
        out.append(
            Problem(
                path,
                line_of(root, where, first_line),
                CODES["schema"],
                f"{_where(where)}{err.message}" + (f" ({hint})" if hint else ""),
                where[0] if where and isinstance(where[0], int) else None,
            )
        )
    return out


@functools.lru_cache(maxsize=64)
def _read_yaml(path: Path, schema_at: Path | None, stamp, schema_stamp) -> Loaded:
    schema = schema_file(schema_at) if schema_at else None
    if schema is not None and not schema_at.is_file():
        return Loaded(
            None,
            [
                Problem(
                    path,
                    1,
                    CODES["meta"],
                    f"not read: its schema data/schemas/{schema_at.name} is missing; restore it (git checkout)",
                )
            ],
        )
    if schema is not None and schema.data is None:
        # no usable schema: nothing in the file can be trusted to have its shape.
        # The schema's own problems are reported once (schema_files), this
        # at each file it leaves unread.
        return Loaded(
            None,
            [
                Problem(
                    path,
                    1,
                    CODES["meta"],
                    f"not read: its schema data/schemas/{schema_at.name} is unusable; "
                    "fix the problems reported there",
                )
            ],
        )
    text, problem = read_text(path)
    if problem:
        return Loaded(None, [problem])
    schema_key = (schema_at.name, hashlib.sha256(schema_at.read_bytes()).digest()) if schema else None
    data, root, found = _checked(text, schema, schema_key)
    return Loaded(data, [Problem(path, *where) for where in found], root)


# The shapes the build's code relies on, whatever data/schemas/ says: a copy of
# each schema as the code was written for it (tools/kb/core/schemas/, changed
# only with the code, under review). A file must satisfy both; a pull request
# that loosens data/schemas/X (`{}`) gets KB043 at the data, not a traceback
# where the code meets a shape it never expected (review 18).
FLOOR_DIR = Path(__file__).resolve().parent / "schemas"


@functools.cache
def floor_schema(name: str) -> dict | None:
    path = FLOOR_DIR / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


# The same text checked against the same schema gives the same data and
# problems wherever the file lies: a process that builds several projects
# (the tests' tiny copies of the repository) parses and validates a copied
# file once. Keyed by the text's digest; the oldest entry goes first.
_CHECKED: dict[tuple, tuple[Any, yaml.Node | None, list[tuple]]] = {}
_CHECKED_MAX = 128


def _checked(text: str, schema: Loaded | None, schema_key) -> tuple[Any, yaml.Node | None, list[tuple]]:
    """(data, YAML nodes, problems as (line, code, message, entry)); data and
    nodes None if the text is not valid YAML. Shared: never change them."""
    key = (hashlib.sha256(text.encode("utf-8")).digest(), schema_key)
    if key not in _CHECKED:
        try:
            root, data = parse_yaml(text)
        except YamlProblem as exc:
            value = (None, None, [(exc.line, CODES[exc.kind], exc.message, None)])
        else:
            found = schema_problems(Path(), data, root, schema.data) if schema is not None else []
            floor = floor_schema(schema_key[0]) if schema_key else None
            if not found and floor is not None:
                found = [
                    dataclasses.replace(
                        p,
                        message=f"{p.message}; the build needs this shape, "
                        f"whatever data/schemas/{schema_key[0]} says",
                    )
                    for p in schema_problems(Path(), data, root, floor)
                ]
            value = (data, root, [(p.line, p.code, p.message, p.entry) for p in found])
        while len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)))
        _CHECKED[key] = value
    return _CHECKED[key]


def _nonblocking(path, flags: int) -> int:
    """Opens without waiting for a writer (a FIFO); read_text refuses it then."""
    return os.open(path, flags | os.O_NONBLOCK)


def file_stamp(path: Path):
    try:
        st = path.stat()
        return st.st_size, st.st_mtime_ns
    except OSError:
        return None


def read_yaml(path: Path, schema: Path | None = None) -> Loaded:
    """Read and check a YAML file against a schema file (:func:`schema_path`),
    cached until either changes; never raises.

    The result is shared between callers: copy before changing it.
    """
    path = Path(path).resolve()
    schema = Path(schema).resolve() if schema else None
    return _read_yaml(path, schema, file_stamp(path), file_stamp(schema) if schema else None)


def load_yaml(path: Path, schema: Path | None = None) -> Any:
    """The data of a YAML file; raises :class:`DataError` listing its problems."""
    loaded = read_yaml(path, schema)
    if loaded.problems:
        raise DataError(loaded.problems)
    return loaded.data


# -- the project's files ------------------------------------------------------------


def _keep(loaded: Loaded, valid: list[bool], extra: list[Problem]) -> Loaded:
    """Only the entries of a list file that have no problem, with their lines."""
    items = loaded.data if isinstance(loaded.data, list) else []
    kept = [(item, loaded.root.value[i].start_mark.line + 1) for i, item in enumerate(items) if valid[i]]
    return Loaded([k for k, _ in kept], loaded.problems + extra, loaded.root, [ln for _, ln in kept])


def _bad_entries(loaded: Loaded) -> set[int]:
    """Indexes of list entries that a schema problem points into."""
    return {p.entry for p in loaded.problems if p.entry is not None}


def _slug(value: Any) -> bool:
    return isinstance(value, str) and SLUG.fullmatch(value) is not None


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None


def _texts(value: Any) -> list[str]:
    """The strings of a field: itself, or the strings of a list."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def tags(data_dir: Path) -> Loaded:
    """data/tags.yaml: tag slug -> Chinese name; {} when unusable."""
    path = Path(data_dir) / "tags.yaml"
    loaded = read_yaml(path, schema_path(data_dir, "tags.schema.json"))
    if loaded.problems or not isinstance(loaded.data, dict):
        return Loaded({}, loaded.problems, loaded.root)
    # YAML reads yes, 1 or null as a boolean, a number, nothing: a tag is a name
    odd = [
        Problem(
            path,
            key.start_mark.line + 1,
            "KB043",
            f"tag {key.value!r} is read as a {key.tag.rsplit(':', 1)[-1]}, not a name: "
            "use an ASCII kebab-case name (quote it if it must look like this)",
        )
        for key, _ in getattr(loaded.root, "value", [])
        if key.tag != "tag:yaml.org,2002:str"
    ]
    if odd:
        return Loaded({}, odd, loaded.root)
    not_slugs = [
        Problem(
            path,
            key.start_mark.line + 1,
            CODES["schema"],
            f"tag {key.value!r} is not a usable tag name (it names a page, tags/<tag>.html): {SLUG_RULE}",
        )
        for key, _ in getattr(loaded.root, "value", [])
        if not SLUG.fullmatch(key.value)
    ]
    if not_slugs:
        return Loaded({}, not_slugs, loaded.root)
    return loaded


def _slug_problem(
    loaded: Loaded, path: Path, i: int, entry, field: str, label: str, why: str
) -> Problem | None:
    """A Problem when entry i's ``field`` is no ASCII kebab-case slug."""
    if isinstance(entry, dict) and _slug(entry.get(field)):
        return None
    value = _get(entry, field)
    return Problem(
        path,
        line_of(loaded.root, [i, field]),
        CODES["schema"],
        f"{label} {value!r} is not usable ({why}): {SLUG_RULE}",
    )


@functools.lru_cache(maxsize=16)
def _guides(path: Path, schema: Path, stamps) -> Loaded:
    loaded = read_yaml(path, schema)
    if not isinstance(loaded.data, list):
        return Loaded([], loaded.problems, loaded.root)
    bad, extra, seen = _bad_entries(loaded), [], {}
    for i, guide in enumerate(loaded.data):
        if i in bad:
            continue
        line = loaded.root.value[i].start_mark.line + 1
        problem = _slug_problem(loaded, path, i, guide, "key", "guide key", "it names the folder docs/<key>/")
        if problem:
            extra.append(problem)
            bad.add(i)
            continue
        if guide["key"] in seen:
            extra.append(
                Problem(
                    path,
                    line,
                    CODES["unique"],
                    f"guide key {guide['key']!r} is already used on line "
                    f"{seen[guide['key']]}; each guide needs its own key",
                )
            )
            bad.add(i)
        seen.setdefault(guide["key"], line)
    return _keep(loaded, [i not in bad for i in range(len(loaded.data))], extra)


def guides(data_dir: Path) -> Loaded:
    """data/guides.yaml: the valid guides in order; [] when unusable."""
    path = (Path(data_dir) / "guides.yaml").resolve()
    schema = schema_path(data_dir, "guides.schema.json")
    return _guides(path, schema, (file_stamp(path), file_stamp(schema)))


def glossary_names(entry: dict) -> list[str]:
    """All names of an entry: Chinese, English, then aliases, without repeats."""
    return list(dict.fromkeys(n for n in [entry["zh"], entry.get("en"), *entry.get("aliases", [])] if n))


@functools.lru_cache(maxsize=16)
def _glossary(path: Path, schema: Path, stamps) -> Loaded:
    loaded = read_yaml(path, schema)
    if loaded.data is None and not loaded.problems:
        return Loaded([], [], loaded.root)  # an empty file: no terms
    if not isinstance(loaded.data, list):
        return Loaded([], loaded.problems, loaded.root)
    bad, extra = _bad_entries(loaded), []
    ids: dict[str, int] = {}
    names: dict[str, tuple[str, int]] = {}
    for i, entry in enumerate(loaded.data):
        if i in bad:
            continue
        line = loaded.root.value[i].start_mark.line + 1
        problem = _slug_problem(loaded, path, i, entry, "id", "id", "it names the entry's anchor, #term-<id>")
        if problem:
            extra.append(problem)
            bad.add(i)
            continue
        nul = next((k for k, v in entry.items() if any(NUL.search(t) for t in _texts(v))), None)
        if nul is not None:
            extra.append(
                Problem(
                    path,
                    line_of(loaded.root, [i, nul]),
                    "KB012",
                    f"NUL character (or %00) in {nul}: remove it",
                )
            )
            bad.add(i)
            continue
        if entry["id"] in ids:
            extra.append(
                Problem(
                    path,
                    line,
                    CODES["unique"],
                    f"id {entry['id']!r} is already used by the entry on line "
                    f"{ids[entry['id']]}; give each entry its own id",
                )
            )
            bad.add(i)
            continue
        for name in glossary_names(entry):
            other = names.get(name.lower())
            if other and other[0] != entry["id"]:
                extra.append(
                    Problem(
                        path,
                        line,
                        CODES["unique"],
                        f"name {name!r} is already a name of {other[0]!r} (line "
                        f"{other[1]}); a name may link to one entry only",
                    )
                )
                bad.add(i)
                break
        if i not in bad:
            ids[entry["id"]] = line
            for name in glossary_names(entry):
                names.setdefault(name.lower(), (entry["id"], line))
    return _keep(loaded, [i not in bad for i in range(len(loaded.data))], extra)


def glossary(data_dir: Path) -> Loaded:
    """data/glossary.yaml: the valid entries, each with its line in ``lines``."""
    path = (Path(data_dir) / "glossary.yaml").resolve()
    schema = schema_path(data_dir, "glossary.schema.json")
    return _glossary(path, schema, (file_stamp(path), file_stamp(schema)))


@functools.lru_cache(maxsize=16)
def _search_synonyms(path: Path, schema: Path, stamps, glossary_stamps) -> Loaded:
    if not path.exists() and not path.is_symlink():
        return Loaded([], [])
    loaded = read_yaml(path, schema)
    if not isinstance(loaded.data, list):
        return Loaded([], loaded.problems, loaded.root)
    bad, extra = _bad_entries(loaded), []
    terms = {n.lower(): e["id"] for e in glossary(path.parent).data for n in glossary_names(e)}
    seen: dict[str, int] = {}
    for i, group in enumerate(loaded.data):
        if i in bad:
            continue
        line = loaded.root.value[i].start_mark.line + 1
        problem = None
        for k, word in enumerate(group):
            at = line_of(loaded.root, [i, k])
            if word.lower() in seen:
                problem = Problem(
                    path,
                    at,
                    CODES["unique"],
                    f"{word!r} is already in the group on line {seen[word.lower()]}; "
                    "a word may lead to one group only: merge the two groups or drop one",
                )
            elif k and _holds(group[0], word):
                problem = Problem(
                    path,
                    at,
                    CODES["unique"],
                    f"{word!r} is part of the pages' word {group[0]!r}: search would find it again in "
                    "what it puts for it; drop it, or put the group's words in the right order",
                )
            elif k and word.lower() in terms:
                problem = Problem(
                    path,
                    at,
                    CODES["unique"],
                    f"{word!r} is a name of the glossary entry {terms[word.lower()]!r} "
                    "(data/glossary.yaml), which search already expands: drop it here",
                )
            if problem:
                break
        if problem:
            extra.append(problem)
            bad.add(i)
            continue
        for word in group:
            seen[word.lower()] = line
    return _keep(loaded, [i not in bad for i in range(len(loaded.data))], extra)


_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


def _holds(text: str, word: str) -> bool:
    """Whether the search page finds ``word`` in ``text`` (query.js: Chinese
    anywhere, Latin as a whole word), both as it normalizes them."""
    text, word = (unicodedata.normalize("NFKC", t).lower() for t in (text, word))
    if _CJK.search(word):
        return word in text
    return re.search(f"(^|[^a-z0-9]){re.escape(word)}($|[^a-z0-9])", text) is not None


def search_synonyms(data_dir: Path) -> Loaded:
    """data/search-synonyms.yaml: the valid groups (the pages' word first); [] when
    the file is absent. A reader's word may be in one group only and may not be a
    glossary name (search expands those with the glossary's names)."""
    path = (Path(data_dir) / "search-synonyms.yaml").resolve()
    schema = schema_path(data_dir, "search-synonyms.schema.json")
    words = (Path(data_dir) / "glossary.yaml").resolve()
    glossary_schema = schema_path(data_dir, "glossary.schema.json")
    return _search_synonyms(
        path, schema, (file_stamp(path), file_stamp(schema)), (file_stamp(words), file_stamp(glossary_schema))
    )


OLD_ANCHOR = re.compile(r"term-[A-Za-z0-9][A-Za-z0-9_.-]*")


def glossary_old_anchors(data_dir: Path) -> Loaded:
    """data/glossary-old-anchors.yaml (optional): an anchor the glossary page
    once had -> the id of the entry that holds the term now; only the lines
    that name an entry and no entry's own anchor."""
    path = (Path(data_dir) / "glossary-old-anchors.yaml").resolve()
    schema = schema_path(data_dir, "glossary-old-anchors.schema.json")
    glossary_file = (Path(data_dir) / "glossary.yaml").resolve()
    return _glossary_old_anchors(
        path,
        schema,
        (file_stamp(path), file_stamp(schema)),
        (file_stamp(glossary_file), file_stamp(schema_path(data_dir, "glossary.schema.json"))),
    )


@functools.lru_cache(maxsize=16)
def _glossary_old_anchors(path: Path, schema: Path, stamps, glossary_stamps) -> Loaded:
    if not path.exists() and not path.is_symlink():
        return Loaded({}, [], None)
    loaded = read_yaml(path, schema)
    if loaded.problems or not isinstance(loaded.data, dict):
        return Loaded({}, loaded.problems, loaded.root)
    entries = {e["id"] for e in glossary(path.parent).data}
    kept, problems = {}, []
    for key, _ in getattr(loaded.root, "value", []):
        if key.tag != "tag:yaml.org,2002:str" or not OLD_ANCHOR.fullmatch(key.value):
            message = (
                f"{key.value!r} is no anchor the glossary had: write it as it was, term-12 or term-DeepSpeed"
            )
            problems.append(Problem(path, key.start_mark.line + 1, CODES["schema"], message))
            continue
        old, entry = key.value, loaded.data[key.value]
        if old.removeprefix("term-") in entries:
            message = (
                f"{old} is the anchor of the entry {old.removeprefix('term-')!r} itself: remove this line"
            )
            problems.append(Problem(path, key.start_mark.line + 1, CODES["unique"], message))
        elif entry not in entries:
            message = (
                f"{old} points at {entry!r}, which is no entry id of data/glossary.yaml: "
                "give the id of the entry that now holds the term"
            )
            problems.append(Problem(path, key.start_mark.line + 1, CODES["schema"], message))
        else:
            kept[old] = entry
    return Loaded(kept, problems, loaded.root)


# make linkcheck matches every link of the site against every pattern, with
# Python's backtracking re, which on a link that almost matches tries every way
# the pattern could match it: a repeated group (``(a|a)+``, ``(x+)*``) takes for
# ever, and so do many choices in a row, whose tries multiply (``a?`` forty
# times: 2^40; ``[^/]{0,999}`` ten times; ``(?:a|.)`` thirty times). The
# pattern's tries are counted with an unbounded repeat as one try per
# character of the longest link a page may hold (KB012), and may not exceed
# those of two unbounded repeats and two small choices: ``[^/]*`` twice takes
# 5 ms on a 2,048-character link, three times 1.8 s. A back-reference makes
# matching harder still. Patterns of links need none of this.
MAX_LINK_LENGTH = 2048
MAX_LINK_PATTERN_TRIES = 4 * (MAX_LINK_LENGTH + 1) ** 2
MAX_LINK_PATTERN_LENGTH = 300


def link_pattern_problem(pattern: str) -> str | None:
    """Why a linkcheck-ignore pattern could keep the link checker busy, if it could.

    It reads the pattern with the parser ``re`` compiles it with, re._parser
    (not a documented module; its ops are those of Python 3.11-3.13): the
    tests of KB045 in tests/test_link_patterns.py fail if it changes."""
    from re import _parser as sre  # the parser re compiles with: what it will run

    # each try costs more with a long pattern: a class of 30,000 characters
    # beyond U+FFFF (checked one by one) took 61 s on a 2,048-character link
    if len(pattern) > MAX_LINK_PATTERN_LENGTH:
        return f"is {len(pattern)} characters long, more than {MAX_LINK_PATTERN_LENGTH}"
    if any(ord(c) > 0xFFFF for c in pattern):
        return "holds a character beyond U+FFFF"
    repeats = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
    groups = (sre.SUBPATTERN, sre.BRANCH, *repeats, sre.ATOMIC_GROUP)

    def tries(items) -> int:
        total = 1
        for op, arg in items:
            if op in repeats:
                low, high, body = arg
                if high > 1 and any(inner in groups for inner, _ in body):
                    raise _SlowPattern("repeats a group (such as (…)+ or (…)*)")
                span = MAX_LINK_LENGTH if high == sre.MAXREPEAT else min(high, MAX_LINK_LENGTH) - low
                # and each try walks the repeat's fixed part again: a{1000}
                # after two [^/]* is 2,049**2 tries of 1,000 steps each
                total *= (span + 1) * tries(body) * max(low, 1)
            elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
                raise _SlowPattern("refers back to a group (\\1, (?P=name), (?(1)…))")
            elif op == sre.SUBPATTERN:
                total *= tries(arg[-1])
            elif op == sre.ATOMIC_GROUP:
                total *= tries(arg)
            elif op == sre.BRANCH:
                total *= sum(tries(branch) for branch in arg[1])
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                total *= tries(arg[1])
            if total > MAX_LINK_PATTERN_TRIES:
                raise _SlowPattern(
                    "has too many choices in a row (optional parts, alternatives, repeats): "
                    f"more than {MAX_LINK_PATTERN_TRIES:,} ways to try a link"
                )
        return total

    try:
        tries(sre.parse(pattern))
    except _SlowPattern as exc:
        return str(exc)
    return None


class _SlowPattern(Exception):
    pass


@functools.lru_cache(maxsize=16)
def _linkcheck_ignore(path: Path, schema: Path, stamps) -> Loaded:
    loaded = read_yaml(path, schema)
    if not isinstance(loaded.data, list):
        return Loaded([], loaded.problems, loaded.root)
    bad, extra = _bad_entries(loaded), []
    for i, entry in enumerate(loaded.data):
        if i in bad:
            continue
        try:
            re.compile(entry["pattern"])
        except re.error as exc:
            extra.append(
                Problem(
                    path,
                    line_of(loaded.root, [i, "pattern"]),
                    CODES["regex"],
                    f"pattern {entry['pattern']!r} is not a regular expression: "
                    f"{exc.msg} (at position {exc.pos}); escape special characters "
                    "such as . ? ( [ with a backslash",
                )
            )
            bad.add(i)
            continue
        slow = link_pattern_problem(entry["pattern"])
        if slow:
            extra.append(
                Problem(
                    path,
                    line_of(loaded.root, [i, "pattern"]),
                    CODES["regex"],
                    f"pattern {entry['pattern']!r} {slow}: the link checker could take for ever "
                    "on a link that almost matches; write the link's fixed parts, with at most "
                    "two [^/]+ and no repeated group",
                )
            )
            bad.add(i)
    return _keep(loaded, [i not in bad for i in range(len(loaded.data))], extra)


def linkcheck_ignore(data_dir: Path) -> Loaded:
    """data/linkcheck-ignore.yaml: the entries whose pattern compiles."""
    path = (Path(data_dir) / "linkcheck-ignore.yaml").resolve()
    schema = schema_path(data_dir, "linkcheck-ignore.schema.json")
    return _linkcheck_ignore(path, schema, (file_stamp(path), file_stamp(schema)))


# The parts of the front-matter schema that kb.pages.frontmatter fills in or relies on.
SCHEMA_NEEDS = ("title", "guide", "tags", "also_in")


def _unsafe_parts(schema: Any) -> list[tuple[list, str, str]]:
    """(path, code, message) of each part of a schema the build refuses to use.

    Every dict of the document is looked at, whether it is a subschema or a
    value (a "const" holding {"$ref": …} is refused too): a false alarm costs
    a contributor a minute, a missed reference publishes a file."""
    found = []
    stack: list[tuple[list, Any]] = [([], schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack += [([*path, i], item) for i, item in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            here = [*path, key]
            if key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
                found.append(
                    (
                        here,
                        CODES["meta"],
                        f"{key} {value!r} points outside this schema file; the build fetches "
                        'no file or URL: copy what it needs under "$defs" and write "#/$defs/<name>"',
                    )
                )
            elif key == "$id" and path and isinstance(value, str):
                found.append(
                    (
                        here,
                        CODES["meta"],
                        f"$id {value!r} inside the schema changes where its references point; "
                        "only the top of a schema file may have an $id: remove this one",
                    )
                )
            elif key == "pattern" and isinstance(value, str) and value not in SAFE_PATTERNS:
                found.append((here, CODES["pattern"], _pattern_message(value)))
            elif key == "patternProperties" and isinstance(value, dict):
                found += [
                    ([*here, p], CODES["pattern"], _pattern_message(p))
                    for p in value
                    if p not in SAFE_PATTERNS
                ]
            stack.append((here, value))
    return sorted(found, key=lambda f: [str(p) for p in f[0]])


def _depth(value: Any) -> int:
    """How deep lists and objects nest in a JSON value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in (node.values() if isinstance(node, dict) else node)]
    return deepest


def _pattern_message(pattern: str) -> str:
    return (
        f"pattern {pattern!r} is not one of the regular expressions the build knows to be "
        "safe (a pattern such as ^(a|a)+$ can keep the build busy for ever); use one of the "
        "patterns the other schema files use, or ask a maintainer to review it and add it to "
        "SAFE_PATTERNS in tools/kb/core/data.py"
    )


def _unresolved(schema: dict) -> list[tuple[list, str]]:
    """(path, message) of each #… reference that points at nothing in the schema."""
    resolver = REGISTRY.resolver_with_root(referencing.jsonschema.DRAFT202012.create_resource(schema))
    found, stack = [], [([], schema)]
    while stack:
        path, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if key in ("$ref", "$dynamicRef") and isinstance(value, str) and isinstance(node, dict):
                try:
                    resolver.lookup(value)
                except referencing.exceptions.Unresolvable:
                    found.append(([*path, key], f"{key} {value!r} points at nothing in this schema file"))
            stack.append(([*path, key], value))
    return found


@functools.lru_cache(maxsize=32)
def _schema_file(path: Path, stamp) -> Loaded:
    text, problem = read_text(path)
    if problem:
        return Loaded(None, [problem])
    schema, found, root = _schema_text(text)
    return Loaded(schema, [Problem(path, line, code, message) for line, code, message in found], root)


@functools.lru_cache(maxsize=32)
def _schema_text(text: str) -> tuple[Any, list[tuple[int, str, str]], yaml.Node | None]:
    """A schema file's text, checked: (schema or None, [(line, code, message)],
    node tree). Keyed by the text, so that the same schema in another folder
    (each test's copy of the project) is not checked against the meta-schema
    again."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [(exc.lineno, CODES["syntax"], f"not valid JSON: {exc.msg} (column {exc.colno})")], None
    except RecursionError:
        return None, [(1, CODES["unsafe"], "JSON nested too deep; flatten it")], None
    try:  # JSON is YAML: its node tree gives lines, and finds keys given twice
        root = parse_yaml(text)[0]
    except YamlProblem as exc:
        if exc.kind in ("duplicate", "unsafe"):
            return None, [(exc.line, CODES[exc.kind], exc.message)], None
        root = None
    # jsonschema walks a schema recursively: a deep one would end in
    # RecursionError (parse_yaml caps the depth too, when the text is also YAML)
    if _depth(schema) > MAX_DEPTH:
        return (
            None,
            [(1, CODES["unsafe"], f"JSON nested more than {MAX_DEPTH} levels deep; flatten it")],
            None,
        )
    # before check_schema: it compiles every pattern
    unsafe = _unsafe_parts(schema)
    if unsafe:
        return None, [(line_of(root, where), code, msg) for where, code, msg in unsafe], root
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = _where(exc.absolute_path)
        return (
            None,
            [
                (
                    line_of(root, exc.absolute_path),
                    CODES["meta"],
                    f"not a valid JSON schema: {where}{exc.message}",
                )
            ],
            None,
        )
    if isinstance(schema, dict):
        unresolved = _unresolved(schema)
        if unresolved:
            return None, [(line_of(root, where), CODES["meta"], msg) for where, msg in unresolved], root
    return schema, [], root


def schema_file(path: Path) -> Loaded:
    """A JSON schema file as written, checked; data None when unusable.

    Unusable: not JSON, not a JSON schema, a reference outside the file
    (KB046), a pattern not in SAFE_PATTERNS (KB047). The result is shared:
    copy it before changing it."""
    path = Path(path).resolve()
    return _schema_file(path, file_stamp(path))


@functools.lru_cache(maxsize=16)
def _front_matter_schema(path: Path, stamp) -> Loaded:
    loaded = schema_file(path)
    schema, root = loaded.data, loaded.root
    if schema is None:
        return loaded
    props = schema.get("properties") if isinstance(schema, dict) else None
    missing = [k for k in SCHEMA_NEEDS if not isinstance(props, dict) or not isinstance(props.get(k), dict)]
    if missing or schema.get("type") != "object":
        return Loaded(
            None,
            [
                Problem(
                    path,
                    line_of(root, ["properties"]),
                    CODES["meta"],
                    "the front-matter schema must describe an object "
                    f'("type": "object") with properties {", ".join(SCHEMA_NEEDS)}'
                    + (f"; missing: {', '.join(missing)}" if missing else ""),
                )
            ],
        )
    return loaded


def front_matter_schema(data_dir: Path) -> Loaded:
    """data/front-matter.schema.json as written; data None when unusable.

    The result is shared: copy it (``copy.deepcopy``) before filling it in.
    """
    path = (Path(data_dir) / "front-matter.schema.json").resolve()
    return _front_matter_schema(path, file_stamp(path))


# -- the Sphinx side ----------------------------------------------------------------


def schema_files(data_dir: Path) -> Loaded:
    """The problems of every schema file in data/schemas/ (the ones read_yaml
    uses), reported once however many data files each one checks."""
    folder = Path(data_dir) / "schemas"
    problems = [p for path in sorted(folder.glob("*.json")) for p in schema_file(path.resolve()).problems]
    return Loaded(None, problems)


CHECKED = (
    schema_files,
    tags,
    guides,
    glossary,
    glossary_old_anchors,
    search_synonyms,
    linkcheck_ignore,
    front_matter_schema,
)


def report(app, problems: list[Problem]) -> None:
    """Log each problem as a warning at data/<file>:LINE (relative to the confdir)."""
    root = Path(app.confdir).resolve()
    for p in problems:
        logger.warning(f"{p.code} {p.message}", location=p.location(root), type="kb", subtype="data")


def check_data(app, config) -> None:
    """Report every data file's problems once per build; feed linkcheck."""
    data_dir = Path(config.kb_data_dir)
    if not data_dir.is_absolute():
        data_dir = Path(app.confdir) / data_dir
    for reader in CHECKED:
        report(app, reader(data_dir).problems)
    ignore = linkcheck_ignore(data_dir).data
    config.linkcheck_ignore = [*config.linkcheck_ignore, *(e["pattern"] for e in ignore)]


def setup(app) -> dict[str, Any]:
    # where the data files are; conf.py sets it to the repository's data/
    app.add_config_value("kb_data_dir", "data", "env", types=[str])
    app.connect("config-inited", check_data)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
