"""nbgrader for `make lab` (JUPYTER_CONFIG_PATH=jupyter/student): the student's tools on one's own
clone. There is no class exchange here, so the assignment list reads an empty one of the user's
own (without any, it logs "Unwritable directory" each time it is opened). A class on JupyterHub
replaces this file with the class's settings (hub/classroom.py)."""

import os

from jupyter_core.paths import jupyter_data_dir

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "gradtutor"
c.Exchange.root = os.path.join(jupyter_data_dir(), "nbgrader_exchange")
os.makedirs(c.Exchange.root, exist_ok=True)
