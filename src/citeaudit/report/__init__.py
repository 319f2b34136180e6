"""Reports: terminal, JSON and Markdown renderings of a scoring Report."""
