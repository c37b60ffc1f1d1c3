"""The synthetic class (demo-class) and the class report.

Results files for the report are made by real judging: each planted answer cell is run after
the exercise's setup at every variant (shown and hidden), read as plain data and judged, as
the batch grader does. Nothing in them is typed in.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.judge import judge, same
from autograder.plain import to_plain
from gradtutor.authoring import demo
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.key.answer_key import coinciding, reference, run_at
from gradtutor.nbcells import grade_id
from gradtutor.reports import report

CHAPTER = registry.chapters()[0]
EXS = [registry.get(eid) for eid in CHAPTER.exercise_ids()]
ALL = registry.all_exercises()
VALUES = [ex for ex in ALL if not ex.is_function]
STUDENTS = 16
SEED = 7


# ---------------------------------------------------------------- answers typed in as literals


@pytest.mark.parametrize("value", [
    3.0, -0.1 + 1e-17, 7, True, None, "AddBackward0", [1.5, -2.0], [[1.0, 2.0], [3.0, 4.0]],
    {"x": {"is_leaf": True, "grad": 1.0}, "z": {"is_leaf": False, "grad": None}},
    [float("nan"), float("inf"), -float("inf")], [True, False],
])
def test_literal_reads_back_as_the_same_plain_value(value):
    p = to_plain(value)
    assert to_plain(demo._value_of(demo.plain_source(p))) == p


@pytest.mark.parametrize("ex", ALL, ids=[ex.id for ex in ALL])
def test_every_known_wrong_answer_can_be_planted_and_is_diagnosed(ex):
    usable = demo.usable_wrongs(ex)
    if not ex.is_function:  # a value typed in always survives; a constant function may not,
        # nor a literal equal at the shown values to an earlier wrong answer (seed 001's 4 at
        # x0 = 1 is 4x and (2x)² alike; only other values tell them apart: judge.believed)
        shadowed = {b for _, b in coinciding(ex.id)}
        assert usable == [i for i in range(len(ex.wrong)) if i not in shadowed]
    for i in usable:
        w = ex.wrong[i]
        fb = judge(ex.id, [_answer(ex, demo.planted(ex, f"wrong:{i}").code, ex.params)])
        assert (fb.verdict, fb.misconception) == ("wrong", w.misconception)


@pytest.mark.parametrize("ex", VALUES, ids=[ex.id for ex in VALUES])
def test_hardcoded_answer_is_right_at_the_shown_values_only(ex):
    code = demo.planted(ex, demo.HARDCODED).code
    answers = [_answer(ex, code, p) for p in ex.variants()]
    fb = judge(ex.id, answers)
    assert fb.variants[0].status == "correct"
    refs_differ = any(not same(ex.kind, reference(ex.id, 0), reference(ex.id, i))
                      for i in range(1, len(answers)))
    # a typed-in number fails wherever the reference moves with the parameters
    assert fb.verdict == ("partial" if refs_differ else "correct")


def test_class_plan_is_reproducible_and_covers_every_profile():
    plan = demo.class_plan(EXS, 40, SEED)
    assert plan == demo.class_plan(EXS, 40, SEED)
    assert plan != demo.class_plan(EXS, 40, SEED + 1)
    profiles = {e["profile"] for e in plan.values()}
    assert {"all_correct", "hardcoded_numbers", "blank", "half_done", "infinite_loop",
            "deleted_cells", "invalid_json", "realistic"} <= profiles
    planted = {(ex.id, e["answers"][ex.id]) for e in plan.values() for ex in EXS}
    assert all((ex.id, f"wrong:{i}") in planted for ex in EXS for i in range(len(ex.wrong)))
    # the realistic students are mostly right, sometimes wrong, sometimes blank
    choices = [c for e in plan.values() if e["profile"] == "realistic" for c in e["answers"].values()]
    share = {k: sum(c.startswith(k) for c in choices) / len(choices)
             for k in ("correct", "wrong", "blank")}
    assert 0.4 < share["correct"] < 0.8 and 0.1 < share["wrong"] < 0.5 and share["blank"] > 0


# ---------------------------------------------------------------- the course on disk (nbgrader)


@pytest.fixture(scope="module")
def demo_course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("demo") / "course"
    done = subprocess.run([sys.executable, "-m", "gradtutor.cli", "demo-class", str(course),
                           "--students", str(STUDENTS), "--seed", str(SEED),
                           "--assignment", CHAPTER.slug], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return course


@pytest.mark.slow
def test_demo_class_is_an_nbgrader_course_with_planted_submissions(demo_course):
    manifest = json.loads((demo_course / demo.PROFILES_FILE).read_text())
    assert list(manifest["students"]) == [f"student{n:03d}" for n in range(1, STUDENTS + 1)]
    assert "os.path.dirname(os.path.abspath(__file__))" in (
        demo_course / "nbgrader_config.py").read_text()
    released = nbformat.read(demo_course / "release" / CHAPTER.slug / f"{CHAPTER.slug}.ipynb", 4)
    for student, entry in manifest["students"].items():
        path = demo_course / "submitted" / student / CHAPTER.slug / f"{CHAPTER.slug}.ipynb"
        assert (path.parent / "timestamp.txt").is_file()
        if entry["profile"] == "invalid_json":
            with pytest.raises(ValueError):
                json.loads(path.read_text())
            continue
        nb = nbformat.read(path, as_version=4)
        for ex in EXS:
            choice = entry["answers"][ex.id]
            answer, grade = _cell(nb, f"{ex.id}-answer"), _cell(nb, ex.id)
            assert (grade is None) == (choice == demo.DELETED_GRADE)
            assert (answer is None) == (choice == demo.DELETED_ANSWER)
            if choice == demo.BLANK:
                assert answer.source == _cell(released, f"{ex.id}-answer").source
            elif choice == demo.LOOP:
                assert "while True" in answer.source
            elif choice.startswith(("correct", "wrong", "hardcoded")):
                assert answer.source == demo.planted(ex, choice).code


def test_demo_class_refuses_a_folder_in_use(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("an instructor's file")
    assert demo.demo_class_cli(course_dir=tmp_path, students=3, seed=0, assignment=None) == 2
    assert "not empty" in capsys.readouterr().out
    assert (tmp_path / "notes.txt").exists()


# ---------------------------------------------------------------- the report


def _answer(ex, code: str | None, params: dict) -> dict:
    """Run the setup and an answer cell at these parameters; the answer as plain data."""
    ns: dict = {}
    exec("import torch\nimport torch.nn.functional as F", ns)  # the lesson's import cell
    return run_at(ex, ns, code if code is not None else ex.starter(), params)


def _judged(student: str, assignment: str, entry: dict) -> dict:
    if entry["profile"] == "invalid_json":
        return {"student": student, "assignment": assignment, "status": "failed",
                "reason": "not a notebook: the file is not valid JSON", "score": 0.0,
                "max_score": sum(ex.points for ex in EXS), "exercises": []}
    rows = []
    for ex in EXS:
        code = demo.planted(ex, entry["answers"][ex.id]).code
        fb = judge(ex.id, [_answer(ex, code, p) for p in ex.variants()])
        rows.append({"id": ex.id, "points": ex.points * fb.score, "max_points": ex.points,
                     "verdict": fb.verdict, "score": fb.score, "misconception": fb.misconception,
                     "message": fb.message})
    return {"student": student, "assignment": assignment, "status": "graded", "reason": None,
            "score": sum(r["points"] for r in rows), "max_score": sum(ex.points for ex in EXS),
            "graded_at": "2026-01-15T10:00:00Z", "duration_s": None, "exercises": rows}


@pytest.fixture(scope="module")
def judged_course(tmp_path_factory) -> tuple[Path, dict]:
    """Results files from real judging of a planned class (the loop student is left out: only a
    grader with a timeout can judge it)."""
    course = tmp_path_factory.mktemp("judged")
    plan = demo.class_plan(EXS, STUDENTS, SEED)
    plan = {s: e for s, e in plan.items() if e["profile"] != "infinite_loop"}
    folder = Course.at(course).results_dir / CHAPTER.slug
    folder.mkdir(parents=True)
    for student, entry in plan.items():
        entry["answers"] = {eid: c if c not in (demo.DELETED_ANSWER, demo.DELETED_GRADE)
                            else demo.CORRECT for eid, c in entry["answers"].items()}
        (folder / f"{student}.json").write_text(json.dumps(_judged(student, CHAPTER.slug, entry)))
    (folder / "student999.json").write_text("{ truncated")  # a damaged file must not stop it
    assert report.report_cli(course_dir=course, out=None) == 0
    return course, plan


def _rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_report_ranks_the_planted_misconceptions_with_the_students_affected(judged_course):
    course, plan = judged_course
    expected: dict[str, set[str]] = {}
    for student, entry in plan.items():
        if entry["profile"] == "invalid_json":
            continue
        for mid in demo._expected(EXS, entry["answers"]).values():
            expected.setdefault(mid, set()).add(student)
    rows = _rows(course / "reports" / "misconceptions.csv")
    assert {r["misconception"]: set(r["students"].split()) for r in rows} == expected
    affected = [int(r["students_affected"]) for r in rows]
    assert affected == sorted(affected, reverse=True)  # re-teach first at the top
    page = (course / "reports" / "report.html").read_text()
    for mid in expected:
        assert misconceptions.CATALOGUE[mid].replace("'", "&#x27;") in page


def test_report_counts_outcomes_per_exercise(judged_course):
    course, plan = judged_course
    graded = {s: e for s, e in plan.items() if e["profile"] != "invalid_json"}
    for row in _rows(course / "reports" / "exercises.csv"):
        choices = [e["answers"][row["exercise"]] for e in graded.values()]
        assert int(row["submissions"]) == len(plan)
        assert int(row["failed"]) == len(plan) - len(graded)
        assert int(row["not_answered"]) == choices.count(demo.BLANK)
        assert int(row["correct"]) >= choices.count(demo.CORRECT)
        assert int(row["wrong"]) == sum(c.startswith("wrong:") for c in choices)
        assert math.isclose(float(row["success_rate"]), int(row["correct"]) / len(plan),
                            abs_tol=1e-3)
    students = _rows(course / "reports" / "students.csv")
    best = next(r for r in students if plan[r["student"]]["profile"] == "all_correct")
    assert float(best["percent"]) == 100.0


def test_report_page_is_self_contained_with_described_charts(judged_course):
    course, _ = judged_course
    page = (course / "reports" / "report.html").read_text()
    assert page.count('<img src="data:image/svg+xml;base64,') == 3
    assert page.count('<img src="data:image/png;base64,') == 1  # item analysis
    assert page.count(' alt="') == 4 and 'alt=""' not in page
    assert "http://" not in page and "https://" not in page  # nothing fetched when opened
    assert "student999.json" in page and "not valid JSON" in page


def test_report_without_results_says_what_to_do(tmp_path, capsys):
    assert report.report_cli(course_dir=tmp_path, out=None) == 1
    assert "gradtutor grade" in capsys.readouterr().out


def _cell(nb, wanted: str):
    return next((c for c in nb.cells if grade_id(c) == wanted),
                None)


# ---------------------------------------------------------------- end to end: demo -> grade -> report


@pytest.mark.slow
def test_graded_demo_class_report_names_the_planted_misconceptions(demo_course, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(demo_course, course)
    for command in (["grade", str(course), "--workers", "2"], ["report", str(course)]):
        done = subprocess.run([sys.executable, "-m", "gradtutor.cli", *command],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((course / demo.PROFILES_FILE).read_text())
    expected: dict[str, set[str]] = {}
    for student, entry in manifest["students"].items():
        for mid in entry["misconceptions"].values():
            expected.setdefault(mid, set()).add(student)
    rows = _rows(course / "reports" / "misconceptions.csv")
    assert {r["misconception"]: set(r["students"].split()) for r in rows} == expected
    page = (course / "reports" / "report.html").read_text()
    for mid in expected:
        assert misconceptions.CATALOGUE[mid].replace("'", "&#x27;") in page
    # the unreadable notebook is named with its reason; the class was still graded
    broken = next(s for s, e in manifest["students"].items() if e["profile"] == "invalid_json")
    assert broken in page and "JSON" in page
    students = {r["student"]: r for r in _rows(course / "reports" / "students.csv")}
    best = next(s for s, e in manifest["students"].items() if e["profile"] == "all_correct")
    assert float(students[best]["percent"]) == 100.0
