"""`python -m autograder similarity PATHS --out DIR`: rank pairs of submissions, write the report."""

from __future__ import annotations

import argparse
import sys
import time

from autograder import batch
from autograder import config as grader_config
from autograder.assignment import assignment_of
from autograder.config import ConfigError
from autograder.exit_codes import EXIT_OK, command_error
from autograder.i18n import t, use_language
from autograder.similarity.compare import Settings, fingerprint_all, rank_pairs
from autograder.similarity.extract import solved_notebook, template_notebooks
from autograder.similarity.report import write_similarity_report


def run_similarity(args: argparse.Namespace) -> int:
    """Run the `similarity` command.

    Args:
        args: parsed arguments (paths, out, assignment, template, threshold, recursive).

    Returns:
        The exit code: 0 when the report was written, 2 for bad paths or configuration.
    """
    overrides = {} if args.assignment is None else {"assignment.name": args.assignment}
    try:
        config = grader_config.load_config(None, overrides)
        submissions = batch.expand_paths(args.paths, recursive=args.recursive)
    except (ConfigError, batch.SubmissionPathError) as error:
        return command_error(error)
    assignment = assignment_of(config)
    templates = args.template or template_notebooks(assignment)
    missing = [template for template in templates if not template.is_file()]
    if missing:
        return command_error(f"--template {missing[0]}: no such file")
    settings = Settings() if args.threshold is None else Settings(threshold=args.threshold)
    started = time.perf_counter()
    paths, labels = [s.path for s in submissions], [s.label for s in submissions]
    compared = fingerprint_all(paths, labels, templates, settings, solved_notebook(assignment))
    pairs = [pair for pair in rank_pairs(compared, settings) if pair.similarity >= settings.threshold]
    with use_language(config.feedback.language, assignment.messages_dir):
        written = write_similarity_report(pairs, compared, args.out)
        summary = t(
            "console.similarity",
            count=len(compared),
            pairs=len(pairs),
            threshold=f"{settings.threshold:g}",
            seconds=f"{time.perf_counter() - started:.1f}",
            written=", ".join(map(str, written)),
        )
    print(summary, file=sys.stderr)
    return EXIT_OK
