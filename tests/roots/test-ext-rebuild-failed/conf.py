# Warnings from build-finished handlers that run before and after
# kb.guard.rebuild_failed's own (tests/test_ext_rebuild_failed.py).
from sphinx.util import logging

project = "warned"
extensions = ["kb.guard.rebuild_failed"]
logger = logging.getLogger("late")


def setup(app):
    def warn_about(docname):
        def handler(app, exception):
            logger.warning("checked after writing", location=(docname, 1))

        return handler

    app.connect("build-finished", warn_about("early"), priority=100)
    app.connect("build-finished", warn_about("late"), priority=2000)
