"""Mermaid diagrams: drawn to SVG ahead of time, checked at build time, and
served as images: pages load no mermaid script.

- **Draw (make diagrams).** Drawing needs a browser, and Read the Docs has
  none. ``tools/render_diagrams.py`` draws every diagram of the pages in
  Debian's chromium (Playwright, mermaid's npm build from node_modules), in a
  light and a dark variant, with SVG text labels (no ``<foreignObject>``),
  sanitized and checked like any written SVG (kb.guard.html); the SVGs are
  committed in ``docs/_diagrams/`` (``kb_diagrams_dir``, under the source
  folder). A file is named by a digest of what it is drawn from (the
  diagram text, the mermaid version pinned in package.json, the drawing
  settings: :func:`render_settings`, :data:`RENDERER`) and its variant:
  ``<digest>-light.svg``, ``<digest>-dark.svg``. So an edited diagram has no
  SVG until it is drawn again.
- **Check (KB110, KB060).** The build needs no browser: a diagram whose SVGs
  are missing (new, edited, or drawn with another mermaid) is KB110 at its
  line, "run make diagrams"; ``-W`` fails the build, and CI with it. Such a
  diagram is first parsed with mermaid's own parser, by one Node process per
  build (``mermaid_check.mjs`` beside this file, JSON over stdin/stdout), so
  that a syntax error is KB060 with mermaid's message rather than a request
  to draw it. Results are cached in the environment (kb.core.store) by a
  digest of the diagram text, the mermaid version, the checker and
  ``mermaid_init_config``; a diagram with its SVGs is never parsed here
  (make diagrams parsed it when it drew it). Node or mermaid missing, or a
  parse that takes longer than ``kb_mermaid_timeout`` seconds, is a warning
  too.
- **Write.** A diagram is a ``<div class="kb-diagram">``: each variant as an
  ``<img>`` in a link to the SVG file (the full-size view), shown in the
  theme it belongs to by furo's ``only-light`` / ``only-dark`` classes
  (which follow ``data-theme`` on ``<body>`` and, in "auto", the system's
  colour scheme), and the diagram's source in a ``<details>`` (the text
  version, for screen readers and as a fallback). The SVGs a build uses are
  copied to ``<outdir>/_images/``. Books: epub gets the light variant only;
  LaTeX and Texinfo show the source (see :func:`svg_paths` for a node's SVG
  files).

sphinxcontrib-mermaid's own setup would write an inline ``<script
type="module">`` into pages, and load mermaid (an option to move that script
into a file, for CSP, was asked in mgaitan/sphinxcontrib-mermaid#222 and not
merged); it is not set up as an extension: this one registers its directive and node classes, and the config
values of its README that this site honours (MERMAID_CONFIG, same names and
defaults). What this relies on in it: the ``mermaid`` node class with the
diagram text in ``node["code"]`` (and ``"alt"``), the ``Mermaid`` directive
class and its visitors for other formats than HTML. tests/test_ext_mermaid.py
fails if any of this changes.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinxcontrib.mermaid import (
    Mermaid,
    latex_visit_mermaid,
    man_visit_mermaid,
    mermaid,
    texinfo_visit_mermaid,
    text_visit_mermaid,
)

from kb.core.builders import serves_pages
from kb.core.i18n import _
from kb.core.log import getLogger
from kb.core.store import documents, site
from kb.guard import untrusted as kb_untrusted

logger = getLogger(__name__)

CHECKER = Path(__file__).with_name("mermaid_check.mjs")
STYLE = "kb-mermaid.css"
# Bump when tools/render_diagrams.py changes what it writes: every SVG is
# then out of date, and make diagrams draws them all again.
RENDERER = "3"
VARIANTS = ("light", "dark")
# mermaid's dark theme writes edge labels #ccc on #585858 (contrast 4.4,
# under WCAG AA's 4.5): a darker label background gives 7.
DARK_VARIABLES = {"edgeLabelBackground": "#3b3b3b"}
IMAGES = "_images"
# each variant's background: furo's page colour in that theme (an SVG opened
# on its own, the full-size view, is not on a white page in the dark theme)
BACKGROUNDS = {"light": "#ffffff", "dark": "#131416"}
# the longest lines of mermaid's message kept in a warning
MESSAGE_LIMIT = 400


def _warn(message: str, *args, location=None) -> None:
    logger.warning(message, *args, location=location, type="kb", subtype="mermaid")


# -- reading: each diagram with its line -----------------------------------------


REMOTE_IN_DIAGRAM = re.compile(
    r"(?:src\s*=|img\s*:|url\s*\(|@import)\s*['\"]?\s*(?:[a-z][a-z0-9+.-]*:)?//[^\s'\")]+", re.IGNORECASE
)


class LocatedMermaid(Mermaid):
    """sphinxcontrib-mermaid's directive, with the directive's line on its node.

    Upstream sets no source or line on the ``mermaid`` node, and MyST fills
    them in only for a node the directive returns itself, not for one inside
    the figure that ``:caption:`` wraps it in."""

    def run(self, **kwargs) -> list[nodes.Node]:
        if self.arguments:
            # upstream reads any path it is given (a file of .git/, /dev/zero)
            logger.warning(
                "KB011 mermaid diagram read from the file %r: write the diagram in the "
                "page, inside the mermaid block",
                self.arguments[0],
                location=kb_untrusted.directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            return []
        remote = REMOTE_IN_DIAGRAM.search("\n".join(self.content))
        if remote:
            # mermaid renders these in the reader's browser: an <img> label, an
            # image shape, url() in an init directive or themeCSS
            logger.warning(
                "KB014 the diagram loads %r from another host in the reader's browser; "
                "draw it without remote images",
                remote.group(0)[:80],
                location="%s:%s" % self.state_machine.get_source_and_line(self.lineno),
                type="kb",
                subtype="untrusted",
            )
            return []
        if "config" in self.options:
            try:
                json.loads(self.options["config"])
            except ValueError as exc:  # upstream would stop the build with a traceback
                logger.warning(
                    "KB060 mermaid :config: is not valid JSON (%s)",
                    exc,
                    location="%s:%s" % self.state_machine.get_source_and_line(self.lineno),
                    type="kb",
                    subtype="mermaid",
                )
                return []
        result = kb_untrusted.caption_renders_nothing(self, lambda: super(LocatedMermaid, self).run(**kwargs))
        source, line = self.state_machine.get_source_and_line(self.lineno)
        for top in result:
            for node in top.findall(mermaid):
                if node.line is None:
                    node.source, node.line = source, line
        return result


def collect_diagrams(app, doctree: nodes.document) -> None:
    """The ``mermaid`` store: docname -> [(line, code, zoom)] of its diagrams."""
    found = [(node.line, node["code"], "zoom" in node) for node in doctree.findall(mermaid)]
    if found:
        documents(app.env, "mermaid")[app.env.docname] = found


# -- the SVG files: named by what they are drawn from ------------------------------


def mermaid_version(confdir: str | Path) -> str:
    """The mermaid version package.json pins (what ``npm ci`` installs)."""
    package = Path(confdir) / "package.json"
    if not package.exists():
        return "none"
    pins = package_pins(package)
    return "unreadable" if pins is None else str(pins.get("mermaid", "none"))


def package_pins(path: Path) -> dict | None:
    """package.json's dependencies and devDependencies, read as npm reads
    them (a byte order mark is skipped, a null section is none), or None
    when they cannot be (on_config_inited reports it, KB112)."""
    from kb.core import data as kb_data

    text, problem = kb_data.read_text(path)  # a regular file of a data file's size
    if problem is not None:
        return None
    try:
        package = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
        return None
    if not isinstance(package, dict):
        return None
    pins: dict = {}
    for key in ("devDependencies", "dependencies"):
        section = package.get(key) or {}
        if not isinstance(section, dict):
            return None
        pins.update(section)
    return pins


def render_settings(config) -> dict[str, dict[str, Any]]:
    """The ``mermaid.initialize()`` options of each variant, as make diagrams
    draws it: ``mermaid_init_config`` and the light or dark theme, with text
    labels in SVG (``htmlLabels: false``: an HTML label is a
    ``<foreignObject>``, which kb.guard.html refuses), and ids and strokes
    that do not change from one drawing to the next."""
    init = {
        **config.mermaid_init_config,
        "startOnLoad": False,
        "htmlLabels": False,
        "deterministicIds": True,
        "handDrawnSeed": 1,  # shapes drawn with rough.js: the same strokes each time
    }
    init["flowchart"] = {**init.get("flowchart", {}), "htmlLabels": False}
    variables = init.get("themeVariables", {})
    return {
        "light": {**init, "theme": config.mermaid_light_theme, "darkMode": False},
        "dark": {
            **init,
            "theme": config.mermaid_dark_theme,
            "darkMode": True,
            "themeVariables": {**variables, **DARK_VARIABLES},
        },
    }


def diagram_digest(code: str, settings: dict, version: str) -> str:
    """What a diagram's SVG files are named by: its text and all it is drawn with."""
    key = json.dumps([RENDERER, version, settings, code], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def svg_name(digest: str, variant: str) -> str:
    return f"{digest}-{variant}.svg"


def diagrams_dir(app) -> Path:
    """The committed SVGs: ``kb_diagrams_dir`` under the source folder."""
    return Path(app.srcdir) / app.config.kb_diagrams_dir


def svg_paths(app, code: str) -> dict[str, Path]:
    """The SVG file of each variant of the diagram ``code`` (a ``mermaid``
    node's ``node["code"]``), in the source folder; missing files are KB110."""
    digest = diagram_digest(code, render_settings(app.config), mermaid_version(app.confdir))
    folder = diagrams_dir(app)
    return {variant: folder / svg_name(digest, variant) for variant in VARIANTS}


SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


def svg_size(path: Path) -> tuple[str, str] | None:
    """The width and height make diagrams writes on the root element."""
    match = SIZE.search(path.read_text(encoding="utf-8", errors="replace")[:4000])
    return (match.group(1), match.group(2)) if match else None


# -- checking: one Node process for the diagram texts not seen before -------------


def _fingerprint(app) -> str:
    """What a parse result depends on besides the diagram text."""
    package = Path(app.confdir) / "node_modules" / "mermaid" / "package.json"
    version = json.loads(package.read_text(encoding="utf-8")).get("version") if package.exists() else "none"
    config = json.dumps(app.config.mermaid_init_config, sort_keys=True, default=str)
    return hashlib.sha256(f"{version}\0{config}\0".encode() + CHECKER.read_bytes()).hexdigest()


def _digest(fingerprint: str, code: str) -> str:
    return hashlib.sha256(f"{fingerprint}\0{code}".encode()).hexdigest()


def summary(message: str) -> str:
    """The first line of mermaid's message, and its last when that says what
    was expected (the excerpt and ``---^`` caret lines between are left out:
    they mean nothing on one line)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "no message"
    kept = lines[:1]
    if len(lines) > 1 and not lines[-1].endswith("^"):
        kept.append(lines[-1])
    text = " ".join(kept)
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + " …"


def _answers(stdout: str | bytes | None) -> list[dict]:
    """The JSON lines the checker wrote (the last may be cut off by a kill)."""
    if isinstance(stdout, bytes):
        stdout = stdout.decode("utf-8", "replace")
    found = []
    for line in (stdout or "").splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def run_checker(app, codes: list[str]) -> tuple[dict[str, str | None], str | None]:
    """Parse ``codes`` in one Node process: ({code: error or None}, the code
    that was still being parsed when the time ran out, if it did)."""
    node = shutil.which(app.config.kb_mermaid_node)
    if node is None:
        _warn(
            "Node.js (%r) is not installed: it is needed to check the mermaid diagrams; "
            "install Node 20 or later, then run `npm ci`",
            app.config.kb_mermaid_node,
        )
        return {}, None
    logger.info("kb_mermaid: parsing %d mermaid diagram(s) with Node", len(codes))
    request = json.dumps({"config": app.config.mermaid_init_config, "diagrams": codes}, default=str)
    timed_out = False
    try:
        proc = subprocess.run(
            [node, str(CHECKER)],
            input=request.encode(),
            capture_output=True,
            timeout=app.config.kb_mermaid_timeout,
            cwd=CHECKER.parent,
        )
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        timed_out, stdout, stderr = True, exc.stdout, exc.stderr
    answers = _answers(stdout)
    fatal = next((a["fatal"] for a in answers if "fatal" in a), None)
    if fatal is not None:
        _warn(
            "mermaid could not be loaded in Node to check the diagrams (%s): run `npm ci` (make html does)",
            summary(fatal),
        )
        return {}, None
    results = {codes[a["i"]]: a["error"] for a in answers if isinstance(a.get("i"), int)}
    if timed_out:
        stuck = next((code for code in codes if code not in results), None)
        return results, stuck
    if len(results) < len(codes):
        tail = (stderr or b"").decode("utf-8", "replace").strip().splitlines()[-3:]
        _warn(
            "the mermaid checker (%s) stopped before it parsed every diagram: %s",
            CHECKER.name,
            " ".join(tail) or f"exit status {proc.returncode}",
        )
    return results, None


def on_env_updated(app, env) -> None:
    diagrams = documents(env, "mermaid")
    if not diagrams or app.builder.format != "html":
        return
    drawn = {
        code: all(path.exists() for path in svg_paths(app, code).values())
        for found in diagrams.values()
        for _, code, _ in found
    }
    # only a diagram without its SVGs is parsed here: make diagrams parsed the others
    fingerprint = _fingerprint(app)
    keys = {code: _digest(fingerprint, code) for code, done in drawn.items() if not done}
    cache = {key: error for key, error in site(env).get("mermaid_parsed", {}).items() if key in keys.values()}
    unseen = sorted({code for code, key in keys.items() if key not in cache})
    stuck = None
    if unseen:
        results, stuck = run_checker(app, unseen)
        cache.update({keys[code]: error for code, error in results.items()})
    site(env)["mermaid_parsed"] = cache
    _report(app, diagrams, keys, cache, stuck)


def _report(app, diagrams, keys, cache, stuck: str | None) -> None:
    folder = diagrams_dir(app)
    try:
        shown = folder.relative_to(Path(app.confdir)).as_posix()
    except ValueError:
        shown = str(folder)
    for docname in sorted(diagrams):
        for line, code, zoom in diagrams[docname]:
            location = (docname, line)
            if code in keys:
                error = cache.get(keys[code])
                if error:
                    _warn(
                        "KB060 mermaid diagram does not parse: %s; fix the diagram's syntax",
                        summary(error),
                        location=location,
                    )
                elif code == stuck:
                    _warn(
                        "KB060 mermaid took longer than %s s to parse this diagram; split it or simplify it",
                        app.config.kb_mermaid_timeout,
                        location=location,
                    )
                else:
                    missing = ", ".join(p.name for p in svg_paths(app, code).values() if not p.exists())
                    _warn(
                        "KB110 the diagram has no SVG drawn from its current text (%s/%s): "
                        "run `make diagrams` and commit %s/",
                        shown,
                        missing,
                        shown,
                        location=location,
                    )
            if zoom:
                _warn(
                    "KB060 the :zoom: option of mermaid is not supported here (diagrams are "
                    "images; each links to its full-size SVG); remove it",
                    location=location,
                )


# -- writing: the markup and the files ----------------------------------------------


def _variants(builder) -> tuple[str, ...]:
    """Both variants on the site; one in a book (no theme to follow there)."""
    return VARIANTS if serves_pages(builder) else ("light",)


def alt_text(node) -> str:
    """The images' text: the ``:alt:`` option, or the caption, and where the
    text version is."""
    if node.get("alt"):
        return node["alt"]
    figure = node.parent if isinstance(node.parent, nodes.figure) else None
    caption = figure.next_node(nodes.caption) if figure is not None else None
    if caption is not None and caption.astext().strip():
        return _("图示：%s（文字版见下方的“图示源码”）") % caption.astext().strip()
    return _("图示（文字版见下方的“图示源码”）")


def resolve_images(app, doctree, docname: str) -> None:
    """Each diagram's SVG files, as URLs from this page, on its node (the
    HTML visitor writes them); none when a file is missing (KB110)."""
    if app.builder.format != "html":
        return
    here = posixpath.dirname(app.builder.get_target_uri(docname).split("#")[0]) or "."
    for node in doctree.findall(mermaid):
        paths = svg_paths(app, node["code"])
        images = []
        for variant in _variants(app.builder):
            path = paths[variant]
            size = svg_size(path) if path.exists() else None
            if size is None:
                images = []
                break
            uri = posixpath.relpath(f"{IMAGES}/{path.name}", here)
            images.append({"variant": variant, "uri": uri, "width": size[0], "height": size[1]})
        node["kb_images"] = images
        node["kb_alt"] = alt_text(node)


# A diagram's words: the quoted labels of its nodes and edges ("训练出问题"),
# and unquoted ones in brackets or bars (A[文字], -->|是|); <br/> is a space.
_LABEL = re.compile(r'"([^"\n]*)"|\|([^|"\n]+)\||[\[({]([^\[\](){}"|\n<>]+)[\])}]')
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def diagram_words(code: str) -> str:
    """The words a reader sees in the drawn diagram, in the order written,
    each once: what the search indexes of it (its source, with the mermaid
    syntax, is kept out of the index; a result would show ``A -- "…" --> B``)."""
    words = []
    for match in _LABEL.finditer(code):
        text = " ".join(_BREAK.sub(" ", next(g for g in match.groups() if g is not None)).split())
        if text and text not in words:
            words.append(text)
    return " ".join(words)


def visit_mermaid_html(self, node) -> None:
    """The diagram's images, each a link to its SVG, and its source; the
    search indexes the diagram's words (Pagefind's attribute indexing)."""
    images = node.get("kb_images") or []
    classes = ["kb-diagram"] + ([f"align-{node['align']}"] if "align" in node else [])
    ident = f' id="{node["ids"][0]}"' if len(node.get("ids", [])) == 1 else ""
    alt = html.escape(node.get("kb_alt", ""), quote=True)
    words = html.escape(diagram_words(node["code"]), quote=True)
    indexed = (
        f' data-kb-diagram-words="{words}" data-pagefind-index-attrs="data-kb-diagram-words"' if words else ""
    )
    self.body.append(f'<div{ident} class="{" ".join(classes)}"{indexed}>\n')
    for image in images:
        shown = f" only-{image['variant']}" if len(images) > 1 else ""
        uri = html.escape(image["uri"], quote=True)
        self.body.append(
            f'<a class="kb-diagram-image{shown}" href="{uri}">'
            f'<img src="{uri}" alt="{alt}" width="{image["width"]}" height="{image["height"]}" '
            'loading="lazy" decoding="async" /></a>\n'
        )
    summary_text = html.escape(_("图示源码（文字版）"))
    opened = "" if images else " open"
    self.body.append(
        f'<details class="kb-diagram-source"{opened}><summary>{summary_text}</summary>'
        f"<pre>{self.encode(node['code'])}</pre></details>\n</div>\n"
    )
    raise nodes.SkipNode


def add_assets(app, pagename, templatename, context, doctree) -> None:
    """kb-mermaid.css on pages with a diagram, and only there (no script):
    the pages whose diagrams were noted when they were read (walking every
    doctree again costs about 10 ms a page)."""
    if app.builder.format != "html" or doctree is None or not documents(app.env, "mermaid").get(pagename):
        return
    app.add_css_file(STYLE)


def on_config_inited(app, config) -> None:
    if config.mermaid_d3_zoom:
        _warn("KB060 mermaid_d3_zoom is not supported here (it loads d3 from a CDN); remove it from conf.py")
    package = Path(app.confdir) / "package.json"
    if package.is_file() and not package.is_symlink() and package_pins(package) is None:
        logger.warning(
            "KB112 package.json cannot be read for the mermaid version the diagrams were drawn with "
            "(not JSON, not UTF-8, or dependencies that are not a mapping of names to versions); "
            "fix it as npm reads it",
            location="package.json:1",
            type="kb",
            subtype="mermaid",
        )


def copy_svgs(app):
    """The SVGs of the build's diagrams to ``<outdir>/_images/`` (during the
    builder's finish: before an epub is packed; singlehtml at the end)."""
    if app.builder.format != "html":
        return []
    out = Path(app.outdir) / IMAGES
    codes = {code for found in documents(app.env, "mermaid").values() for _, code, _ in found}
    for code in sorted(codes):
        paths = svg_paths(app, code)
        for variant in _variants(app.builder):
            src, dest = paths[variant], out / paths[variant].name
            if not src.exists() or (dest.exists() and dest.stat().st_size == src.stat().st_size):
                continue  # a missing SVG is KB110; the same name is the same drawing
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    return []


# sphinxcontrib-mermaid's config values (its README) that this site honours,
# name -> (default, rebuild), and the mermaid-cli ones its LaTeX and Texinfo
# visitors read (registered here with its defaults). Its others (output
# format, CDN versions and local copies) have no effect here, so they are
# not offered.
MERMAID_CONFIG = {
    "mermaid_init_config": ({"startOnLoad": False}, "html"),
    "mermaid_config": (None, "env"),  # read by its directive
    "mermaid_light_theme": ("default", "html"),
    "mermaid_dark_theme": ("dark", "html"),
    "mermaid_d3_zoom": (False, "html"),  # refused (KB060)
    "mermaid_cmd": ("mmdc", "html"),
    "mermaid_cmd_shell": ("False", "html"),
    "mermaid_params": ([], "html"),
    "mermaid_verbose": (False, "html"),
    "mermaid_sequence_config": (None, "html"),
    "mermaid_pdfcrop": ("", "html"),
}


def diagrams_as_source(app, doctree, docname: str) -> None:
    """LaTeX and Texinfo draw a diagram with mermaid-cli (``mermaid_cmd``),
    which installs a browser of its own and is not installed here: without
    it, the book shows the diagram's source instead of a warning per diagram."""
    if app.builder.format not in ("latex", "texinfo") or shutil.which(app.config.mermaid_cmd):
        return
    for node in list(doctree.findall(mermaid)):
        node.replace_self(nodes.literal_block(node["code"], node["code"], language="text"))


def setup(app) -> dict[str, Any]:
    for name, (default, rebuild) in MERMAID_CONFIG.items():
        app.add_config_value(name, default, rebuild)
    app.add_config_value("kb_mermaid_node", "node", "", types=[str])
    app.add_config_value("kb_mermaid_timeout", 120, "", types=[int])
    app.add_config_value("kb_diagrams_dir", "_diagrams", "html", types=[str])
    app.add_directive("mermaid", LocatedMermaid)
    app.add_node(
        mermaid,
        html=(visit_mermaid_html, None),
        latex=(latex_visit_mermaid, None),
        texinfo=(texinfo_visit_mermaid, None),
        text=(text_visit_mermaid, None),
        man=(man_visit_mermaid, None),
    )
    app.setup_extension("kb.core.store")
    app.connect("doctree-read", collect_diagrams)
    app.connect("config-inited", on_config_inited)
    app.connect("env-updated", on_env_updated)
    app.connect("doctree-resolved", diagrams_as_source)
    app.connect("doctree-resolved", resolve_images)
    app.connect("html-page-context", add_assets)
    app.connect("html-collect-pages", copy_svgs)
    # singlehtml collects no pages: copied when the build ends, before
    # kb.guard.html reads the written files (the default priority, 500)
    app.connect("build-finished", lambda app, exc: exc is None and copy_svgs(app), priority=400)
    # env_version: bumped when the written HTML changes (a full rebuild)
    return {"version": "3", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
