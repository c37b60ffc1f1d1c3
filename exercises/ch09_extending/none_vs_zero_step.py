"""zero_grad(set_to_none=True) vs False, then a step() with no new backward, under momentum:
a None gradient makes SGD skip the parameter; a zero gradient still moves it by μ · buffer."""


import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

KIND = Table(rows=("none", "zeros"), columns=(("w", Number()),))


def _run(w0: float, lr: float, mu: float, set_to_none: bool) -> torch.Tensor:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr, momentum=mu)
    (w * w).backward()
    opt.step()
    opt.zero_grad(set_to_none=set_to_none)
    opt.step()  # no backward in between: a skipped micro-batch, an unused branch ...
    return w.detach()


def reference(w0: float, lr: float, mu: float) -> dict:
    return {"none": {"w": _run(w0, lr, mu, True)}, "zeros": {"w": _run(w0, lr, mu, False)}}


def analytic(w0: float, lr: float, mu: float) -> dict:
    g = 2 * w0  # first step: the momentum buffer starts as the gradient
    w1 = w0 - lr * g
    return {"none": {"w": w1}, "zeros": {"w": w1 - lr * mu * g}}


def finite_diff(w0: float, lr: float, mu: float) -> dict:
    g = central(lambda w: w * w, w0)
    return {"none": {"w": w0 - lr * g}, "zeros": {"w": w0 - lr * g - lr * mu * g}}


EXERCISE = Exercise(
    title="None or zeros: what the next step does",
    prompt=r"""
The same code runs twice, once with `set_to_none=True` (row `"none"`) and once with
`set_to_none=False` (row `"zeros"`):

```python
w = torch.tensor({{w0}}, requires_grad=True)
opt = torch.optim.SGD([w], lr={{lr}}, momentum={{mu}})
(w * w).backward()
opt.step()
opt.zero_grad(set_to_none=...)     # True, or False
opt.step()                          # no backward() before this step
```

Fill in `w_after = {"none": {"w": ...}, "zeros": {"w": ...}}`: `w` after the second step.
(SGD with momentum $\mu$ keeps a buffer $b$: on its first step $b = g$, afterwards
$b \leftarrow \mu b + g$; each step does $w \leftarrow w - \mathrm{lr}\cdot b$.)
""",
    setup="w0, lr, mu = {{w0}}, {{lr}}, {{mu}}",
    answer="w_after",
    placeholder='w_after = ...  # {"none": {"w": ...}, "zeros": {"w": ...}}',
    solution="""g = 2 * w0                      # d(w²)/dw at the start
w1 = w0 - lr * g                # first step: buffer = g
w_after = {"none": {"w": w1},                   # .grad is None: step() skips w
           "zeros": {"w": w1 - lr * mu * g}}    # .grad is 0: buffer = μ·g + 0, w still moves""",
    by_hand=True,
    kind=KIND,
    params={"w0": 1.0, "lr": 0.1, "mu": 0.9},
    hidden=({"w0": -2.075, "lr": 0.05, "mu": 0.5},),
    draw=lambda rng: {"w0": rng.choice((-1, 1)) * rng.uniform(0.5, 3), "lr": rng.uniform(0.01, 0.3),
                      "mu": rng.uniform(0.3, 0.95)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("none_vs_zero_step", table_with(analytic, zeros=lambda w0, lr, mu: {"w": w0 - 2 * lr * w0}),
              "A zero gradient is still a gradient. With set_to_none=False, w.grad is a tensor "
              "of zeros, so step() updates w: the momentum buffer becomes μ·b + 0, and w moves "
              "by lr·μ·b. Only a .grad of None makes the optimizer skip the parameter.",
              "Run the momentum update with g = 0. Is the buffer zero?"),
        Wrong("none_vs_zero_step", table_with(analytic, none=lambda w0, lr, mu: {
                  "w": w0 - 2 * lr * w0 - lr * mu * 2 * w0}),
              "With set_to_none=True, w.grad is None, and SGD (like every torch optimizer) "
              "skips parameters whose .grad is None: the buffer is not touched and w stays "
              "where the first step left it.",
              "What does step() do with a parameter that has no gradient at all?"),
    ),
)
