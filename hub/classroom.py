"""A class on JupyterHub on this machine: two environments, real accounts, nbgrader's exchange.

Run as root (``make hub`` runs ``setup`` then ``start``; tests/test_hub.py runs a class of its own
and ``remove``s it)::

    python hub/classroom.py setup [--root /srv/gradtutor] [--prefix gtc_] [--port 8000]
    python hub/classroom.py start [--root /srv/gradtutor]
    python hub/classroom.py grade ASSIGNMENT [--root /srv/gradtutor]
    python hub/classroom.py remove [--root /srv/gradtutor]

What it makes:

* ``/opt/gradtutor/student``: a venv of Debian's ``/usr/bin/python3`` (readable by every user)
  with JupyterLab, nbgrader, torch and the student runtime wheel (``gradtutor runtime``): the
  self-checks at the shown values, no exercise unit, no answer key. Mode 0755.
* ``/opt/gradtutor/instructor``: the same plus the full ``gradtutor`` package. Mode 0750,
  group ``gradtutor-staff``: a student cannot read it.
* accounts: ``<prefix>teacher`` (in ``gradtutor-staff``) and students, homes mode 0700, each
  with a password printed once and kept in ``ROOT/class.json`` (mode 0600, root's).
* ``ROOT/exchange``: nbgrader's exchange, mode 0777 as nbgrader documents, and the course's
  folders in it as nbgrader's release makes them (``inbound`` 2733 plus the sticky bit and of
  the group ``gradtutor-staff``, ``feedback`` 0711), owned by the instructor; the exchange
  classes of hub/exchange.py (keep-work fetch, private submit, owner-checked collect).
* ``~teacher/course``: the nbgrader course folder, with the chapters' source notebooks.
"""

from __future__ import annotations

import argparse
import contextlib
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
STAFF = "gradtutor-staff"
COURSE_ID = "gradtutor"
SYSTEM_PYTHON = "/usr/bin/python3"
# what both environments hold besides the course's own package (versions from constraints.txt)
# torch first and alone, then the rest without naming it: asked for together, pip may take the
# CUDA build from PyPI instead of the CPU build on this machine's disk.
TORCH = "torch==2.13.0"
BASE = ("jupyterhub", "jupyterlab", "notebook", "nbgrader", "ipykernel", "ipywidgets", "matplotlib", "numpy")
STUDENTS = ("ada", "ben", "cleo")


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
    here = Path(sys.executable).parent
    sh(here / "gradtutor", "runtime", out, capture_output=True)
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
            for name in ("keepwork", "exchange"):
                shutil.copyfile(REPO / "hub" / f"{name}.py", site / f"gradtutor_{name}.py")
    _student_tools_only(ENVS["student"])
    ENVS["student"].chmod(0o755)
    os.chown(ENVS["instructor"], 0, grp.getgrnam(STAFF).gr_gid)
    ENVS["instructor"].chmod(0o750)
    (OPT / "bin").mkdir(exist_ok=True)
    shutil.copyfile(REPO / "hub" / "confine", OPT / "bin" / "confine")
    (OPT / "bin" / "confine").chmod(0o755)


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
    build_envs(log)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    state = root / "hub"
    state.mkdir(exist_ok=True)
    state.chmod(0o700)
    homes = root / "home"
    homes.mkdir(exist_ok=True)
    homes.chmod(0o755)
    teacher = f"{prefix}teacher"
    names = [f"{prefix}{s}" for s in students]
    passwords = {u: secrets.token_urlsafe(9) for u in (teacher, *names)}
    for user in (teacher, *names):
        _account(user, homes / user, passwords[user], staff=user == teacher)
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
            "/bin/bash",
            "--user-group",
            *(["--groups", STAFF] if staff else []),
            user,
        )
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
    ``make lab`` (jupyter/student: no formgrader, no create-assignment)."""
    student, instructor = folder / "student", folder / "instructor"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(REPO / "jupyter" / "student", student)
    instructor.mkdir(parents=True)
    (student / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.ExchangeFactory.fetch_assignment = 'gradtutor_exchange.KeepWorkFetch'\n"
        "c.ExchangeFactory.submit = 'gradtutor_exchange.PrivateSubmit'\n"
    )
    (instructor / "nbgrader_config.py").write_text(instructor_config(course, exchange))
    sh("chmod", "-R", "a+rX", folder)
    os.chown(instructor, 0, grp.getgrnam(STAFF).gr_gid)
    instructor.chmod(0o750)


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


def grade(root: Path, assignment: str) -> None:
    """What a teaching assistant runs (as root: the grader's sandbox needs it) after collecting:
    `gradtutor grade`, nbgrader's `generate_feedback` and `gradtutor feedback` on the
    instructor's course folder, which is then handed back to the instructor's account."""
    cls = load(root)
    course = Path(cls["course"])
    tool = ENVS["instructor"] / "bin" / "gradtutor"
    env = {**os.environ, "PATH": f"{ENVS['instructor']}/bin:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    sh(tool, "grade", course, "--assignment", assignment, cwd=course, env=env)
    # nbgrader's own feedback pages first (release_feedback hands out those, with their
    # timestamp.txt); `gradtutor feedback` puts its verdicts, misconceptions and hints on top
    sh(ENVS["instructor"] / "bin" / "nbgrader", "generate_feedback", assignment, "--force", cwd=course, env=env,
       capture_output=True)
    sh(tool, "feedback", course, cwd=course, env=env)
    owner = pwd.getpwnam(cls["instructor"])
    sh("chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", course)


def remove(root: Path) -> None:
    """Stop the hub and every process of the class's accounts, delete the accounts and ``root``."""
    cls = load(root)
    for pidfile in ("jupyterhub.pid", "proxy.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int((Path(cls["state"]) / pidfile).read_text()), signal.SIGTERM)
    users = [cls["instructor"], *cls["students"]]
    for _ in range(20):
        if not any(subprocess.run(["pgrep", "-u", u], capture_output=True).returncode == 0 for u in users):
            break
        for user in users:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        time.sleep(0.25)
    for user in users:
        subprocess.run(["userdel", "--remove", user], capture_output=True)
    shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hub/classroom.py", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=["setup", "start", "grade", "remove"])
    p.add_argument("assignment", nargs="?")
    p.add_argument("--root", type=Path, default=Path("/srv/gradtutor"))
    p.add_argument("--prefix", default="gtc_")
    p.add_argument("--port", type=int, default=8000)
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
        print(write_late_policy(Path(cls["course"]), policy))
        print(f"\nThe class at http://127.0.0.1:{cls['port']}/ - logins (user / password):")
        for user in [cls["instructor"], *cls["students"]]:
            role = "instructor" if user == cls["instructor"] else "student"
            print(f"  {user:<16} {cls['passwords'][user]:<14} {role}")
        print(f"(kept in {args.root / 'class.json'}, readable by root only)")
    elif args.action == "start":
        cmd, env = hub_command(args.root)
        os.execve(cmd[0], cmd, env)
    elif args.action == "grade":
        grade(args.root, args.assignment)
    else:
        remove(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
