"""The knowledge base's Sphinx extensions, one package (conf.py puts tools/ on sys.path).

Where to look, by what you are after:

- ``kb.core``: the data files (``data/*.yaml``: one safe YAML reader, schema
  checks with ``path:LINE``), per-document stores, the Markdown probe, and
  which builders make a website (``kb.core.builders``: the site features
  switch themselves off for epub, LaTeX, text …).
- ``kb.pages``: what an article is made of: front matter, listings and
  reading order, tags and related articles, the glossary and term links,
  navigation.
- ``kb.editorial``: 编者注 and the claims register.
- ``kb.search``: what the search index holds (Pagefind, glossary aliases).
- ``kb.guard``: every pull request is untrusted input: raw HTML, files from
  outside the repository, silent loss, the written pages, failed builds.
- ``kb.site``: site outputs: feed, sitemap, robots.txt, llms.txt, 404, the
  output folder's state, mermaid diagrams (pre-drawn SVG), build speed.

Each module is one Sphinx extension (``setup(app)``), listed in conf.py.
"""
