"""Renderers of grading results: terminal table, Gradescope results.json, CSV gradebook, Markdown, JSON."""
