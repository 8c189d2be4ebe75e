"""What an article is made of: front matter, listings, tags, glossary, navigation."""
