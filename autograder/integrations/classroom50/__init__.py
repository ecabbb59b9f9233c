"""Classroom50: the student-side autograder (public checks) and the instructor's hidden grading of submit/* tags."""
