"""Mermaid diagrams: checked at build time, served from the site itself, and
loaded by a static script (no inline ``<script>``).

Three jobs, each once per build:

- **Check (KB060).** mermaid draws in the reader's browser; a diagram with a
  syntax error used to pass the build and show "Syntax error in text". Every
  diagram is parsed with mermaid's own parser, by one Node process per build
  (``mermaid_check.mjs`` beside this file, JSON over stdin/stdout). Results
  are cached in the environment (kb.core.store) by a digest of the diagram text (and of the
  mermaid version, the checker and ``mermaid_init_config``), so an
  incremental build starts Node only for diagram text it has not seen; a
  broken diagram keeps failing every build until it is fixed, re-read or not.
  Node or mermaid missing, or a parse that takes longer than
  ``kb_mermaid_timeout`` seconds, is a warning too (``-W`` fails).
- **Serve.** The npm package ``mermaid`` (pinned in package-lock.json,
  installed by ``npm ci``) ships an ESM build that imports its diagram types
  from a ``chunks/`` folder on demand. That build, the whole chunk folder and
  no source maps, is copied to ``<outdir>/_static/vendor/mermaid/``; nothing
  comes from a CDN.
- **Load.** sphinxcontrib-mermaid's own setup would write an inline
  ``<script type="module">`` (import + initialisation) into pages, which a
  Content-Security-Policy without ``'unsafe-inline'`` blocks; it has no
  option for an external loader (mgaitan/sphinxcontrib-mermaid#222). So it
  is not set up as an extension: this one registers its directive and node
  classes, and the config values of its README that this site honours
  (MERMAID_CONFIG, same names and defaults). Pages with a diagram load
  ``_static/kb-mermaid.js``, with those settings in a data attribute of its
  ``<script>`` tag, and ``_static/kb-mermaid.css``. Other pages load neither.

What this relies on in sphinxcontrib-mermaid: the ``mermaid`` node class
with the diagram text in ``node["code"]``, the ``Mermaid`` directive class
and its visitors for other formats than HTML. tests/test_mermaid.py fails if
any of this changes.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging
from sphinxcontrib.mermaid import (
    Mermaid,
    latex_visit_mermaid,
    man_visit_mermaid,
    mermaid,
    texinfo_visit_mermaid,
    text_visit_mermaid,
)

from kb.core.store import documents, site
from kb.guard import untrusted as kb_untrusted

logger = logging.getLogger(__name__)

ENTRY = "mermaid.esm.min.mjs"
CHUNKS = Path("chunks") / "mermaid.esm.min"
TARGET = Path("_static") / "vendor" / "mermaid"
CHECKER = Path(__file__).with_name("mermaid_check.mjs")
SCRIPT = "kb-mermaid.js"
STYLE = "kb-mermaid.css"
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
        result = super().run(**kwargs)
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
    fingerprint = _fingerprint(app)
    keys = {code: _digest(fingerprint, code) for found in diagrams.values() for _, code, _ in found}
    cache = {key: error for key, error in site(env).get("mermaid_parsed", {}).items() if key in keys.values()}
    unseen = sorted({code for code, key in keys.items() if key not in cache})
    stuck = None
    if unseen:
        results, stuck = run_checker(app, unseen)
        cache.update({keys[code]: error for code, error in results.items()})
    site(env)["mermaid_parsed"] = cache
    _report(app, diagrams, keys, cache, stuck)


def _report(app, diagrams, keys, cache, stuck: str | None) -> None:
    for docname in sorted(diagrams):
        for line, code, zoom in diagrams[docname]:
            location = (docname, line)
            error = cache.get(keys[code])
            if error:
                _warn(
                    "KB060 mermaid diagram does not parse: %s; fix the diagram's syntax "
                    '(readers would see "Syntax error in text")',
                    summary(error),
                    location=location,
                )
            elif code == stuck:
                _warn(
                    "KB060 mermaid took longer than %s s to parse this diagram; split it or simplify it",
                    app.config.kb_mermaid_timeout,
                    location=location,
                )
            if zoom:
                _warn(
                    "KB060 the :zoom: option of mermaid is not supported here (it loads d3 "
                    "from a CDN); remove it",
                    location=location,
                )


# -- writing: the markup, the script and the files --------------------------------


def visit_mermaid_html(self, node) -> None:
    """The diagram text in ``<pre class="mermaid">``, which kb-mermaid.js draws."""
    classes = ["mermaid"] + ([f"align-{node['align']}"] if "align" in node else [])
    ident = f' id="{node["ids"][0]}"' if len(node.get("ids", [])) == 1 else ""
    self.body.append(f'<pre{ident} class="{" ".join(classes)}">{self.encode(node["code"])}</pre>\n')
    raise nodes.SkipNode


def browser_settings(config) -> dict[str, Any]:
    """What kb-mermaid.js needs from conf.py (sphinxcontrib-mermaid's values)."""
    return {
        "init": config.mermaid_init_config,
        "lightTheme": config.mermaid_light_theme,
        "darkTheme": config.mermaid_dark_theme,
        "width": config.mermaid_width,
        "height": config.mermaid_height,
        "fullscreen": str(config.mermaid_fullscreen).lower() == "true",
        "button": config.mermaid_fullscreen_button,
        "buttonOpacity": f"{config.mermaid_fullscreen_button_opacity}%",
    }


def add_assets(app, pagename, templatename, context, doctree) -> None:
    """kb-mermaid.js and .css on pages with a diagram, and only there."""
    if app.builder.format != "html" or doctree is None or doctree.next_node(mermaid) is None:
        return
    app.add_css_file(STYLE)
    settings = json.dumps(browser_settings(app.config), ensure_ascii=False, default=str)
    app.add_js_file(SCRIPT, type="module", **{"data-kb-mermaid": settings})
    # Fetch mermaid alongside kb-mermaid.js rather than after it has been
    # parsed. Not through add_css_file: its ?v= checksum would make the URL
    # differ from the one kb-mermaid.js imports, and the file load twice.
    entry = context["pathto"](f"{TARGET.as_posix()}/{ENTRY}", resource=True)
    context["metatags"] = context.get("metatags", "") + f'\n<link rel="modulepreload" href="{entry}" />'


def on_config_inited(app, config) -> None:
    if config.mermaid_d3_zoom:
        _warn("KB060 mermaid_d3_zoom is not supported here (it loads d3 from a CDN); remove it from conf.py")


def files_to_copy(dist: Path) -> list[Path]:
    """The ESM entry point and every chunk it may import (no source maps)."""
    return [dist / ENTRY, *sorted((dist / CHUNKS).glob("*.mjs"))]


def on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    dist = Path(app.confdir) / "node_modules" / "mermaid" / "dist"
    if not (dist / ENTRY).exists():
        _warn("mermaid is not installed (%s): run `npm ci` (make html does)", dist / ENTRY)
        return
    out = Path(app.outdir) / TARGET
    for src in files_to_copy(dist):
        dest = out / src.relative_to(dist)
        if dest.exists() and dest.stat().st_size == src.stat().st_size:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


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
    "mermaid_width": ("100%", "html"),
    "mermaid_height": ("500px", "html"),
    "mermaid_fullscreen": (True, "html"),
    "mermaid_fullscreen_button": ("⛶", "html"),
    "mermaid_fullscreen_button_opacity": ("50", "html"),
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
    app.connect("html-page-context", add_assets)
    app.connect("build-finished", on_build_finished)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
