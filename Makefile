# 51 算力知识库 — every target a verb; `make help` lists them.
# CI runs `make check`, so a contributor runs exactly what CI runs.

PYTHON      ?= python3.11
VENV        ?= .venv
BIN         := $(VENV)/bin
# One warnings-as-errors setting, shared by local builds and CI.
SPHINXOPTS  ?= -W -n --keep-going -j auto
SOURCEDIR   := docs
BUILDDIR    := _build
CHROMIUM    ?= /usr/bin/chromium

# No built-in rules or variables, in this make and the ones it starts (the
# books' LaTeX Makefile): every file of the site is a prerequisite here, and a
# contributor's docs/x.tex beside an older docs/x.dvi would have make run
# tex on it (which writes any file: conf.py) before the build; x.c, x.sh,
# x.y would run the compiler, cat or yacc.
MAKEFLAGS += --no-builtin-rules --no-builtin-variables
.SUFFIXES:

# The environments make installs and then runs (.venv/bin/python,
# node_modules/.bin/pagefind) are never the repository's: a pull request that
# commits them would have make run its own programs at the first step.
# (node looks for a package in every node_modules/ from the importing file up)
ifneq ($(shell git ls-files -- .venv ':(glob)**/node_modules' ':(glob)**/node_modules/**' 2>/dev/null | head -c 1),)
$(info .venv:1: KB059 files under .venv/ or a node_modules/ folder are committed: make would run them as the tools it installs; git rm -r --cached them)
$(error the repository holds installed tools)
endif

.DEFAULT_GOAL := help
.PHONY: committed-build help venv dev-venv snippets-venv browser book-tools html epub pdf books diagrams serve test test-fast snippets lint linkcheck check new bench bench-search page-weight import stale-data claims clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

$(BIN)/.installed-dev: requirements-dev.txt $(BIN)/.installed
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

# torch and the other libraries of the pages' code samples: only the targets
# that run the samples (test, snippets) install them.
$(BIN)/.installed-snippets: requirements-snippets.txt $(BIN)/.installed-dev
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements-snippets.txt
	touch $@

# --ignore-scripts: no package of the lock file needs an install script, and a
# changed lock file (a dependency bump) must not run one on CI's machine
node_modules/.installed: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

venv: $(BIN)/.installed node_modules/.installed ## install what the build needs (.venv, node_modules)

dev-venv: venv $(BIN)/.installed-dev ## add what the preview, lint and fast tests need (no torch)

snippets-venv: dev-venv $(BIN)/.installed-snippets ## add what the code samples need (torch, CPU build)

# The fonts too: without a Chinese one, chromium draws every Chinese character
# as a box (the screenshots, and the layout the browser tests measure); and
# the committed diagram SVGs are drawn with these (the books' fonts, which CI
# installs), so `render_diagrams.py --verify` draws the same bytes.
BROWSER_PACKAGES := chromium fonts-noto-cjk fonts-texgyre fonts-dejavu-core fonts-symbola

browser: ## make sure Debian's chromium and the fonts are there for the browser tests
	@{ test -x $(CHROMIUM) && fc-list | grep -q 'Noto Sans CJK SC' && fc-list | grep -q 'DejaVu Sans' \
	  && fc-list | grep -q Symbola && fc-list | grep -q 'TeX Gyre'; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES); \
	  else echo "browser tests need $(CHROMIUM) and the diagrams' fonts: sudo apt-get install $(BROWSER_PACKAGES)" >&2; exit 1; fi; }

# What the site is built from. Folders count too: removing or renaming a file
# changes its folder's time, and that is a change to build. (make -B html
# builds whatever the times say.) A name with any character but ASCII letters,
# digits, '.', '_' and '-' is left to its folder: make reads some of them as its
# own syntax (';' starts a recipe of the contributor's, ':' a rule, a newline
# or space ends the name), and the build names it (KB093, KB018).
SITE_INPUTS := $(shell LC_ALL=C find conf.py $(SOURCEDIR) data tools/kb _templates _static locale \
  pagefind.yml package-lock.json \( -name __pycache__ -o -name '.*' -o -name '*[!A-Za-z0-9._-]*' \) \
  -prune -o -print 2>/dev/null)
# The build's own files (doctrees, the stamp) stay out of the published folder.
DOCTREES    := $(BUILDDIR)/doctrees
SITE_STAMP  := $(DOCTREES)/html.built
# The books (make epub, make pdf, below): a site built when they exist links them.
EPUB        := $(BUILDDIR)/epub/51suanli-kb.epub
PDF         := $(BUILDDIR)/latex/51suanli-kb.pdf
BOOKS       := $(PDF) $(EPUB)

html: venv $(SITE_STAMP) ## build the site into _build/html (warnings are errors; nothing to do when no input changed)

# A build folder committed to the repository would be trusted: make would skip
# a build its stamp calls done, and Sphinx would load its environment (a
# pickle). Checked on every make html, before the stamp is looked at (KB059).
committed-build: venv
	@PYTHONPATH=tools $(BIN)/python -P -m kb.guard.committed_build $(BUILDDIR)

# Sphinx rebuilds only what changed; with no input changed, make does not
# start it at all (loading the environment of 1,000 pages alone takes 2 s).
$(SITE_STAMP): $(SITE_INPUTS) $(BIN)/.installed node_modules/.installed Makefile $(BUILDDIR)/html/index.html $(wildcard $(BOOKS)) | committed-build
	$(BIN)/sphinx-build -b html -c . -d $(DOCTREES) $(SPHINXOPTS) $(SOURCEDIR) $(BUILDDIR)/html
	touch $@

# no rule makes it: when the site folder was deleted, the stamp is out of date
$(BUILDDIR)/html/index.html: ;

# The books: the whole knowledge base as an epub and a PDF (-t book: kb.site.book).
# A site built when they exist links them from its home page and serves them
# under downloads/ (conf.py's kb_book_files); make html alone never builds them.
# make test builds and checks them (tests/test_books.py runs make books).
# Each is built from scratch: a minute, and never a stale page or image.
BOOKOPTS    ?= -t book -W -n --keep-going -j auto
# TeX with xeCJK, the fonts (Latin, Chinese, code, emoji), the diagrams'
# converter and the checkers (epubcheck runs on Java; pdftotext, pdffonts).
BOOK_PACKAGES := texlive-xetex texlive-lang-chinese texlive-latex-recommended texlive-latex-extra \
  texlive-fonts-recommended latexmk fonts-noto-cjk fonts-texgyre fonts-dejavu-core fonts-symbola \
  librsvg2-bin poppler-utils epubcheck

book-tools: ## make sure the Debian packages the books need are there (TeX, fonts, rsvg-convert, epubcheck)
	@{ command -v xelatex && command -v latexmk && command -v rsvg-convert && command -v pdftotext \
	  && test -f /usr/share/java/epubcheck.jar && fc-list | grep -q 'Noto Serif CJK SC' && fc-list | grep -q Symbola \
	  && fc-list | grep -q 'TeX Gyre Termes'; } >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BOOK_PACKAGES); \
	  else echo "the books need: sudo apt-get install --no-install-recommends $(BOOK_PACKAGES)" >&2; exit 1; fi; }

epub: venv book-tools ## the knowledge base as an epub (_build/epub/51suanli-kb.epub), checked with epubcheck
	rm -rf $(BUILDDIR)/epub $(BUILDDIR)/doctrees-book/epub
	$(BIN)/sphinx-build -b epub -c . -d $(BUILDDIR)/doctrees-book/epub $(BOOKOPTS) $(SOURCEDIR) $(BUILDDIR)/epub
	$(BIN)/python tools/check_books.py epub $(EPUB)

pdf: venv book-tools ## the knowledge base as a PDF (_build/latex/51suanli-kb.pdf, xelatex), its text and fonts checked
	rm -rf $(BUILDDIR)/latex $(BUILDDIR)/doctrees-book/latex
	$(BIN)/sphinx-build -b latex -c . -d $(BUILDDIR)/doctrees-book/latex $(BOOKOPTS) $(SOURCEDIR) $(BUILDDIR)/latex
	@# the book by name (all-pdf would take every *.tex of the folder, which the build checked:
	@# KB130); TeX may not run programs, nor open files outside the folder or hidden ones
	openin_any=p openout_any=p $(MAKE) -C $(BUILDDIR)/latex $(notdir $(PDF)) \
	  LATEXMKOPTS="-silent -halt-on-error" LATEXOPTS="-no-shell-escape"
	$(BIN)/python tools/check_books.py pdf $(PDF)

books: epub pdf ## both books

# Diagrams are SVG files drawn ahead of time (kb.site.mermaid): the build needs
# no browser (Read the Docs has none) and fails (KB110) on a diagram whose
# SVGs are missing or drawn from an older text.
diagrams: dev-venv browser ## draw the mermaid diagrams to SVG in chromium (docs/_diagrams/: commit it)
	$(BIN)/python tools/render_diagrams.py
	$(BIN)/python tests/diagram_fixtures.py

serve: dev-venv ## live-reload preview on http://127.0.0.1:8000
	$(BIN)/sphinx-autobuild -b html -c . -d $(DOCTREES) $(SPHINXOPTS) --watch conf.py --watch tools --watch data \
	  --host 127.0.0.1 --port 8000 $(SOURCEDIR) $(BUILDDIR)/html

# The tests run in one process per core (pytest-xdist), each test file in one
# process (its module fixtures built once); the site and each bad-input group
# are still built once per run (tests/conftest.py: once). The fast tier too.
# TEST_PROCESSES=0 runs them all in this process. The pages' code samples are
# a pull request's code: they run in the sandbox of tools/run_samples.py, never
# in the test processes; both runs go to the end, and either failing fails.
TEST_PROCESSES ?= auto
test: snippets-venv browser ## run every test, code samples included (builds the site once, in a temporary folder)
	@status=0; $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile || status=$$?; \
	  echo "The pages' code samples (tools/run_samples.py):"; \
	  $(BIN)/python tools/run_samples.py || status=$$?; exit $$status

test-fast: dev-venv ## the fast tier: no full-site build, no browser, no code samples (under a minute)
	$(BIN)/python -m pytest -m "not slow and not snippet" -n $(TEST_PROCESSES) --dist loadfile

# PAGES=docs/training/x.md: only the samples of those pages (in the sandbox of
# tools/run_samples.py), and the policy every page's code blocks follow
PAGES ?= docs
snippets: snippets-venv ## run and check only the pages' code samples ([PAGES=docs/….md …])
	@status=0; $(BIN)/python tools/run_samples.py $(PAGES) || status=$$?; \
	  $(BIN)/python -m pytest tests/test_snippet_policy.py || status=$$?; exit $$status

lint: dev-venv ## Python (ruff: lint and format), Markdown, Chinese copywriting, spelling, workflow (actionlint) and script syntax checks
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/pymarkdown --config .pymarkdown.json scan -r $(SOURCEDIR)
	$(BIN)/python tools/lint_copy.py $(SOURCEDIR)
	$(BIN)/codespell $(SOURCEDIR) README.md CONTRIBUTING.md tools data conftest.py
	$(BIN)/python tools/link_terms.py --check $(SOURCEDIR)
	node tools/actionlint.mjs
	@# the site's own scripts parse (file:line of a syntax error, before any browser test); node's
	@# report quotes the script's line, so it is printed plain, and each name is one argument
	$(BIN)/python tools/check_scripts.py _static

linkcheck: venv ## check external links (needs the internet: CI runs it weekly)
	@# -q: Sphinx then reports each broken link as "page.md:LINE: WARNING: broken link: …"
	$(BIN)/sphinx-build -b linkcheck -c . -q $(SPHINXOPTS) $(SOURCEDIR) $(BUILDDIR)/linkcheck

check: html lint test ## everything CI runs (internal links: the -n build; external: make linkcheck)
	@echo "External links are not checked here (no internet in CI): the weekly linkcheck workflow runs 'make linkcheck'."

# make new's arguments reach the script verbatim: a title may hold $, $(…),
# quotes, backticks or a newline. Make would expand a command-line variable
# wherever it is referenced, and also when it exports it to a recipe's
# environment (running any $(shell …) in it); so they are never exported or
# referenced, only read with $(value …) into simply-expanded variables that the
# script reads from its environment. No shell ever sees them.
NEW_VARS := GUIDE SLUG TITLE TAGS SUMMARY
unexport $(NEW_VARS)
new: export KB_NEW_GUIDE := $(value GUIDE)
new: export KB_NEW_SLUG := $(value SLUG)
new: export KB_NEW_TITLE := $(value TITLE)
new: export KB_NEW_TAGS := $(value TAGS)
new: export KB_NEW_SUMMARY := $(value SUMMARY)
new: venv ## scaffold an article: make new GUIDE=training SLUG=my-topic TITLE="标题" TAGS=memory [SUMMARY=…]
	$(BIN)/python tools/new_article.py --from-make

bench: dev-venv ## build benchmark at 12/100/1000 articles, against stock Sphinx + furo
	$(BIN)/python tools/bench_build.py

bench-search: dev-venv browser ## search benchmark: time to results, bytes, index size
	$(BIN)/python tools/bench_search.py

page-weight: dev-venv browser ## bytes per page type of the built site (run make html first)
	$(BIN)/python tools/page_weight.py $(BUILDDIR)/html

import: venv ## re-import sources/export.txt into docs/ (refuses to overwrite edited pages)
	$(BIN)/python tools/import_export.py

claims: venv ## list the claims of the pages that the claims register does not cover yet
	$(BIN)/python tools/claims.py $(SOURCEDIR)

stale-data: venv ## price and spec claims whose data is more than 12 months old (a scheduled workflow)
	$(BIN)/python tools/stale_data.py

clean: ## remove build output
	rm -rf $(BUILDDIR)
