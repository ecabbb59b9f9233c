"""Which tests share a pytest-xdist worker, so that each expensive session fixture is built once per run."""

from __future__ import annotations

# Session fixtures that cost minutes to build, most expensive first. Under pytest-xdist
# (`-n 2 --dist loadgroup`, as .ci/run runs the tiers) a session fixture is built once per worker
# that needs it, so every test using one of these runs in the same group (one worker): each is
# built once per run. A new test that reads the soundness corpus just asks for `corpus_run`.
SHARED_ONCE_FIXTURES = ("reference_cpu_run", "corpus_run", "autograder_zip", "assign_out", "graded_examples")


def xdist_group_of(nodeid: str, fixturenames: list[str] | tuple[str, ...]) -> str:
    """The xdist group of a test: the first expensive session fixture it uses, else its file.

    Grouping the other tests by file keeps each module-scoped fixture (e.g. the attack corpus
    graded as root and as non-root) on one worker too.

    Args:
        nodeid: the test's pytest node id (`path::name[params]`).
        fixturenames: the fixtures the test uses, directly or through other fixtures.

    Returns:
        The group's name.
    """
    shared = [name for name in SHARED_ONCE_FIXTURES if name in fixturenames]
    return shared[0] if shared else nodeid.split("::", 1)[0]
