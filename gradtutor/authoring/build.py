"""Trusted side: build the course, an ordered list of small steps, nbgrader doing its part.

    lesson.md + exercise units --source_notebook--> course/source/<ch>/<ch>.ipynb
        --nbgrader generate_assignment--> notebooks/<ch>.ipynb     (student)
        --execute (fresh kernel)-------> solutions/<ch>.ipynb      (instructor)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_notebook

from gradtutor.authoring import cells
from gradtutor.authoring.lesson import parse
from gradtutor.key import registry
from gradtutor.key.registry import Chapter

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "course"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def source_notebook(chapter: Chapter) -> NotebookNode:
    nb = new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    number = 0
    for i, block in enumerate(parse(chapter.lesson.read_text())):
        cid = f"{chapter.slug}-{i:03d}"
        if block.kind == "markdown":
            nb.cells.append(cells.prose(block.text, cid))
        elif block.kind == "code":
            nb.cells.append(cells.code(block.text, cid))
        else:
            number += 1
            ex = registry.get(block.text)
            if ex.chapter != chapter.number:
                raise ValueError(f"{ex.id} belongs to chapter {ex.chapter}, not {chapter.number}")
            nb.cells.extend(cells.exercise_cells(ex, f"{chapter.number}.{number}"))
    validate(nb)
    return nb


def validate(nb: NotebookNode) -> None:
    """nbgrader's own metadata validator (duplicate ids, points on grade cells, schema)."""
    from nbgrader.nbgraderformat import MetadataValidator

    MetadataValidator().validate_nb(nb)
    nbformat.validate(nb)


def write_source(chapter: Chapter, course: Path = COURSE) -> Path:
    path = course / "source" / chapter.slug / f"{chapter.slug}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(chapter), path)
    return path


def nbgrader(*args: str, course: Path = COURSE, check: bool = True) -> subprocess.CompletedProcess:
    """Run the real nbgrader CLI on a course folder (config from the repo's nbgrader_config.py)."""
    # nbgrader reads nbgrader_config.py from its working directory: run it from the repo root
    bindir = str(Path(sys.executable).parent)  # nbgrader calls `alembic` from PATH
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    cmd = [str(Path(bindir) / "nbgrader"), *args, f"--CourseDirectory.root={course}"]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def release(chapter: Chapter, course: Path = COURSE) -> Path:
    nbgrader("generate_assignment", chapter.slug, "--force", "--create", course=course)
    return course / "release" / chapter.slug / f"{chapter.slug}.ipynb"


def normalise(nb: NotebookNode) -> NotebookNode:
    """Drop metadata that changes from run to run, so generated files diff cleanly."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def execute(path: Path, out: Path, timeout: int = 300) -> NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(out.parent)}}).execute()
    return nb


def build(*, only: list[str] | None = None, solutions: bool = True, course: Path | None = None,
          notebooks: Path = REPO / "notebooks", solutions_dir: Path = REPO / "solutions",
          keep_student_work: bool = False, sources: Path | None = None, log=print) -> None:
    """Build chapters. ``course`` defaults to a throwaway folder: the build needs nbgrader's
    pipeline, not a lasting gradebook, and parallel builds must not share one SQLite file.
    With ``sources`` (a course's ``source/`` folder) each chapter's nbgrader source notebook is
    written there too, for the instructor's own ``nbgrader generate_assignment``."""
    if course is None:
        with tempfile.TemporaryDirectory(prefix="gradtutor-build-") as tmp:
            return build(only=only, solutions=solutions, course=Path(tmp), notebooks=notebooks,
                         solutions_dir=solutions_dir, keep_student_work=keep_student_work,
                         sources=sources, log=log)
    notebooks.mkdir(exist_ok=True)
    solutions_dir.mkdir(exist_ok=True)
    for chapter in registry.chapters():
        if only and chapter.slug not in only and str(chapter.number) not in only:
            continue
        src = write_source(chapter, course)
        if sources is not None:
            (sources / chapter.slug).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, sources / chapter.slug / src.name)
            log(f"wrote {sources.name}/{chapter.slug}/{src.name}")
        student = normalise(nbformat.read(release(chapter, course), as_version=4))
        target = notebooks / f"{chapter.slug}.ipynb"
        if keep_student_work and target.exists() and _differs(target, student):
            log(f"kept notebooks/{target.name}: it holds your work (delete it to get a fresh copy)")
        else:
            nbformat.write(student, target)
            log(f"built notebooks/{target.name}")
        if solutions:
            executed = execute(src, solutions_dir / f"{chapter.slug}.ipynb")
            nbformat.write(normalise(executed), solutions_dir / f"{chapter.slug}.ipynb")
            log(f"executed solutions/{chapter.slug}.ipynb")


def _differs(path: Path, nb: NotebookNode) -> bool:
    return json.loads(path.read_text()) != json.loads(nbformat.writes(nb))


def build_cli(*, chapters: list[str], solutions: bool, keep_student_work: bool) -> int:
    """Everything goes into the working directory: notebooks/, solutions/ and the nbgrader
    course's course/source/<chapter>/ (never into the folder the package was installed from)."""
    here = Path.cwd()
    build(only=chapters or None, solutions=solutions, keep_student_work=keep_student_work,
          notebooks=here / "notebooks", solutions_dir=here / "solutions", sources=here / "course" / "source")
    return 0


def sources_of(nb: NotebookNode) -> str:
    """Cell types and sources only: what a freshness test compares for executed notebooks."""
    return json.dumps([(c.cell_type, c.source) for c in nb.cells], indent=0)
