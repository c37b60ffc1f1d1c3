"""Trusted side: every read and write of the nbgrader gradebook (``gradebook.db``).

Writes go through nbgrader's own API (``nbgrader.api.Gradebook``), whose
``update_or_create_*`` calls commit on their own: a submission's rows take up to four commits
(student, submission, scores, late penalty); a grading run makes one transaction of many
submissions (``one_transaction``). A kill before the commit leaves submissions whose results
files are not written yet, so the next run grades them again and overwrites those rows
(``tests/test_hostile.py::test_sigkill_at_random_moments_loses_nothing``).

Reads are plain SQL, in one query each: opening nbgrader's ``Gradebook`` writes (it creates
its tables and the course's row), and its objects load one submission at a time. The gradebook
is opened read-write even to read it: a grader killed mid-transaction leaves a hot journal that
only a writable connection can roll back (a read-only one fails).

nbgrader itself (SQLAlchemy, its preprocessors: seconds to import) is imported by the functions
that write or score, so the reports, which only read, never pay for it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_config_path
from traitlets.config import Config, PyFileConfigLoader

from gradtutor.course import Course
from gradtutor.records.submissions import submitted_at

Key = tuple[str, str, str]  # (student, assignment, grade cell id)
MAX_BATCH = 64  # submissions in one gradebook transaction, at most (grading and --gather)


# --- reading: plain SQL over a read-write connection ---------------------------------------------

@contextmanager
def _connection(course: Course) -> Iterator[sqlite3.Connection]:
    with sqlite3.connect(course.gradebook) as db:  # read-write: see the module's docstring
        yield db


def exists(course: Course) -> bool:
    return course.gradebook.exists()


def assignment_names(course: Course) -> list[str]:
    """The gradebook's assignments, by name."""
    with _connection(course) as db:
        return [row[0] for row in db.execute("SELECT name FROM assignment ORDER BY name")]


def course_id(course: Course) -> str:
    """The course id nbgrader gave the assignments (what ``open`` must pass on)."""
    with _connection(course) as db:
        row = db.execute("SELECT course_id FROM assignment LIMIT 1").fetchone()
    return row[0] if row else "default_course"


@dataclass(frozen=True)
class Student:
    """A student of the gradebook: names, email, the LMS user id and the section, "" where not
    set. nbgrader's student table has no section: gradtutor keeps it in its own table
    (``SECTIONS``) in the same gradebook file."""

    first: str = ""
    last: str = ""
    email: str = ""
    lms: str = ""
    section: str = ""


# gradtutor's own table beside nbgrader's (nbgrader's SQLAlchemy models never touch it)
SECTIONS = "gradtutor_student_section"


def _sections(db: sqlite3.Connection) -> dict[str, str]:
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SECTIONS,)).fetchone():
        return {}
    return dict(db.execute(f"SELECT student_id, section FROM {SECTIONS}"))


def students(course: Course) -> dict[str, Student]:
    """student id -> the gradebook's student row (empty when there is no gradebook)."""
    if not exists(course):
        return {}
    with _connection(course) as db:
        rows = db.execute("SELECT id, first_name, last_name, email, lms_user_id FROM student "
                          "ORDER BY id").fetchall()
        sections = _sections(db)
    return {sid: Student(first or "", last or "", email or "", lms or "", sections.get(sid, ""))
            for sid, first, last, email, lms in rows}


def roster(course: Course, assignments: list[str] | None = None) -> dict[str, list[str]]:
    """Every student in the gradebook, with the assignments expected of them (all released ones)."""
    if not exists(course):
        return {}
    with _connection(course) as db:
        ids = [row[0] for row in db.execute("SELECT id FROM student ORDER BY id")]
    names = [a for a in assignment_names(course) if not assignments or a in assignments]
    return {st: names for st in ids}


def due_dates(course: Course) -> dict[str, datetime | None]:
    """assignment -> its due date (UTC, aware), None where none is set; {} without a gradebook.
    nbgrader stores ``assignment.duedate`` as naive UTC."""
    if not exists(course):
        return {}
    with _connection(course) as db:
        rows = db.execute("SELECT name, duedate FROM assignment ORDER BY name").fetchall()
    return {name: _utc(when) for name, when in rows}


def _utc(stored: str | None) -> datetime | None:
    if not stored:
        return None
    try:
        return datetime.fromisoformat(str(stored)).replace(tzinfo=UTC)
    except ValueError:  # not nbgrader's layout: no due date rather than a wrong one
        return None


@dataclass(frozen=True)
class Grade:
    auto: float | None
    manual: float | None
    extra_credit: float | None


@dataclass
class Recorded:
    """What the teaching team's side of the gradebook says now."""

    grades: dict[Key, Grade] = field(default_factory=dict)
    comments: dict[Key, list[str]] = field(default_factory=dict)  # keyed by exercise id
    penalties: dict[tuple[str, str], float] = field(default_factory=dict)  # (student, assignment)


_GRADES = """
SELECT sa.student_id, a.name, bc.name, g.auto_score, g.manual_score, g.extra_credit
FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id JOIN base_cell bc ON g.cell_id = bc.id"""
_COMMENTS = """
SELECT sa.student_id, a.name, bc.name, c.manual_comment
FROM comment c JOIN submitted_notebook sn ON c.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id JOIN base_cell bc ON c.cell_id = bc.id
WHERE c.manual_comment IS NOT NULL AND c.manual_comment != ''"""
_PENALTIES = """
SELECT sa.student_id, a.name, COALESCE(SUM(sn.late_submission_penalty), 0)
FROM submitted_notebook sn JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id GROUP BY sa.student_id, a.name"""


def recorded(course: Course) -> Recorded | None:
    """Manual grades, extra credit, comments (keyed by exercise id) and late penalties; None
    when the course has no gradebook."""
    if not exists(course):
        return None
    out = Recorded()
    with _connection(course) as db:
        out.grades = {(s, a, g): Grade(auto, manual, extra)
                      for s, a, g, auto, manual, extra in db.execute(_GRADES)}
        for s, a, cell, text in db.execute(_COMMENTS):
            key = (s, a, cell.removesuffix("-answer").removesuffix("-prompt"))
            out.comments.setdefault(key, []).append(text)
        out.penalties = {(s, a): p for s, a, p in db.execute(_PENALTIES)}
    return out


def scores(course: Course) -> dict[Key, float | None]:
    """(student, assignment, grade_id) -> auto_score, through nbgrader's API."""
    from nbgrader.api import Gradebook  # seconds to import: see the module's docstring

    out = {}
    with Gradebook(course.db_url) as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for g in nb.grades:
                        out[(sub.student.id, assignment.name, g.name)] = g.auto_score
    return out


# --- writing: nbgrader's API ----------------------------------------------------------------------

def without_server_extensions() -> None:
    """In a process that only writes the gradebook (the recorder's): nbgrader's package
    registered without running its ``__init__``, which imports its four Jupyter server
    extensions (jupyter_server, tornado: about 0.4 s of CPU, half of importing
    ``nbgrader.api``). Its api, utils, preprocessors and plugins import as they would; only
    the package's server-extension hooks are missing. Nothing when nbgrader is imported."""
    import importlib.util
    import sys

    if "nbgrader" in sys.modules:
        return
    spec = importlib.util.find_spec("nbgrader")
    if spec is None or spec.submodule_search_locations is None:
        return
    sys.modules["nbgrader"] = importlib.util.module_from_spec(spec)  # not executed
    from nbgrader._version import __version__

    sys.modules["nbgrader"].__version__ = __version__


def open_gradebook(course: Course) -> Any:
    """nbgrader's Gradebook of the course, under the course id its assignments have."""
    from nbgrader.api import Gradebook  # seconds to import: see the module's docstring

    return Gradebook(course.db_url, course_id(course))


def nbgrader_config(course: Course) -> Any:
    """nbgrader's configuration as ``nbgrader autograde`` run there would see it: the Jupyter
    config folders, then ``nbgrader_config.py`` of the working directory, then the course's."""
    config = Config()
    folders = [*reversed(jupyter_config_path()), str(Path.cwd()), str(course.root)]
    for folder in dict.fromkeys(folders):
        if (Path(folder) / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
    return config


class LatePenalties:
    """nbgrader's own ``AssignLatePenalties`` step, with its configured plugin (the
    ``LateSubmissionPlugin``'s penalty_method, or a custom ``plugin_class``), applied to a
    submission whose auto scores are stored: the same penalty ``nbgrader autograde`` gives."""

    def __init__(self, course: Course) -> None:
        self.config = nbgrader_config(course)  # read now: a broken file fails the run's start
        self._step: Any = None

    @property
    def step(self) -> Any:
        """Made for the first late submission: nbgrader's preprocessors (nbclient, nbconvert)
        are imported then, not by every run."""
        if self._step is None:
            from nbgrader.preprocessors import AssignLatePenalties  # seconds: see the module's docstring

            step = AssignLatePenalties(config=self.config)
            step.init_plugin()
            self._step = step
        return self._step

    def apply(self, gb: Any, submission: Any) -> dict[str, float]:
        seconds = float(submission.total_seconds_late or 0)
        total = 0.0
        for notebook in submission.notebooks:
            if seconds > 0:  # its score is computed by the database from the new grades
                gb.db.flush()
                gb.db.refresh(notebook)
            notebook.late_submission_penalty = None
            if seconds > 0:
                penalty = self.step.plugin_inst.late_submission_penalty(
                    submission.student.id, notebook.score, seconds)
                if penalty is not None:
                    penalty = self.step._check_late_penalty(notebook, penalty)
                    notebook.late_submission_penalty = penalty
                    total += penalty
        return {"seconds_late": seconds, "penalty": round(total, 6)}


Points = dict[str, tuple[str, float]]  # grade id -> (verdict, points)


def save_all(gb: Any, course: Course, batch: list[tuple[str, str, Points, dict[str, list[str]]]],
             late: LatePenalties | None = None) -> list[dict[str, float]]:
    """For each (student, assignment, points, notebooks): create student and submission as
    ``nbgrader autograde`` does; set each auto_score; then the late penalty as nbgrader's
    AssignLatePenalties does; one commit at the end. Returns each one's lateness.

    ``points`` maps grade id -> (verdict, points); ``notebooks`` maps notebook id -> its grade
    cell ids, so each exercise lands on the right SubmittedNotebook.

    The rows the batch reads are loaded first, a few queries for all of it: its students,
    its existing submissions with their notebooks and grades, and the assignments' notebooks
    and cells, held here because the session's identity map keeps only what is referenced
    (each grade's name is its cell's). The students and submissions not there yet are made
    as nbgrader's ``add_student`` and ``add_submission`` make them, all in one flush
    (``_add_new``); nbgrader's own call updates a submission whose timestamp changed.
    """
    late = late or LatePenalties(course)
    known = _batch_rows(gb, {(s, a) for s, a, _, _ in batch})
    stamps = {(s, a): submitted_at(course, s, a) for s, a, _, _ in batch}
    out = []
    with gb.db.no_autoflush:  # one flush for the batch, at the commit (nbgrader's calls flush)
        _add_new(gb, [pair for pair in stamps if pair not in known.submissions], stamps, known)
        for student, assignment, points, notebooks in batch:
            submission = _submission(gb, student, assignment, stamps[(student, assignment)], known)
            kept = _set_scores(submission, points, notebooks, known.cell_names)
            out.append({**late.apply(gb, submission), "manual_grades": kept})
    gb.db.commit()
    return out


@dataclass
class _Rows:
    students: set[str]
    submissions: dict[tuple[str, str], Any]  # (student, assignment) -> SubmittedAssignment
    held: list[Any]  # the assignments' notebooks and cells, referenced while the batch runs
    cell_names: dict[str, str]  # cell id -> its name (a new grade's ``name`` needs a flush)


def _batch_rows(gb: Any, pairs: set[tuple[str, str]]) -> _Rows:
    from nbgrader.api import Assignment, BaseCell, Notebook, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy.orm import selectinload

    ids = sorted({s for s, _ in pairs})
    names = sorted({a for _, a in pairs})
    db = gb.db
    cells = db.query(BaseCell).join(Notebook).join(Assignment).filter(Assignment.name.in_(names)).all()
    held = [*db.query(Notebook).join(Assignment).filter(Assignment.name.in_(names)), *cells]
    students = {row[0] for row in db.query(Student.id).filter(Student.id.in_(ids))}
    found = (db.query(SubmittedAssignment, Assignment.name).join(Assignment)
             .filter(Assignment.name.in_(names), SubmittedAssignment.student_id.in_(ids))
             .options(selectinload(SubmittedAssignment.notebooks)
                      .selectinload(SubmittedNotebook.grades)))
    return _Rows(students, {(sub.student_id, name): sub for sub, name in found
                            if (sub.student_id, name) in pairs}, held, {c.id: c.name for c in cells})


def _add_new(gb: Any, pairs: list[tuple[str, str]], stamps: dict[tuple[str, str], datetime | None],
             known: _Rows) -> None:
    """Each (student, assignment) with no submission yet: the student (when new) and the
    submission with a notebook, grades and comments mirroring the assignment's, made as
    nbgrader's ``add_student`` and ``add_submission`` make them (the same rows), flushed with
    the batch's scores at its commit: each row inserted once, scored (nbgrader's calls flush
    each submission, then update each grade: most of a new class's gradebook time). With an
    authenticator, which must hear of each student, nbgrader's own calls."""
    if not pairs:
        return
    from nbgrader.api import Assignment, Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook
    from nbgrader.utils import parse_utc

    db = gb.db
    if gb.authenticator is not None:
        for student, name in pairs:
            if student not in known.students:
                gb.update_or_create_student(student)
                known.students.add(student)
            stamp = stamps[(student, name)]
            known.submissions[(student, name)] = gb.update_or_create_submission(
                name, student, **({} if stamp is None else {"timestamp": stamp}))
        return
    assignments = {a.name: a for a in db.query(Assignment).filter(
        Assignment.name.in_(sorted({name for _, name in pairs})))}
    people = {p.id: p for p in db.query(Student).filter(
        Student.id.in_(sorted({student for student, _ in pairs})))}
    for student, name in pairs:
        if student not in people:  # add_student
            people[student] = Student(id=student)
            db.add(people[student])
            known.students.add(student)
        if name not in assignments:
            raise LookupError(f"no assignment {name!r} in the gradebook")
        stamp = stamps[(student, name)]
        submission = SubmittedAssignment(  # add_submission, line for line
            assignment=assignments[name], student=people[student],
            **({} if stamp is None else {"timestamp": parse_utc(stamp)}))
        for notebook in submission.assignment.notebooks:
            nb = SubmittedNotebook(notebook=notebook, assignment=submission)
            for grade_cell in notebook.grade_cells:
                Grade(cell_id=grade_cell.id, notebook=nb)
            for solution_cell in notebook.solution_cells:
                Comment(cell_id=solution_cell.id, notebook=nb)
            for task_cell in notebook.task_cells:
                Comment(cell_id=task_cell.id, notebook=nb)
                Grade(cell_id=task_cell.id, notebook=nb)
        db.add(submission)
        known.submissions[(student, name)] = submission


def _submission(gb: Any, student: str, assignment: str, stamp: datetime | None, known: _Rows) -> Any:
    """The student's SubmittedAssignment (in ``known``: ``_add_new`` made the new ones), as
    ``update_or_create_submission`` leaves it."""
    from nbgrader.utils import parse_utc

    found = known.submissions[(student, assignment)]
    if stamp is None or found.timestamp == parse_utc(stamp):
        return found  # nbgrader's update would set nothing that changes
    return gb.update_or_create_submission(assignment, student, timestamp=stamp)


def _set_scores(submission: Any, points: Points, notebooks: dict[str, list[str]],
                cell_names: dict[str, str]) -> int:
    """Each grade's auto score; how many manual grades are kept over it. A grade's cell is
    named by ``cell_names`` (a grade not flushed yet has no ``cell`` to name it)."""
    kept = 0  # manual grades from the formgrader: nbgrader keeps them over the auto score
    for notebook in submission.notebooks:  # the submission's own rows, loaded with it
        grade_ids = set(notebooks.get(notebook.name, ()))
        for grade in notebook.grades:
            name = cell_names.get(grade.cell_id) or grade.name
            if name not in grade_ids:
                continue
            entry = points.get(name)
            grade.auto_score = None if entry is None or entry[0] == "manual" else float(entry[1])
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            kept += grade.manual_score is not None
    return kept


@contextmanager
def one_transaction(gb: Any) -> Iterator[None]:
    """The block's writes as one transaction: nbgrader's ``update_or_create_*`` (and
    ``save_all``) commit on their own, several times a submission; inside the block their
    commits only flush, the block commits once at its end, and anything that fails in it rolls
    the whole block back (nothing of it is stored)."""
    session = gb.db  # nbgrader's scoped session: this thread's
    session.commit = session.flush
    try:
        yield
    except BaseException:
        del session.commit
        session.rollback()
        raise
    del session.commit
    session.commit()


def add_students(course: Course, people: dict[str, Student]) -> None:
    """Create or update each student (names, email, LMS id) through nbgrader's API, as ``nbgrader
    db student import`` does, then their sections in gradtutor's table. Students already in the
    gradebook and not in ``people`` are left as they are."""
    with open_gradebook(course) as gb:
        for sid, who in people.items():
            gb.update_or_create_student(sid, first_name=who.first or None, last_name=who.last or None,
                                        email=who.email or None, lms_user_id=who.lms or None)
    with _connection(course) as db:
        db.execute(f"CREATE TABLE IF NOT EXISTS {SECTIONS} "
                   "(student_id TEXT PRIMARY KEY, section TEXT NOT NULL)")
        db.executemany(f"INSERT INTO {SECTIONS} VALUES (?, ?) ON CONFLICT(student_id) "
                       "DO UPDATE SET section = excluded.section",
                       [(sid, who.section) for sid, who in people.items()])


def set_max_score(gb: Any, assignment: str, notebook: str, grade_id: str, max_score: float) -> None:
    """A grade cell's maximum, as ``nbgrader generate_assignment`` would store it."""
    gb.update_or_create_grade_cell(grade_id, notebook, assignment, max_score=max_score)


def set_due_date(course: Course, assignment: str, when: datetime | None, course_id: str) -> None:
    """The assignment's due date (aware; None clears it), as ``nbgrader db assignment add
    --duedate`` sets it: the assignment is created when the gradebook has none of that name
    (``nbgrader generate_assignment`` keeps the date). ``course_id``: for a new gradebook."""
    from nbgrader.api import Gradebook  # seconds to import: see the module's docstring

    naive = None if when is None else when.astimezone(UTC).replace(tzinfo=None)
    with Gradebook(course.db_url, course_id if not exists(course) else _course_id_or(course, course_id)) as gb:
        gb.update_or_create_assignment(assignment, duedate=naive)


def _course_id_or(course: Course, fallback: str) -> str:
    with _connection(course) as db:
        has = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assignment'").fetchone()
    return course_id(course) if has and assignment_names(course) else fallback
