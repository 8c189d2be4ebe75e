"""Sphinx configuration for the 51 算力 knowledge base.

Settings only. Custom behaviour lives in the ``kb`` package under tools/
(one extension per module, grouped by concern), registered below.
Build: sphinx-build -c . docs _build/html  (see the Makefile).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tools"))  # the kb package: the one sys.path edit

from kb.guard.locale import prepared_locale_dirs  # noqa: E402 (needs the path above)

# -- Project information -----------------------------------------------------

project = "51 算力知识库"
author = "51 算力"
copyright = "51 算力"
# The edition: the epub's metadata and the text builders need one (Sphinx
# leaves it empty). A fixed string, so that a build does not depend on the day.
version = "2026.12"
release = version
language = "zh_CN"
# furo ships no Chinese: locale/zh_CN/LC_MESSAGES/sphinx.po translates its
# interface (Sphinx compiles it to .mo when it changes, gettext_auto_build);
# kb.po there would translate our extensions' strings (kb.core.i18n).
# Sphinx reads locale_dirs as soon as this file has run, before any extension
# checks them: it gets a folder of the build's own, with the catalogs compiled
# from locale/ once they have passed kb.guard.locale's checks (which say why
# not, and stop the build), and never locale/ itself.
kb_locale_dirs = [str(ROOT / "locale")]
kb_locale_build_dir = str(ROOT / "_build" / "locale")
locale_dirs = prepared_locale_dirs(kb_locale_dirs, language, kb_locale_build_dir)

# -- General configuration ---------------------------------------------------

extensions = [
    "kb.core.log",
    "kb.guard.committed_build",
    "kb.guard.rebuild_failed",
    "myst_parser",
    "sphinx_copybutton",
    "kb.core.data",
    "kb.core.anchors",
    "kb.core.labels",
    "kb.core.i18n",
    "kb.guard.locale",
    "kb.pages.frontmatter",
    "kb.guard.raw_html",
    "kb.guard.untrusted",
    "kb.guard.templates",
    "kb.guard.silent_loss",
    "kb.guard.html",
    "kb.pages.listings",
    "kb.editorial.notes",
    "kb.editorial.claims",
    "kb.pages.glossary",
    "kb.pages.tags",
    "kb.search.index",
    "kb.pages.navigation",
    "kb.calc.directive",
    "kb.site.mermaid",
    "kb.site.features",
    "kb.site.llms",
    "kb.site.book",
    "kb.site.build_speed",
]

# The pages are MyST Markdown only.
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/.import-*", "**/README.md"]
# Every reference must resolve (the Makefile also passes -n).
nitpicky = True
# A picture is the file the page names: Sphinx would publish a.zh_CN.svg
# beside a.svg in its place, a swap no reviewer of the page sees.
figure_language_filename = "{root}{ext}"
# {sectionauthor}, {codeauthor} and {moduleauthor} show the name they give
# (节作者：…): Sphinx's default drops it from every output without a word.
show_authors = True

# -- MyST ----------------------------------------------------------------------

# Not "substitution": MyST evaluates {{ … }} as Jinja without a sandbox, and
# every pull request is built with CI's credentials (kb.guard.untrusted, KB016).
myst_enable_extensions = [
    "colon_fence",
    "deflist",
    "fieldlist",
]
# Anchors for every heading, made from their titles, in pinyin for Chinese
# (kb.core.anchors): ASCII, and they do not shift when a section is added above.
myst_heading_anchors = 6
# MyST's documented import-path form: a function here would make Sphinx warn
# that it cannot cache the configuration (config.cache).
myst_heading_slug_func = "kb.core.anchors.heading_slug"

# -- Knowledge-base data ----------------------------------------------------------

kb_data_dir = str(ROOT / "data")

# -- Options for HTML output ---------------------------------------------------

html_theme = "furo"
# The production address: canonical links, sitemap.xml, feed.xml, og:url.
html_baseurl = "https://kb.51suanli.com/"
# Where this build is served: the 404 page's links resolve from its path. Read
# the Docs serves a version under /zh-cn/<version>/ and names it in its builds'
# READTHEDOCS_CANONICAL_URL (its documented environment variable).
kb_served_at = os.environ.get("READTHEDOCS_CANONICAL_URL", html_baseurl)
html_title = "51 算力知识库"
html_short_title = "51 算力"
html_static_path = ["_static"]
# _headers: the HTTP headers (Content-Security-Policy …) for hosts that read
# that file, at the site's root; kb.guard.html checks the pages against it.
html_extra_path = ["_static/_headers"]
templates_path = ["_templates"]
# Sphinx's template bridge, refusing a template name that leaves the template
# folders (kb.guard.templates: its loader would read any file of the machine)
template_bridge = "kb.guard.templates.ConfinedTemplates"
html_css_files = ["kb.css"]
# Local favicon: without one, browsers request /favicon.ico and log a 404.
html_favicon = "_static/favicon.svg"
# Per-page dates come from git (kb.site.features), not from the build time.
html_last_updated_fmt = "%Y-%m-%d"
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": True,
    # "Edit this page" links to the file on GitHub
    "source_repository": "https://github.com/51suanli/kb/",
    "source_branch": "main",
    "source_directory": "docs/",
}

# -- Other builders -------------------------------------------------------------

# The HTTP headers file is for web hosts; a book has no use for it (and epub
# warns about its unknown type).
epub_exclude_files = ["_headers", "_static/_headers"]
epub_basename = "51suanli-kb"

# -- The book (make epub, make pdf) -------------------------------------------------

# make epub and make pdf build with -t book: the root page becomes the book's
# contents, the guides then these pages (kb.site.book); the all-articles
# listing is for the website only.
kb_book = tags.has("book")  # noqa: F821 (Sphinx provides tags to conf.py)
kb_book_back_matter = ["glossary", "errata"]
if kb_book:
    exclude_patterns.append("articles.md")
    # the site's styles are furo's; the epub has its own (kb.site.book)
    html_css_files = []
# The books the home page links to (下载 PDF / EPUB) when they exist as the site
# is built: paths from the site's output folder (make builds them beside it).
kb_book_files = ["../latex/51suanli-kb.pdf", "../epub/51suanli-kb.epub"]

# the site's own styles and icons have no use in a book
epub_exclude_files += ["_static/kb.css", "_static/kb-mermaid.css", "_static/favicon.svg"]
epub_title = project
epub_language = "zh-CN"  # BCP 47 (nav.xhtml), not Sphinx's zh_CN
epub_show_urls = "no"
epub_use_index = False

latex_engine = "xelatex"
latex_documents = [(root_doc, "51suanli-kb.tex", project, author, "manual")]
# a guide is a part, an article a chapter
latex_toplevel_sectioning = "part"
latex_show_urls = "no"
latex_domain_indices = False
# no index: makeindex, not xindy (not a Debian dependency of TeX Live's xetex)
latex_use_xindy = False
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    # read on a screen: no blank pages before chapters
    "extraclassoptions": "openany,oneside",
    # Latin text in TeX Gyre, code in DejaVu Sans Mono; Chinese in Noto CJK SC (xeCJK);
    # what Noto CJK lacks (emoji) from Symbola. All from Debian packages (.ci/run).
    "fontpkg": (ROOT / "tools" / "kb" / "site" / "latex" / "fonts.tex").read_text(encoding="utf-8"),
    "preamble": (ROOT / "tools" / "kb" / "site" / "latex" / "preamble.tex").read_text(encoding="utf-8"),
    "printindex": "",
    # a diagram stays where the article puts it (a float drifted pages away)
    "figure_align": "H",
    "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true",
}

# -- Search ----------------------------------------------------------------------

# Pagefind replaces Sphinx's own index (kb.search); its settings: pagefind.yml.
# Sphinx's general index would be an empty page: the index directive and role
# are refused (KB017, kb.guard.untrusted), their entries would go nowhere.
html_use_index = False
html_domain_indices = False

# -- Diagrams ----------------------------------------------------------------------

# Diagrams are SVG images drawn ahead of time by `make diagrams` (chromium, the
# npm mermaid pinned in package.json) into docs/_diagrams/ (kb_diagrams_dir):
# pages load no mermaid script, and the build needs no browser (KB110 when a
# diagram's SVGs are missing). kb.site.mermaid takes the settings of
# sphinxcontrib-mermaid's README that it honours (its MERMAID_CONFIG); that
# extension itself is not set up.
# "strict": diagram text cannot carry HTML or click handlers into the drawing.
mermaid_init_config = {"startOnLoad": False, "securityLevel": "strict"}

# -- Link checking (make linkcheck) --------------------------------------------------

# External links are checked by the weekly workflow; the -n HTML build checks
# every internal reference on each change.
linkcheck_timeout = 20
linkcheck_retries = 3
# wait out HTTP 429 up to five minutes per host before calling a link broken
linkcheck_rate_limit_timeout = 300.0
linkcheck_workers = 4
linkcheck_report_timeouts_as_broken = True
# The patterns of data/linkcheck-ignore.yaml are added by kb.core.data when the
# configuration is read, so a mistake there is a warning at its line.
linkcheck_ignore = []

# -- sphinx-copybutton -----------------------------------------------------------

# Copy only the code, never prompts or console output markers.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"
