"""Gradescope front end: run_autograder/setup.sh, the grading entry point and the zip builder."""
