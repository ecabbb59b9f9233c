"""Entry point of `python -m autograder` (see autograder.cli)."""

try:
    from autograder.cli import run
except KeyboardInterrupt:  # Ctrl-C while the command line loads: the answer it gives later, in grader.yml's default
    import os
    import sys

    from autograder.exit_codes import EXIT_INTERRUPTED
    from autograder.i18n import say, use_language

    with use_language("ko"):
        say("progress.interrupted_plain")
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)  # as `cli.run` exits once stopped: nothing of the interpreter's exit runs
run()
