"""Entry point of `python -m autograder` (see autograder.cli)."""

try:
    from autograder.cli import run
except KeyboardInterrupt:  # Ctrl-C while the command line loads: the answer it gives later, in grader.yml's default
    from autograder.exit_codes import EXIT_INTERRUPTED
    from autograder.i18n import say, use_language

    with use_language("ko"):
        say("progress.interrupted_plain")
    raise SystemExit(EXIT_INTERRUPTED) from None
run()
