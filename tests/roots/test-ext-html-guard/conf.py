# kb.guard.html alone, with one copied asset that browsers run as a document
# (tests/test_ext_html_guard.py: assets that passed are not read again).
project = "guard"
extensions = ["kb.guard.html"]
html_static_path = ["_static"]
# the site's page.html carries the policy as <meta> the same way
templates_path = ["_templates"]
