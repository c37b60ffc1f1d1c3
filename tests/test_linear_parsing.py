"""The parent's parsing of student text is linear in its size: no backtracking regular
expression over a student's cells. Hidden-test markers (nbgrader's BEGIN/END HIDDEN TESTS) are
taken out by a line scan; it removes exactly what nbgrader's pattern removes, and its number of
steps is bounded by the number of lines, on a 5 MB notebook cell of marker lines too.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gradtutor.grading.submission import hidden_test_steps, strip_hidden_tests

# the pattern the parent used before (nbgrader's ClearHiddenTests removes the same blocks): it
# backtracks over every later line for each BEGIN without an END, quadratic in the cell
NBGRADER_PATTERN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                              re.M | re.S)
LINES = ["### BEGIN HIDDEN TESTS", "  ### END HIDDEN TESTS here", "\t### BEGIN HIDDEN TESTS x",
         "x = 1", "", "y ### END HIDDEN TESTS", "\r", "### END HIDDEN TESTS", " #", "\t"]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(LINES), st.text(alphabet=" \t#x\r", max_size=5)), max_size=12),
       st.booleans())
def test_the_scan_removes_what_nbgraders_pattern_removes(lines: list[str], newline: bool) -> None:
    source = "\n".join(lines) + ("\n" if newline else "")
    assert strip_hidden_tests(source) == NBGRADER_PATTERN.sub("", source)


def test_hidden_tests_go_and_the_rest_stays() -> None:
    source = ("a = 1\n  ### BEGIN HIDDEN TESTS\nassert a\n### END HIDDEN TESTS  \nb = 2\n"
              "### BEGIN HIDDEN TESTS\nc")
    assert strip_hidden_tests(source) == "a = 1\nb = 2\n### BEGIN HIDDEN TESTS\nc"


def test_five_megabytes_of_markers_take_steps_bounded_by_their_lines() -> None:
    for unit in ("### BEGIN HIDDEN TESTS\n", "### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n",
                 "\t### BEGIN HIDDEN TESTS\nx\n"):
        source = unit * (5 * 2**20 // len(unit))
        lines = source.count("\n") + 1
        assert len(source) >= 5 * 2**20 - len(unit)
        assert hidden_test_steps(source) <= 2 * lines
        kept = strip_hidden_tests(source)
        assert kept == ("" if "END" in unit else source)
