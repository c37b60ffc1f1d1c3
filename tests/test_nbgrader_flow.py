"""The course through the real nbgrader CLI and gradebook, and `gradtutor grade` agreeing with it.

One synthetic class (chapter 1) is graded twice, from two copies of the same course: by
`nbgrader autograde` (a kernel per notebook, grade cells judged in the kernel) and by
`gradtutor grade` (forked workers, trusted judging). The gradebooks must agree exercise by
exercise.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from html import unescape
from pathlib import Path

import nbformat
import pytest
from hostile import kit
from nbformat.v4 import new_code_cell

from gradtutor.authoring import build
from gradtutor.course import Course
from gradtutor.key import registry
from gradtutor.nbcells import grade_id, is_grade
from gradtutor.records import gradebook
from gradtutor.records.results import read_result

pytestmark = pytest.mark.slow
GRADTUTOR = str(Path(sys.executable).parent / "gradtutor")


def _scores(course: Path) -> dict:
    return gradebook.scores(Course.at(course))


def _class(released: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    exs = kit.exercises_of(released)
    subs = {"solution": kit.answered(released, kit.solution), "blank": released,
            "hardcoded": kit.answered(released, kit.hardcoded)}
    for k in range(max(len(ex.wrong) for ex in exs)):
        subs[f"wrong{k}"] = kit.answered(released, lambda ex, k=k: kit.wrong(ex, k) or kit.solution(ex))
    subs["broken"] = _broken(kit.answered(released, kit.solution), exs)
    subs[CHEATER] = kit.answered(released, lambda ex: kit.wrong(ex, 0))
    subs[CHEATER].cells.insert(1, new_code_cell(
        "import autograder.selfcheck\nautograder.selfcheck.grade = lambda *args, **kwargs: 1.0"))
    return subs


CHEATER = "cheater"  # wrong answers, and grade() replaced in the kernel: fools only nbgrader


def _broken(nb: nbformat.NotebookNode, exs: list) -> nbformat.NotebookNode:
    """Noise on stderr first; exercise 1: answer cell deleted; 2: grade cell deleted;
    3: grade cell forged to print 1; the rest answered right."""
    nb = copy.deepcopy(nb)
    nb.cells.insert(1, new_code_cell(
        "import sys, warnings\nimport torch\nprint('noise on stderr', file=sys.stderr)\n"
        "warnings.warn('a warning')\n_t = torch.ones(1, requires_grad=True) * 2\n_t.grad  # UserWarning"))
    doomed = [kit.index(nb, f"{exs[0].id}-answer")]
    if len(exs) > 1:
        doomed.append(kit.index(nb, exs[1].id))
    if len(exs) > 2:
        nb.cells[kit.index(nb, exs[2].id)].source = "1.0"
    nb.cells = [c for i, c in enumerate(nb.cells) if i not in doomed]
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    chapter = kit.first_chapter()
    ours = tmp_path_factory.mktemp("flow") / "ours"
    released = kit.make_course(ours, chapter)
    subs = _class(released)
    for student, nb in subs.items():
        kit.submit(ours, student, chapter, nb)
    theirs = ours.parent / "theirs"
    shutil.copytree(ours, theirs)
    shutil.copytree(ours, ours.parent / "ungraded")  # for the sharded run
    build.nbgrader("autograde", chapter.slug, "--force", course=theirs)
    csv = ours.parent / "scores.csv"
    done = subprocess.run([GRADTUTOR, "grade", str(ours), "--csv", str(csv), "--workers", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {"chapter": chapter, "ours": ours, "theirs": theirs, "students": list(subs),
            "exercises": kit.exercises_of(released), "csv": csv, "log": done.stderr}


def test_same_scores_as_nbgrader_autograde(graded: dict) -> None:
    ours, theirs = _scores(graded["ours"]), _scores(graded["theirs"])
    assert set(ours) == set(theirs)
    assert len(ours) == len(graded["students"]) * len(graded["exercises"])
    differ = {k: (ours[k], theirs[k]) for k in ours
              if k[0] != CHEATER and ours[k] != pytest.approx(theirs[k])}
    assert not differ, f"(ours, nbgrader autograde) differ: {differ}"


def test_only_gradtutor_resists_a_patched_grade_function(graded: dict) -> None:
    """Judging in the student's kernel can be fooled; judging plain data outside cannot."""
    ours, theirs = _scores(graded["ours"]), _scores(graded["theirs"])
    slug = graded["chapter"].slug
    for ex in graded["exercises"]:
        assert theirs[(CHEATER, slug, ex.id)] == ex.points  # nbgrader autograde is fooled
        assert ours[(CHEATER, slug, ex.id)] == 0


def test_scores_mean_what_they_should(graded: dict) -> None:
    scores, slug = _scores(graded["ours"]), graded["chapter"].slug
    for ex in graded["exercises"]:
        full = ex.points
        assert scores[("solution", slug, ex.id)] == full
        assert scores[("blank", slug, ex.id)] == 0
        if ex.wrong:
            assert scores[("wrong0", slug, ex.id)] == 0
        hard = scores[("hardcoded", slug, ex.id)]
        if ex.hidden and not _constant_answer(ex):
            assert 0 < hard < full, f"{ex.id}: a typed-in number must fail the hidden variants"
            assert isinstance(hard, float)
    exs = graded["exercises"]
    assert scores[("broken", slug, exs[0].id)] == 0  # answer cell gone
    # a deleted grade cell comes back, a forged one is restored, noise on stderr costs nothing
    for ex in exs[1:]:
        assert scores[("broken", slug, ex.id)] == ex.points


def _constant_answer(ex) -> bool:
    """Exercises whose right answer does not depend on the parameters (hard-coding is right)."""
    from gradtutor.key.answer_key import reference

    return all(ex.kind.same(reference(ex.id, 0), reference(ex.id, i))
               for i in range(1, len(ex.variants())))


def test_csv_and_results_files(graded: dict) -> None:
    lines = graded["csv"].read_text().splitlines()
    assert lines[0] == "student,assignment,exercise,points,max_points,verdict,misconception,graded_by"
    assert len(lines) == 1 + len(graded["students"]) * len(graded["exercises"])
    assert "wrong0" in graded["csv"].read_text() and "correct" in graded["csv"].read_text()
    checked = 0
    for row in lines[1:]:
        if row.startswith("wrong0,"):
            student, _, exercise, points, _, verdict, misconception, graded_by = row.split(",")
            assert graded_by == "auto"
            ex = registry.get(exercise)
            if ex.wrong:  # wrong0 gave the first listed wrong answer: 0 points, diagnosed as itself
                assert float(points) == 0 and verdict == "wrong" and \
                    misconception == ex.wrong[0].misconception, row
                checked += 1
    assert checked >= 1


def _graded_at(course: Path, slug: str) -> dict[str, str]:
    return {s: read_result(json.loads(Course.at(course).results_path(slug, s).read_text())).graded_at
            for s in (p.name for p in (course / "submitted").iterdir())}


def test_rerun_skips_graded_and_force_regrades(graded: dict) -> None:
    slug = graded["chapter"].slug
    before, stamps = _scores(graded["ours"]), _graded_at(graded["ours"], slug)
    again = subprocess.run([GRADTUTOR, "grade", str(graded["ours"])], capture_output=True, text=True)
    assert again.returncode == 0
    assert f"{len(graded['students'])} already graded, 0 to grade" in again.stderr
    assert _graded_at(graded["ours"], slug) == stamps  # nothing was graded again
    time.sleep(1.1)  # graded_at has one-second resolution
    forced = subprocess.run([GRADTUTOR, "grade", str(graded["ours"]), "--force", "--assignment",
                             slug], capture_output=True, text=True)
    assert forced.returncode == 0
    assert f"0 already graded, {len(graded['students'])} to grade" in forced.stderr
    after = _graded_at(graded["ours"], slug)
    assert set(after) == set(stamps) and all(after[s] != stamps[s] for s in stamps)  # all regraded
    assert _scores(graded["ours"]) == before


def test_shards_then_gather_fill_the_same_gradebook(graded: dict) -> None:
    """Two machines' shares of the class, graded at once, then gathered by one process."""
    course = graded["ours"].parent / "ungraded"
    shards = [subprocess.Popen([GRADTUTOR, "grade", str(course), "--shard", f"{i}/2",
                                "--workers", "1"], stderr=subprocess.PIPE, text=True)
              for i in range(2)]
    logs = [shard.communicate()[1] for shard in shards]
    assert [shard.returncode for shard in shards] == [0, 0], logs
    half = len(graded["students"]) // 2
    assert all(f"in shard {i}/2" in log for i, log in enumerate(logs))
    assert sorted(int(log.split(" submission(s) found")[0].split()[-1]) for log in logs) == \
        [half, len(graded["students"]) - half]
    assert _scores(course) == {}  # shards leave the gradebook alone
    gathered = subprocess.run([GRADTUTOR, "grade", str(course), "--gather"], capture_output=True,
                              text=True)
    assert gathered.returncode == 0, gathered.stderr
    assert f"Gathered {len(graded['students'])} result(s)" in gathered.stderr
    assert _scores(course) == _scores(graded["ours"])


def test_shard_argument_explains_itself() -> None:
    done = subprocess.run([GRADTUTOR, "grade", ".", "--shard", "2/2"], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "0 <= INDEX < COUNT" in done.stderr


def test_nbgrader_generate_feedback_hides_hidden_tests(graded: dict) -> None:
    slug = graded["chapter"].slug
    build.nbgrader("generate_feedback", slug, "--force", course=graded["theirs"])
    html = (graded["theirs"] / "feedback" / "solution" / slug / f"{slug}.html").read_text()
    text = re.sub(r"<[^>]+>", "", html)  # code is syntax-highlighted span by span
    assert "BEGIN HIDDEN TESTS" not in text and "grade(" not in text
    assert "check(" in text  # the visible part of the grade cell is still there


def test_nbgrader_generate_feedback_works_on_our_grades(graded: dict) -> None:
    """Our autograded notebooks are what nbgrader's feedback step expects, with our scores."""
    slug = graded["chapter"].slug
    build.nbgrader("generate_feedback", slug, "--force", course=graded["ours"])
    total = sum(ex.points for ex in graded["exercises"])
    html = (graded["ours"] / "feedback" / "solution" / slug / f"{slug}.html").read_text()
    assert f"Score: {total:.1f} / {total:.1f}" in html
    text = re.sub(r"<[^>]+>", "", html)
    assert "BEGIN HIDDEN TESTS" not in text and "grade(" not in text


def test_formgrader_api_sees_our_grades(graded: dict) -> None:
    """The formgrader's data layer (NbGraderAPI) lists our submissions with their scores."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(root=str(graded["ours"]))
    api = NbGraderAPI(coursedir=coursedir)
    slug = graded["chapter"].slug
    subs = {s["student"]: s for s in api.get_submissions(slug)}
    total = sum(ex.points for ex in graded["exercises"])
    assert subs["solution"]["score"] == pytest.approx(total) == subs["solution"]["max_score"]
    assert subs["blank"]["score"] == 0
    assert subs["solution"]["autograded"] and not subs["solution"]["needs_manual_grade"]
    assert set(subs) == set(graded["students"])
    # the formgrader opens the autograded notebook of a submission: it must be there
    slug = graded["chapter"].slug
    assert api.get_autograded_students(slug) == set(graded["students"])


def test_every_chapter_releases_through_nbgrader() -> None:
    """notebooks/ is nbgrader generate_assignment's output (test_build checks it is fresh, so
    nbgrader is not re-run here): every exercise has its grade cell, nothing hidden leaks."""
    for chapter in registry.chapters():
        released = nbformat.read(build.REPO / "notebooks" / f"{chapter.slug}.ipynb", as_version=4)
        grade_ids = {grade_id(c) for c in released.cells
                     if is_grade(c)}
        assert set(chapter.exercise_ids()) <= grade_ids, chapter.slug
        text = nbformat.writes(released)
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text


def _secret_numbers(ex) -> set[str]:
    """Hidden parameter values and reference answers, as they would be printed."""
    from autograder.plain import to_plain

    def floats(p) -> list[float]:
        if isinstance(p, dict):
            return [f for v in p.values() for f in floats(v)]
        if isinstance(p, list):
            return [f for v in p for f in floats(v)]
        return [p] if isinstance(p, float) else []

    values = [v for h in ex.hidden for v in floats(dict(h))]
    for params in ex.variants():
        values += floats(to_plain(ex.reference(**params)))
    # integers like 1 or 2 appear in any page (points, dates); non-integers do not by chance
    return {s for v in values if v != int(v) for s in (repr(v), f"{v:g}")}


def test_gradtutor_feedback_pages_reveal_nothing(graded: dict) -> None:
    done = subprocess.run([GRADTUTOR, "feedback", str(graded["ours"])], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    slug = graded["chapter"].slug
    secrets = {s for ex in graded["exercises"] for s in _secret_numbers(ex)}
    solutions = [line.strip() for ex in graded["exercises"] for line in ex.solution.splitlines()
                 if len(line.strip()) > 12]
    for student in graded["students"]:
        html = (graded["ours"] / "feedback" / student / slug / "feedback.html").read_text()
        # scores are printed on purpose ("0.5 / 1"); everything else must hold no secret number
        text = re.sub(r"<style>.*?</style>|<span class='pts'>.*?</span>|<p class='meta'>.*?</p>"
                      r"|<[^>]+>", " ", html, flags=re.S)
        text = unescape(text)
        assert [ex.title for ex in graded["exercises"] if ex.title not in text] == []
        leaked = sorted(s for s in secrets if s in text)
        assert not leaked, f"{student}: hidden or reference values in feedback: {leaked}"
        assert not [line for line in solutions if line in text]
    wrong = (graded["ours"] / "feedback" / "wrong0" / slug / "feedback.html").read_text()
    ex = next(ex for ex in graded["exercises"] if ex.wrong)
    import html as html_lib

    from autograder.feedback import misconception_line
    from gradtutor.key import misconceptions

    mid = ex.wrong[0].misconception
    # the line as the page frames it: the mistake, a topic ("about ..."), or the rule it breaks
    assert html_lib.escape(misconception_line(mid, misconceptions.name(mid))) in wrong
    assert html_lib.escape(ex.wrong[0].hint) in wrong


def test_isolated_nbgrader_autograde_is_not_fooled(graded: dict) -> None:
    """With GRADTUTOR_ISOLATED=1, `nbgrader autograde` runs our isolated worker instead of a
    kernel (nbgrader_config.py) and scores like `gradtutor grade`."""
    iso = graded["theirs"].parent / "isolated"
    shutil.copytree(graded["theirs"], iso)
    kept = {CHEATER, "solution", "wrong0"}  # a cheater, a right and a wrong class-mate
    for student in (iso / "submitted").iterdir():
        if student.name not in kept:
            shutil.rmtree(student)
    os.environ["GRADTUTOR_ISOLATED"] = "1"
    try:
        build.nbgrader("autograde", graded["chapter"].slug, "--force", course=iso)
    finally:
        del os.environ["GRADTUTOR_ISOLATED"]
    isolated, ours = _scores(iso), _scores(graded["ours"])
    slug = graded["chapter"].slug
    for ex in graded["exercises"]:
        assert isolated[(CHEATER, slug, ex.id)] == ours[(CHEATER, slug, ex.id)] == 0
        for student in kept - {CHEATER}:
            assert isolated[(student, slug, ex.id)] == ours[(student, slug, ex.id)], (student, ex.id)
    # an isolated run that scored everyone 0 would fail here
    assert sum(isolated[("solution", slug, ex.id)] for ex in graded["exercises"]) == \
        sum(ex.points for ex in graded["exercises"])
