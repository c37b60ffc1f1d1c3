"""micrograd exercises §1: the gradient of f(a, b, c) = -a³ + sin(3b) - 1/c + b^2.5 - a^0.5.

At (2, 3, 4) it is [-12.3536, 10.2570, 0.0625]; the known slips drop the 3 of sin(3b) or lose
the sign of the -a^0.5 or -1/c term.
"""

import math
from collections.abc import Callable

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient


def f(a: float, b: float, c: float) -> float:
    return -(a**3) + math.sin(3 * b) - 1 / c + b**2.5 - a**0.5


def reference(a0: float, b0: float, c0: float) -> torch.Tensor:
    a, b, c = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0, c0))
    (-(a**3) + torch.sin(3 * b) - 1 / c + b**2.5 - a**0.5).backward()
    return torch.stack([a.grad, b.grad, c.grad])


def analytic(a0: float, b0: float, c0: float) -> list[float]:
    return [-3 * a0**2 - 0.5 * a0**-0.5,
            3 * math.cos(3 * b0) + 2.5 * b0**1.5,
            1 / c0**2]


def _replace(i: int, value: Callable[..., float]) -> Callable[..., list[float]]:
    def wrong(a0: float, b0: float, c0: float) -> list[float]:
        g = analytic(a0, b0, c0)
        g[i] = value(a0, b0, c0)
        return g
    return wrong


EXERCISE = Exercise(
    title="Three partial derivatives by hand",
    prompt=r"""
Karpathy's micrograd exercises open with

$$f(a, b, c) = -a^3 + \sin(3b) - \frac{1}{c} + b^{2.5} - a^{0.5}.$$

What is the gradient $\left(\frac{\partial f}{\partial a}, \frac{\partial f}{\partial b},
\frac{\partial f}{\partial c}\right)$ at $a = {{a0|pretty}}$, $b = {{b0|pretty}}$,
$c = {{c0|pretty}}$? Derive it by hand and write it with `math` (or compute it with torch and
compare with your derivation). Give a list of three numbers.
""",
    setup="a0, b0, c0 = {{a0}}, {{b0}}, {{c0}}",
    answer="grad_abc",
    placeholder="grad_abc = ...  # [df/da, df/db, df/dc]",
    solution="""a, b, c = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0, c0))
f = -a**3 + torch.sin(3 * b) - 1 / c + b**2.5 - a**0.5
f.backward()
grad_abc = [a.grad, b.grad, c.grad]""",
    kind=Tensor(shape=(3,)),
    params={"a0": 2.0, "b0": 3.0, "c0": 4.0},
    hidden=({"a0": 1.5, "b0": 0.8, "c0": -2.5}, {"a0": 0.6, "b0": 2.2, "c0": 1.25}),
    draw=lambda rng: {"a0": rng.uniform(0.5, 3), "b0": rng.uniform(0.5, 3),
                      "c0": rng.choice([-1, 1]) * rng.uniform(1, 4)},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda a0, b0, c0: gradient(f, [a0, b0, c0]),
    wrong=(
        Wrong("chain_rule_dropped", _replace(1, lambda a0, b0, c0: math.cos(3 * b0) + 2.5 * b0**1.5),
              "∂f/∂b lost the factor 3 of sin(3b). sin is applied to 3b, not to b, so the chain "
              "rule multiplies cos(3b) by the derivative of the inside, d(3b)/db = 3.",
              "Write sin(3b) as sin(u) with u = 3b and differentiate in two steps."),
        Wrong("sign_error", _replace(0, lambda a0, b0, c0: -3 * a0**2 + 0.5 * a0**-0.5),
              "∂f/∂a has the wrong sign on the a^0.5 part. The term is -a^0.5, so its derivative "
              "is -0.5·a^-0.5: the minus in front of the term stays.",
              "Differentiate -a³ and -a^0.5 separately, carrying each minus sign along."),
        Wrong("sign_error", _replace(2, lambda a0, b0, c0: -1 / c0**2),
              "∂f/∂c has the wrong sign. d(1/c)/dc = -1/c², and the term in f is -1/c, so the two "
              "minus signs cancel: ∂f/∂c = +1/c².",
              "Write -1/c as -c^-1 and apply the power rule."),
    ),
)
