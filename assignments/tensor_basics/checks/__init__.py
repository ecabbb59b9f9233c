"""tensor_basics's hidden checks: declared.yml, bound by test_declared.py."""
