"""The benchmark's ceiling (#28): the ratio no grader can pass on the machine's cores, because
it must do the floor's work (the course's cells and the answers read at the grading variants)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# bench/harness.py by its path, under a name of its own: bench/ is not a package
_spec = importlib.util.spec_from_file_location(
    "bench_harness", Path(__file__).resolve().parents[1] / "bench" / "harness.py")
harness = sys.modules["bench_harness"] = importlib.util.module_from_spec(_spec)  # for its dataclasses
_spec.loader.exec_module(harness)


def test_a_grader_at_the_floor_reaches_the_ratio_the_cores_allow_and_no_more() -> None:
    # stock nbgrader 8 s a submission, the floor 0.2 s of one process: on 2 cores the floor
    # alone takes 0.1 s a submission, so 80x is the most any grader can reach there
    bound = harness.ceiling(stock_s=8.0, floor_s=0.2, cpu_s=0.4, workers=2)
    assert bound.ratio_at_floor == pytest.approx(80.0)
    assert bound.cores_at_floor == pytest.approx(2.5)  # 100x: 0.08 s a submission, 0.2 s of work
    assert bound.cores_as_measured == pytest.approx(5.0)  # twice the floor's CPU, twice the cores
    assert bound.target == 100


def test_the_ceiling_grows_with_the_cores_and_falls_as_the_floor_grows() -> None:
    two = harness.ceiling(stock_s=8.0, floor_s=0.2, cpu_s=0.4, workers=2)
    four = harness.ceiling(stock_s=8.0, floor_s=0.2, cpu_s=0.4, workers=4)
    heavier = harness.ceiling(stock_s=8.0, floor_s=0.4, cpu_s=0.4, workers=2)
    assert four.ratio_at_floor == pytest.approx(2 * two.ratio_at_floor)
    assert heavier.ratio_at_floor == pytest.approx(two.ratio_at_floor / 2)
    assert four.cores_at_floor == two.cores_at_floor  # what the target needs is the machine's, not the run's
    assert harness.ceiling(stock_s=8.0, floor_s=0.2, cpu_s=0.4, workers=2, target=50).cores_at_floor \
        == pytest.approx(1.25)
