"""The students' JupyterLab (`make lab`, and the hub, which copies this folder): the course's
stylesheet, custom/custom.css (JupyterLab's code colours at >= 4.5:1 in its light and dark
themes; docs/accessibility.md). Beside jupyter_server_config.json, which Jupyter also reads."""

from pathlib import Path

c = get_config()  # noqa: F821
c.LabApp.custom_css = True
c.ServerApp.static_custom_path = [str(Path(__file__).resolve().parent / "custom")]
