"""Assignments: each folder builds one student template and its Otter autograder."""
