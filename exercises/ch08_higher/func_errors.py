"""torch.func vs torch.autograd at the edges: which calls raise, and what the others return.

func.grad of a scalar function works; of a vector-valued one it raises RuntimeError (it needs a
scalar output). The second derivative of c·x is 0 through func.grad(func.grad(...)): func.grad
calls autograd.grad(create_graph=True, allow_unused=True) and returns zeros_like(input) where no
output requires grad. The autograd.grad route raises RuntimeError: the first derivative c has no
grad_fn (M18).
"""

import torch

from autograder.kinds import Choice, Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ERRORS = Choice(options=(None, "RuntimeError", "ValueError", "TypeError"),
                none_means="None (no error)")
ROWS = ("grad_scalar", "grad_vector", "func_second_linear", "autograd_second_linear")
KIND = Table(rows=ROWS, columns=(("raises", ERRORS), ("value", Number())))


def _calls(x0: float, xs: list[float], c: float) -> dict:
    def autograd_second():
        t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (first,) = torch.autograd.grad(c * t, t, create_graph=True)
        return torch.autograd.grad(first, t)[0]

    scalar = torch.tensor(x0, dtype=torch.float64)
    return {
        "grad_scalar": lambda: torch.func.grad(lambda t: t**3)(scalar),
        "grad_vector": lambda: torch.func.grad(lambda t: t**3)(torch.tensor(xs, dtype=torch.float64)),
        "func_second_linear": lambda: torch.func.grad(torch.func.grad(lambda t: c * t))(scalar),
        "autograd_second_linear": autograd_second,
    }


def reference(x0: float, xs: list[float], c: float) -> dict:
    table = {}
    for name, call in _calls(x0, xs, c).items():
        try:
            table[name] = {"raises": None, "value": call()}
        except Exception as e:
            table[name] = {"raises": type(e).__name__, "value": None}
    return table


def analytic(x0: float, xs: list[float], c: float) -> dict:
    # grad(t³) = 3t² for a scalar; grad needs a scalar output, so a vector one raises;
    # (c·t)'' = 0, which func computes; autograd.grad's first derivative c is a constant with
    # no grad_fn, so differentiating it again raises "does not require grad"
    return {"grad_scalar": {"raises": None, "value": 3 * x0**2},
            "grad_vector": {"raises": "RuntimeError", "value": None},
            "func_second_linear": {"raises": None, "value": 0.0},
            "autograd_second_linear": {"raises": "RuntimeError", "value": None}}


SETUP = """x0, xs, c = {{x0}}, {{xs}}, {{c}}

def outcome(call):
    \"\"\"Run call(); return {"raises": <exception class name or None>, "value": <result or None>}.\"\"\"
    try:
        return {"raises": None, "value": call()}
    except Exception as e:
        return {"raises": type(e).__name__, "value": None}"""

EXERCISE = Exercise(
    title="torch.func and autograd at the edges",
    prompt=r"""
Four calls, with `x0 = {{x0}}`, `xs = {{xs}}` and `c = {{c}}`:

| row | call |
|---|---|
| `"grad_scalar"` | `torch.func.grad(lambda t: t**3)(torch.tensor(x0))` |
| `"grad_vector"` | `torch.func.grad(lambda t: t**3)(torch.tensor(xs))` |
| `"func_second_linear"` | `torch.func.grad(torch.func.grad(lambda t: c * t))(torch.tensor(x0))` |
| `"autograd_second_linear"` | with `t = torch.tensor(x0, requires_grad=True)`: `first = torch.autograd.grad(c * t, t, create_graph=True)[0]`, then `torch.autograd.grad(first, t)` |

For each row: which exception does it raise (its class name as a string, or `None` if none),
and if it raises nothing, what number does it return (else `None`)? The setup's
`outcome(lambda: ...)` runs a call and fills one row for you. Bind the table to `edges`.
""",
    setup=SETUP,
    answer="edges",
    placeholder='edges = ...  # {"grad_scalar": {"raises": ..., "value": ...}, ...}',
    solution="""t = torch.tensor(x0, requires_grad=True)

def autograd_second():
    first = torch.autograd.grad(c * t, t, create_graph=True)[0]
    return torch.autograd.grad(first, t)[0]

edges = {
    "grad_scalar": outcome(lambda: torch.func.grad(lambda u: u**3)(torch.tensor(x0))),
    "grad_vector": outcome(lambda: torch.func.grad(lambda u: u**3)(torch.tensor(xs))),
    "func_second_linear": outcome(lambda: torch.func.grad(torch.func.grad(lambda u: c * u))(torch.tensor(x0))),
    "autograd_second_linear": outcome(autograd_second),
}""",
    kind=KIND,
    params={"x0": 1.0, "xs": [1.0, 2.0], "c": 2.0},
    hidden=({"x0": -2.075, "xs": [0.5, -1.0, 3.0], "c": -3.0},),
    draw=lambda rng: {"x0": rng.uniform(-3, 3), "xs": [rng.uniform(-3, 3) for _ in range(3)],
                      "c": rng.choice((-1, 1)) * rng.uniform(0.5, 4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("func_grad_scalar", table_with(analytic, grad_vector={"raises": None, "value": None}),
              "torch.func.grad differentiates a function whose output is a 0-dimensional "
              "tensor (stricter than backward(), which takes any one-element tensor). For "
              "t**3 on a vector the output has one entry per input, so grad raises "
              "RuntimeError ('Expected f(*args) to return a scalar Tensor'). For the "
              "elementwise derivatives use .sum() inside the function, or jacrev / vjp.",
              "What would 'the gradient' of a function with three outputs be?"),
        Wrong("linear_second_derivative",
              table_with(analytic, autograd_second_linear={"raises": None, "value": 0.0}),
              "The mathematics says 0, but the autograd.grad route raises: the first "
              "derivative of c·t is the constant c, a tensor with no grad_fn, so the second "
              "call finds nothing to differentiate ('element 0 of tensors does not require "
              "grad'), even with create_graph=True on the first call.",
              "Print first.requires_grad and first.grad_fn after the first call."),
        Wrong("linear_second_derivative",
              table_with(analytic, func_second_linear={"raises": "RuntimeError", "value": None}),
              "torch.func.grad does call torch.autograd.grad (with create_graph=True and "
              "allow_unused=True), but first it drops every output that does not require grad, "
              "and where nothing is left it returns torch.zeros_like(input) instead of raising. "
              "The inner derivative of c·t is the constant c, which does not depend on t, so "
              "grad(grad(lambda t: c * t)) returns 0 without error.",
              "Run it, and compare with the autograd.grad row: what does torch.func do when "
              "the output does not depend on the input?"),
    ),
)
