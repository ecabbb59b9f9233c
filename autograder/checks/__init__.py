"""The hidden checks: a pytest suite run in the trusted process against the sandboxed worker."""
