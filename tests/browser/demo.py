"""The demo notebook: every widget, a graph drawing and one real exercise, built from code."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from gradtutor.key import registry

EXERCISE = "leaves_xy"  # a real exercise unit; the test fills its answer with the unit's solution

# widget -> the call a lesson makes; the comment line lets the test find each cell
WIDGETS = {
    "tangent_explorer": "tangent_explorer()",
    "chain_rule_stepper": "chain_rule_stepper()",
    "kink_explorer": "kink_explorer()",
    "accumulation_stepper": "accumulation_stepper()",
    "vjp_explorer": "vjp_explorer()",
    "descent_stepper": "descent_stepper()",
    "meta_gradient_explorer": "meta_gradient_explorer()",
}


def demo_notebook(exercise_id: str = EXERCISE) -> nbformat.NotebookNode:
    ex = registry.get(exercise_id)
    cells = [
        new_markdown_cell("# gradtutor demo\n\nEvery widget, one graph and one self-check. "
                          "For $z = xy + x^2$ the gradient is "
                          "$\\frac{\\partial z}{\\partial x} = y + 2x$."),
        new_code_cell("import torch\nfrom autograder import check, draw_graph, "
                      + ", ".join(WIDGETS)),
        new_code_cell("x = torch.tensor(2.0, requires_grad=True)\n"
                      "y = torch.tensor(3.0, requires_grad=True)\n"
                      "z = x * y + x**2\n"
                      "draw_graph(z, names={'x': x, 'y': y, 'z': z}, title='fan-out')"),
        new_markdown_cell(f"## Exercise: {ex.title}\n\n{ex.prompt_text()}"),
    ]
    if ex.setup.strip():
        cells.append(new_code_cell(ex.setup_code(ex.params)))
    cells += [new_code_cell(ex.starter()), new_code_cell(f'check("{ex.id}", {ex.answer})')]
    cells += [new_code_cell(f"# widget: {name}\n{call}") for name, call in WIDGETS.items()]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    return nb


def write_demo(folder: Path, exercise_id: str = EXERCISE) -> Path:
    path = folder / "demo.ipynb"
    nbformat.write(demo_notebook(exercise_id), path)
    return path
