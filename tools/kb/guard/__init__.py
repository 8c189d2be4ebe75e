"""Pull requests are untrusted input: what a page may read, link to, load or lose."""
