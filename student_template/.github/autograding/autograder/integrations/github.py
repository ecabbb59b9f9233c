"""GitHub Actions glue: step outputs that feed the autograding reporter, and job summaries (stdlib only)."""

# The student repository carries a copy of this module (see student_bundle.py), so it imports
# nothing but the standard library and autograder.reports.reporter_payload (the payload format,
# which the reports write too) at module level.

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autograder.reports.reporter_payload import encode_payload, reporter_env_name

SUMMARY_LIMIT_BYTES = 1024 * 1024  # GitHub rejects a step summary above 1 MiB
TRUNCATION_NOTE = "\n\n_(summary cut to GitHub's 1 MiB limit; the full reports are in the artifacts)_\n"


def reporter_outputs(payloads: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Step outputs that let a later job feed the reporter without naming the parts in YAML.

    Args:
        payloads: runner id -> payload, in report order.

    Returns:
        {"runners": "a,b,...", "reporter-env": "A_RESULTS=<base64>\\nB_RESULTS=..."}: append
        `reporter-env` to $GITHUB_ENV and pass `runners` to the reporter's `runners` input.
    """
    lines = [f"{reporter_env_name(runner)}={encode_payload(payload)}" for runner, payload in payloads.items()]
    return {"runners": ",".join(payloads), "reporter-env": "\n".join(lines)}


def format_output(name: str, value: str) -> str:
    """One $GITHUB_OUTPUT / $GITHUB_ENV entry; multi-line values use a random heredoc delimiter.

    Args:
        name: the output's name.
        value: its value.

    Returns:
        Text to append to the file.
    """
    if "\n" not in value:
        return f"{name}={value}\n"
    delimiter = f"EOF_{secrets.token_hex(8)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: str | Path | None, outputs: Mapping[str, str]) -> None:
    """Append outputs to the $GITHUB_OUTPUT file (nothing happens without one).

    Args:
        path: the file, or None/"" outside GitHub Actions.
        outputs: name -> value.
    """
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            handle.write(format_output(name, value))


def cap_summary(markdown: str, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    """Cut Markdown to GitHub's step-summary size, at a line boundary, with a note.

    Args:
        markdown: the summary.
        limit: the byte limit.

    Returns:
        The summary, at most `limit` bytes of UTF-8.
    """
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    room = limit - len(TRUNCATION_NOTE.encode("utf-8"))
    cut = data[:room].decode("utf-8", errors="ignore")
    return cut[: cut.rfind("\n") + 1 or len(cut)] + TRUNCATION_NOTE


def append_summary(path: str | Path | None, markdown: str) -> None:
    """Append Markdown to the $GITHUB_STEP_SUMMARY file (or print it outside Actions).

    Args:
        path: the file, or None/"" to write to stdout instead.
        markdown: the text.
    """
    text = cap_summary(markdown)
    if not path:
        sys.stdout.write(text)
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m autograder.integrations.github summary FILE...`: append Markdown files to the
    job summary ($GITHUB_STEP_SUMMARY, or stdout), cut to GitHub's limit.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        The exit code.
    """
    import os

    parser = argparse.ArgumentParser(prog="python -m autograder.integrations.github")
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="append Markdown files to the job summary")
    summary.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    markdown = "\n".join(Path(path).read_text(encoding="utf-8") for path in args.files)
    append_summary(os.environ.get("GITHUB_STEP_SUMMARY"), markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
