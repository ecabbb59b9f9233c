"""The public checks (student_template's Otter tests) against the hidden checks, on the same code.

A public check must never fail a submission that the hidden checks give full marks, and when
both fail code that keeps a known deviation of public code, the public message must name it too.
`python -m tests.assignments.styles.public_agreement` prints every disagreement.
"""

from __future__ import annotations

import contextlib
import io

from style_corpus import REPO, StyleCase, cases, full_marks, grade, part1_soundness_cases

from autograder.integrations.public_checks import otter_test_files, provided_globals, run_test_file

PUBLIC_TESTS = {
    "attention_encoder": REPO / "student_template" / "attention_encoder" / "tests",
    "transformer_mt": REPO / "student_template" / "tests",
}
# Public question -> the hidden part it checks (Part 1's q7, training, has no hidden unit part).
PARTS = {
    "attention_encoder": {
        "q1": "attention",
        "q2": "multi_head_attention",
        "q3": "positional_encoding",
        "q4": "feed_forward",
        "q5": "encoder_layer",
        "q6": "encoder",
    },
    "transformer_mt": {
        "q1": "look_ahead_mask",
        "q2": "decoder_layer",
        "q3": "decoder",
        "q4": "transformer_forward",
        "q5": "masked_loss",
    },
}
# A deviation -> words of which the failing public message must hold one to name the same cause.
NAMES = {
    "sqrt_d_scaling": ("√d",),
    "log_softmax_output": ("softmax",),
    "final_norm": ("LayerNorm",),
    "swapped_masks": ("mask", "마스크"),
    "learned_positions": ("위치",),
    "pre_norm": ("norm",),
    "criterion_ignored": ("criterion",),
    # heads split or joined otherwise: the public q2 names the heads (its positions-stay-apart case)
    **dict.fromkeys(
        ("heads_without_transpose", "heads_never_transposed", "heads_merge_order", "heads_interleaved"), ("헤드",)
    ),
}


def public_failures(case: StyleCase) -> dict[str, str]:
    """The public questions the case fails: question -> its messages."""
    tests = PUBLIC_TESTS[case.assignment]
    namespace = {"__name__": "submission", **provided_globals(tests)}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(case.source(), case.id, "exec"), namespace)  # our own fixture code
    failed = {}
    for path in otter_test_files(tests):
        if path.stem not in PARTS[case.assignment]:
            continue
        outcome = run_test_file(path, namespace)
        if not outcome.passed:
            failed[path.stem] = outcome.error or " | ".join(c.message for c in outcome.cases if not c.passed)
    return failed


def disagreements(case: StyleCase) -> tuple[list[str], list[str]]:
    """Every way the public and hidden checks disagree on one case, and the cascades.

    A cascade is a public question failing on a part the hidden checks give full marks while
    another part loses hidden points: the public checks run the student's own classes together
    (a bug in the attention also fails the multi-head attention's public check), the hidden ones
    isolate each part with probes. Reported, not counted: the submission is not correct.
    """
    _, points = grade(case)
    full = full_marks(case.assignment)
    found: list[str] = []
    cascades: list[str] = []
    for question, message in public_failures(case).items():
        part = PARTS[case.assignment][question]
        if points[part] == full[part]:
            line = f"{case.id}: public {question} fails code the hidden {part} gives full marks: {message[:200]}"
            (found if points == full else cascades).append(line)
        elif case.deviation and not any(word in message for word in NAMES[case.deviation]):
            found.append(f"{case.id}: public {question} does not name {case.deviation}: {message[:200]}")
    return found, cascades


def every_disagreement() -> tuple[list[str], list[str]]:
    """The disagreements and the cascades over the style corpus and Part 1's generated variants."""
    found: list[str] = []
    cascades: list[str] = []
    for case in cases() + part1_soundness_cases():
        disagree, cascade = disagreements(case)
        found += disagree
        cascades += cascade
    return found, cascades


if __name__ == "__main__":
    found, cascades = every_disagreement()
    print("\n".join(found) or "no disagreement")
    print("cascades (a bug in another part):", *cascades, sep="\n")
