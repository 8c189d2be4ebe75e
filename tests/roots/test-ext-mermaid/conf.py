# A page with a diagram and one without (tests/test_ext_mermaid.py). The
# diagram's SVGs are in _diagrams/ (hand-written stand-ins: no package.json
# here, so the mermaid version in their digest is "none").
project = "diagrams"
extensions = ["kb.site.mermaid"]
mermaid_init_config = {"startOnLoad": False, "securityLevel": "strict"}
kb_mermaid_node = "/nonexistent/node"  # the checker is tested in tests/test_mermaid.py
