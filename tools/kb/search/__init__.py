"""The search index: Pagefind, and what it is told about the glossary."""
