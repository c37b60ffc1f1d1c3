"""Forward vs central differences on f(x) = x³, with a step large enough to see the error.

Forward: ((x+h)³ - x³)/h = 3x² + 3xh + h², error 3xh + h² (first order in h).
Central: ((x+h)³ - (x-h)³)/2h = 3x² + h², error h² (second order: the 3xh terms cancel).
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Require, Wrong


def reference(x0: float, h: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (x**3).backward()
    exact = x.grad
    f = lambda t: torch.tensor(t, dtype=torch.float64) ** 3
    forward = (f(x0 + h) - f(x0)) / h
    central = (f(x0 + h) - f(x0 - h)) / (2 * h)
    return torch.stack([forward - exact, central - exact])


def analytic(x0: float, h: float) -> list[float]:
    return [3 * x0 * h + h**2, h**2]


EXERCISE = Exercise(
    title="Forward or central difference?",
    prompt=r"""
Take $f(x) = x^3$ at $x_0 = {{x0|pretty}}$ and the (deliberately large) step $h = {{h|pretty}}$.
Compute the two estimates of $f'(x_0)$

$$\text{forward} = \frac{f(x_0 + h) - f(x_0)}{h}, \qquad
\text{central} = \frac{f(x_0 + h) - f(x_0 - h)}{2h},$$

and give their **errors**, each as *estimate minus exact derivative*, as a list
`fd_errors = [forward_error, central_error]`. Compute in float64 (plain Python floats are
float64).
""",
    setup="x0, h = {{x0}}, {{h}}",
    answer="fd_errors",
    placeholder="fd_errors = ...  # [forward estimate - f'(x0), central estimate - f'(x0)]",
    solution="""def f(x):
    return x**3

exact = 3 * x0**2
forward = (f(x0 + h) - f(x0)) / h
central = (f(x0 + h) - f(x0 - h)) / (2 * h)
fd_errors = [forward - exact, central - exact]""",
    requires=(Require("float64", "float64(answer)", "the errors computed in float64",
                      "The prompt asks for float64, and your answer holds float32 numbers. With "
                      "float32's 7 digits, f(x0 + h) - f(x0) loses most of its digits to rounding, "
                      "and the error you measure is partly rounding, not the method's.",
                      "Use plain Python floats (they are float64), or pass dtype=torch.float64 to "
                      "every tensor you make."),),
    kind=Tensor(shape=(2,), rtol=1e-6, atol=1e-9),  # float32 rounding shows at 1e-4
    params={"x0": 2.0, "h": 0.1},
    hidden=({"x0": -1.5, "h": 0.05}, {"x0": 0.7, "h": 0.2}),
    draw=lambda rng: {"x0": rng.choice([-1, 1]) * rng.uniform(0.5, 3), "h": rng.uniform(0.02, 0.3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("forward_difference", lambda x0, h: [h**2, 3 * x0 * h + h**2],
              "The two errors are swapped. Expand f(x₀ ± h) by Taylor: the forward difference "
              "keeps the h·f''(x₀)/2 term, so its error shrinks only like h; in the central one "
              "the even terms cancel between x₀ + h and x₀ - h, leaving an error of order h².",
              "Expand (x₀ + h)³ and (x₀ - h)³ and see which terms survive in each quotient."),
        Wrong("difference_quotient", lambda x0, h: [3 * x0 * h + h**2, 3 * x0**2 + 2 * h**2],
              "The central difference was divided by h instead of 2h, so the estimate is about "
              "twice the derivative. Its two points, x₀ - h and x₀ + h, are 2h apart, and a "
              "slope is rise over run.",
              "How far apart are the two points the central difference compares?"),
        Wrong("sign_error", lambda x0, h: [-(3 * x0 * h + h**2), -(h**2)],
              "These are exact minus estimate. The question asks for estimate minus exact, so a "
              "positive error means the estimate overshoots.",
              "Subtract the exact derivative from each estimate, in that order."),
    ),
)
