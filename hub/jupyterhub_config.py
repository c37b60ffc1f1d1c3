"""JupyterHub for one class on this machine (made by ``hub/classroom.py setup``).

Read by ``jupyterhub -f hub/jupyterhub_config.py`` with ``GRADTUTOR_CLASS`` naming the class's
``class.json``. Real Unix accounts log in with their passwords (PAM); each gets JupyterLab:

* students run ``/opt/gradtutor/student`` (JupyterLab, nbgrader's assignment list and validate,
  the student runtime), confined by ``hub/confine`` so the course's checkouts are hidden;
* the instructor runs ``/opt/gradtutor/instructor`` (the full package, the formgrader, with
  its Autograde and Generate Feedback buttons made safe by ``hub/formgrader_guard.py``);
* teaching assistants run the same environment without the formgrader;
* the grader service (``hub/grader_service.py``, started by the hub as root) is where the staff
  collect, grade, regrade and release feedback; the role ``gradtutor-graders`` lets the
  instructor and the TAs in, nobody else (students get 403).

Accounts have no login shell (``/usr/sbin/nologin``). PAM still lets them into the hub: the hub
authenticates with the PAM service ``login`` and opens no session, and Debian's ``login`` stack
(``common-auth``, ``common-account``) does not check the shell: only ``chsh`` uses
``pam_shells``. Their terminals run ``/bin/bash`` (``TERMINAL_SHELL`` in hub/classroom.py).
"""

import json
import os
import pwd
import sys

from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821 - provided by JupyterHub

with open(os.environ["GRADTUTOR_CLASS"]) as f:
    CLASS = json.load(f)
STATE = CLASS["state"]


class ClassSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose students start through ``confine`` (still root at exec, so it
    can build the mount namespace, then it drops to the student's uid, groups and no caps)."""

    def make_preexec_fn(self, name):
        if name in CLASS["students"]:
            home = pwd.getpwnam(name).pw_dir

            def preexec() -> None:
                os.chdir(home)

            return preexec
        return super().make_preexec_fn(name)


def role_of(name: str) -> str:
    return "instructor" if name == CLASS["instructor"] else "ta" if name in CLASS["tas"] else "student"


def pre_spawn(spawner) -> None:
    name = spawner.user.name
    role = role_of(name)
    env = CLASS["envs"]["student" if role == "student" else "instructor"]
    spawner.environment = {
        "PATH": f"{env}/bin:/usr/local/bin:/usr/bin:/bin",
        "JUPYTER_CONFIG_PATH": f"{CLASS['jupyter']}/{role}",
        "GRADTUTOR_ROLE": role,
        "SHELL": "/bin/bash",  # the account's own is nologin
    }
    single = [f"{env}/bin/jupyterhub-singleuser"]
    if role == "student":
        spawner.cmd = [CLASS["confine"], name, *CLASS["hidden"], "--", *single]
    else:
        spawner.cmd = single


c.JupyterHub.spawner_class = ClassSpawner
c.Spawner.pre_spawn_hook = pre_spawn
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.ip = "127.0.0.1"
c.Spawner.env_keep = ["LANG", "LC_ALL"]  # no PYTHONPATH, no VIRTUAL_ENV from the hub
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120
c.LocalProcessSpawner.shell_cmd = []

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = {CLASS["instructor"], *CLASS["tas"], *CLASS["students"]}
c.Authenticator.admin_users = {CLASS["instructor"]}
c.PAMAuthenticator.open_sessions = False
c.PAMAuthenticator.service = "login"  # checks the password, not the shell (see above)

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = "gradtutor-grader"
c.JupyterHub.services = [
    {
        "name": GRADER,
        "url": f"http://127.0.0.1:{CLASS['grader_port']}",
        "command": [sys.executable, os.path.join(HERE, "grader_service.py")],
        "environment": {
            "GRADTUTOR_CLASS": os.environ["GRADTUTOR_CLASS"],
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
        },
        "display": True,
        "oauth_no_confirm": True,
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "gradtutor-graders",
        "description": "the teaching staff: may use the grader service",
        "scopes": [f"access:services!service={GRADER}"],
        "users": [CLASS["instructor"], *CLASS["tas"]],
    }
]

c.JupyterHub.bind_url = f"http://127.0.0.1:{CLASS['port']}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{CLASS['hub_port']}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{CLASS['proxy_api_port']}"
c.ConfigurableHTTPProxy.command = [CLASS["proxy"]]
c.ConfigurableHTTPProxy.pid_file = f"{STATE}/proxy.pid"
c.JupyterHub.db_url = f"sqlite:///{STATE}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{STATE}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = f"{STATE}/jupyterhub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.shutdown_on_logout = True
