"""A real JupyterLab server on loopback, and Playwright helpers that drive it like a student.

The server runs in a temporary root with its own settings and workspaces, so it never touches
the repository's notebooks or anyone's JupyterLab state; it reads the students' server settings
(jupyter/student/jupyter_server_config.py and the course's stylesheet beside it), as `make lab`
and the hub do. Notebooks are copied in before use.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
JUPYTER = Path(sys.executable).with_name("jupyter")
STUDENT_CONFIG = Path(__file__).resolve().parents[2] / "jupyter" / "student"

# student-visible signs that a widget did not come up
WIDGET_FAILURES = ("Error displaying widget", "Loading widget...", "Failed to load model class")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """``jupyter lab`` on 127.0.0.1 with a token, started in its own process group."""

    def __init__(self, root: Path, state: Path) -> None:
        self.root, self.port, self.token = root, free_port(), os.urandom(12).hex()
        # every cell in the DOM (no virtual scrolling), so the tests see what a student sees;
        # no news pop-up covering the notebook
        for plugin, values in (("notebook-extension/tracker", {"windowingMode": "none"}),
                               ("apputils-extension/notification", {"fetchNews": "false"})):
            file = state / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(json.dumps(values))
        # the students' own server settings (jupyter/student): the course's stylesheet
        config = state / "config"
        config.mkdir(parents=True, exist_ok=True)
        shutil.copy(STUDENT_CONFIG / "jupyter_server_config.py", config)
        shutil.copytree(STUDENT_CONFIG / "custom", config / "custom", dirs_exist_ok=True)
        self.log = (state / "jupyterlab.log").open("w")
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(state / "config"),
               "JUPYTER_RUNTIME_DIR": str(state / "runtime"), "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
        self.proc = subprocess.Popen(
            [str(JUPYTER), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
             "--allow-root", f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={self.token}",
             "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={state / 'settings'}",
             f"--LabApp.workspaces_dir={state / 'workspaces'}",
             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self._wait_ready()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f}s; see {self.log.name}")

    def stop(self) -> None:
        """SIGTERM lets the server shut its kernels down; the group kill catches stragglers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def shutdown_kernels(self) -> None:
        """Free the memory of the kernels a test started (the server stays up for the next)."""
        def call(method: str, path: str) -> bytes:
            req = urllib.request.Request(f"{self.url}{path}?token={self.token}", method=method)
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.read()

        for kernel in json.loads(call("GET", "/api/sessions")):
            call("DELETE", f"/api/sessions/{kernel['id']}")

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"


# ---------------------------------------------------------------- driving a notebook

def open_notebook(page: Any, lab: Lab, name: str, timeout: float = 120_000) -> None:
    page.goto(lab.notebook_url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout)
    wait_idle(page, timeout)


def wait_idle(page: Any, timeout: float = 120_000) -> None:
    """The status bar's kernel status reads Idle (the toolbar dot lags behind it)."""
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=timeout)


def command(page: Any, name: str) -> None:
    page.evaluate("name => window.jupyterapp.commands.execute(name)", name)


def wait_executed(page: Any, timeout: float = 300_000) -> None:
    """Every code cell has run (a number in its prompt, none pending) and the kernel is idle."""
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""", timeout=timeout)
    wait_idle(page, timeout)


def run_all(page: Any, timeout: float = 300_000) -> None:
    command(page, "notebook:run-all-cells")
    wait_executed(page, timeout)


# the open notebook's outputs, read from JupyterLab's own model of it
_OUTPUTS_JS = """() => {
    const found = [];
    for (const cell of window.jupyterapp.shell.currentWidget.content.model.cells) {
        if (cell.type !== 'code') continue;
        for (let i = 0; i < cell.outputs.length; i++) found.push(cell.outputs.get(i).toJSON());
    }
    return found;
}"""
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def outputs(page: Any) -> list[dict]:
    return page.evaluate(_OUTPUTS_JS)


def error_outputs(page: Any) -> list[str]:
    """Every error output in the open notebook, as 'Name: message' plus the traceback's end."""
    return [f"{o.get('ename')}: {o.get('evalue')}\n" + "\n".join(o.get("traceback", [])[-3:])
            for o in outputs(page) if o.get("output_type") == "error"]


def widget_outputs(page: Any) -> int:
    return sum(WIDGET_MIME in o.get("data", {}) for o in outputs(page))


def rendered_widgets(page: Any) -> int:
    """Widget views actually drawn in the open notebook's output areas."""
    return page.evaluate("""() => window.jupyterapp.shell.currentWidget.node.querySelectorAll(
        '.jp-OutputArea-output > .jupyter-widgets').length""")


def widget_failures(page: Any) -> list[str]:
    text = page.evaluate("() => window.jupyterapp.shell.currentWidget.node.innerText")
    return [f for f in WIDGET_FAILURES if f in text]
