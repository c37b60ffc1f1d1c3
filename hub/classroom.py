"""A class on JupyterHub on this machine: two environments, real accounts, nbgrader's exchange.

Run as root (``make hub`` runs ``setup`` then ``start``; tests/test_hub.py runs a class of its own
and ``remove``s it)::

    python hub/classroom.py setup [--root /srv/gradtutor] [--prefix gtc_] [--port 8000]
    python hub/classroom.py start [--root /srv/gradtutor]
    python hub/classroom.py grade ASSIGNMENT [--root /srv/gradtutor] [--force]
    python hub/classroom.py remove [--root /srv/gradtutor] [--keep-envs]

What it makes:

* ``/opt/gradtutor/student``: a venv of Debian's ``/usr/bin/python3`` (readable by every user)
  with JupyterLab, nbgrader, torch and the student runtime wheel (``gradtutor runtime``): the
  self-checks at the shown values, no exercise unit, no answer key. Mode 0755.
* ``/opt/gradtutor/instructor``: the same plus the full ``gradtutor`` package. Mode 0750,
  group ``gradtutor-staff``: a student cannot read it.
* ``/opt/gradtutor/checks``: every exercise's check at every grading variant, kept by code digest
  for the next runtime build (mode 0700, root's).
* accounts: ``<prefix>teacher`` and the teaching assistant ``<prefix>ta`` (both in
  ``gradtutor-staff``) and students, homes mode 0700, no login shell (``/usr/sbin/nologin``: the
  hub is their only way in), each with a password kept only in ``ROOT/class.json`` (mode 0600,
  root's), never printed.
* ``ROOT/exchange``: nbgrader's exchange, mode 0777 as nbgrader documents, and the course's
  folders in it as nbgrader's release makes them (``inbound`` 2733 plus the sticky bit and of
  the group ``gradtutor-staff``, ``feedback`` 0711), owned by the instructor; the exchange
  classes of hub/exchange.py (keep-work fetch, private submit, owner-checked collect).
* ``~teacher/course``: the nbgrader course folder, with the chapters' source notebooks.
* the grader service (``hub/grader_service.py``, run by the hub as root): the staff's way to
  collect, grade, regrade and release feedback from the browser, without a root shell.

Before anything is made, ``setup`` checks that nothing readable by students holds solutions or
the key (the checkout's solutions, exercise units, trusted package, course copies and git
folder; the environments; course copies in /tmp) and takes other accounts' access away
(``o-rwx``), naming each path it changed; what it cannot fix it refuses, with the path.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import grp
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OPT = Path("/opt/gradtutor")
ENVS = {"student": OPT / "student", "instructor": OPT / "instructor"}
# every grading variant's references, kept for the next runtime build (root's alone: mode 0700)
CHECKS = OPT / "checks"
STAFF = "gradtutor-staff"
COURSE_ID = "gradtutor"
SYSTEM_PYTHON = "/usr/bin/python3"
# what both environments hold besides the course's own package (versions from constraints.txt)
# torch first and alone, then the rest without naming it: asked for together, pip may take the
# CUDA build from PyPI instead of the CPU build on this machine's disk.
TORCH = "torch==2.13.0"
BASE = ("jupyterhub", "jupyterlab", "notebook", "nbgrader", "ipykernel", "ipywidgets", "matplotlib", "numpy",
        "scikit-learn")  # chapter 11's digits ship inside scikit-learn
STUDENTS = ("ada", "ben", "cleo")
NOLOGIN = "/usr/sbin/nologin"
# what a JupyterLab terminal runs: bash, not as a login shell, so /etc/profile does not reset
# the role's PATH (jupyter_server's default with no terminal attached is `$SHELL -l`, and
# $SHELL is nologin here)
TERMINAL_SHELL = ["/bin/bash"]


def sh(*cmd: str | Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def class_constraints() -> str:
    """constraints.txt with the pins of hub/constraints-debian.txt in place of its own."""

    def name(line: str) -> str:
        return line.split("==")[0].strip().lower().replace("_", "-")

    over = [
        ln.split("#")[0].strip() for ln in (REPO / "hub" / "constraints-debian.txt").read_text().splitlines()
    ]
    over = [ln for ln in over if ln]
    replaced = {name(ln) for ln in over}
    keep = [
        ln
        for ln in (REPO / "constraints.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#") and name(ln) not in replaced
    ]
    return "\n".join(sorted([*keep, *over], key=name)) + "\n"


def pip(env: Path, *args: str | Path) -> None:
    constraints = env / "constraints.txt"
    constraints.write_text(class_constraints())
    done = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(constraints),
            *map(str, args),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(map(str, args))} failed in {env}:\n{done.stderr[-3000:]}")


# --- the two environments ------------------------------------------------------------------------


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.hexdigest()


def _wheel_digest(wheel: Path) -> str:
    """Of the files a wheel holds, not of the archive (setuptools stamps each build's times)."""
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        return _digest(*(name.encode() + z.read(name) for name in sorted(z.namelist())))


def _wheels(out: Path) -> dict[str, tuple[Path, ...]]:
    """The student runtime and the full package, built from this checkout."""
    # `gradtutor runtime`, after every variant's check is read from (or written to) CHECKS: the
    # runtime decides which answers ship sealed from all grading variants, a minute of CPU to
    # compute, the same until the code changes (answer_key.keep_checks keys it by the code)
    build = ("import sys\nfrom pathlib import Path\nfrom gradtutor.key import answer_key, registry\n"
             "from gradtutor.authoring.runtime import runtime_cli\n"
             "answer_key.keep_checks(Path(sys.argv[1]), registry.ids())\n"
             "sys.exit(runtime_cli(out_dir=Path(sys.argv[2])))")
    sh(sys.executable, "-c", build, CHECKS, out, capture_output=True)
    sh(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        out,
        REPO,
        capture_output=True,
    )
    (runtime,) = out.glob("gradtutor_runtime-*.whl")
    (full,) = out.glob("gradtutor-[0-9]*.whl")
    # the trusted package needs the runtime it imports, which no index serves
    return {"student": (runtime,), "instructor": (runtime, full)}


def build_envs(log=print) -> None:
    """Both venvs, each installed once per constraints.txt; the course's own wheel again when it
    changed. Idempotent: a second run with nothing changed installs nothing."""
    OPT.mkdir(parents=True, exist_ok=True)
    OPT.chmod(0o755)
    if not _group_exists(STAFF):
        sh("groupadd", "--system", STAFF)
    base_key = _digest(class_constraints().encode(), " ".join((TORCH, *BASE)).encode())
    with tempfile.TemporaryDirectory(prefix="gradtutor-wheels-") as tmp:
        wheels = _wheels(Path(tmp))
        for role, env in ENVS.items():
            stamp = env / ".gradtutor-base"
            if not stamp.exists() or stamp.read_text() != base_key:
                if _same_python(env):
                    # new pins (any line of constraints.txt, dev tools' too): pip installs only
                    # what they change, in minutes less than a new venv
                    log(f"updating {env} to the pins of constraints.txt")
                else:
                    log(f"building {env} (JupyterLab, nbgrader, torch: a few minutes, once)")
                    sh(SYSTEM_PYTHON, "-m", "venv", "--clear", env)
                    sh(
                        env / "bin" / "python",
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--upgrade",
                        "pip",
                        capture_output=True,
                    )
                pip(env, TORCH)
                pip(env, *BASE)
                stamp.write_text(base_key)
            ours = wheels[role]
            key, pkg = "".join(map(_wheel_digest, ours)), env / ".gradtutor-package"
            if not pkg.exists() or pkg.read_text() != key:
                pip(env, "--force-reinstall", "--no-deps", *ours)
                pip(env, *ours)  # their dependencies, already there but for the instructor's few
                pkg.write_text(key)
                log(f"installed {', '.join(w.name for w in ours)} into {env}")
            site = next((env / "lib").glob("python3*/site-packages"))
            for name in ("keepwork", "exchange", *(("formgrader_guard",) if role == "instructor" else ())):
                shutil.copyfile(REPO / "hub" / f"{name}.py", site / f"gradtutor_{name}.py")
    _student_tools_only(ENVS["student"])
    ENVS["student"].chmod(0o755)
    os.chown(ENVS["instructor"], 0, grp.getgrnam(STAFF).gr_gid)
    ENVS["instructor"].chmod(0o750)
    (OPT / "bin").mkdir(exist_ok=True)
    shutil.copyfile(REPO / "hub" / "confine", OPT / "bin" / "confine")
    (OPT / "bin" / "confine").chmod(0o755)


def _same_python(env: Path) -> bool:
    """Is ``env`` a venv of this machine's SYSTEM_PYTHON, at its version (one pip can update)?"""
    python = env / "bin" / "python"
    if not python.exists():
        return False
    ask = ["-c", "import sys; print(sys.version)"]
    mine = subprocess.run([str(python), *ask], capture_output=True, text=True)
    system = subprocess.run([SYSTEM_PYTHON, *ask], capture_output=True, text=True)
    return mine.returncode == 0 and mine.stdout == system.stdout


def _student_tools_only(env: Path) -> None:
    """nbgrader's own way to keep the instructor's tools from students: disable the formgrader,
    course list and create-assignment extensions in the students' environment."""
    jupyter = env / "bin" / "jupyter"
    for ext in ("formgrader", "course_list"):
        sh(
            jupyter,
            "server",
            "extension",
            "disable",
            "--sys-prefix",
            f"nbgrader.server_extensions.{ext}",
            capture_output=True,
        )
    for plugin in ("formgrader", "create-assignment", "course-list"):
        sh(
            jupyter,
            "labextension",
            "disable",
            "--level=sys_prefix",
            f"@jupyter/nbgrader:{plugin}",
            capture_output=True,
        )


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


# --- the class -------------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hidden_folders() -> list[str]:
    """This checkout and every worktree of its repository: the folders a student must not see."""
    found = [str(REPO)]
    done = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "list", "--porcelain"], capture_output=True, text=True
    )
    found += [line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("worktree ")]
    return sorted(set(found))


def setup(
    root: Path,
    *,
    prefix: str,
    port: int,
    chapters: list[int] | None = None,
    students: tuple[str, ...] = STUDENTS,
    log=print,
) -> dict:
    """The environments, the accounts, the exchange, the course folder and ``class.json``."""
    make_private(students_must_not_read(), log)
    build_envs(log)
    make_private(students_must_not_read(), log)  # the environments just built
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    state = root / "hub"
    state.mkdir(exist_ok=True)
    state.chmod(0o700)
    homes = root / "home"
    homes.mkdir(exist_ok=True)
    homes.chmod(0o755)
    teacher, ta = f"{prefix}teacher", f"{prefix}ta"
    names = [f"{prefix}{s}" for s in students]
    passwords = {u: secrets.token_urlsafe(9) for u in (teacher, ta, *names)}
    for user in (teacher, ta, *names):
        _account(user, homes / user, passwords[user], staff=user in (teacher, ta))
    exchange = root / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o777)  # nbgrader's docs: `chmod ugo+rw` on the exchange root
    _exchange_course(exchange / COURSE_ID, pwd.getpwnam(teacher))
    course = homes / teacher / "course"
    _course(course, chapters, exchange)
    _jupyter_config(root / "jupyter", course, exchange)
    cls = {
        "root": str(root),
        "state": str(state),
        "jupyter": str(root / "jupyter"),
        "instructor": teacher,
        "tas": [ta],
        "students": names,
        "passwords": passwords,
        "envs": {k: str(v) for k, v in ENVS.items()},
        "confine": str(OPT / "bin" / "confine"),
        "hidden": hidden_folders(),
        "exchange": str(exchange),
        "course": str(course),
        "course_id": COURSE_ID,
        "port": port,
        "hub_port": free_port() if port != 8000 else 8081,
        "proxy_api_port": free_port() if port != 8000 else 8001,
        "grader_port": free_port() if port != 8000 else 8002,
        "proxy": str(REPO / "node_modules" / ".bin" / "configurable-http-proxy"),
    }
    path = root / "class.json"
    path.write_text(json.dumps(cls, indent=1))
    path.chmod(0o600)
    return cls


def _account(user: str, home: Path, password: str, *, staff: bool) -> None:
    try:
        pwd.getpwnam(user)
    except KeyError:
        sh(
            "useradd",
            "--create-home",
            "--home-dir",
            home,
            "--shell",
            NOLOGIN,
            "--user-group",
            *(["--groups", STAFF] if staff else []),
            user,
        )
    if (elsewhere := pwd.getpwnam(user).pw_dir) != str(home):
        raise SystemExit(f"hub/classroom.py: the account {user} exists with the home {elsewhere}, not {home}: "
                         f"remove it (`userdel --remove {user}`) or use another --prefix")
    if pwd.getpwnam(user).pw_shell != NOLOGIN:  # an account of an older set-up
        sh("usermod", "--shell", NOLOGIN, user)
    Path(pwd.getpwnam(user).pw_dir).chmod(0o700)
    sh("chpasswd", input=f"{user}:{password}\n", text=True)


def _exchange_course(folder: Path, owner: pwd.struct_passwd) -> None:
    """The course's folders in the exchange, as nbgrader's release makes them (it keeps them
    when they exist and belong to the instructor), and ``inbound`` also sticky (a student who
    can write a submission there cannot rename or delete another's: mode 3733) and of the
    group ``gradtutor-staff``, which its setgid bit passes on to each submission
    (``PrivateSubmit`` in hub/exchange.py then closes it to other accounts)."""
    modes = {
        folder: 0o755,
        folder / "outbound": 0o755,
        folder / "inbound": 0o3733,
        folder / "feedback": 0o711,
    }
    staff = grp.getgrnam(STAFF).gr_gid
    for path, mode in modes.items():
        path.mkdir(exist_ok=True)
        os.chown(path, owner.pw_uid, staff if path.name == "inbound" else owner.pw_gid)
        path.chmod(mode)


def _course(course: Path, chapters: list[int] | None, exchange: Path) -> None:
    from gradtutor.authoring.build import write_source
    from gradtutor.key import registry

    owner = pwd.getpwuid(course.parent.stat().st_uid)
    course.mkdir(exist_ok=True)
    for chapter in registry.chapters():
        if chapters is None or chapter.number in chapters:
            write_source(chapter, course)
    (course / "nbgrader_config.py").write_text(instructor_config(course, exchange))
    sh("chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", course)


def instructor_config(course: Path, exchange: Path) -> str:
    """The course's nbgrader settings (the repository's), rooted at this course and exchange."""
    return (
        (REPO / "nbgrader_config.py").read_text()
        + f"\nc.CourseDirectory.root = {str(course)!r}\nc.CourseDirectory.course_id = {COURSE_ID!r}"
        f"\nc.Exchange.root = {str(exchange)!r}"
        "\nc.ExchangeFactory.collect = 'gradtutor_exchange.OwnerCheckedCollect'\n"
    )


def _jupyter_config(folder: Path, course: Path, exchange: Path) -> None:
    """JUPYTER_CONFIG_PATH of each role: nbgrader's settings, and the students' lab settings of
    ``make lab`` (jupyter/student: no formgrader, no create-assignment). The teaching assistant
    (``ta``) has the staff's environment without the formgrader: the course folder is the
    instructor's, and the TA grades through the grader service."""
    student, instructor, ta = folder / "student", folder / "instructor", folder / "ta"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(REPO / "jupyter" / "student", student)
    shutil.copytree(REPO / "jupyter" / "student", ta)
    instructor.mkdir(parents=True)
    exchange_settings = f"c.CourseDirectory.course_id = {COURSE_ID!r}\nc.Exchange.root = {str(exchange)!r}\n"
    (student / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\n{exchange_settings}"
        "c.ExchangeFactory.fetch_assignment = 'gradtutor_exchange.KeepWorkFetch'\n"
        "c.ExchangeFactory.submit = 'gradtutor_exchange.PrivateSubmit'\n"
    )
    (ta / "nbgrader_config.py").write_text(f"c = get_config()  # noqa: F821\n{exchange_settings}")
    (instructor / "nbgrader_config.py").write_text(instructor_config(course, exchange))
    _server_settings(student, {})
    _server_settings(ta, {})
    _server_settings(instructor, {"gradtutor_formgrader_guard": True})
    sh("chmod", "-R", "a+rX", folder)
    for staff_only in (instructor, ta):
        os.chown(staff_only, 0, grp.getgrnam(STAFF).gr_gid)
        staff_only.chmod(0o750)


def _server_settings(folder: Path, extensions: dict[str, bool]) -> None:
    """A role's jupyter_server_config.json: its extensions, and the terminals' shell."""
    path = folder / "jupyter_server_config.json"
    settings = json.loads(path.read_text()) if path.exists() else {}
    server = settings.setdefault("ServerApp", {})
    server.setdefault("jpserver_extensions", {}).update(extensions)
    server["terminado_settings"] = {"shell_command": TERMINAL_SHELL}
    path.write_text(json.dumps(settings, indent=2))


def ask_late_policy(answer: str | None, ask=input) -> str:
    """The course's late policy for set-up: ``--late-policy``, else asked for when set-up runs
    on a terminal, else nbgrader's default (none). Checked here, before the long build."""
    from gradtutor.records import term  # the checkout's package: only set-up needs it

    while answer is None and sys.stdin.isatty():
        typed = ask(f"Late policy ({term.POLICY_HELP}) [none]: ").strip() or "none"
        try:
            term.parse_policy(typed)
            answer = typed
        except term.PolicyError as e:
            print(e)
    try:
        return term.parse_policy(answer or "none").spec
    except term.PolicyError as e:
        raise SystemExit(f"hub/classroom.py: --late-policy: {e}") from None


def write_late_policy(course: Path, spec: str) -> str:
    """Into the course's nbgrader_config.py, as `gradtutor late-policy set` writes it (the
    instructor changes it later with that command); owned like the course folder."""
    from gradtutor.course import Course  # the checkout's package: only set-up needs it
    from gradtutor.records import term  # the checkout's package: only set-up needs it

    policy = term.parse_policy(spec)
    path = term.write_policy(Course.at(course), policy)
    owner = course.stat()
    os.chown(path, owner.st_uid, owner.st_gid)
    return policy.describe()


def load(root: Path) -> dict:
    return json.loads((root / "class.json").read_text())


# --- running it --------------------------------------------------------------------------------------


def hub_command(root: Path) -> tuple[list[str], dict[str, str]]:
    cls = load(root)
    env = {
        "PATH": f"{ENVS['instructor']}/bin:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "GRADTUTOR_CLASS": str(root / "class.json"),
    }
    cmd = [str(ENVS["instructor"] / "bin" / "jupyterhub"), "-f", str(REPO / "hub" / "jupyterhub_config.py")]
    return cmd, {**env, "HOME": cls["state"]}


@dataclasses.dataclass(frozen=True)
class Step:
    """One command of a staff action, run by root (``hub/classroom.py grade``, the grader
    service): what it does, in words, and how."""

    what: str
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]


def _tool_env(home: str) -> dict[str, str]:
    # runuser is in /usr/sbin
    path = f"{ENVS['instructor']}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return {"PATH": path, "LANG": "C.UTF-8", "HOME": home}


def _as_instructor(cls: dict, what: str, *argv: str) -> Step:
    """A step that only reads and writes the course folder and the exchange: run as the
    instructor's account, as the formgrader would."""
    home = pwd.getpwnam(cls["instructor"]).pw_dir
    return Step(what, ("runuser", "-u", cls["instructor"], "--", *argv), cls["course"], _tool_env(home))


def collect_steps(cls: dict, assignment: str) -> list[Step]:
    nbgrader = str(ENVS["instructor"] / "bin" / "nbgrader")
    return [_as_instructor(cls, "collect the submissions from the exchange", nbgrader, "collect", assignment)]


def grade_steps(cls: dict, assignment: str, *, force: bool = False) -> list[Step]:
    """``gradtutor grade`` (as root: the grader's sandbox needs it), nbgrader's
    ``generate_feedback`` and ``gradtutor feedback`` on the instructor's course folder, which is
    then handed back to the instructor's account. ``force`` grades again submissions already
    graded (a regrade)."""
    course, owner = cls["course"], pwd.getpwnam(cls["instructor"])
    bins = ENVS["instructor"] / "bin"
    root = _tool_env("/root")
    return [
        # the sandbox's children run the students' interpreter: the staff's is the staff's only
        Step("grade in the sandbox", (str(bins / "gradtutor"), "grade", course, "--assignment", assignment,
                                      "--student-python", str(ENVS["student"] / "bin" / "python"),
                                      *(["--force"] if force else [])), course, root),
        # nbgrader's own feedback pages first (release_feedback hands out those, with their
        # timestamp.txt); `gradtutor feedback` puts its verdicts, misconceptions and hints on top
        Step("nbgrader's feedback pages", (str(bins / "nbgrader"), "generate_feedback", assignment, "--force"),
             course, root),
        Step("gradtutor's feedback on them", (str(bins / "gradtutor"), "feedback", course), course, root),
        Step("hand the course back to the instructor",
             ("chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", course), course, root),
    ]


def release_feedback_steps(cls: dict, assignment: str) -> list[Step]:
    nbgrader = str(ENVS["instructor"] / "bin" / "nbgrader")
    what = "release the feedback to the students"
    return [_as_instructor(cls, what, nbgrader, "release_feedback", assignment)]


def grade(root: Path, assignment: str, *, force: bool = False) -> None:
    """What root runs after collecting, in a shell: the steps of the grader service's Grade."""
    for step in grade_steps(load(root), assignment, force=force):
        sh(*step.argv, cwd=step.cwd, env=step.env)


# --- what students must not read ---------------------------------------------------------------------

# the checkout's folders that hold solutions, exercise units (the key), the trusted package, course
# copies with source notebooks, or the history of all of them; the checkout itself and its .venv
# stay readable (the grader's sandbox children run that interpreter)
CHECKOUT_PRIVATE = ("solutions", "exercises", "gradtutor", "source", "course", "build", ".git")
# what marks a folder in /tmp as a course copy, a build or a wheel of the trusted package
COPY_MARKS = ("source", "solutions", "exercises", "gradebook.db", "gradtutor-[0-9]*.whl")


def students_must_not_read(checkout: Path = REPO, tmp: Path = Path("/tmp")) -> list[Path]:
    """Every existing path that must not be open to other accounts."""
    found = [checkout / name for name in CHECKOUT_PRIVATE if (checkout / name).exists()]
    found += [p for p in sorted(tmp.glob("gradtutor-*")) if p.is_dir() and _holds_a_copy(p)]
    found += [p for p in (ENVS["instructor"], CHECKS) if p.exists()]
    return found


def _holds_a_copy(folder: Path) -> bool:
    with contextlib.suppress(OSError):
        for depth in ("", "*/"):
            if any(next(folder.glob(depth + mark), None) for mark in COPY_MARKS):
                return True
    return False


def make_private(paths: list[Path], log=print) -> None:
    """Take other accounts' access (o-rwx) away from each path (a folder closed this way hides
    all it holds); refuses, naming the path, where that does not hold. Also refuses a student
    environment that holds the trusted package or the exercise units."""
    for path in paths:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:  # another run's copy in /tmp, gone since it was listed
            continue
        if mode & 0o007:
            try:
                path.chmod(mode & 0o7770)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise SystemExit(f"hub/classroom.py: {path} is readable by students and cannot be closed "
                                 f"({e}): make it unreadable to other accounts (o-rwx) or move it") from e
            log(f"closed {path} to other accounts (mode {mode & 0o7777:o} -> {mode & 0o7770:o})")
    site = next((ENVS["student"] / "lib").glob("python3*/site-packages"), None)
    for name in ("gradtutor", "exercises"):
        if site is not None and (site / name).exists():
            raise SystemExit(f"hub/classroom.py: the student environment holds {site / name} (the answer "
                             f"key): delete {ENVS['student']} and run setup again")


# --- taking it down ------------------------------------------------------------------------------------


def remove(root: Path, *, keep_envs: bool = False, log=print) -> None:
    """Stop the hub and every process of the class's accounts, delete the accounts, ``root``,
    the group ``gradtutor-staff`` when no account is left in it, and ``/opt/gradtutor`` unless
    ``keep_envs`` (the hub test keeps it: the next run reuses it)."""
    if (root / "class.json").exists():
        _remove_class(load(root))
    shutil.rmtree(root, ignore_errors=True)
    _remove_staff_group(log)
    if keep_envs:
        log(f"kept {OPT} ({_size(OPT)}): the next set-up reuses its environments; "
            "`hub/classroom.py remove` without --keep-envs deletes it")
    elif OPT.exists():
        shutil.rmtree(OPT)
        log(f"deleted {OPT}")


def _remove_class(cls: dict) -> None:
    """Its hub, grader service and proxy stopped, its accounts' processes killed, the accounts
    deleted with their homes."""
    for pidfile in ("jupyterhub.pid", "proxy.pid", "grader.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int((Path(cls["state"]) / pidfile).read_text()), signal.SIGTERM)
    users = [cls["instructor"], *cls.get("tas", []), *cls["students"]]
    for _ in range(20):
        if not any(subprocess.run(["pgrep", "-u", u], capture_output=True).returncode == 0 for u in users):
            break
        for user in users:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        time.sleep(0.25)
    for user in users:
        subprocess.run(["userdel", "--remove", user], capture_output=True)


def _remove_staff_group(log=print) -> None:
    """The staff group, unless some account (of another class) is still in it."""
    if not _group_exists(STAFF):
        return
    group = grp.getgrnam(STAFF)
    members = set(group.gr_mem) | {u.pw_name for u in pwd.getpwall() if u.pw_gid == group.gr_gid}
    if members:
        log(f"kept the group {STAFF}: {', '.join(sorted(members))} still in it")
        return
    subprocess.run(["groupdel", STAFF], capture_output=True, check=True)
    log(f"deleted the group {STAFF}")


def _size(path: Path) -> str:
    done = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True)
    return done.stdout.split("\t", 1)[0] if done.returncode == 0 else "?"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hub/classroom.py", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=["setup", "start", "grade", "remove"])
    p.add_argument("assignment", nargs="?")
    p.add_argument("--root", type=Path, default=Path("/srv/gradtutor"))
    p.add_argument("--prefix", default="gtc_")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--force", action="store_true", help="grade: grade again what was graded (a regrade)")
    p.add_argument("--keep-envs", action="store_true",
                   help=f"remove: keep {OPT} (a few GB) for the next set-up to reuse")
    p.add_argument("--late-policy", help="setup: none, zero or N%% per started day late, with an "
                   "optional 'grace 2h' (asked for on a terminal; default none); change it later "
                   "with `gradtutor late-policy set`")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        print(
            "hub/classroom.py: run as root (it makes Unix accounts and starts JupyterHub).", file=sys.stderr
        )
        return 1
    if args.action == "setup":
        policy = ask_late_policy(args.late_policy)  # before the long build: a wrong one fails now
        cls = setup(args.root, prefix=args.prefix, port=args.port)
        staff = [cls["instructor"], *cls["tas"]]
        print(f"\nThe class at http://127.0.0.1:{cls['port']}/ - staff {', '.join(staff)}, "
              f"students {', '.join(cls['students'])}.")
        print(f"Their passwords are in {args.root / 'class.json'} (readable by root only; never printed):")
        print(f"  sudo grep -A{len(staff) + len(cls['students']) + 1} passwords {args.root / 'class.json'}")
        print(write_late_policy(Path(cls["course"]), policy))
    elif args.action == "start":
        cmd, env = hub_command(args.root)
        os.execve(cmd[0], cmd, env)
    elif args.action == "grade":
        grade(args.root, args.assignment, force=args.force)
    else:
        remove(args.root, keep_envs=args.keep_envs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
