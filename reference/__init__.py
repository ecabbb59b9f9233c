"""The trusted reference solution of the assignment, with its training and translation CLIs."""
