"""Reference statements as notebook code: chosen by slice, dedented, without annotations."""

from __future__ import annotations

from pathlib import Path

import pytest

from assignments.solution_source import SolutionSourceError, reference_statements

TYPED = Path(__file__).resolve().parents[1] / "fixtures" / "solution_source" / "typed_module.py.txt"


def test_a_slice_skips_the_super_call_and_keeps_trailing_comments() -> None:
    assert reference_statements(TYPED, "Layer.__init__", "1:") == (
        "self.linear = nn.Linear(size, size)  # the only sublayer\nself.scale = 1.0"
    )
    assert reference_statements(TYPED, "Layer.__init__", ":1") == "super().__init__()"


def test_annotations_and_type_ignores_are_dropped_comments_and_blank_lines_kept() -> None:
    assert reference_statements(TYPED, "Layer.forward") == (
        "hidden = self.linear(x) * self.scale\n\n"
        "# a comment between two statements stays\n"
        "return self.linear(hidden) + x"
    )


@pytest.mark.parametrize(
    ("definition", "select", "why"),
    [
        ("Layer.missing", ":", "no function"),
        ("Missing.forward", ":", "no class"),
        ("Layer.forward", "5:", "selects no statement"),
        ("bare", ":", "without its type"),
        ("nested", ":", "typed nested functions"),
    ],
)
def test_what_cannot_be_written_untyped_is_an_error(definition: str, select: str, why: str) -> None:
    with pytest.raises(SolutionSourceError, match=why):
        reference_statements(TYPED, definition, select)
