"""Files a student submits beside the notebook (an assignment's sidecar files): which one belongs to it."""

# The engine only locates them by the name patterns the assignment gives (Assignment.sidecar_names);
# reading them is the assignment's business.

from __future__ import annotations

import os
from pathlib import Path


def candidate_names(submission: Path, patterns: list[str]) -> list[tuple[str, str]]:
    """The file names to look for, in order, each with the pattern it comes from.

    Args:
        submission: the notebook (or .py export) being graded.
        patterns: file names, `{stem}` standing for the notebook's stem.

    Returns:
        (name, pattern) pairs; patterns without `{stem}` only when no other submission of the
        same kind shares the folder (in a folder of many notebooks, a name without the stem belongs
        to nobody in particular).
    """
    folder = submission.parent
    alone = not any(
        p.suffix == submission.suffix and p.name != submission.name for p in folder.iterdir() if p.is_file()
    )
    names: list[tuple[str, str]] = []
    for pattern in patterns:
        if "{stem}" in pattern or alone:
            name = pattern.replace("{stem}", submission.stem)
            if name not in (n for n, _ in names):
                names.append((name, pattern))
    return names


def locate_sidecar(submission: Path, patterns: list[str]) -> tuple[Path, str] | None:
    """The first candidate that exists beside `submission` (links included: they are refused
    when read, with a message), and the pattern it matched; None when there is none."""
    for name, pattern in candidate_names(Path(submission), patterns):
        path = Path(submission).parent / name
        if os.path.lexists(path):
            return path, pattern
    return None
