"""The formgrader's two grading buttons, made safe: a Jupyter server extension of the staff's
environment.

Installed as ``gradtutor_formgrader_guard`` into ``/opt/gradtutor/instructor`` by
``hub/classroom.py`` and enabled in the instructor's ``jupyter_server_config.json``. It puts its
handlers in FRONT of nbgrader's (tornado takes the first rule that matches), for the exact URLs
the formgrader's buttons post to:

* ⚡ Autograde (``/formgrader/api/submission/<assignment>/<student>/autograde``): stock nbgrader
  runs the student's notebook as the instructor, outside any sandbox, and overwrites the graded
  notebook. Here it answers in nbgrader's JSON error shape (``{"success": false, "error": ...}``,
  which the formgrader shows) with where to grade instead: the grader service.
* Generate Feedback (``/formgrader/api/assignment/<assignment>/generate_feedback`` and
  ``.../<assignment>/<student>/generate_feedback``): nbgrader's own feedback pages, then
  ``gradtutor feedback`` on the course (trusted code reading the grader's stored results; no
  student code runs), so the pages keep gradtutor's verdicts, misconceptions and hints. Stock
  nbgrader writes its pages alone, wiping gradtutor's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.formgrader.base import BaseApiHandler, check_notebook_dir, check_xsrf
from tornado import web

SERVICE = "gradtutor-grader"


def service_url() -> str:
    return url_path_join(os.environ.get("JUPYTERHUB_BASE_URL", "/"), "services", SERVICE) + "/"


def autograde_refused(assignment: str, student: str) -> str:
    return (
        f"Autograde is turned off on this hub: it would run {student}'s code for {assignment} as you, "
        "outside gradtutor's sandbox, and overwrite the graded notebook. Grade with the grader service "
        f"instead: open {service_url()} (the hub's Services menu, '{SERVICE}') and press Grade or Regrade "
        f"for {assignment}. It runs `gradtutor grade` (each submission in its own sandbox), then writes "
        "the feedback pages."
    )


class RefuseAutograde(BaseApiHandler):
    @web.authenticated
    @check_xsrf
    def post(self, assignment: str, student: str) -> None:
        self.log.warning("refused the formgrader's Autograde of %s/%s: the grader service grades", assignment,
                         student)
        self.write(json.dumps({"success": False, "error": autograde_refused(assignment, student)}))


class KeepGradtutorsFeedback(BaseApiHandler):
    """nbgrader's Generate Feedback, then gradtutor's feedback over its pages."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    def post(self, assignment: str, student: str | None = None) -> None:
        result = (self.api.generate_feedback(assignment) if student is None
                  else self.api.generate_feedback(assignment, student))
        if result.get("success"):
            course = self.api.coursedir.root
            tool = Path(sys.executable).parent / "gradtutor"
            done = subprocess.run([str(tool), "feedback", course], cwd=course, capture_output=True, text=True)
            result["log"] = result.get("log", "") + done.stdout + done.stderr
            if done.returncode != 0:
                result = {"success": False, "error": f"gradtutor feedback failed:\n{done.stderr[-2000:]}",
                          "log": result["log"]}
        self.write(json.dumps(result))


def handlers(base_url: str) -> list[tuple[str, type]]:
    api = url_path_join(base_url, "formgrader", "api")
    return [
        (url_path_join(api, "submission", "([^/]+)", "([^/]+)", "autograde"), RefuseAutograde),
        (url_path_join(api, "assignment", "([^/]+)", "generate_feedback"), KeepGradtutorsFeedback),
        (url_path_join(api, "assignment", "([^/]+)", "([^/]+)", "generate_feedback"), KeepGradtutorsFeedback),
    ]


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "gradtutor_formgrader_guard"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    rules = web_app.default_router.rules
    before = list(rules)
    web_app.add_handlers(".*$", handlers(web_app.settings["base_url"]))
    ours = [r for r in rules if r not in before]
    for rule in ours:  # first: ahead of nbgrader's handlers for the same URLs, whenever they load
        rules.remove(rule)
    rules[0:0] = ours
    serverapp.log.info("gradtutor: the formgrader's Autograde refers to the grader service; "
                       "Generate Feedback keeps gradtutor's feedback")
