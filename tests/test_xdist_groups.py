"""tests/xdist_groups.py: expensive session fixtures are built once per run, on one xdist worker."""

from xdist_groups import SHARED_ONCE_FIXTURES, xdist_group_of


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
