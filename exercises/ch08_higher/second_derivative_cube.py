"""f = x³ at x = 2: f' = 12, f'' = 12 (autograd.grad twice, create_graph=True on the first).

The trap: y.backward(create_graph=True) then x.grad.backward() leaves 12 + 12 = 24 in x.grad,
because the second backward accumulates into the same .grad.
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, order_off
from gradtutor.key.numeric import central_diff

from ._numeric import second_derivative


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (first,) = torch.autograd.grad(x**3, x, create_graph=True)
    (second,) = torch.autograd.grad(first, x)
    return torch.stack([first.detach(), second])


def analytic(x0: float) -> list[float]:
    return [3 * x0**2, 6 * x0]


def finite_diff(x0: float) -> list[float]:
    return [central_diff(lambda t: t**3, x0), second_derivative(lambda t: t**3, x0)]


def _draw(rng) -> dict:
    return {"x0": rng.choice((-1, 1)) * rng.uniform(0.5, 3)}


EXERCISE = Exercise(
    title="A derivative of a derivative",
    prompt=r"""
Let $f(x) = x^3$ at `x = torch.tensor({{x0}}, requires_grad=True)`. Use autograd (not the
power rule by hand) to compute $f'(x)$ and $f''(x)$. Give `second = [f'(x), f''(x)]`.

A first derivative you want to differentiate again must itself be part of a graph: ask for
that with `create_graph=True`.
""",
    setup="x0 = {{x0}}",
    answer="second",
    placeholder="second = ...  # [f'(x0), f''(x0)]",
    solution="""x = torch.tensor(x0, requires_grad=True)
(first,) = torch.autograd.grad(x**3, x, create_graph=True)
(again,) = torch.autograd.grad(first, x)
second = [first.detach(), again]""",
    kind=Tensor(shape=(2,)),
    params={"x0": 2.0},
    hidden=({"x0": -1.5}, {"x0": 3.0625}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("second_derivative_accumulates", lambda x0: [3 * x0**2, 3 * x0**2 + 6 * x0],
              "The second entry is f' + f''. That is what x.grad holds after "
              "y.backward(create_graph=True) followed by x.grad.backward(): the second "
              "backward adds f'' into the .grad that already holds f'.",
              "Use torch.autograd.grad for both steps (it returns the derivative instead of "
              "adding it to .grad), or keep the first derivative (g = x.grad), set "
              "x.grad = None, and only then call g.backward()."),
        order_off(lambda x0: [x0**3, 3 * x0**2], "f and then f' (each entry)", higher=False,
                  hint="What does the first call of torch.autograd.grad(x**3, x) return?"),
    ),
)
