"""Reference set 000, the printed forward numbers: Final_y = 2.9910 and Loss = 1.0181.

p1 = aX, l1 = mse(p1, Y), X' = X + s·∂l1/∂X, p2 = aX', final = (p1 + p2)/2, l2 = mse(final, Y).
At X = 1, Y = 4, a = 3, s = 0.001: final = 3x + 0.027x - 0.009y = 2.991 and
l2 = (4 - 2.991)² = 1.018081, which the post prints as 1.0181 (and its hand check as
1.0180809999999998).
"""

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong


def reference(x0: float, y: float, step: float, a: float) -> torch.Tensor:
    X = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    Y = torch.tensor([y], dtype=torch.float64)
    p_y1 = a * X
    l1 = F.mse_loss(p_y1, Y)
    grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
    nX = X + grad.data * step
    final_y = (p_y1 + a * nX) / 2
    l2 = F.mse_loss(final_y, Y)
    return torch.stack([final_y.detach()[0], l2.detach()])


def _final(x: float, y: float, step: float, a: float, direction: float = 1.0) -> float:
    # (ax + a(x ± s·2a(ax - y)))/2 = ax ± s a²(ax - y); for a = 3, s = 0.001: 3x + 0.027x - 0.009y
    return a * x + direction * step * a**2 * (a * x - y)


def analytic(x0: float, y: float, step: float, a: float) -> list[float]:
    final = _final(x0, y, step, a)
    return [final, (final - y) ** 2]


def _draw(rng) -> dict:
    a, y = rng.uniform(1, 3), rng.uniform(-5, 5)
    x0 = rng.uniform(-3, 3)
    while abs(a * x0 - y) < 0.5:  # away from the optimum, where the inner step does nothing
        x0 = rng.uniform(-3, 3)
    return {"x0": x0, "y": y, "step": rng.uniform(0.001, 0.05), "a": a}


EXERCISE = Exercise(
    title="The forward pass of one inner step",
    prompt=r"""
A forum post builds a prediction that takes one inner gradient step first:

```python
X = torch.tensor([{{x0}}], requires_grad=True)
Y = torch.tensor([{{y}}])
p_y1 = {{a}} * X
l1 = F.mse_loss(p_y1, Y)
grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
nX = X + grad.data * {{step}}
p_y2 = {{a}} * nX
final_y = (p_y1 + p_y2) / 2
l2 = F.mse_loss(final_y, Y)
print("Final_y:", final_y, "Loss:", l2)
```

What do `final_y` and `l2` hold? Give them as a pair `(final_y, l2)` (numbers), by hand from
`x0, y, step, a` or by running the code. Only the forward pass matters here; the next exercise
is about its gradient.
""",
    setup="""import torch.nn.functional as F

x0, y, step, a = {{x0}}, {{y}}, {{step}}, {{a}}""",
    answer="forward_values",
    placeholder="forward_values = ...  # (final_y, l2)",
    solution="""X = torch.tensor([x0], requires_grad=True)
Y = torch.tensor([y])
p_y1 = a * X
l1 = F.mse_loss(p_y1, Y)
grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
nX = X + grad.data * step
final_y = (p_y1 + a * nX) / 2
l2 = F.mse_loss(final_y, Y)
forward_values = (final_y.item(), l2.item())""",
    kind=Tensor(shape=(2,), rtol=1e-4, atol=1e-6),
    params={"x0": 1.0, "y": 4.0, "step": 0.001, "a": 3.0},
    hidden=({"x0": 0.5, "y": 4.0, "step": 0.01, "a": 3.0},
            {"x0": 2.0, "y": -1.0, "step": 0.005, "a": 1.5}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    # no finite_diff witness: these are values, not derivatives
    wrong=(
        Wrong("sign_error",
              lambda x0, y, step, a: [_final(x0, y, step, a, -1.0), (_final(x0, y, step, a, -1.0) - y) ** 2],
              "This moves X against the inner gradient (X - step · grad), as gradient descent "
              "would. The post's code adds it: nX = X + grad · step, so the new prediction moves "
              "away from Y.",
              "Re-read the update line of the code: which sign does it use?"),
        Wrong("inner_step_skipped", lambda x0, y, step, a: [a * x0, (a * x0 - y) ** 2],
              "These are the values before the inner step: p_y1 = aX and its loss. final_y "
              "averages p_y1 with the prediction after the step, a · nX.",
              "Compute nX first, then p_y2, then their average with p_y1."),
        Wrong("inner_step_skipped",
              lambda x0, y, step, a: [2 * _final(x0, y, step, a) - a * x0,
                                      (2 * _final(x0, y, step, a) - a * x0 - y) ** 2],
              "That is p_y2 = a · nX, the prediction after the step, alone. final_y is the "
              "average (p_y1 + p_y2) / 2 of the old and the new prediction.",
              "Which two predictions does final_y average?"),
    ),
)
