"""Site outputs: feed, sitemap, 404, the output folder, local mermaid, build speed."""
