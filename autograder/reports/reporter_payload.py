"""The autograding-reporter payload format: per-part runner payloads of a graded submission (stdlib only)."""

# Both the reports (autograder.reports.files writes `<stem>.reporter.json`) and the GitHub
# front end (autograder.integrations.github, public_checks) use this format, so it lives here, below
# both. The student repository carries a copy of this module (see student_bundle.py), so it imports
# nothing but the standard library.
#
# The payload format is the one `classroom-resources/autograding-grading-reporter@v1` reads: for
# every id in its `runners` input it takes the environment variable `<ID upper-cased>_RESULTS`,
# base64-decodes it and parses JSON {"version": 1, "status": "pass"|"fail"|"error",
# "max_score": N, "tests": [{"name", "status", "score", "message", "test_code", "filename",
# "line_no", "execution_time"}]}. Its total is the sum of every test's `score` over the runners
# whose max_score is not 0; it fails the job when a runner's status is "fail" or "error".

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

PAYLOAD_VERSION = 1


def payload_test(
    name: str,
    passed: bool,
    score: float,
    message: str = "",
    *,
    test_code: str = "",
    filename: str = "",
    line_no: int = 0,
    seconds: float = 0.0,
    error: bool = False,
) -> dict[str, Any]:
    """One entry of a payload's `tests`.

    Args:
        name: the test's display name.
        passed: whether it passed.
        score: points earned.
        message: what to show when it failed.
        test_code: what ran (a check id or the test's code).
        filename: the file the test lives in.
        line_no: its line there (0 when unknown).
        seconds: how long it ran.
        error: it could not run at all (status "error" instead of "fail").

    Returns:
        The test as a dict.
    """
    status = "pass" if passed else ("error" if error else "fail")
    return {
        "name": name,
        "status": status,
        "score": score,
        "message": message,
        "test_code": test_code,
        "filename": filename,
        "line_no": line_no,
        "execution_time": f"{seconds:.2f}s",
    }


def runner_payload(tests: Sequence[Mapping[str, Any]], max_score: float, status: str | None = None) -> dict[str, Any]:
    """A runner's payload: "pass" when every test passed, "error" when one errored, else "fail".

    Args:
        tests: entries from `payload_test`.
        max_score: the runner's points possible.
        status: force a status (e.g. "error" when nothing could be run).

    Returns:
        The payload dict.
    """
    if status is None:
        statuses = {test["status"] for test in tests}
        status = "error" if "error" in statuses else ("fail" if "fail" in statuses else "pass")
    return {"version": PAYLOAD_VERSION, "status": status, "max_score": max_score, "tests": list(tests)}


def encode_payload(payload: Mapping[str, Any]) -> str:
    """Base64 of the compact UTF-8 JSON, on one line (what the reporter decodes).

    Args:
        payload: a runner payload.

    Returns:
        The base64 text.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def runner_id(name: str) -> str:
    """A step/runner id from a part or test name: lower case letters, digits, "_" and "-".

    Args:
        name: e.g. "masked_loss" or "q1".

    Returns:
        A valid GitHub step id (it starts with a letter or "_").
    """
    ident = re.sub(r"[^a-z0-9_-]+", "_", name.strip().lower()).strip("_") or "part"
    return ident if re.match(r"[a-z_]", ident) else f"_{ident}"


def reporter_env_name(runner: str) -> str:
    """The variable the reporter reads for a runner (`runner.trim().toUpperCase() + "_RESULTS"`).

    Args:
        runner: a runner id.

    Returns:
        e.g. "MASKED_LOSS_RESULTS".
    """
    return f"{runner.strip().upper()}_RESULTS"


def part_payloads(result: Any) -> dict[str, dict[str, Any]]:
    """Per-part payloads of a graded submission (a `SubmissionResult`), skipped parts left out.

    Each check is a test scored with its points; a graded part without checks (a grader error)
    is one failed test worth the part. The scores over all runners add up to the result's total.

    Args:
        result: a SubmissionResult (duck-typed: `status`, `parts[].checks[]`).

    Returns:
        runner id (the part's name) -> payload, in result order.
    """
    broken = result.status != "graded"
    payloads = {}
    for part in result.parts:
        checks = [check for check in part.checks if not check.skipped]
        if checks:
            tests = [
                payload_test(
                    f"{part.title}: {check.check_id}",
                    check.passed,
                    check.points,
                    "" if check.passed else check.message,
                    test_code=check.check_id,
                    error=broken and not check.passed,
                )
                for check in checks
            ]
            payloads[runner_id(part.part)] = runner_payload(tests, sum(check.max_points for check in checks))
        elif not part.checks:  # graded without checks: one failed test worth the part
            message = "This part was not graded."
            test = payload_test(part.title, False, part.points, message, test_code=part.part, error=broken)
            payloads[runner_id(part.part)] = runner_payload([test], part.max_points)
    return payloads
