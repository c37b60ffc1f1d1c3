"""d2l 2.5, exercises 3-5: f(x) = log(x²)·sin(x) + 1/x, its dependency graph, the chain rule
written on the graph, and the gradient, read backwards from f (reverse mode).

Nodes: a = x², b = log a, c = sin x, d = b·c, e = 1/x, f = d + e. The gradient arriving at each
node: f̄ = 1, d̄ = ē = 1, b̄ = c, c̄ = b, ā = b̄/a, and x, which feeds three boxes, collects
x̄ = ā·2x + c̄·cos x + ē·(-1/x²) = 2 sin(x)/x + log(x²) cos x - 1/x².
"""

import math

import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with
from gradtutor.key.numeric import central_diff

ROWS = ("a", "b", "c", "d", "e", "x")
KIND = Table(rows=ROWS, columns=(("grad", Number()),))


def reference(x0: float) -> dict:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    a = x**2
    b = torch.log(a)
    c = torch.sin(x)
    d = b * c
    e = 1 / x
    f = d + e
    nodes = {"a": a, "b": b, "c": c, "d": d, "e": e}
    for t in nodes.values():
        t.retain_grad()
    f.backward()
    return {**{k: {"grad": t.grad} for k, t in nodes.items()}, "x": {"grad": x.grad}}


def _table(**grads: float) -> dict:
    return {k: {"grad": v} for k, v in grads.items()}


def analytic(x0: float) -> dict:
    a, b, c = x0**2, math.log(x0**2), math.sin(x0)
    a_bar = c / a  # b̄ · d(log a)/da
    x_bar = a_bar * 2 * x0 + b * math.cos(x0) - 1 / x0**2
    return _table(a=a_bar, b=c, c=b, d=1.0, e=1.0, x=x_bar)


def finite_diff(x0: float) -> dict:
    # each node's gradient: nudge that node alone, everything it does not feed held fixed
    a, c = x0**2, math.sin(x0)
    b = math.log(a)
    e = 1 / x0
    return _table(a=central_diff(lambda u: math.log(u) * c + e, a),
                  b=central_diff(lambda u: u * c + e, b),
                  c=central_diff(lambda u: b * u + e, c),
                  d=central_diff(lambda u: u + e, b * c),
                  e=central_diff(lambda u: b * c + u, e),
                  x=central_diff(lambda u: math.log(u**2) * math.sin(u) + 1 / u, x0))


def _draw(rng) -> dict:
    return {"x0": rng.choice((-1, 1)) * rng.uniform(0.6, 3.0)}


EXERCISE = Exercise(
    title="d2l's f(x) = log(x²)·sin x + 1/x, backwards through its graph",
    prompt=r"""
From the exercises of *Dive into Deep Learning* (section 2.5): let
$$f(x) = \log(x^2)\,\sin x + \frac1x .$$
Write it box by box, $a = x^2$, $b = \log a$, $c = \sin x$, $d = b\,c$, $e = 1/x$, $f = d + e$,
and draw the dependency graph (on paper, or build it in torch and call `draw_graph`). Then walk
it backwards from $\frac{\partial f}{\partial f} = 1$, writing on every box the gradient that
arrives there: $\frac{\partial f}{\partial a}, \frac{\partial f}{\partial b}, \dots$, and last
$\frac{df}{dx}$, where $x$ feeds **three** boxes.

At $x = {{x0|pretty}}$, fill in the table `arrivals`, e.g. `{"a": {"grad": ...}, ..., "x": {"grad": ...}}`,
with rows `a`, `b`, `c`, `d`, `e` and `x`, as expressions of `x0` (chapter 3 shows how torch
reports these arrivals with `retain_grad()`).
""",
    setup="import math\n\nx0 = {{x0}}",
    answer="arrivals",
    placeholder='arrivals = ...  # {"a": {"grad": ...}, "b": ..., "c": ..., "d": ..., "e": ..., "x": ...}',
    solution="""a = x0**2
b = math.log(a)
c = math.sin(x0)
a_bar = c * (1 / a)                 # arrives at b as c, times d(log a)/da
arrivals = {
    "a": {"grad": a_bar},
    "b": {"grad": c},               # d = b·c: the other factor
    "c": {"grad": b},
    "d": {"grad": 1.0},             # f = d + e: a sum box passes 1 on
    "e": {"grad": 1.0},
    "x": {"grad": a_bar * 2 * x0 + b * math.cos(x0) - 1 / x0**2},  # three paths, added
}""",
    by_hand=True,
    kind=KIND,
    params={"x0": 2.0},
    hidden=({"x0": -1.5}, {"x0": 0.75}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("local_gradient_only",
              lambda x0: _table(a=1 / x0**2, b=math.sin(x0), c=math.log(x0**2), d=1.0, e=1.0,
                                x=2 * x0 + math.cos(x0) - 1 / x0**2),
              "These are the local gradients of each box, d(log a)/da = 1/a, d(x²)/dx = 2x, "
              "without the gradient arriving from above. The chain rule multiplies each local "
              "gradient by what arrives at the box's output.",
              "At a, multiply d(log a)/da by the gradient that arrived at b."),
        Wrong("fanout_adds",
              table_with(analytic, x=lambda x0: {"grad": analytic(x0)["x"]["grad"] + 1 / x0**2}),
              "x feeds three boxes, x², sin x and 1/x, and df/dx is the sum of all three shares. "
              "This one leaves out the path through e = 1/x.",
              "Count the arrows leaving x, and add one share per arrow."),
        Wrong("sign_error",
              table_with(analytic, x=lambda x0: {"grad": analytic(x0)["x"]["grad"] + 2 / x0**2}),
              "The share through e = 1/x has the wrong sign: d(1/x)/dx = -1/x², not +1/x².",
              "Differentiate x⁻¹ with the power rule."),
    ),
)
