"""编者注 and the claims register: corrections beside the author's text, with sources."""
