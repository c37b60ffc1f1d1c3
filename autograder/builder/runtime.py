"""The student runtime: what a student's kernel and the grading sandbox may hold, and nothing more.

Trusted side (a build step). ``gradtutor runtime OUT_DIR`` writes a wheel whose package
``autograder`` holds only the student-side modules below (answer kinds, reading and judging
plain answers, feedback, drawings, widgets, the sandbox) and ``_data/checks.json``: each
exercise's check at the shown values (reference, listed wrong answers with misconception,
explanation and hint; the setup code and call for function answers). No exercise unit, no
solution, no hidden variant, no reference or wrong-answer code. The grader's zygote runs from
the same modules, copied without the data (``write_tree``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import sys
import zipfile
from functools import cache
from pathlib import Path

import autograder

from .. import checkdata

NAME, VERSION = "gradtutor_runtime", "0.1.0"
PACKAGE = Path(autograder.__file__).parent
# student side: nothing here imports registry, exercise, answer_key, build, grading or exercises
MODULES = (
    "__init__.py", "plain.py", "kinds.py", "feedback.py", "judge.py", "checkdata.py", "answers.py",
    "selfcheck.py", "contract.py", "harness.py", "byhand.py",
    "visual/__init__.py", "visual/headless.py", "visual/graph.py", "visual/widgets.py",
    "sandbox/__init__.py", "sandbox/limits.py", "sandbox/child.py", "sandbox/zygote.py",
)
REQUIRES = ("torch==2.13.0", "numpy>=2", "matplotlib>=3.9", "ipywidgets>=8.1,<8.2", "ipython>=8")


@cache
def check_data() -> dict:
    """Every exercise's check at the shown and the practice values, in lesson order."""
    from .. import answer_key, registry

    return {"format": checkdata.FORMAT,
            "exercises": {ex.id: checkdata.to_json(answer_key.practice_check(ex.id))
                          for ex in registry.all_exercises()}}


def write_tree(dest: Path, *, with_data: bool) -> Path:
    """The runtime's ``autograder`` package under ``dest`` (the zygote's copy has no data)."""
    target = dest / "autograder"
    for rel in MODULES:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGE / rel, target / rel)
    if with_data:
        data = target / "_data" / "checks.json"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(json.dumps(check_data(), separators=(",", ":")))
    return target


def build_wheel(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{NAME}-{VERSION}-py3-none-any.whl"
    files: dict[str, bytes] = {f"autograder/{rel}": (PACKAGE / rel).read_bytes() for rel in MODULES}
    files["autograder/_data/checks.json"] = json.dumps(check_data(), separators=(",", ":")).encode()
    info = f"{NAME}-{VERSION}.dist-info"
    files[f"{info}/METADATA"] = "\n".join([
        "Metadata-Version: 2.1", f"Name: {NAME.replace('_', '-')}", f"Version: {VERSION}",
        "Summary: gradtutor's student runtime: self-checks, drawings and widgets, without the answer key",
        *(f"Requires-Dist: {r}" for r in REQUIRES), ""]).encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: gradtutor\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n")
    files[f"{info}/top_level.txt"] = b"autograder\n"
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sorted(files.items()):
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr, entry.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return wheel


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def runtime_cli(*, out_dir: Path) -> int:
    wheel = build_wheel(out_dir)
    count = len(check_data()["exercises"])
    print(f"Wrote {wheel} ({wheel.stat().st_size // 1024} KiB): the student runtime with the checks of "
          f"{count} exercises at their shown values. Install it in a student's kernel with\n"
          f"  pip install {wheel}", file=sys.stderr)
    return 0
