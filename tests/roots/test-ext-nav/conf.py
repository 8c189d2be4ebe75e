# Two guides under the root, one of 15 pages (tests/test_ext_navigation.py).
project = "nav"
extensions = ["kb.pages.navigation"]
html_theme = "furo"
