"""Outline Ch 5 (bias under a batch): broadcasting b over N rows sums its gradient; mean divides
by all N·3 elements, so b.grad is [N, N, N] under sum and [1/3, 1/3, 1/3] under mean."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

OUT = 3  # width of the layer: b has shape (3,)


def _forward(X: list, W: list, b: torch.Tensor) -> torch.Tensor:
    return torch.tensor(X, dtype=torch.float64) @ torch.tensor(W, dtype=torch.float64) + b


def reference(X: list, W: list) -> torch.Tensor:
    rows = []
    for reduce in (torch.sum, torch.mean):
        b = torch.zeros(OUT, dtype=torch.float64, requires_grad=True)
        reduce(_forward(X, W, b)).backward()
        rows.append(b.grad)
    return torch.stack(rows)


def analytic(X: list, W: list) -> list[list[float]]:
    # b is copied into each of the N rows; the copies' gradients (1 each) add up to N.
    # The mean divides every one of the N*OUT outputs by N*OUT, so N/(N*OUT) = 1/OUT.
    n = len(X)
    return [[float(n)] * OUT, [1.0 / OUT] * OUT]


def finite_diff(X: list, W: list) -> torch.Tensor:
    b0 = torch.zeros(OUT, dtype=torch.float64)
    return torch.stack([tensor_gradient(lambda b: _forward(X, W, b).sum(), b0),
                        tensor_gradient(lambda b: _forward(X, W, b).mean(), b0)])


def draw(rng: random.Random) -> dict:
    n = rng.choice([2, 4, 5, 6, 7, 8])  # not 1 or 3: there some wrong answers would be right
    return {"X": [[rng.uniform(-2, 2) for _ in range(2)] for _ in range(n)],
            "W": [[rng.uniform(-1, 1) for _ in range(OUT)] for _ in range(2)]}


EXERCISE = Exercise(
    title="A bias shared by a whole batch",
    prompt=r"""
A batch `X` of N rows goes through a layer with weights `W` (shape $2\times 3$)
and a bias `b` of shape $(3,)$, which broadcasting adds to every row:

```python
b = torch.zeros(3, requires_grad=True)
Y = X @ W + b          # shape (N, 3)
```

What is `b.grad` (a) after `Y.sum().backward()` and (b) after `Y.mean().backward()` (each with a
fresh `b`)? Give a $2\times 3$ answer: the first row for (a), the second for (b). Compute it from
`X0` and `W0`; the grader also tries other batch sizes.
""",
    setup="X0 = {{X}}\nW0 = {{W}}",
    answer="b_grads",
    placeholder="b_grads = ...  # [b.grad after sum, b.grad after mean]",
    solution="""X = torch.tensor(X0)
W = torch.tensor(W0)
b_grads = []
for reduce in (torch.sum, torch.mean):
    b = torch.zeros(3, requires_grad=True)
    reduce(X @ W + b).backward()
    b_grads.append(b.grad)""",
    kind=Tensor(shape=(2, OUT)),
    params={"X": [[1.0, 2.0], [0.5, -1.0], [-2.0, 0.0], [3.0, 1.5]],
            "W": [[0.2, -0.5, 1.0], [0.3, 0.1, -0.4]]},
    hidden=({"X": [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0], [0.5, 0.5], [-1.0, 3.0]],
             "W": [[1.0, 0.5, -0.5], [-0.2, 0.4, 0.3]]},
            {"X": [[2.0, -1.0], [1.0, 1.0]], "W": [[0.1, 0.2, 0.3], [-0.3, -0.2, -0.1]]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("broadcast_sums", lambda X, W: [[1.0] * OUT, [1.0 / (len(X) * OUT)] * OUT],
              "This counts each bias entry once, as if b were used by a single row. Broadcasting "
              "copies b into every row of the batch; in the backward pass the gradients of all "
              "those copies are summed back into b, so under sum each entry collects one 1 per "
              "row.",
              "How many entries of Y does b_1 appear in?"),
        Wrong("mean_scales", lambda X, W: [[float(len(X))] * OUT, [1.0 / len(X)] * OUT],
              "The mean divides by the number of elements it averages: all of Y, rows times "
              "columns, not just the batch size. Each of b's entries reaches one column, so the "
              "per-row batch count cancels and only the 1/(columns) remains.",
              "Y.mean() is Y.sum() divided by what number?"),
        Wrong("mean_scales", lambda X, W: [[float(len(X))] * OUT, [float(len(X))] * OUT],
              "Under mean the gradient is the gradient under sum divided by the number of "
              "elements averaged; the mean does not pass the summed gradient through unchanged.",
              "Write Y.mean() as Y.sum() / k. What is k, and what does it do to the gradient?"),
        Wrong("mean_scales", lambda X, W: [[float(len(X))] * OUT, [1.0] * OUT],
              "The second row divides the batch sum by N only. Y.mean() averages all N·3 "
              "entries of Y, so each entry's gradient is 1/(N·3), and b collects N of them.",
              "How many numbers does Y.mean() divide by?"),
    ),
)
