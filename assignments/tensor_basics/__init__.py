"""The assignment tensor_basics (made by `python -m autograder new-assignment`; docs/ASSIGNMENTS.md)."""
