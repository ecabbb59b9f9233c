"""Part 2 hidden checks: a pytest suite run in the trusted process against the sandboxed worker."""
