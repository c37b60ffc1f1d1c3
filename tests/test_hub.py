"""A whole term on a real JupyterHub, driven over HTTP as its users would drive it.

The test makes a class of its own with ``hub/classroom.py`` (real Unix accounts, nbgrader's
exchange, the two environments under /opt/gradtutor), starts JupyterHub with configurable-http-
proxy on 127.0.0.1, and removes accounts, processes and folders at the end, passed or failed.

Each user logs in with their password (PAM) and drives their own JupyterLab server through its
REST and kernel APIs: the instructor releases chapter 1 with the formgrader; three students fetch
it, write answers through the contents API (one right, one with misconceptions, one hostile),
run the self-checks in a real kernel and submit; the instructor collects; the teaching assistant
grades in the grader service (``hub/grader_service.py``: ``gradtutor grade`` in its sandbox, the
feedback pages), from the browser, with no root shell; the formgrader's Autograde refers to the
service and its Generate Feedback keeps gradtutor's feedback; the TA releases the feedback;
each student fetches theirs. Terminals of each role find the course's tools; no account, group
or folder of the class is left when it is taken down.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
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
GRADER = "gradtutor-grader"
CHAPTER = kit.first_chapter()
SLUG = CHAPTER.slug
NB_PATH = f"{SLUG}/{SLUG}.ipynb"
RIGHT, MISTAKEN, HOSTILE = (f"{PREFIX}{s}" for s in classroom.STUDENTS)
TA = f"{PREFIX}ta"
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
        self.browser = login  # the hub's login cookie, as a browser holds it
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

    def service(self, path: str = "", method: str = "get", **kw) -> requests.Response:
        """The grader service, with this user's API token."""
        return self.http.request(method, f"{self.hub}/services/{GRADER}/{path}", timeout=60, **kw)

    def terminal(self, command: str) -> str:
        """What ``command`` printed in a new JupyterLab terminal of this user's server."""
        made = self.post("/api/terminals")
        assert made.status_code == 200, made.text
        name = made.json()["name"]
        url = f"{self.base.replace('http', 'ws', 1)}/terminals/websocket/{name}"
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=60)
        try:
            ws.send(json.dumps(["stdin", f"{command}; echo END-$((6*7))\r"]))
            out = ""
            while "END-42" not in out:
                msg = json.loads(ws.recv())
                if msg[0] == "stdout":
                    out += msg[1]
        finally:
            ws.close()
            self.http.delete(f"{self.base}/api/terminals/{name}", timeout=60)
        return out.split("END-42")[0]

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
            elif kind in ("execute_result", "display_data"):  # a line of its own, as a notebook shows it
                text.append(content["data"].get("text/plain", "") + "\n")
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
    for _ in range(50):  # userdel refuses an account while a process of it still runs
        left = [e.pw_name for e in pwd.getpwall() if e.pw_name.startswith(PREFIX)]
        if not left:
            return
        for name in left:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
            time.sleep(0.2)
            subprocess.run(["userdel", "--remove", name], capture_output=True)


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    proxy = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
    assert proxy.exists(), f"{proxy} is missing: `make node_modules` installs it from package-lock.json"
    _remove_leftovers()
    root = Path(tempfile.mkdtemp(prefix="gradtutor-hubtest-", dir="/srv"))
    # a course copy left in /tmp, open to every account, as a build or a test run may leave one
    copy = Path(tempfile.mkdtemp(prefix="gradtutor-hubtest-copy-"))
    (copy / "source").mkdir()
    (copy / "source" / "answers.txt").write_text("the answer key")
    copy.chmod(0o755)
    said: list[str] = []
    running: dict = {}

    def down() -> list[str]:
        """Stop the hub and remove the class (again: nothing happens); what ``remove`` said."""
        hub = running.pop("hub", None)
        if hub is not None:
            with_pgid = os.getpgid(hub.pid) if hub.poll() is None else None
            hub.terminate()
            try:
                hub.wait(timeout=60)
            except subprocess.TimeoutExpired:
                hub.kill()
            if with_pgid:
                subprocess.run(["pkill", "-KILL", "-g", str(with_pgid)], capture_output=True)
        removed: list[str] = []
        for log in [*root.glob("hub.log"), *root.glob("hub/grader/*.log")]:  # kept by pytest for a look after
            shutil.copyfile(log, tmp_path_factory.mktemp("hub-logs", numbered=True) / log.name)
        if root.exists():
            classroom.remove(root, keep_envs=True, log=removed.append)
        _remove_leftovers()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(copy, ignore_errors=True)
        return removed

    try:
        cls = classroom.setup(
            root, prefix=PREFIX, port=classroom.free_port(), chapters=[CHAPTER.number], log=said.append
        )
        cmd, env = classroom.hub_command(root)
        with (root / "hub.log").open("w") as log:
            hub = running["hub"] = subprocess.Popen(
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
        yield {**cls, "url": url, "root": root, "said": said, "copy": copy, "down": down}
    finally:
        down()


# what the right student adds to each answer: a printed tensor, a plot and a lazily loaded torch
# module, none of which may cost a mark (the sandbox runs the students' own interpreter)
EXTRAS = (
    "print({answer})\nimport matplotlib.pyplot as plt\nplt.plot([0.0, 1.0], [1.0, 0.0])\nplt.show()\n"
    "import torch.autograd.forward_ad\nimport torch.func\n"
)


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
    right = kit.solution(ex) + ("" if ex.is_function else "\n" + EXTRAS.format(answer=ex.answer))
    return {RIGHT: right, MISTAKEN: mistaken, HOSTILE: hostile}


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
    _staff_grade(seen, klass, teacher, students)
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


def _wait(user: User, job: int) -> dict:
    """The grader service's job, once it has finished."""
    deadline = time.monotonic() + 1500
    while True:
        got = user.service(f"api/jobs/{job}")
        assert got.status_code == 200, got.text
        if got.json()["status"] in ("done", "failed"):
            assert got.json()["status"] == "done", got.json()["log"][-4000:]
            return got.json()
        assert time.monotonic() < deadline, got.json()
        time.sleep(1)


def _staff_grade(seen: dict, klass: dict, teacher: User, students: dict[str, User]) -> None:
    """The teaching assistant grades in the grader service from the browser; the instructor
    presses the formgrader's Autograde and Generate Feedback; the TA releases the feedback with
    the service's API; the students try the service."""
    url = klass["url"]
    ta = seen["ta"] = User(url, TA, klass["passwords"][TA])
    ta.start()
    page = ta.browser.get(f"{url}/services/{GRADER}/", timeout=60)  # through the hub's OAuth
    assert page.status_code == 200, page.text[:2000]
    seen["service_page"] = page.text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text).group(1)
    pressed = ta.browser.post(
        f"{url}/services/{GRADER}/jobs",
        data={"_xsrf": xsrf, "action": "grade", "assignment": SLUG},
        allow_redirects=False,
        timeout=60,
    )
    assert pressed.status_code == 303, pressed.text[:2000]
    # the same press without the page's token, as a page served by a student could send it
    forged = ta.browser.post(f"{url}/services/{GRADER}/jobs", allow_redirects=False, timeout=60,
                             data={"action": "grade", "assignment": SLUG})
    seen["forged_press"] = forged.status_code
    seen["grade_job"] = _wait(ta, ta.service("api/jobs").json()["jobs"][-1]["id"])
    seen["service_page_after"] = ta.browser.get(f"{url}/services/{GRADER}/", timeout=60).text

    course = Path(klass["course"])
    autograded = course / "autograded" / RIGHT / SLUG / f"{SLUG}.ipynb"
    before = autograded.read_bytes()
    seen["autograde"] = teacher.post(f"/formgrader/api/submission/{SLUG}/{RIGHT}/autograde").json()
    seen["autograded_kept"] = autograded.read_bytes() == before
    seen["generate_all"] = teacher.formgrader("generate_feedback")
    one = teacher.post(f"/formgrader/api/assignment/{SLUG}/{MISTAKEN}/generate_feedback")
    seen["generate_one"] = one.json()
    seen["course_pages"] = {n: (course / "feedback" / n / SLUG / f"{SLUG}.html").read_text() for n in students}

    released = ta.service("api/jobs", "post", json={"action": "release_feedback", "assignment": SLUG})
    assert released.status_code == 202, released.text
    seen["release_job"] = _wait(ta, released.json()["id"])

    student = students[HOSTILE]
    seen["student_service"] = {
        "token": student.service("api/jobs").status_code,
        "token_post": student.service("api/jobs", "post", json={"action": "grade", "assignment": SLUG})
        .status_code,
        "browser": student.browser.get(f"{url}/services/{GRADER}/", timeout=60).status_code,
    }
    seen["jobs"] = ta.service("api/jobs").json()["jobs"]


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
    formgrader's collect left out, which it also reports to the instructor, and the hub's refusal
    of the student who tried the grader service in the browser."""
    log = (klass["root"] / "hub.log").read_text()
    errors = [ln for ln in log.splitlines() if re.match(r"\[(E|C) ", ln) or ln.startswith("Traceback")]
    forged = f"Not collected: {term['forged']} names {MISTAKEN}"
    refused = f"User <User({HOSTILE} 1/1 running)> not allowed to access JupyterHub service {GRADER}"
    assert [ln for ln in errors if forged not in ln and refused not in ln] == [], "\n".join(errors)
    assert forged in term["collect"]["log"], term["collect"]
    assert any(refused in ln for ln in errors), "the hub refused the student the service"


def test_the_ta_grades_and_releases_feedback_in_the_grader_service(term: dict) -> None:
    """The TA's Grade (from the page, with the hub's browser login) and Release feedback (over
    the service's API) ran as jobs to the end; the scores the students then fetched are those
    of test_scores_are_what_the_answers_earn."""
    grade, release = term["grade_job"], term["release_job"]
    assert (grade["status"], grade["user"], grade["action"]) == ("done", TA, "grade"), grade["log"][-3000:]
    assert (release["status"], release["user"]) == ("done", TA), release["log"][-3000:]
    assert "== grade in the sandbox" in grade["log"] and "== gradtutor's feedback on them" in grade["log"]
    page = term["service_page"]
    buttons = ("Collect", "Grade", "Regrade", "Release feedback")
    assert SLUG in page and all(f">{b}</button>" in page for b in buttons), page
    assert f"#{grade['id']} Grade {SLUG}" in term["service_page_after"]
    assert [j["id"] for j in term["jobs"]] == [1, 2], term["jobs"]  # the students' POST made no job


def test_a_press_without_the_pages_xsrf_token_is_refused(term: dict) -> None:
    """Every user's server shares the hub's origin: a page a student serves must not be able to
    press the service's buttons with a TA's cookie."""
    assert term["forged_press"] == 403


def test_students_cannot_reach_the_grader_service(term: dict) -> None:
    assert term["student_service"] == {"token": 403, "token_post": 403, "browser": 403}


def test_the_formgraders_autograde_points_to_the_grader_service_and_changes_nothing(term: dict) -> None:
    answer = term["autograde"]
    assert answer["success"] is False, answer
    assert f"/services/{GRADER}/" in answer["error"] and "sandbox" in answer["error"], answer
    assert term["autograded_kept"]


def test_the_formgraders_generate_feedback_keeps_gradtutors_feedback(term: dict) -> None:
    """The pages in the course folder after the formgrader's Generate Feedback (all, then one
    student's) still carry gradtutor's scores and misconceptions; stock nbgrader's would not."""
    assert term["generate_all"]["success"] and term["generate_one"]["success"], term["generate_one"]
    exs, results = term["exercises"], term["results"]
    full = sum(ex.points for ex in exs)
    for name, page in term["course_pages"].items():
        assert f"{results[name]['score']:g} / {full:g}" in page, name
    assert "Likely misconception" in term["course_pages"][MISTAKEN]


def _tools(listing: str) -> list[str]:
    """The paths a terminal printed, without bash's control sequences (bracketed paste off, ...)."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", listing).replace("\r", "")
    return [ln.strip() for ln in plain.splitlines() if ln.strip().startswith("/")]


def test_each_roles_terminal_finds_its_course_tools(term: dict) -> None:
    """``command -v`` in a JupyterLab terminal (terminals REST API and websocket) of a student,
    the instructor and the TA: python and nbgrader of the role's environment, gradtutor for the
    staff only."""
    ask = "command -v python nbgrader gradtutor"
    student, staff = classroom.ENVS["student"] / "bin", classroom.ENVS["instructor"] / "bin"
    assert _tools(term["students"][RIGHT].terminal(ask)) == [f"{student}/python", f"{student}/nbgrader"]
    for user in (term["teacher"], term["ta"]):
        found = _tools(user.terminal(ask))
        assert found == [f"{staff}/{t}" for t in ("python", "nbgrader", "gradtutor")], (user.name, found)


def _as(user: str, *cmd: str) -> subprocess.CompletedProcess:
    """``cmd`` as the Unix account ``user``, outside the hub (no confinement)."""
    entry = pwd.getpwnam(user)
    return subprocess.run(
        ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--", *cmd],
        capture_output=True,
        text=True,
    )


def _others_can_reach(path: Path) -> bool:
    """Whether an account that is neither owner nor group may pass through every folder above."""
    return all(folder.stat().st_mode & 0o001 for folder in (path.resolve(), *path.resolve().parents))


def test_the_set_up_leaves_nothing_for_students_to_read_and_prints_no_password(klass: dict) -> None:
    """Outside the hub, as a student's Unix account: the checkout's solutions, exercise units
    and a course copy in /tmp cannot be read (the set-up closed them), the checkout's README can.
    No password in what the set-up said; the accounts have no login shell."""
    said = "\n".join(klass["said"])
    assert f"closed {klass['copy']}" in said, said
    for name in classroom.CHECKOUT_PRIVATE:
        if (REPO / name).exists():
            assert (REPO / name).lstat().st_mode & 0o007 == 0, name
    # the control: a student reads the README, unless the checkout sits where no student can go
    # (CI clones into `mktemp -d`, mode 0700), when the README is refused as well
    readme = _as(RIGHT, "cat", str(REPO / "README.md"))
    if _others_can_reach(REPO):
        assert readme.returncode == 0, readme.stderr
    else:
        assert readme.returncode != 0 and "Permission denied" in readme.stderr, readme
    assert _as(RIGHT, "ls", tempfile.gettempdir()).returncode == 0  # the control for the copy
    assert klass["copy"].stat().st_mode & 0o007 == 0
    copied = klass["copy"] / "source" / "answers.txt"
    hidden = (REPO / "solutions" / f"{SLUG}.ipynb", REPO / "exercises", copied)
    for path in hidden:
        tried = _as(RIGHT, "cat" if path.suffix else "ls", str(path))
        assert tried.returncode != 0 and "Permission denied" in tried.stderr, (path, tried)
    for user, password in klass["passwords"].items():
        assert password not in said, user
        assert pwd.getpwnam(user).pw_shell == classroom.NOLOGIN, user
    info = (klass["root"] / "class.json").stat()
    assert (info.st_mode & 0o777, info.st_uid) == (0o600, 0)


def test_taking_the_class_down_leaves_no_account_group_or_folder(klass: dict) -> None:
    """Last: ``remove --keep-envs``, as the test's own teardown runs it; it names what it
    keeps (/opt/gradtutor, with its size, for the next run)."""
    said = klass["down"]()
    assert [u.pw_name for u in pwd.getpwall() if u.pw_name.startswith(PREFIX)] == []
    groups = [g.gr_name for g in grp.getgrall()]
    assert [g for g in groups if g.startswith(PREFIX) or g == classroom.STAFF] == [], said
    assert not klass["root"].exists() and not klass["copy"].exists()
    assert list(Path("/srv").glob("gradtutor-hubtest-*")) == []
    assert classroom.OPT.exists()
    assert any(line.startswith(f"kept {classroom.OPT} (") for line in said), said
