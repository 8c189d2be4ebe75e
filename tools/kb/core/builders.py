"""Which outputs a builder makes, decided from Sphinx's documented builder API.

The extensions add site features (Pagefind search, feed, sitemap, robots.txt,
llms.txt, the 404 page, tag pages and the links to them). They make sense on
a website only; the other builders (``epub``, ``latex``, ``text``,
``gettext``, ``linkcheck``, ``singlehtml`` …) must build under ``-W`` without
them. Each extension asks here instead of testing builder names of its own:

- ``serves_pages``: HTML pages a browser opens (``StandaloneHTMLBuilder``
  and its subclasses, except the ``embedded`` ones: epub and the help
  formats, which Sphinx's templates document as "embedded in some viewing
  application"). The written pages run under the site's
  Content-Security-Policy (kb.guard.html).
- ``is_website``: one page per document, each at its own URL (``html``,
  ``dirhtml``, and subclasses of theirs; not ``singlehtml``): the site
  features above.
"""

from __future__ import annotations

from sphinx.builders import Builder
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.builders.singlehtml import SingleFileHTMLBuilder


def serves_pages(builder: Builder) -> bool:
    return isinstance(builder, StandaloneHTMLBuilder) and not builder.embedded


def is_website(builder: Builder) -> bool:
    return serves_pages(builder) and not isinstance(builder, SingleFileHTMLBuilder)
