"""The chain rule through a small graph: L = (a·b + c)·f (Karpathy's micrograd example)."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient


def f_loss(a: float, b: float, c: float, f: float) -> float:
    return (a * b + c) * f


def reference(a: float, b: float, c: float, f: float) -> torch.Tensor:
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, b, c, f)]
    ta, tb, tc, tf = leaves
    ((ta * tb + tc) * tf).backward()
    return torch.stack([t.grad for t in leaves])


def analytic(a: float, b: float, c: float, f: float) -> list[float]:
    # e = a*b, d = e + c, L = d*f: dL/dd = f, dL/de = f, then through the product
    return [b * f, a * f, f, a * b + c]


EXERCISE = Exercise(
    title="The chain rule, one box at a time",
    prompt=r"""
Take $e = ab$, $d = e + c$ and $L = d\,f$ with $a = {{a|pretty}}$, $b = {{b|pretty}}$,
$c = {{c|pretty}}$, $f = {{f|pretty}}$ (all leaves that require grad). After `L.backward()`,
what are the four gradients $\left(\frac{\partial L}{\partial a}, \frac{\partial L}{\partial b},
\frac{\partial L}{\partial c}, \frac{\partial L}{\partial f}\right)$? Give them as a list in
that order, as expressions of `a0`, `b0`, `c0` and `f0`: walk back from $L$ one box at a
time.
""",
    setup="a0, b0, c0, f0 = {{a}}, {{b}}, {{c}}, {{f}}",
    answer="grads_abcf",
    placeholder="grads_abcf = ...  # [dL/da, dL/db, dL/dc, dL/df]",
    solution="""d0 = a0 * b0 + c0                   # forward: e = ab, d = e + c
dL_dd = f0                           # L = d·f
dL_de = dL_dd                        # d = e + c passes it on to e and c
grads_abcf = [dL_de * b0, dL_de * a0, dL_dd, d0]""",
    by_hand=True,
    kind=Tensor(shape=(4,)),
    params={"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0},
    hidden=({"a": 1.35, "b": 2.0625, "c": -1.35, "f": 3.15},),
    draw=lambda rng: {k: rng.uniform(-4, 4) for k in "abcf"},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda a, b, c, f: gradient(f_loss, [a, b, c, f]),
    wrong=(
        Wrong("local_gradient_only", lambda a, b, c, f: [b, a, 1.0, a * b + c],
              "These are the local gradients of each box (∂e/∂a = b, ∂d/∂c = 1, ...), without "
              "multiplying by the gradient flowing in from above. Every path to L passes "
              "through the product with f, which multiplies by f on the way back.",
              "Write dL/da as (dL/dd)(dd/de)(de/da) and evaluate each factor."),
        Wrong("chain_rule_dropped", lambda a, b, c, f: [b * f, a * f, f, a * b],
              "dL/df is the value of the other factor, d = ab + c; the +c was left out. Local "
              "gradients of a product are the forward values of the other input.",
              "What is the value of d at these numbers?"),
        Wrong("sign_error", lambda a, b, c, f: [-b * f, -a * f, -f, a * b + c],
              "The signs of the first three gradients flipped. No subtraction appears in this "
              "graph, so no factor of -1 enters the chain.",
              "Multiply the factors along each path, keeping their signs."),
    ),
)
