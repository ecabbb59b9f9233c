"""bench/feedback_pages.py: one side's pages render in a fresh process and report their CPU per page."""

from __future__ import annotations

from bench_scripts import REPO, load_bench


def test_a_side_renders_its_pages_and_reports_cpu_per_page() -> None:
    cpu_s_per_page = load_bench("feedback_pages").render_pages(REPO, 3)
    assert 0 < cpu_s_per_page < 1.0  # pictures written as SVG text: milliseconds, not seconds
