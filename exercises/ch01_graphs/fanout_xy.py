"""Reference set 002, 2.2: fan-out. z = xy + x² at (2, 3) gives x.grad = 7, y.grad = 2."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient


def f(x: float, y: float) -> float:
    return x * y + x**2


def reference(x0: float, y0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
    (x * y + x**2).backward()
    return torch.stack([x.grad, y.grad])


EXERCISE = Exercise(
    title="Fan-out: two arrows leave x",
    prompt=r"""
Now $z = xy + x^2$, with `x = torch.tensor({{x0}}, requires_grad=True)` and
`y = torch.tensor({{y0}}, requires_grad=True)`. The tensor `x` feeds two operations. After
`z.backward()`, what are `x.grad` and `y.grad`? Give them as a pair `(x_grad, y_grad)`, as
expressions of `x0` and `y0`.
""",
    setup="x0, y0 = {{x0}}, {{y0}}",
    answer="grads",
    placeholder="grads = ...  # (x.grad, y.grad)",
    solution="""x_grad = y0 + 2 * x0   # one contribution from each of the two uses of x, added
y_grad = x0
grads = (x_grad, y_grad)""",
    by_hand=True,
    kind=Tensor(shape=(2,)),
    params={"x0": 2.0, "y0": 3.0},
    hidden=({"x0": -1.5, "y0": 0.5}, {"x0": 1.2625, "y0": -4.15}),
    draw=lambda rng: {"x0": rng.uniform(-4, 4), "y0": rng.uniform(-4, 4)},
    reference=reference,
    analytic=lambda x0, y0: [y0 + 2 * x0, x0],
    finite_diff=lambda x0, y0: gradient(f, [x0, y0]),
    wrong=(
        Wrong("fanout_adds", lambda x0, y0: [y0, x0],
              "Only the branch through xy was counted. x has two arrows leaving it, one into xy "
              "and one into x²; backward sends a gradient back along each, and the engine adds the two "
              "shares before it writes x.grad.",
              "List every path from z back to x, and what each contributes."),
        Wrong("fanout_adds", lambda x0, y0: [2 * x0, x0],
              "Only the branch through x² was counted; the branch through xy also reaches x. "
              "When a tensor is used twice, its gradient is the sum of both contributions.",
              "Which operations does x feed? Count the arrows leaving x."),
        Wrong("chain_rule_dropped", lambda x0, y0: [y0 + 2 * x0, x0 + y0],
              "y appears only in xy, so dz/dy = x. Treating y as if it also fed x² (or adding x's "
              "extra branch to y) gives y a gradient it does not have.",
              "How many arrows leave y?"),
        Wrong("power_rule", lambda x0, y0: [y0 + x0, x0],
              "Both branches into x were counted, but the branch through x² was differentiated "
              "as x: the factor the power rule brings down went missing. Nudging x by h changes "
              "x² by more than x·h.",
              "Expand (x + h)² and keep the part proportional to h."),
    ),
)
