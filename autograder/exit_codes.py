"""Exit statuses of the command line and of its subcommands written in other modules."""

EXIT_OK = 0  # grading completed, whatever the scores
EXIT_CRASH = 1  # the grader itself failed before producing results
EXIT_USAGE = 2  # bad arguments or configuration
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports a process stopped by SIGINT
EXIT_TERMINATED = 143  # SIGTERM, stopped as Ctrl-C is (results kept), reported as a shell reports SIGTERM
