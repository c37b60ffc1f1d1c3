"""Content map M13: which in-place changes break backward? Only those that change a tensor some
backward node saved (sigmoid and exp save their output, pow saves its input), and any in-place
change of a leaf that requires grad."""

import torch

from autograder.kinds import Choice, Table
from gradtutor.key.exercise import Exercise, Wrong, raised, table_with

ROWS = ("A", "B", "C", "D", "E")
KIND = Table(rows=ROWS, columns=(("error", Choice(options=(None, "RuntimeError", "TypeError"))),))


def _snippets(x: torch.Tensor) -> dict:
    def A():
        y = x.sigmoid()
        y.mul_(2)
        y.sum().backward()

    def B():
        a = x * 2
        b = a**2
        a.add_(1)
        b.sum().backward()

    def C():
        a = x * 2
        b = a + 1
        a.add_(1)
        b.sum().backward()

    def D():
        a = x * 2
        b = a.exp()
        a.add_(1)
        b.sum().backward()

    def E():
        x.add_(1)

    return dict(zip(ROWS, (A, B, C, D, E), strict=True))


def reference(x0: list) -> dict:
    snippets = _snippets(torch.tensor(x0, dtype=torch.float64, requires_grad=True))
    return {name: {"error": raised(snippet)} for name, snippet in snippets.items()}


def analytic(x0: list) -> dict:
    # A: SigmoidBackward saves its output y, which mul_ changes.   B: PowBackward saves its input a.
    # C: AddBackward saves nothing.   D: ExpBackward saves its output b, not its input a.
    # E: a leaf that requires grad may not be changed in place while recording.
    errors = {"A": "RuntimeError", "B": "RuntimeError", "C": None, "D": None, "E": "RuntimeError"}
    return {k: {"error": v} for k, v in errors.items()}


EXERCISE = Exercise(
    title="Which in-place changes are allowed?",
    prompt=r"""
Each snippet starts from a fresh `x = torch.tensor({{x0}}, requires_grad=True)`:

```python
# A
y = x.sigmoid(); y.mul_(2); y.sum().backward()
# B
a = x * 2; b = a ** 2; a.add_(1); b.sum().backward()
# C
a = x * 2; b = a + 1; a.add_(1); b.sum().backward()
# D
a = x * 2; b = a.exp(); a.add_(1); b.sum().backward()
# E
x.add_(1)
```

For each, which error is raised (`"RuntimeError"`, `"TypeError"`), or `None` if it runs? Fill in
the table `inplace` with rows `"A"` to `"E"`, each `{"error": ...}`. Predict first, then run the
snippets to check yourself.
""",
    setup="x0 = {{x0}}",
    answer="inplace",
    placeholder='inplace = ...  # {"A": {"error": ...}, "B": {"error": ...}, ..., "E": {"error": ...}}',
    solution="""def run_snippet(snippet):
    x = torch.tensor(x0, requires_grad=True)
    try:
        snippet(x)
        return {"error": None}
    except Exception as e:
        return {"error": type(e)}

def snippet_A(x):
    y = x.sigmoid(); y.mul_(2); y.sum().backward()
def snippet_B(x):
    a = x * 2; b = a ** 2; a.add_(1); b.sum().backward()
def snippet_C(x):
    a = x * 2; b = a + 1; a.add_(1); b.sum().backward()
def snippet_D(x):
    a = x * 2; b = a.exp(); a.add_(1); b.sum().backward()
def snippet_E(x):
    x.add_(1)

inplace = {name: run_snippet(f) for name, f in {"A": snippet_A, "B": snippet_B, "C": snippet_C, "D": snippet_D, "E": snippet_E}.items()}""",
    kind=KIND,
    params={"x0": [1.0, 2.0, 3.0]},
    hidden=({"x0": [-0.5, 0.25, 2.0]},),
    draw=lambda rng: {"x0": [rng.uniform(-2, 2) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("saved_tensor_modified", table_with(analytic, C={"error": "RuntimeError"}, D={"error": "RuntimeError"}),
              "Not every in-place change breaks backward. Autograd only complains when a tensor "
              "that some backward node saved has changed since it was saved (its version counter "
              "moved). a + 1 saves nothing (its derivative is 1), and exp saves its output b, "
              "not its input a, so changing a afterwards is harmless in C and D.",
              "For each operation, ask what its backward needs: its input, its output, or "
              "nothing?"),
        Wrong("saved_tensor_modified", table_with(analytic, D={"error": "RuntimeError"}),
              "exp's backward needs exp(a), which is its own output b, so ExpBackward0 saves b, "
              "not a. Changing a in place after b was computed does not touch anything saved.",
              "d/da exp(a) = exp(a): which tensor already holds that?"),
        Wrong("leaf_inplace", table_with(analytic, E={"error": None}),
              "x is a leaf that requires grad, and grad mode is on: autograd refuses to change it "
              "in place (\"a leaf Variable that requires grad is being used in an in-place "
              "operation\"), because the change could not be undone in the graph. Updates of "
              "parameters go inside torch.no_grad().",
              "Is x a leaf? Where do optimizers change their parameters?"),
        Wrong("saved_tensor_modified", table_with(analytic, A={"error": None}, B={"error": None}),
              "sigmoid's backward uses its output y (σ' = y(1 - y)) and pow's backward uses its "
              "input a (2a). Both were saved for backward and then changed in place, and the "
              "version counter catches it: RuntimeError.",
              "Which tensors did SigmoidBackward0 and PowBackward0 save?"),
    ),
)
