"""d2l 2.5, exercise 5, forward mode: f(x) = log(x²)·sin(x) + 1/x evaluated "once starting from x
to f": every box's tangent, its derivative with respect to x, pushed forward from ẋ = 1.

ȧ = 2x, ḃ = ȧ/a = 2/x, ċ = cos x, ḋ = ḃ·c + b·ċ (product rule), ė = -1/x², ḟ = ḋ + ė, which is
the same df/dx that the backward pass (chapter 1's log_sin_reverse) collects at x.
"""

import math

import torch
import torch.autograd.forward_ad as fwAD

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with
from gradtutor.key.numeric import central_diff

ROWS = ("a", "b", "c", "d", "e", "f")
KIND = Table(rows=ROWS, columns=(("tangent", Number()),))


def _nodes(x):
    a = x**2
    b = torch.log(a)
    c = torch.sin(x)
    d = b * c
    e = 1 / x
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": d + e}


def reference(x0: float) -> dict:
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.tensor(x0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
        return {k: {"tangent": fwAD.unpack_dual(t).tangent} for k, t in _nodes(x).items()}


def _table(**tangents: float) -> dict:
    return {k: {"tangent": v} for k, v in tangents.items()}


def analytic(x0: float) -> dict:
    b, c = math.log(x0**2), math.sin(x0)
    b_dot, c_dot = 2 / x0, math.cos(x0)
    d_dot = b_dot * c + b * c_dot
    e_dot = -1 / x0**2
    return _table(a=2 * x0, b=b_dot, c=c_dot, d=d_dot, e=e_dot, f=d_dot + e_dot)


def finite_diff(x0: float) -> dict:
    fns = {"a": lambda u: u**2, "b": lambda u: math.log(u**2), "c": math.sin,
           "d": lambda u: math.log(u**2) * math.sin(u), "e": lambda u: 1 / u,
           "f": lambda u: math.log(u**2) * math.sin(u) + 1 / u}
    return {k: {"tangent": central_diff(fn, x0)} for k, fn in fns.items()}


def _local_only(x0: float) -> dict:
    # ḃ taken as d(log a)/da = 1/a, without the arriving tangent ȧ; the slip carries on to d and f
    b_dot = 1 / x0**2
    d_dot = b_dot * math.sin(x0) + math.log(x0**2) * math.cos(x0)
    return {**analytic(x0), "b": {"tangent": b_dot}, "d": {"tangent": d_dot},
            "f": {"tangent": d_dot - 1 / x0**2}}


def _draw(rng) -> dict:
    return {"x0": rng.choice((-1, 1)) * rng.uniform(0.6, 3.0)}


EXERCISE = Exercise(
    title="d2l's f(x) = log(x²)·sin x + 1/x, forwards",
    prompt=r"""
Chapter 1 walked $f(x) = \log(x^2)\,\sin x + \frac1x$ backwards, from $f$ to $x$. *Dive into
Deep Learning* (section 2.5, exercise 5) asks for the other direction too: start from $x$ with
the tangent $\dot x = 1$ and push it forward box by box, $a = x^2$, $b = \log a$, $c = \sin x$,
$d = b\,c$, $e = 1/x$, $f = d + e$. Each box's tangent $\dot a = \frac{da}{dx}$, $\dot b$, ... is
its local derivative times the tangents arriving at its inputs.

At $x = {{x0|pretty}}$, fill in the table `tangents`, e.g. `{"a": {"tangent": ...}, ..., "f": {"tangent": ...}}`.
Write each tangent as an expression of `x0`.
""",
    setup="import math\n\nx0 = {{x0}}",
    answer="tangents",
    placeholder='tangents = ...  # {"a": {"tangent": ...}, "b": ..., "c": ..., "d": ..., "e": ..., "f": ...}',
    solution="""a, b, c = x0**2, math.log(x0**2), math.sin(x0)
a_dot = 2 * x0
b_dot = a_dot / a                 # d(log a)/da times the tangent arriving from a
c_dot = math.cos(x0)
d_dot = b_dot * c + b * c_dot     # the product rule: both inputs of d move
e_dot = -1 / x0**2
tangents = {"a": {"tangent": a_dot}, "b": {"tangent": b_dot}, "c": {"tangent": c_dot},
            "d": {"tangent": d_dot}, "e": {"tangent": e_dot}, "f": {"tangent": d_dot + e_dot}}""",
    by_hand=True,
    kind=KIND,
    params={"x0": 2.0},
    hidden=({"x0": -1.5}, {"x0": 0.75}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("local_gradient_only", _local_only,
              "ḃ here is d(log a)/da = 1/a alone. Forward mode multiplies each local derivative "
              "by the tangent arriving at the box's input: ḃ = (1/a) · ȧ.",
              "What tangent arrives at b from a?"),
        Wrong("chain_rule_dropped",
              table_with(analytic, d=lambda x0: {"tangent": 2 / x0 * math.cos(x0)},
                         f=lambda x0: {"tangent": 2 / x0 * math.cos(x0) - 1 / x0**2}),
              "d = b · c has two moving inputs, so its tangent follows the product rule, "
              "ḃ · c + b · ċ, not ḃ · ċ.",
              "Nudge x: how much does b · c change when both b and c move?"),
        Wrong("sign_error",
              table_with(analytic, e=lambda x0: {"tangent": 1 / x0**2},
                         f=lambda x0: {"tangent": analytic(x0)["d"]["tangent"] + 1 / x0**2}),
              "The tangent of e = 1/x has lost its sign, and f carries the slip on. 1/x falls "
              "as x grows, on either side of 0: the power rule on x to the power -1 brings a "
              "minus sign down.",
              "Is 1/x going up or down as x grows?"),
    ),
)

