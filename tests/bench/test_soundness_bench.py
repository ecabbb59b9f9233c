"""bench/soundness.py --assignment attention_encoder grades exactly Part 1's fixtures, as the cases file says."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from bench_scripts import load_bench


def _bench() -> ModuleType:
    return load_bench("soundness")


def test_the_part_1_case_list_is_the_fixtures_folder(tmp_path: Path) -> None:
    bench = _bench()
    cases = bench.part1_cases(tmp_path)
    listed = {case.id: case for case in bench.ae_corpus.load_cases()}
    assert [case.id for case in cases] == list(listed)
    assert {listed[case.id].fixture for case in cases} == bench.ae_corpus.fixture_files()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{case.id}.py" for case in cases)
    for case in cases:
        assert case.path.read_text(encoding="utf-8") == listed[case.id].source()
        assert "training" not in case.unit_parts and case.tag in (None, "training", *case.unit_parts)
        assert case.expect.cap == listed[case.id].cap
        assert case.expect.max_points == listed[case.id].max_points
