"""The instructor's loop (issue #18): stored answers, regrade, the report's unexplained wrong
answers and item analysis, the LMS export, and formula escaping in every CSV.

Results files here come from real judging: each planted answer cell is run after the unit's
setup at every variant and judged through ``scoring.judged``, the function ``grade`` stores its
entries with. The end-to-end test grades a real demo class in the sandbox (root) and regrades
it against modified copies of an exercise unit, put first on the import path.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gradtutor.course import Course
from gradtutor.grading import regrade
from gradtutor.grading.scoring import judged
from gradtutor.key import registry
from gradtutor.key.answer_key import fingerprint, grader_fingerprint, run_at
from gradtutor.nbcells import grade_id
from gradtutor.records import gradebook, sheet, store
from gradtutor.records.results import ExerciseResult, SubmissionResult, read_result
from gradtutor.reports import analysis, export, report

REPO = Path(__file__).resolve().parents[1]
CHAPTER = registry.chapters()[0]
XYZ = registry.get("chain_xyz")


def _plain_answers(ex, code: str) -> list[dict]:
    out = []
    for params in ex.variants():
        ns: dict = {}
        exec("import torch\nimport torch.nn.functional as F", ns)  # the lesson's import cell
        out.append(run_at(ex, ns, code, params))
    return out


def _result(student: str, answers: dict[str, str]) -> SubmissionResult:
    """A results file as ``grade`` writes it, for the first chapter: every exercise correct
    unless ``answers`` gives its answer cell."""
    entries = []
    for eid in CHAPTER.exercise_ids():
        ex = registry.get(eid)
        code = answers.get(eid, ex.solution)
        entries.append(judged(eid, ex.points, _plain_answers(ex, code)))
    return SubmissionResult(student=student, assignment=CHAPTER.slug, status="graded", reason="",
                            score=sum(e.points for e in entries),
                            max_score=sum(e.max_points for e in entries),
                            graded_at="2026-01-15T10:00:00+00:00", exercises=entries,
                            grader=grader_fingerprint())


# ---------------------------------------------------------------- stored answers, validated


def test_results_keep_every_variants_plain_answer_and_the_units_fingerprint() -> None:
    r = _result("s1", {"chain_xyz": "grads_xyz = [1.0, 1.0, x0 + y0]"})
    e = next(e for e in r.exercises if e.id == "chain_xyz")
    assert len(e.answers) == len(XYZ.variants()) == 2
    assert e.answers[0] == {"t": "array", "shape": [3], "dtype": "float", "v": [1.0, 1.0, 3.0]}
    assert (e.unit, e.inputs) == fingerprint("chain_xyz")
    assert e.misconception == "local_gradient_only"
    back = read_result(json.loads(json.dumps(r.to_json())))
    assert back is not None
    assert next(x for x in back.exercises if x.id == "chain_xyz").answers == e.answers


@pytest.mark.parametrize("answers", ["[1, 2]", {"t": "array"}, [], list(range(65))])
def test_stored_answers_that_are_not_a_list_of_answers_make_the_file_unreadable(answers) -> None:
    data = {"student": "s", "assignment": "a", "exercises": [
        {"id": "chain_xyz", "points": 1, "max_points": 1, "answers": answers}]}
    assert read_result(data) is None


def test_stored_answers_are_rebuilt_like_a_childs_message() -> None:
    forged = {"t": "array", "shape": [2], "dtype": "evil", "v": [1.0, "__import__('os')"]}
    data = {"student": "s", "assignment": "a", "exercises": [
        {"id": "chain_xyz", "points": 1, "max_points": 1, "unit": "../../etc",
         "answers": [forged, {"t": "str", "v": "x" * 10_000}, {"t": "node", "v": "a b"}]}]}
    e = read_result(data).exercises[0]
    assert e.answers == [{"t": "unsupported"}, {"t": "str", "v": "x" * 200}, {"t": "unsupported"}]
    assert e.unit is None and e.inputs is None


def test_fingerprint_moves_with_tolerance_points_and_wrong_answers_only(monkeypatch) -> None:
    import dataclasses

    from gradtutor.key import answer_key
    from gradtutor.key.exercise import Wrong

    def clear() -> None:
        for cached in (answer_key.check_for, answer_key.fingerprint, answer_key._grading_variant):
            cached.cache_clear()

    base = fingerprint("chain_xyz")
    variants = {
        "tolerance": dataclasses.replace(XYZ, kind=dataclasses.replace(XYZ.kind, rtol=1e-2)),
        "points": dataclasses.replace(XYZ, points=2.0),
        "wrong": dataclasses.replace(XYZ, wrong=(*XYZ.wrong, Wrong(
            "sign_flipped", lambda x, y, z: [-z, -z, -x - y], "e", "h"))),
        "values": dataclasses.replace(XYZ, hidden=({"x": 0.5, "y": 1.5, "z": -1.0},)),
        "title": dataclasses.replace(XYZ, title="Another title"),
    }
    original = registry.get
    seen = {}
    try:
        for name, ex in variants.items():
            clear()
            monkeypatch.setattr(registry, "get", lambda eid, ex=ex: ex if eid == "chain_xyz"
                                else original(eid))
            seen[name] = answer_key.fingerprint("chain_xyz")
    finally:
        monkeypatch.setattr(registry, "get", original)
        clear()
    for name in ("tolerance", "points", "wrong"):
        assert seen[name][0] != base[0] and seen[name][1] == base[1], name
    assert seen["values"][0] != base[0] and seen["values"][1] != base[1]
    assert seen["title"] == base
    assert fingerprint("chain_xyz") == base


# ---------------------------------------------------------------- regrade, without the sandbox


@pytest.mark.parametrize("force", [False, True])
def test_rejudge_with_unchanged_units_changes_nothing(force: bool) -> None:
    """Judged again (``force``) or known to judge the same (fingerprints equal): no change."""
    written = _result("s1", {"chain_xyz": "grads_xyz = [9.0, 9.0, 9.0]"})
    r = read_result(json.loads(json.dumps(written.to_json())))
    done = regrade.rejudge(r, {eid: 1.0 for eid in CHAPTER.exercise_ids()}, force=force)
    assert not done.changed and not done.refreshed and not done.not_regradable
    assert done.exercises == r.exercises


def test_results_judged_by_other_judging_code_are_judged_again() -> None:
    written = _result("s1", {"chain_xyz": "grads_xyz = [1.0, 1.0, 3.0]"})
    r = read_result(json.loads(json.dumps(written.to_json())))
    r.grader = "0" * 16
    e = next(e for e in r.exercises if e.id == "chain_xyz")
    e.misconception, e.message = None, "judged by older code"
    done = regrade.rejudge(r, {})
    assert done.refreshed
    assert [(o.misconception, n.misconception) for o, n in done.changed] == \
        [(None, "local_gradient_only")]


def test_rejudge_names_answers_to_other_values_and_results_without_answers() -> None:
    r = read_result(json.loads(json.dumps(_result("s1", {}).to_json())))
    r.exercises[0].inputs = "0" * 16  # graded when the unit had other variants
    r.exercises[1].answers = None  # graded before answers were stored
    done = regrade.rejudge(r, {})
    assert set(done.not_regradable) == {r.exercises[0].id, r.exercises[1].id}
    assert done.exercises[:2] == r.exercises[:2] and not done.changed


# ---------------------------------------------------------------- the report's new sections

PLANTED = {  # student -> chain_xyz answer cell
    "s01": "grads_xyz = [z0, z0, x0 * y0]", "s02": "grads_xyz = [z0, z0, x0 * y0]",
    "s03": "grads_xyz = [z0, z0, x0 * y0]",  # unexplained, no slip: 3 students
    "s04": "grads_xyz = [-z0, -z0, -(x0 + y0)]", "s05": "grads_xyz = [-z0, -z0, -(x0 + y0)]",  # sign
    "s06": "grads_xyz = [7.0, 8.0, 9.0]",  # unexplained but alone: not listed
    "s07": "grads_xyz = [1.0, 1.0, x0 + y0]", "s08": "grads_xyz = [1.0, 1.0, x0 + y0]",  # listed Wrong
}
GRAD_FN = {"s01": "z_grad_fn = 'MulBackward0'", "s02": "z_grad_fn = 'MulBackward0'"}  # unlisted


@pytest.fixture(scope="module")
def planted_course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("planted")
    folder = Course.at(course).results_dir / CHAPTER.slug
    folder.mkdir(parents=True)
    grad_fn = registry.get("grad_fn_z")
    for student in [*PLANTED, "s09", "s10"]:
        answers = {"chain_xyz": PLANTED.get(student, XYZ.solution)}
        if student in GRAD_FN:
            answers["grad_fn_z"] = GRAD_FN[student]
        if student in ("s09", "s10"):  # two weak students: everything blank but one exercise
            answers = {eid: registry.get(eid).starter() for eid in CHAPTER.exercise_ids()
                       if eid != "chain_xyz"}
        store.write_result(Course.at(course), _result(student, answers))
    assert grad_fn.id in CHAPTER.exercise_ids()
    assert report.report_cli(course_dir=course, out=None) == 0
    return course


def _rows(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_unexplained_wrong_answers_are_the_shared_ones_no_wrong_explains(planted_course) -> None:
    rows = _rows(planted_course / "reports" / "unexplained.csv")
    xyz = {r["who"]: r for r in rows if r["exercise"] == "chain_xyz"}
    assert set(xyz) == {"s01 s02 s03", "s04 s05"}  # s06 is alone; s07, s08 are explained
    assert xyz["s01 s02 s03"]["students"] == "3" and xyz["s01 s02 s03"]["generic_slip"] == ""
    assert xyz["s04 s05"]["generic_slip"] == "sign_flipped"
    assert xyz["s01 s02 s03"]["answer"] == "[-4.0, -4.0, -10.0]"
    names = {r["exercise"]: r["answer"] for r in rows}
    assert names["grad_fn_z"] == "'MulBackward0'"
    assert len(rows) == 3
    page = (planted_course / "reports" / "report.html").read_text()
    assert "<h2>Unexplained wrong answers</h2>" in page and "s01, s02, s03" in page


def test_the_ready_to_paste_wrong_entries_compute_what_the_students_gave(planted_course) -> None:
    """Pasted into the unit, an entry is valid Python; a slip's entry computes the students'
    answer from the unit's own reference; a name's entry is the name itself."""
    import importlib

    import torch

    from gradtutor.key.exercise import Wrong

    rows = {(r["exercise"], r["who"]): r["wrong_entry"] for r in
            _rows(planted_course / "reports" / "unexplained.csv")}
    module = vars(importlib.import_module("exercises.ch01_graphs.chain_xyz"))
    for entry in rows.values():
        tree = ast.parse(entry.rstrip().rstrip(","), mode="eval")
        assert isinstance(tree.body, ast.Call) and tree.body.func.id == "Wrong"
    sign = eval(rows[("chain_xyz", "s04 s05")].rstrip().rstrip(","), {**module, "Wrong": Wrong})
    assert sign.misconception == "sign_flipped"
    for params in XYZ.variants():
        assert torch.allclose(torch.as_tensor(sign.value(**params), dtype=torch.float64),
                              -XYZ.reference(**params))
    name = rows[("grad_fn_z", "s01 s02")]
    ns = vars(importlib.import_module("exercises.ch01_graphs.grad_fn_z"))
    w = eval(name.rstrip().rstrip(","), {**ns, "Wrong": Wrong})
    assert w.value(**registry.get("grad_fn_z").params) == "MulBackward0"
    free = rows[("chain_xyz", "s01 s02 s03")]
    assert "lambda x, y, z: ..." in free and "[-4.0, -4.0, -10.0] at x=-2.0, y=5.0, z=-4.0" in free


def test_item_analysis_difficulty_and_discrimination(planted_course) -> None:
    rows = {r["exercise"]: r for r in _rows(planted_course / "reports" / "items.csv")}
    assert set(rows) == set(CHAPTER.exercise_ids())
    xyz = rows["chain_xyz"]
    # chain_xyz: s01-s08 wrong (0), s09, s10 and the solution's... s09, s10 right: 2 of 10
    assert int(xyz["submissions"]) == 10 and float(xyz["difficulty"]) == pytest.approx(0.2)
    assert int(xyz["correct"]) == 2 and int(xyz["wrong"]) == 8
    # the two students right here are the two who left everything else blank: negative
    assert float(xyz["discrimination"]) < 0 and xyz["note"].startswith("negative")
    results = store.load_results(Course.at(planted_course))
    share = [next(e for e in r.exercises if e.id == "chain_xyz").points for r in results]
    rest = [sum(e.points for e in r.exercises if e.id != "chain_xyz") for r in results]
    import statistics

    assert float(xyz["discrimination"]) == pytest.approx(statistics.correlation(share, rest), abs=1e-4)
    page = (planted_course / "reports" / "report.html").read_text()
    assert page.count('<img src="data:image/png;base64,') == 1 and "Item analysis" in page


def test_misconceptions_per_student_across_chapters() -> None:
    def entry(eid: str, misconception: str) -> ExerciseResult:
        return ExerciseResult(eid, 0.0, 1.0, misconception=misconception)

    results = [
        SubmissionResult("a", "ch01", exercises=[entry("x", "m1")]),
        SubmissionResult("a", "ch02", exercises=[entry("y", "m1"), entry("z", "m2")]),
        SubmissionResult("b", "ch01", exercises=[entry("x", "m2")]),
    ]
    assert analysis.student_misconceptions(results) == {
        "a": {"m1": ["ch01", "ch02"], "m2": ["ch02"]}, "b": {"m2": ["ch01"]}}


# ---------------------------------------------------------------- export and CSV escaping

HOSTILE_IDS = ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain"]


def _gradebook(course: Path, ids: list[str]) -> None:
    from nbgrader.api import Gradebook

    bindir = str(Path(sys.executable).parent)  # nbgrader calls `alembic` from PATH
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(CHAPTER.slug)
        for n, sid in enumerate(ids):
            gb.update_or_create_student(sid, first_name=f"First{n}", last_name="=Last",
                                        lms_user_id=str(1000 + n))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, dict]:
    course = tmp_path_factory.mktemp("export")
    _gradebook(course, HOSTILE_IDS)
    scores = {}
    for n, sid in enumerate(HOSTILE_IDS[:-1]):  # "plain" submitted nothing
        r = _result(sid, {"chain_xyz": "grads_xyz = [1.0, 1.0, x0 + y0]"} if n % 2 else {})
        store.write_result(Course.at(course), r)
        scores[sid] = r.score
    assert export.export_cli(course_dir=course, canvas=course / "canvas.csv",
                             csv=course / "scores.csv", section="A1") == 0
    return course, scores


def test_canvas_file_reads_back_as_canvas_expects(exported) -> None:
    course, scores = exported
    with (course / "canvas.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CHAPTER.slug]
    points = sum(registry.get(e).points for e in CHAPTER.exercise_ids())
    assert rows[1][:5] == ["Points Possible", "", "", "", ""] and float(rows[1][5]) == points
    body = {r[2]: r for r in rows[2:]}
    assert len(body) == len(HOSTILE_IDS)
    for n, sid in enumerate(HOSTILE_IDS):
        escaped = sheet.cell(sid)
        row = body[escaped]
        assert row[3] == escaped and row[1] == str(1000 + n) and row[4] == "A1"
        assert row[0] == f"'=Last, First{n}"
        assert float(row[5]) == pytest.approx(scores.get(sid, 0.0))
    assert {sheet.cell(s) for s in HOSTILE_IDS} - {"plain"} == \
        {"'" + s for s in HOSTILE_IDS if s != "plain"}


def test_export_csv_has_one_row_per_student_and_assignment(exported) -> None:
    course, scores = exported
    rows = _rows(course / "scores.csv")
    assert len(rows) == len(HOSTILE_IDS)
    by = {r["student"]: r for r in rows}
    assert by["plain"]["status"] == "not submitted"
    assert float(by["'+1"]["total"]) == pytest.approx(scores["+1"])


def test_every_csv_the_project_writes_escapes_formulas(exported, tmp_path) -> None:
    course, _ = exported
    assert report.report_cli(course_dir=course, out=tmp_path / "r") == 0
    store.write_csv(tmp_path / "grade.csv", store.load_results(Course.at(course)))
    written = [*sorted((tmp_path / "r").glob("*.csv")), tmp_path / "grade.csv",
               course / "canvas.csv", course / "scores.csv"]
    assert len(written) == 10
    for path in written:
        with path.open(newline="") as f:
            for row in csv.reader(f):
                for value in row:
                    assert value[:1] not in sheet.FORMULA_START or \
                        _is_number(value), (path.name, value)


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def test_every_csv_writer_goes_through_the_helper() -> None:
    """No module writes CSV but ``sheet``."""
    found = [p for p in (REPO / "autograder").rglob("*.py")
             if "csv.writer" in p.read_text() and p.name != "sheet.py"]
    assert found == []


def test_export_says_what_it_needs(tmp_path, capsys) -> None:
    assert export.export_cli(course_dir=tmp_path) == 2
    assert "--canvas" in capsys.readouterr().err


# ---------------------------------------------------------------- end to end: grade, change a unit, regrade

STUDENTS = 8
ALL_Z = "grads_xyz = [z0, z0, x0 * y0]"  # a mistake no unit lists yet
NEW_WRONG = '''
        Wrong("every_input_gets_z", lambda x, y, z: [z, z, x * y],
              "The third entry multiplies x and y: q = x + y is a sum, not a product.",
              "Which inputs does z multiply, and which input's derivative is x + y?"),
'''


def _unit_copy(root: Path, edit) -> Path:
    """The exercise package copied, with chain_xyz's unit edited: first on the import path,
    it is what the registry loads."""
    shutil.copytree(REPO / "exercises", root / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__"))
    unit = root / "exercises" / CHAPTER.slug / "chain_xyz.py"
    unit.write_text(edit(unit.read_text()))
    return root


def _cli(*args: str, units: Path | None = None) -> subprocess.CompletedProcess:
    path = [str(units)] if units else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(REPO)])}
    return subprocess.run([sys.executable, "-m", "gradtutor.cli", *args], capture_output=True,
                          text=True, env=env, cwd="/")


def _entries(course: Path) -> dict[tuple[str, str], ExerciseResult]:
    return {(r.student, e.id): e for r in store.load_results(Course.at(course)) for e in r.exercises}


def _auto_scores(course: Path) -> dict:
    return gradebook.scores(Course.at(course))


@pytest.fixture(scope="module")
def graded_demo(tmp_path_factory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("gradtutor grade needs root")
    course = tmp_path_factory.mktemp("loop") / "course"
    done = _cli("demo-class", str(course), "--students", str(STUDENTS), "--seed", "5",
                "--assignment", CHAPTER.slug)
    assert done.returncode == 0, done.stderr
    for student in ("student001", "student008"):  # the all-correct one and a realistic one
        path = course / "submitted" / student / CHAPTER.slug / f"{CHAPTER.slug}.ipynb"
        nb = json.loads(path.read_text())
        cell = next(c for c in nb["cells"]
                    if grade_id(c) == "chain_xyz-answer")
        cell["source"] = ALL_Z
        path.write_text(json.dumps(nb))
    done = _cli("grade", str(course), "--workers", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    return course


@pytest.mark.slow
def test_regrade_after_a_tolerance_change_is_grading_again(graded_demo, tmp_path) -> None:
    course = tmp_path / "course"
    shutil.copytree(graded_demo, course, symlinks=True)
    before = _entries(course)
    # a manual grade from the formgrader, on an exercise the change touches
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("UPDATE grade SET manual_score = 0.25 WHERE id IN (SELECT g.id FROM grade g "
                   "JOIN base_cell b ON g.cell_id = b.id JOIN submitted_notebook n ON g.notebook_id "
                   "= n.id JOIN submitted_assignment s ON n.assignment_id = s.id WHERE b.name = "
                   "'chain_xyz' AND s.student_id = 'student008')")
    units = _unit_copy(tmp_path / "units", lambda t: t.replace(
        "kind=Tensor(shape=(3,)),", "kind=Tensor(shape=(3,), rtol=2.5),"))
    stale = _cli("grade", str(course), units=units)
    assert "0 to grade" in stale.stderr and "stale" in stale.stderr and "chain_xyz" in stale.stderr
    again = _cli("regrade", str(course), "--csv", str(tmp_path / "changes.csv"), units=units)
    assert again.returncode == 0, again.stderr
    # the oracle: the same class graded from scratch (notebooks run) with the changed unit
    oracle = tmp_path / "oracle"
    shutil.copytree(graded_demo, oracle, symlinks=True)
    done = _cli("grade", str(oracle), "--force", "--workers", "2", units=units)
    assert done.returncode == 0, done.stderr[-2000:]
    after, expected = _entries(course), _entries(oracle)
    keys = ("points", "verdict", "misconception", "message", "answers", "unit")
    assert {k: {f: getattr(e, f) for f in keys} for k, e in after.items()} == \
        {k: {f: getattr(e, f) for f in keys} for k, e in expected.items()}
    changed = {k for k in after if after[k].points != before[k].points}
    assert changed and {eid for _, eid in changed} == {"chain_xyz"}
    rows = _rows(tmp_path / "changes.csv")
    assert {(r["student"], r["exercise"]) for r in rows} >= changed
    for r in rows:
        assert float(r["change"]) == pytest.approx(float(r["new_points"]) - float(r["old_points"]))
        assert f"{r['student']}/{CHAPTER.slug}" in again.stderr
    ours, theirs = _auto_scores(course), _auto_scores(oracle)
    assert ours == theirs
    with sqlite3.connect(course / "gradebook.db") as db:
        kept = db.execute("SELECT COUNT(*) FROM grade WHERE manual_score = 0.25").fetchone()[0]
    assert kept == 1  # the manual grade survives, as under grade --force
    # graded against the current units now: grade and regrade have nothing to say
    assert "stale" not in _cli("grade", str(course), units=units).stderr
    mtimes = {p: p.stat().st_mtime_ns for p in course.rglob("*") if p.is_file()}
    quiet = _cli("regrade", str(course), units=units)
    assert quiet.returncode == 0 and "Nothing changed" in quiet.stderr
    assert {p: p.stat().st_mtime_ns for p in course.rglob("*") if p.is_file()} == mtimes


@pytest.mark.slow
def test_regrade_after_a_new_wrong_answer_diagnoses_it(graded_demo, tmp_path) -> None:
    course = tmp_path / "course"
    shutil.copytree(graded_demo, course, symlinks=True)
    assert _cli("feedback", str(course)).returncode == 0
    assert _cli("report", str(course)).returncode == 0
    unexplained = _rows(course / "reports" / "unexplained.csv")
    assert [r["who"] for r in unexplained if r["exercise"] == "chain_xyz"] == ["student001 student008"]
    # a hostile results file beside them: it must not stop the batch
    bad = Course.at(course).results_path(CHAPTER.slug, "student999")
    bad.write_text(json.dumps({"exercises": [{"id": "chain_xyz", "points": 1, "max_points": 1,
                                              "answers": "rm -rf /"}]}))
    before = _entries(course)
    units = _unit_copy(tmp_path / "units", lambda t: t.replace("    wrong=(\n",
                                                               "    wrong=(" + NEW_WRONG, 1))
    again = _cli("regrade", str(course), units=units)
    assert again.returncode == 1 and "student999" in again.stderr  # named, the rest regraded
    after = _entries(course)
    for key, e in after.items():
        if key[1] == "chain_xyz" and key[0] in ("student001", "student008"):
            assert e.misconception == "every_input_gets_z" and e.points == 0
            assert before[key].misconception is None
        else:
            assert {f: getattr(e, f) for f in ("points", "verdict", "misconception")} == \
                {f: getattr(before[key], f) for f in ("points", "verdict", "misconception")}
    page = (course / "feedback" / "student001" / CHAPTER.slug / "feedback.html").read_text()
    assert "Which inputs does z multiply, and which input&#x27;s derivative is x + y?" in page
    graded = json.loads((course / "autograded" / "student001" / CHAPTER.slug /
                         f"{CHAPTER.slug}.ipynb").read_text())
    cell = next(c for c in graded["cells"]
                if grade_id(c) == "chain_xyz")
    assert "every_input_gets_z" in "".join(cell["outputs"][0]["text"])
    done = _cli("report", str(course), units=units)
    assert done.returncode == 0
    assert not [r for r in _rows(course / "reports" / "unexplained.csv") if r["exercise"] == "chain_xyz"]


@pytest.mark.slow
def test_regrade_after_a_points_change_scores_out_of_the_new_maximum(graded_demo, tmp_path) -> None:
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    shutil.copytree(graded_demo, course, symlinks=True)
    before = _entries(course)
    units = _unit_copy(tmp_path / "units", lambda t: t.replace(
        "kind=Tensor(shape=(3,)),", "kind=Tensor(shape=(3,)), points=3.0,"))
    again = _cli("regrade", str(course), units=units)
    assert again.returncode == 0, again.stderr
    assert "Points of chain_xyz: 1 -> 3" in again.stderr
    for (student, eid), e in _entries(course).items():
        old = before[(student, eid)]
        factor = 3 if eid == "chain_xyz" else 1
        assert e.max_points == old.max_points * factor
        assert e.points == pytest.approx(old.points * factor)
    with Gradebook(Course.at(course).db_url) as gb:
        assert gb.find_grade_cell("chain_xyz", CHAPTER.slug, CHAPTER.slug).max_score == 3.0
    source = json.loads((course / "source" / CHAPTER.slug / f"{CHAPTER.slug}.ipynb").read_text())
    cell = next(c for c in source["cells"]
                if grade_id(c) == "chain_xyz")
    assert cell["metadata"]["nbgrader"]["points"] == 3.0
    scores = gradebook.scores(Course.at(course))
    for (student, eid), e in _entries(course).items():
        if eid == "chain_xyz":
            assert scores[(student, CHAPTER.slug, eid)] == pytest.approx(e.points)
    # a second run finds nothing to do: the course now says what the unit says
    assert "Nothing changed" in _cli("regrade", str(course), units=units).stderr
