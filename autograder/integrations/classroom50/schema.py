"""Check a document against Classroom50's result/v1 contract: the schema plus its cross-field rules."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "reports" / "schemas" / "classroom50_result_v1.schema.json"


@cache
def result_schema() -> dict[str, Any]:
    """The vendored result/v1 schema (see its `$comment` for the source)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def result_problems(document: Any) -> list[str]:
    """Everything wrong with a result.json document, as Classroom50's runner and collector judge it.

    The schema gives the structure; the rules it cannot express are checked here as the runner's
    `validate_result` does: score <= max-score for the whole and for every test, and (an addition
    of this project, which always writes one test per part) the score equal to the tests' sum.

    Args:
        document: the parsed JSON.

    Returns:
        Problems, empty when the document is valid.
    """
    validator = jsonschema.Draft202012Validator(result_schema())
    problems = [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in validator.iter_errors(document)
    ]
    if problems or not isinstance(document, dict):
        return problems
    if document["score"] > document["max-score"]:
        problems.append(f"score {document['score']} > max-score {document['max-score']}")
    for index, test in enumerate(document["tests"]):
        if test["score"] > test["max-score"]:
            problems.append(f"tests/{index}: score {test['score']} > max-score {test['max-score']}")
    if document["tests"] and document["score"] != sum(test["score"] for test in document["tests"]):
        problems.append("score is not the sum of the tests' scores")
    return problems
