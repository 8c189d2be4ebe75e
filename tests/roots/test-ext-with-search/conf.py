project = "with-search"
