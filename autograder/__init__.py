"""The grading engine: notebook loading, sandboxed worker, hidden checks, scoring, reports, CLI."""
