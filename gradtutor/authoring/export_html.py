"""Trusted side: ``gradtutor export-html``, an executed notebook as an HTML page for no network.

The page is nbconvert's JupyterLab page with the widget state embedded. Its scripts (require.js,
the static-page widget manager @jupyter-widgets/html-manager, MathJax) come from the project's
npm install (``package.json``, ``make node_modules``) and are copied into ``<page>_files/`` beside
it, so the page and that folder can be zipped, emailed or opened from a USB stick: no CDN.
The widgets show their saved state (sliders, plots, numbers); without a kernel they do not
recompute when moved.

The page meets WCAG 2.1 AA (tests/test_accessibility.py runs axe-core on it): the template
darkens nbconvert's prompt and code colours to >= 4.5:1, names each slider handle after its
label, and wraps long code lines; nbconvert's tab stop on every cell's input and output is taken
out here (``untabbed``), so Tab goes from one control to the next.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import nbformat

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / "node_modules"
TEMPLATES = Path(__file__).resolve().parent / "templates"
STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"


class ExportError(Exception):
    """Something the user can fix; the message says how."""


@dataclass(frozen=True)
class Assets:
    require: Path
    widgets: Path  # embed-amd.js; its fonts sit beside it and are found relative to it
    mathjax: Path

    @classmethod
    def find(cls, root: Path = NODE_MODULES) -> Assets:
        assets = cls(require=root / "requirejs" / "require.js",
                     widgets=root / "@jupyter-widgets" / "html-manager" / "dist" / "embed-amd.js",
                     mathjax=root / "mathjax" / "es5" / "tex-svg-full.js")
        missing = [p for p in (assets.require, assets.widgets, assets.mathjax) if not p.is_file()]
        if missing:
            raise ExportError(
                f"the offline scripts are not installed ({missing[0]} is missing). Run "
                f"`make node_modules` (or `npm ci` in {REPO}) once, then retry.")
        return assets

    def copy_to(self, folder: Path) -> dict[str, str]:
        """Copy the scripts into ``folder``; return their URLs relative to the page."""
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.require, folder / "require.js")
        shutil.copy2(self.mathjax, folder / "mathjax.js")
        dist = folder / "html-manager"
        dist.mkdir(exist_ok=True)
        for item in self.widgets.parent.iterdir():  # the bundle and the icon fonts it loads
            if item.is_file() and not item.name.endswith(".map"):
                shutil.copy2(item, dist / item.name)
        base = quote(folder.name)
        return {"require_js_url": f"{base}/require.js", "mathjax_url": f"{base}/mathjax.js",
                "widget_renderer_url": f"{base}/html-manager/{self.widgets.name}"}


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, keeping the widget state for the page."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                            store_widget_state=True, resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute()
    except Exception as e:  # CellExecutionError and friends: say which cell, not a traceback
        raise ExportError(f"running the notebook failed: {str(e).strip()[-1500:]}") from e
    return nb


def widget_views(nb: nbformat.NotebookNode) -> int:
    return sum(VIEW_MIME in out.get("data", {})
               for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))


# nbconvert's focus stop on every input and output area (HTMLExporter.from_notebook_node): with
# code wrapped nothing in them scrolls, so the stop only costs a keyboard user a Tab per cell
_CELL_TAB_STOP = re.compile(
    r'(<div\b[^>]*\bclass="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*"[^>]*?)'
    r'\s+tabindex="0"')


def untabbed(page: str) -> str:
    """The page without nbconvert's tab stop on each cell's input and output area."""
    return _CELL_TAB_STOP.sub(r"\1", page)


def export_html(notebook: Path, out: Path | None = None, *, execute_first: bool = False,
                assets: Assets | None = None) -> tuple[Path, list[str]]:
    """Write the page; return its path and warnings worth telling the user."""
    if not notebook.is_file():
        raise ExportError(f"{notebook} does not exist")
    assets = assets or Assets.find()
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception as e:
        raise ExportError(f"{notebook} is not a readable notebook ({type(e).__name__})") from e
    if execute_first:
        nb = execute(nb, notebook.resolve().parent)
    warnings = []
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    if code and not any(c.get("outputs") for c in code):
        warnings.append("the notebook has no outputs: pass --execute to run it first")
    views = widget_views(nb)
    if views and STATE_MIME not in nb.metadata.get("widgets", {}):
        warnings.append(f"{views} widget outputs but no saved widget state, so they will not "
                        "show: pass --execute (or save the widget state in JupyterLab)")
    out = out or notebook.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    urls = assets.copy_to(out.parent / f"{out.stem}_files")

    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="gradtutor_offline",
                            extra_template_basedirs=[str(TEMPLATES)], **urls)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": notebook.stem}})
    out.write_text(untabbed(body), encoding="utf-8")
    return out, warnings


def export_cli(*, notebook: Path, out: Path | None, execute: bool) -> int:
    try:
        path, warnings = export_html(notebook, out, execute_first=execute)
    except ExportError as e:
        print(f"gradtutor export-html: {e}", file=sys.stderr)
        return 1
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"wrote {path} (scripts in {path.parent / (path.stem + '_files')}); "
          "open it in a browser, no network needed")
    return 0
