"""tests/xdist_groups.py: expensive session fixtures are built once per run, on one xdist worker."""

import re
import subprocess
import sys
from pathlib import Path

from xdist_groups import (
    HANDED_OUT_AFTER,
    LONG_GROUPS,
    SHARED_ONCE_FIXTURES,
    group_rank,
    groups_of,
    read_groups,
    write_groups,
    xdist_group_of,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_tests_sharing_an_expensive_fixture_share_a_group_across_files():
    golden = xdist_group_of("tests/soundness/test_golden_scores.py::test_a", ["tmp_path", "corpus_run"])
    judged = xdist_group_of("tests/soundness/test_soundness.py::test_b[case]", ["corpus_run"])
    assert golden == judged == "corpus_run"


def test_the_costliest_fixture_decides_and_other_tests_group_by_file():
    assert xdist_group_of("tests/a.py::t", ["corpus_run", "reference_cpu_run"]) == "reference_cpu_run"
    assert xdist_group_of("tests/security/test_attack_corpus.py::t[root]", ["corpus"]) == (
        "tests/security/test_attack_corpus.py"
    )
    assert SHARED_ONCE_FIXTURES[0] == "reference_cpu_run"


def test_the_tables_the_workers_write_are_what_the_scheduler_reads(tmp_path):
    write_groups(tmp_path, "gw0", {"tests/a.py::t1": "corpus_run"})
    write_groups(tmp_path, "gw1", {"tests/a.py::t1": "corpus_run", "tests/b.py::t2": "tests/b.py"})
    assert read_groups(tmp_path) == {"tests/a.py::t1": "corpus_run", "tests/b.py::t2": "tests/b.py"}
    assert not list(tmp_path.glob("*.part"))


# The two files' fast tests, run under `-n 2 --dist loadgroup` as .ci/run runs a tier (this test
# itself excluded, so it does not recurse).
GROUPED_RUN = ("tests/test_xdist_groups.py", "tests/soundness/test_golden_scores.py")
XDIST_ARGS = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-m", "not e2e and not slow"]
XDIST_ARGS += ["-k", "not under_xdist"]


def test_a_group_runs_on_one_worker_under_xdist():
    done = subprocess.run([*XDIST_ARGS, *GROUPED_RUN], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    workers: dict[str, set[str]] = {}
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[[ \d]+%\] PASSED (\S+)", done.stdout, re.MULTILINE):
        workers.setdefault(nodeid.split("::", 1)[0], set()).add(worker)
    assert set(workers) == set(GROUPED_RUN), done.stdout[-3000:]
    # Before the scheduler read the workers' tables, a file's tests were spread over both workers.
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers


def test_shared_fixtures_then_long_files_are_handed_out_first():
    groups = {"tests/a.py": 40, LONG_GROUPS[0]: 1, "corpus_run": 200, "reference_cpu_run": 2, "tests/b.py": 90}
    assert sorted(groups, key=lambda g: group_rank(g, groups[g])) == [
        "reference_cpu_run",
        "corpus_run",
        LONG_GROUPS[0],
        "tests/b.py",
        "tests/a.py",
    ]
    assert all((REPO_ROOT / group).is_file() for group in LONG_GROUPS), LONG_GROUPS  # renamed files stay listed


def test_the_cold_corpus_grading_is_handed_out_right_after_the_warm_one():
    cold = HANDED_OUT_AFTER["corpus_run"][0]
    groups = {LONG_GROUPS[0]: 9, "autograder_zip": 9, cold: 2, "corpus_run": 200, "reference_cpu_run": 2}
    assert sorted(groups, key=lambda g: group_rank(g, groups[g])) == [
        "reference_cpu_run",
        "corpus_run",
        cold,
        "autograder_zip",
        LONG_GROUPS[0],
    ]
    assert all((REPO_ROOT / path).is_file() for files in HANDED_OUT_AFTER.values() for path in files)


class _Item:
    def __init__(self, nodeid: str, fixturenames: tuple[str, ...]) -> None:
        self.nodeid, self.fixturenames = nodeid, fixturenames


def test_a_file_goes_whole_into_the_group_of_the_costliest_shared_fixture_it_uses():
    items = [
        _Item("tests/g.py::t_valid", ("gradescope_results", "graded_examples")),
        _Item("tests/g.py::t_scores", ("gradescope_results",)),
        _Item("tests/h.py::t", ("corpus_run",)),
        _Item("tests/h.py::u", ("reference_cpu_run",)),
        _Item("tests/i.py::t", ()),
    ]
    assert groups_of(items) == {
        "tests/g.py::t_valid": "graded_examples",
        "tests/g.py::t_scores": "graded_examples",
        "tests/h.py::t": "reference_cpu_run",
        "tests/h.py::u": "reference_cpu_run",
        "tests/i.py::t": "tests/i.py",
    }
