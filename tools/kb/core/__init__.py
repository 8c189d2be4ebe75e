"""Shared infrastructure: data files, per-document stores, the Markdown probe."""
