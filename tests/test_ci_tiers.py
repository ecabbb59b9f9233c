""".ci/run leaves no slow test out: its e2e-slow tier runs every slow test but those the background chain runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CI_RUN = REPO / ".ci" / "run"


def tier_commands(script: str) -> dict[str, list[str]]:
    """Each `tier NAME COMMAND...` line of the script (continuation lines joined, comments cut), in words."""
    joined = script.replace("\\\n", " ")
    lines = re.finditer(r"^\s*tier (\S+) (.*)$", joined, re.MULTILINE)
    return {m.group(1): m.group(2).split(" #", 1)[0].split() for m in lines}


def test_the_slow_tier_leaves_out_exactly_the_paths_the_background_chain_runs() -> None:
    tiers = tier_commands(CI_RUN.read_text(encoding="utf-8"))
    slow = tiers["e2e-slow"]
    assert '"e2e or slow"' in " ".join(slow)  # every slow test (and every end-to-end one) is selected
    ignored = {word.removeprefix("--ignore=") for word in slow if word.startswith("--ignore=")}
    # Named paths would restrict the tier: a slow test in any other file would run nowhere.
    assert [word for word in slow if word.startswith("tests/")] == []
    background = {
        word
        for name, words in tiers.items()
        if name == "security" or name.startswith(("ray-", "containers"))
        for word in words
        if word.startswith("tests/")
    }
    assert ignored == background and "tests/security" in background
    assert all((REPO / path).exists() for path in ignored)  # a renamed file is not silently dropped
