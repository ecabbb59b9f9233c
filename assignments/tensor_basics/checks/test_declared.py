"""The checks declared in declared.yml (autograder/checks/declared.py), as this folder's pytest checks."""

from autograder.checks.declared import declared_checks

globals().update(declared_checks(__file__))
