"""A whole term on a real JupyterHub, driven over HTTP as its users would drive it.

The test makes a class of its own with ``hub/classroom.py`` (real Unix accounts, nbgrader's
exchange, the two environments under /opt/gradtutor), starts JupyterHub with configurable-http-
proxy on 127.0.0.1, and removes accounts, processes and folders at the end, passed or failed.

Each user logs in with their password (PAM) and drives their own JupyterLab server through its
REST and kernel APIs: the instructor releases chapter 1 with the formgrader; three students fetch
it, write answers through the contents API (one right, one with misconceptions, one hostile),
run the self-checks in a real kernel and submit; the instructor collects, ``gradtutor grade`` and
``gradtutor feedback`` run (as root: the grader's sandbox needs it), the formgrader releases the
feedback; each student fetches theirs.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest
import requests  # both come with JupyterLab (jupyterlab_server, jupyter_server)
import websocket
from hostile import kit

from autograder.feedback import VERDICTS
from gradtutor.authoring.build import REPO
from gradtutor.key import registry

sys.path.insert(0, str(REPO / "hub"))
import classroom

pytestmark = [
    pytest.mark.hub,
    pytest.mark.timeout(1800),  # the first run on a machine builds /opt/gradtutor (about 7 minutes)
    pytest.mark.skipif(
        os.geteuid() != 0
        or not Path("/usr/sbin/useradd").exists()
        or not Path(classroom.SYSTEM_PYTHON).exists(),
        reason="a class on JupyterHub needs root (accounts, setuid), useradd and Debian's python3",
    ),
]

PREFIX = "gth_"
CHAPTER = kit.first_chapter()
SLUG = CHAPTER.slug
NB_PATH = f"{SLUG}/{SLUG}.ipynb"
RIGHT, MISTAKEN, HOSTILE = (f"{PREFIX}{s}" for s in classroom.STUDENTS)
LABEL = {v[0]: k for k, v in VERDICTS.items()}


# --- a user of the hub, over HTTP -------------------------------------------------------------------


class User:
    def __init__(self, hub: str, name: str, password: str) -> None:
        self.hub, self.name = hub, name
        login = requests.Session()
        login.get(f"{hub}/hub/login")
        xsrf = login.cookies.get("_xsrf")
        done = login.post(
            f"{hub}/hub/login",
            data={"username": name, "password": password, "_xsrf": xsrf},
            allow_redirects=False,
        )
        assert done.status_code == 302, (name, done.status_code, done.text[:500])
        login.get(f"{hub}/hub/home")  # the session's own xsrf cookie, set after login
        xsrf = [c.value for c in login.cookies if c.name == "_xsrf"][-1]
        token = login.post(
            f"{hub}/hub/api/users/{name}/tokens",
            json={"note": "test_hub", "expires_in": 3600},
            headers={"X-XSRFToken": xsrf},
        )
        assert token.status_code == 201, token.text
        self.token = token.json()["token"]
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {self.token}"
        self.base = f"{hub}/user/{name}"

    def start(self) -> None:
        started = self.http.post(f"{self.hub}/hub/api/users/{self.name}/server")
        assert started.status_code in (201, 202), started.text
        deadline = time.monotonic() + 180
        while (
            not self.http.get(f"{self.hub}/hub/api/users/{self.name}")
            .json()["servers"]
            .get("", {})
            .get("ready")
        ):
            assert time.monotonic() < deadline, f"{self.name}'s server did not start"
            time.sleep(0.5)

    def get(self, path: str, **kw) -> requests.Response:
        return self.http.get(f"{self.base}{path}", timeout=120, **kw)

    def post(self, path: str, **kw) -> requests.Response:
        return self.http.post(f"{self.base}{path}", timeout=300, **kw)

    def notebook(self, path: str = NB_PATH) -> nbformat.NotebookNode:
        got = self.get(f"/api/contents/{path}", params={"content": 1})
        assert got.status_code == 200, got.text
        return nbformat.from_dict(got.json()["content"])

    def save(self, nb: nbformat.NotebookNode, path: str = NB_PATH) -> None:
        put = self.http.put(
            f"{self.base}/api/contents/{path}",
            json={"type": "notebook", "format": "json", "content": nb},
            timeout=60,
        )
        assert put.status_code in (200, 201), put.text

    def assignments(self, action: str | None = None) -> list[dict]:
        data = {"assignment_id": SLUG, "course_id": classroom.COURSE_ID}
        done = (
            self.post(f"/assignments/{action}", data=data)
            if action
            else self.get("/assignments", params={"course_id": classroom.COURSE_ID})
        )
        assert done.status_code == 200, done.text
        body = done.json()
        assert not isinstance(body, dict) or body.get("success", True), body
        return body["value"] if isinstance(body, dict) else body

    def formgrader(self, action: str) -> dict:
        done = self.post(f"/formgrader/api/assignment/{SLUG}/{action}")
        assert done.status_code == 200, done.text
        result = done.json()
        assert result["success"], str(result.get("error", result))[-2500:]  # the traceback's end
        return result


class Kernel:
    """A kernel of the user's server, run through the kernel API's websocket."""

    def __init__(self, user: User, path: str = NB_PATH) -> None:
        self.user = user
        made = user.post(
            "/api/sessions",
            json={"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}},
        )
        assert made.status_code == 201, made.text
        self.session = made.json()
        url = f"{user.base.replace('http', 'ws', 1)}/api/kernels/{self.session['kernel']['id']}/channels"
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {user.token}"], timeout=120)

    def run(self, code: str) -> tuple[str, str | None]:
        """Execute ``code`` as a cell; returns (what it printed or showed as text, error name)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "username": self.user.name,
                        "session": uuid.uuid4().hex,
                        "msg_type": "execute_request",
                        "version": "5.3",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "channel": "shell",
                    "buffers": [],
                    "content": {
                        "code": code,
                        "silent": False,
                        "store_history": True,
                        "user_expressions": {},
                        "allow_stdin": False,
                        "stop_on_error": False,
                    },
                }
            )
        )
        text, error = [], None
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                text.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                text.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                error = content["ename"]
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(text), error

    def close(self) -> None:
        self.ws.close()
        self.user.http.delete(f"{self.user.base}/api/sessions/{self.session['id']}")


# --- the class ----------------------------------------------------------------------------------------


def _remove_leftovers() -> None:
    """Accounts of an earlier run that was killed before it could clean up."""
    for entry in pwd.getpwall():
        if entry.pw_name.startswith(PREFIX):
            subprocess.run(["pkill", "-KILL", "-u", entry.pw_name], capture_output=True)
            time.sleep(0.2)
            subprocess.run(["userdel", "--remove", entry.pw_name], capture_output=True)


@pytest.fixture(scope="module")
def klass():
    proxy = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
    assert proxy.exists(), f"{proxy} is missing: `make node_modules` installs it from package-lock.json"
    _remove_leftovers()
    root = Path(tempfile.mkdtemp(prefix="gradtutor-hubtest-", dir="/srv"))
    hub = None
    try:
        cls = classroom.setup(
            root, prefix=PREFIX, port=classroom.free_port(), chapters=[CHAPTER.number], log=lambda *a: None
        )
        cmd, env = classroom.hub_command(root)
        with (root / "hub.log").open("w") as log:
            hub = subprocess.Popen(
                cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cls["state"], start_new_session=True
            )
        url = f"http://127.0.0.1:{cls['port']}"
        deadline = time.monotonic() + 120
        while True:
            assert hub.poll() is None, (root / "hub.log").read_text()[-4000:]
            try:
                if requests.get(f"{url}/hub/api", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, (root / "hub.log").read_text()[-4000:]
            time.sleep(0.5)
        yield {**cls, "url": url, "root": root}
    finally:
        if hub is not None:
            with_pgid = os.getpgid(hub.pid) if hub.poll() is None else None
            hub.terminate()
            try:
                hub.wait(timeout=60)
            except subprocess.TimeoutExpired:
                hub.kill()
            if with_pgid:
                subprocess.run(["pkill", "-KILL", "-g", str(with_pgid)], capture_output=True)
        if (root / "class.json").exists():
            classroom.remove(root)
        _remove_leftovers()
        shutil.rmtree(root, ignore_errors=True)


def _answers(ex) -> dict[str, str | None]:
    """What each student writes in an exercise's answer cell."""
    mistaken = kit.wrong(ex, 0) if ex.wrong and not ex.is_function else kit.solution(ex)
    hostile = (
        (
            f"class _Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
            f"import os\nos.system('cat /etc/shadow')\n{ex.answer} = _Yes()"
        )
        if not ex.is_function
        else None
    )
    return {RIGHT: kit.solution(ex), MISTAKEN: mistaken, HOSTILE: hostile}


def _selfcheck(kernel: Kernel, nb: nbformat.NotebookNode) -> dict[str, str]:
    """Run the lesson's first cell (its imports) and every exercise cell in order; the verdict
    each self-check printed, by exercise id."""
    verdicts = {}
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in [code[0], *(c for c in code if "nbgrader" in c.metadata)]:
        text, error = kernel.run(cell.source)
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            assert error is None, (meta["grade_id"], error, text)
            heading = next(ln for ln in text.splitlines() if ln.endswith(f"[{meta['grade_id']}]"))
            label = heading.split(" ", 1)[1].split(":", 1)[0]
            verdicts[meta["grade_id"]] = LABEL[label]
    return verdicts


PROBE = """
import importlib, json, os, sys
out = {"imports": {}, "reads": {}, "writes": {}}
for name in ["gradtutor.key.registry", "gradtutor.key.answer_key", "autograder.grading", "autograder.builder",
             "exercises"]:
    try:
        importlib.import_module(name)
        out["imports"][name] = "imported"
    except Exception as e:
        out["imports"][name] = type(e).__name__
import autograder
out["autograder"] = os.path.dirname(autograder.__file__)
for path in READS:
    try:
        if os.path.isdir(path):
            out["reads"][path] = ("listed", len(os.listdir(path)))
        else:
            with open(path, "rb") as f:
                out["reads"][path] = ("read", len(f.read()))
    except Exception as e:
        out["reads"][path] = type(e).__name__
for path in WRITES:
    try:
        with open(path, "a") as f:
            f.write("changed by another student")
        out["writes"][path] = "written"
    except Exception as e:
        out["writes"][path] = type(e).__name__
for src, dest in RENAMES:
    try:
        os.rename(src, dest)
        out["writes"][src] = "renamed"
    except Exception as e:
        out["writes"][src] = type(e).__name__
print(json.dumps(out))
"""


def _probe(
    kernel: Kernel, reads: list[str], writes: list[str] = (), renames: list[tuple[str, str]] = ()
) -> dict:
    text, error = kernel.run(
        f"READS = {list(reads)!r}\nWRITES = {list(writes)!r}\nRENAMES = {list(renames)!r}\n" + PROBE
    )
    assert error is None, text
    return json.loads(text.strip().splitlines()[-1])


def _forge(kernel: Kernel, exchange: str, victim: str, nb: nbformat.NotebookNode) -> str:
    """A submission in the victim's name, written into inbound by another student."""
    name = f"{victim}+{SLUG}+2099-01-01 00:00:00.000000 UTC+forged"
    code = (
        f"import os, json\nd = os.path.join({exchange!r}, 'gradtutor', 'inbound', {name!r})\n"
        f"os.makedirs(d)\nopen(os.path.join(d, 'timestamp.txt'), 'w').write('2099-01-01 00:00:00.000000 UTC')\n"
        f"open(os.path.join(d, {SLUG + '.ipynb'!r}), 'w').write({nbformat.writes(nb)!r})\nprint('forged')"
    )
    text, error = kernel.run(code)
    assert error is None and "forged" in text, text
    return name


@pytest.fixture(scope="module")
def term(klass: dict) -> dict:
    """The whole term; what each step showed, for the tests below."""
    pw, url = klass["passwords"], klass["url"]
    seen: dict = {"verdicts": {}, "probes": {}, "pages": {}}
    teacher = User(url, klass["instructor"], pw[klass["instructor"]])
    teacher.start()
    seen["teacher_lab"] = teacher.get("/lab").text
    teacher.formgrader("assign")
    teacher.formgrader("release")

    students = {name: User(url, name, pw[name]) for name in klass["students"]}
    released = None
    for name, user in students.items():
        user.start()
        seen.setdefault("student_lab", user.get("/lab").text)
        listed = user.assignments()
        assert [a["assignment_id"] for a in listed if a["status"] == "released"] == [SLUG]
        user.assignments("fetch")
        nb = user.notebook()
        released = released or nb
        exs = kit.exercises_of(nb)
        for ex in exs:
            code = _answers(ex)[name]
            if code is not None:
                nb.cells[kit.index(nb, f"{ex.id}-answer")].source = code
        user.save(nb)
        kernel = Kernel(user)
        seen["verdicts"][name] = _selfcheck(kernel, user.notebook())
        if name == RIGHT:
            valid = user.post("/assignments/validate", data={"path": NB_PATH}).json()
            seen["validate"] = valid
        user.assignments("submit")
        kernel.close()
    seen["exercises"] = kit.exercises_of(released)

    # the hostile student, before the instructor collects: reads others' work, forges a
    # submission in the right student's name that would score full marks
    inbound = f"{klass['exchange']}/gradtutor/inbound"
    submitted = {n: sorted(os.listdir(inbound)) for n in [None]}[None]  # root sees the names
    right_sub = next(s for s in submitted if s.startswith(f"{RIGHT}+"))
    home = {n: pwd.getpwnam(n).pw_dir for n in students}
    hostile = Kernel(students[HOSTILE])
    seen["probes"]["before"] = _probe(
        hostile,
        reads=[
            inbound,  # nbgrader's 2733: no listing, so no submission's name can be learnt
            f"{inbound}/{RIGHT}+{SLUG}+{right_sub.split('+')[2]}+guessed/{SLUG}.ipynb",
            f"{inbound}/{right_sub}/{SLUG}.ipynb",  # even knowing the name (PrivateSubmit)
            f"{inbound}/{right_sub}/submission_secret.txt",  # the key to the feedback page's name
            f"{home[RIGHT]}/{NB_PATH}",
            home[MISTAKEN],
            str(REPO / "solutions" / f"{SLUG}.ipynb"),
            str(REPO / "exercises"),
            str(next((classroom.ENVS["instructor"] / "lib").glob("python3*/site-packages"))),
            klass["course"],
            f"{klass['course']}/source/{SLUG}/{SLUG}.ipynb",
        ],
        writes=[f"{inbound}/{right_sub}/{SLUG}.ipynb", f"{inbound}/{right_sub}/planted.ipynb",
                f"{home[MISTAKEN]}/{NB_PATH}"],
        renames=[(f"{inbound}/{right_sub}", f"{inbound}/{HOSTILE}+moved")],
    )
    mistaken_nb = students[MISTAKEN].notebook()
    seen["forged"] = _forge(hostile, klass["exchange"], MISTAKEN, kit.answered(released, kit.solution))
    seen["mistaken_kept"] = mistaken_nb
    hostile.close()
    traversal = students[HOSTILE].get(f"/api/contents/../{RIGHT}/{NB_PATH}")
    other_server = students[HOSTILE].http.get(
        f"{students[RIGHT].base}/api/contents/{NB_PATH}", timeout=60, allow_redirects=False
    )
    seen["http_reads"] = [traversal.status_code, other_server.status_code]

    collected = teacher.formgrader("collect")
    seen["collect"] = collected
    classroom.grade(klass["root"], SLUG)
    teacher.formgrader("release_feedback")
    for name, user in students.items():
        user.assignments("fetch_feedback")
        folder = f"{SLUG}/feedback"
        (stamp,) = [i["name"] for i in user.get(f"/api/contents/{folder}").json()["content"]]
        got = user.get(f"/api/contents/{folder}/{stamp}/{SLUG}.html", params={"content": 1, "format": "text"})
        assert got.status_code == 200, got.text
        seen["pages"][name] = got.json()["content"]
        seen.setdefault("feedback_paths", {})[name] = (
            f"{pwd.getpwnam(name).pw_dir}/{folder}/{stamp}/{SLUG}.html"
        )
    results = Path(klass["course"]) / "gradtutor" / "results" / SLUG
    seen["results"] = {n: json.loads((results / f"{n}.json").read_text()) for n in students}

    # after the feedback: each student tries to read and change another's feedback
    feedback_dir = f"{klass['exchange']}/gradtutor/feedback"
    seen["probes"]["after"] = {}
    for name, user in students.items():
        other = RIGHT if name != RIGHT else MISTAKEN
        kernel = Kernel(user, path=f"{SLUG}/probe.ipynb")
        released_feedback = sorted(os.listdir(feedback_dir))
        seen["probes"]["after"][name] = _probe(
            kernel,
            reads=[feedback_dir, seen["feedback_paths"][other], f"{feedback_dir}/{'0' * 32}.html"],
            writes=[seen["feedback_paths"][other], *(f"{feedback_dir}/{f}" for f in released_feedback)],
        )
        kernel.close()
    seen["teacher"], seen["students"] = teacher, students
    return seen


# --- what the term shows ----------------------------------------------------------------------------


def _points(exs, verdict_of) -> float:
    return sum(ex.points for ex in exs if verdict_of(ex))


def test_scores_are_what_the_answers_earn(term: dict) -> None:
    exs, results = term["exercises"], term["results"]
    full = sum(ex.points for ex in exs)
    wrongs = [ex for ex in exs if ex.wrong and not ex.is_function]
    assert wrongs, "chapter 1 has listed wrong answers"
    assert results[RIGHT]["score"] == full
    assert results[MISTAKEN]["score"] == full - sum(ex.points for ex in wrongs)
    assert results[HOSTILE]["score"] == 0
    for name, result in results.items():  # each student's own page shows their own score
        assert f"{result['score']:g} / {full:g}" in term["pages"][name], name
    assert "Likely misconception" in term["pages"][MISTAKEN]


def test_the_self_check_in_a_student_kernel_says_what_the_grader_says(term: dict) -> None:
    """The self-check of the runtime, run in the hub's kernels, against the full package's
    verdict at the shown values for the same answers."""
    from autograder.selfcheck import check

    verdicts = term["verdicts"]
    for ex in term["exercises"]:
        assert verdicts[RIGHT][ex.id] == "correct", ex.id
        for name in (RIGHT, MISTAKEN):
            ns: dict = {}
            nb_setup = registry.get(ex.id).setup_code(ex.params)
            exec(compile("import torch\n" + nb_setup, "<setup>", "exec"), ns)
            answer = _answers(ex)[name]
            exec(compile(answer, "<answer>", "exec"), ns)
            trusted = check(ex.id, ns[ex.answer], namespace=ns, history=[answer])
            assert verdicts[name][ex.id] == trusted.verdict, (name, ex.id)
    assert {verdicts[MISTAKEN][ex.id] for ex in term["exercises"] if ex.wrong and not ex.is_function} - {
        "correct"
    }, "the misconceptions were diagnosed"
    assert term["validate"]["success"], term["validate"]


def test_a_student_kernel_holds_the_runtime_only(term: dict) -> None:
    probe = term["probes"]["before"]
    assert set(probe["imports"].values()) == {"ModuleNotFoundError"}, probe["imports"]
    assert probe["autograder"].startswith(str(classroom.ENVS["student"])), probe["autograder"]
    for path, outcome in probe["reads"].items():
        assert outcome in ("PermissionError", "FileNotFoundError"), (path, outcome)


def test_no_student_reads_or_changes_anothers_submission(term: dict, klass: dict) -> None:
    probe = term["probes"]["before"]
    for path, outcome in probe["writes"].items():
        assert outcome == "PermissionError", (path, outcome)
    assert term["http_reads"][0] in (400, 403, 404) and term["http_reads"][1] in (302, 403, 404), term[
        "http_reads"
    ]
    # the forged submission in the mistaken student's name was left out of collect
    graded = term["results"][MISTAKEN]["score"]
    assert graded < sum(ex.points for ex in term["exercises"])
    submitted = Path(klass["course"]) / "submitted" / MISTAKEN / SLUG / "timestamp.txt"
    assert "2099" not in submitted.read_text()
    inbound = Path(klass["exchange"]) / "gradtutor" / "inbound"
    assert (inbound / term["forged"]).stat().st_uid == pwd.getpwnam(HOSTILE).pw_uid


def test_the_exchange_keeps_each_submission_to_its_student_and_the_staff(term: dict, klass: dict) -> None:
    """inbound and feedback cannot be listed by a student; a submission's folder is its
    student's and the staff's (0770, group gradtutor-staff); a released feedback page is named
    by a hash keyed with the submission's secret, which only its student and the staff can read."""
    import grp

    course = Path(klass["exchange"]) / "gradtutor"
    staff = grp.getgrnam(classroom.STAFF).gr_gid
    for folder, mode in (("inbound", 0o3733), ("feedback", 0o711)):
        assert (course / folder).stat().st_mode & 0o7777 == mode, folder
    for name in os.listdir(course / "inbound"):
        if name.endswith("+forged"):
            continue
        folder = course / "inbound" / name
        assert len(name.rsplit("+", 1)[1]) == 12, name  # nbgrader's base64 of 9 random bytes
        assert (folder.stat().st_mode & 0o777, folder.stat().st_gid) == (0o770, staff), name
    for name in os.listdir(course / "feedback"):
        assert len(name) == len("0" * 32 + ".html"), name


def test_no_student_reads_or_changes_anothers_feedback(term: dict) -> None:
    for name, probe in term["probes"]["after"].items():
        for path, outcome in probe["reads"].items():
            assert outcome in ("PermissionError", "FileNotFoundError"), (name, path, outcome)
        for path, outcome in probe["writes"].items():
            assert outcome == "PermissionError", (name, path, outcome)


def test_students_see_the_student_tools_and_the_instructor_the_formgrader(term: dict) -> None:
    import re

    def disabled(page: str) -> set[str]:
        data = re.search(
            r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
        )
        return set(json.loads(data.group(1)).get("disabledExtensions", []))

    tools = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
    assert tools <= disabled(term["student_lab"])
    assert not tools & disabled(term["teacher_lab"])
    student = next(iter(term["students"].values()))
    assert student.get("/formgrader/api/assignments").status_code == 404
    assert term["teacher"].get("/formgrader/api/assignments").status_code == 200


def test_a_new_release_keeps_the_students_work_and_says_what_changed(term: dict, klass: dict) -> None:
    """The instructor changes a lesson cell and releases again; the right student (who edited
    the notebook) re-fetches: their notebook is kept, the new release is beside it with the
    changed cell named."""
    teacher, student = term["teacher"], term["students"][RIGHT]
    before = student.notebook()
    source = f"course/source/{SLUG}/{SLUG}.ipynb"
    nb = teacher.notebook(source)
    cell = next(c for c in nb.cells if c.cell_type == "markdown")
    cell.source += "\n\nAn update from your instructor."
    teacher.save(nb, source)
    teacher.formgrader("unrelease")
    teacher.formgrader("assign")
    teacher.formgrader("release")
    student.assignments("fetch")
    assert student.notebook().cells == before.cells
    note = student.get(
        f"/api/contents/{SLUG}-updates/WHAT-CHANGED.txt", params={"content": 1, "format": "text"}
    )
    assert note.status_code == 200, note.text
    assert f"changed {cell.id}" in note.json()["content"]
    update = student.notebook(f"{SLUG}-updates/{SLUG}.ipynb")
    assert any("An update from your instructor." in c.source for c in update.cells)


def test_the_hub_log_has_no_error_and_collect_names_the_forgery(term: dict, klass: dict) -> None:
    """Every server logs into the hub's log: no error there but the forged submission that the
    formgrader's collect left out, which it also reports to the instructor."""
    import re

    log = (klass["root"] / "hub.log").read_text()
    errors = [ln for ln in log.splitlines() if re.match(r"\[(E|C) ", ln) or ln.startswith("Traceback")]
    forged = f"Not collected: {term['forged']} names {MISTAKEN}"
    assert [ln for ln in errors if forged not in ln] == [], "\n".join(errors)
    assert forged in term["collect"]["log"], term["collect"]
