"""Exit statuses of the command line and of its subcommands written in other modules."""

EXIT_OK = 0  # grading completed, whatever the scores
EXIT_CRASH = 1  # the grader itself failed before producing results
EXIT_USAGE = 2  # bad arguments or configuration
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports a process stopped by SIGINT
EXIT_TERMINATED = 143  # SIGTERM, stopped as Ctrl-C is (results kept), reported as a shell reports SIGTERM


def command_error(message: object, code: int = EXIT_USAGE) -> int:
    """Print `error: <message>` on stderr in the console's language (an exception prints its text);
    returns `code`, for the command to return."""
    from autograder.i18n import say  # not at the top: i18n imports yaml, and this module is imported everywhere

    say("console.error", message=message)
    return code
