# A glossary and a page that links one of its terms (tests/test_ext_terms.py).
project = "terms"
