"""Site outputs: feed, sitemap, 404, the output folder, mermaid diagrams (pre-drawn SVG), build speed."""
