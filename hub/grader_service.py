"""The grader service: the teaching staff collect, grade, regrade and release feedback from the
browser, with no root shell.

JupyterHub starts it (``c.JupyterHub.services`` in ``hub/jupyterhub_config.py``) as root, on
127.0.0.1 behind the hub's proxy at ``/services/gradtutor-grader/``, and lists it in the hub's
Services menu. Who may use it is the hub's decision, made with its own RBAC: the role
``gradtutor-graders`` grants the scope ``access:services!service=gradtutor-grader`` to the
instructor and the teaching assistants; any other account (a student) gets 403, whether it comes
with the hub's browser login (OAuth) or with an API token.

Each button makes a job; jobs run one at a time, in the order they came, each a list of the
commands ``hub/classroom.py`` names (``collect_steps``, ``grade_steps``,
``release_feedback_steps``): grading is ``gradtutor grade`` in its sandbox as root, then the
feedback pages, and the course folder handed back to the instructor; collect and release run as
the instructor's account. What each command printed is kept in the job's log (in memory, shown
on the page and over the API, and in ``STATE/grader/job-N.log``).

    GET  /services/gradtutor-grader/            the page: assignments, buttons, jobs
    POST /services/gradtutor-grader/jobs        a button (form: action, assignment, _xsrf)
    GET  /services/gradtutor-grader/api/assignments
    GET  /services/gradtutor-grader/api/jobs    every job; POST {"action", "assignment"}: a new one
    GET  /services/gradtutor-grader/api/jobs/N  one job: status, the step it is at, its log
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web
from tornado.httpserver import HTTPServer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import classroom  # noqa: E402 - hub/ is not a package; the service runs from the checkout

# action -> (its button, the commands it runs)
ACTIONS: dict[str, tuple[str, Callable[[dict, str], list[classroom.Step]]]] = {
    "collect": ("Collect", classroom.collect_steps),
    "grade": ("Grade", classroom.grade_steps),
    "regrade": ("Regrade", lambda cls, a: classroom.grade_steps(cls, a, force=True)),
    "release_feedback": ("Release feedback", classroom.release_feedback_steps),
}


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclasses.dataclass
class Job:
    id: int
    action: str
    assignment: str
    user: str
    queued: str
    status: str = "queued"  # queued, running, done, failed
    step: str = ""
    started: str = ""
    finished: str = ""
    log: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "log": "".join(self.log)}


@dataclasses.dataclass(frozen=True)
class Assignment:
    name: str
    submitted: int
    graded: int
    feedback: int


class Grader:
    """The queue of jobs and the one worker that runs them."""

    def __init__(self, cls: dict) -> None:
        self.cls = cls
        self.jobs: list[Job] = []
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.logs = Path(cls["state"]) / "grader"
        self.logs.mkdir(mode=0o700, exist_ok=True)

    def assignments(self) -> list[Assignment]:
        course = Path(self.cls["course"])
        found = []
        for source in sorted(p for p in (course / "source").glob("*") if p.is_dir()):
            name = source.name
            found.append(Assignment(
                name,
                submitted=len(list(course.glob(f"submitted/*/{name}"))),
                graded=len(list(course.glob(f"gradtutor/results/{name}/*.json"))),
                feedback=len(list(course.glob(f"feedback/*/{name}"))),
            ))
        return found

    def submit(self, action: str, assignment: str, user: str) -> Job:
        if action not in ACTIONS:
            raise web.HTTPError(400, f"no action {action!r}: one of {', '.join(ACTIONS)}")
        if assignment not in {a.name for a in self.assignments()}:
            raise web.HTTPError(404, f"no assignment {assignment!r} in the course")
        job = Job(len(self.jobs) + 1, action, assignment, user, queued=_now())
        self.jobs.append(job)
        self.queue.put_nowait(job)
        return job

    async def work(self) -> None:
        while True:
            job = await self.queue.get()
            try:
                await self.run(job)
            except Exception as e:  # a broken job must not stop the queue
                job.log.append(f"\nthe service failed: {type(e).__name__}: {e}\n")
                job.status = "failed"
            job.finished = _now()
            (self.logs / f"job-{job.id}.log").write_text("".join(job.log))

    async def run(self, job: Job) -> None:
        job.status, job.started = "running", _now()
        job.log.append(f"{ACTIONS[job.action][0]} {job.assignment}, asked by {job.user} at {job.queued}\n")
        for step in ACTIONS[job.action][1](self.cls, job.assignment):
            job.step = step.what
            job.log.append(f"\n== {step.what}: {' '.join(step.argv)}\n")
            proc = await asyncio.create_subprocess_exec(
                *step.argv, cwd=step.cwd, env=step.env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )
            assert proc.stdout is not None
            async for line in proc.stdout:
                job.log.append(line.decode(errors="replace"))
            if await proc.wait() != 0:
                job.log.append(f"== failed (exit status {proc.returncode})\n")
                job.status = "failed"
                return
        job.step, job.status = "", "done"


class Base(HubOAuthenticated, web.RequestHandler):
    @property
    def grader(self) -> Grader:
        return self.settings["grader"]

    def user_name(self) -> str:
        return self.current_user["name"]

    def check_xsrf_cookie(self) -> None:
        """A POST that a browser's cookie authenticates must carry the page's _xsrf token: every
        user's server shares the hub's origin, so a page a student serves could otherwise press
        a button with a TA's cookie. A request with a token header is not a browser's."""
        if self.request.headers.get("Authorization", "").lower().startswith("token "):
            return
        super().check_xsrf_cookie()


class Page(Base):
    @web.authenticated
    def get(self) -> None:
        jobs = list(reversed(self.grader.jobs))
        self.render(
            "grader_service.html",
            user=self.user_name(),
            assignments=self.grader.assignments(),
            actions={k: v[0] for k, v in ACTIONS.items()},
            jobs=jobs,
            busy=any(j.status in ("queued", "running") for j in jobs),
            prefix=self.settings["prefix"],
        )


class FormJob(Base):
    @web.authenticated
    def post(self) -> None:
        action, assignment = self.get_body_argument("action"), self.get_body_argument("assignment")
        self.grader.submit(action, assignment, self.user_name())
        self.redirect(self.settings["prefix"], status=303)


class ApiAssignments(Base):
    @web.authenticated
    def get(self) -> None:
        self.write({"assignments": [dataclasses.asdict(a) for a in self.grader.assignments()]})


class ApiJobs(Base):
    @web.authenticated
    def get(self) -> None:
        self.write({"jobs": [j.to_json() for j in self.grader.jobs]})

    @web.authenticated
    def post(self) -> None:
        try:
            body = json.loads(self.request.body or b"{}")
            action, assignment = str(body["action"]), str(body["assignment"])
        except (ValueError, KeyError, TypeError) as e:
            raise web.HTTPError(400, 'a JSON body {"action": ..., "assignment": ...}') from e
        self.set_status(202)
        self.write(self.grader.submit(action, assignment, self.user_name()).to_json())


class ApiJob(Base):
    @web.authenticated
    def get(self, number: str) -> None:
        jobs = self.grader.jobs
        if not 1 <= int(number) <= len(jobs):
            raise web.HTTPError(404, f"no job {number}")
        self.write(jobs[int(number) - 1].to_json())


def make_app(cls: dict, prefix: str) -> web.Application:
    def at(path: str) -> str:
        return url_path_join(prefix, path)

    return web.Application(
        [
            (prefix, Page),
            (at("oauth_callback"), HubOAuthCallbackHandler),
            (at("jobs"), FormJob),
            (at("api/assignments"), ApiAssignments),
            (at("api/jobs"), ApiJobs),
            (at(r"api/jobs/(\d+)"), ApiJob),
        ],
        cookie_secret=os.urandom(32),
        xsrf_cookies=True,  # the form's xsrf_form_html() token is checked (Base.check_xsrf_cookie)
        template_path=str(HERE),
        grader=Grader(cls),
        prefix=prefix,
    )


async def serve() -> None:
    cls = json.loads(Path(os.environ["GRADTUTOR_CLASS"]).read_text())
    (Path(cls["state"]) / "grader.pid").write_text(str(os.getpid()))
    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    app = make_app(cls, prefix)
    HTTPServer(app).listen(cls["grader_port"], "127.0.0.1")
    worker = asyncio.create_task(app.settings["grader"].work())
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):  # the hub's way to stop it: a quiet exit
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    worker.cancel()


if __name__ == "__main__":
    asyncio.run(serve())
