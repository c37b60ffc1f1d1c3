"""Reference set 001, the second answer: the XOR snippet, repaired and graded by running it.

The snippet as posted fails before any gradient: F.linear(inputs, weights, bias) on the integer
inputs raises "RuntimeError: mat1 and mat2 must have the same dtype, but got Long and Float".
Cast to float and it runs, but loss = (outputs - preds).mean() is not a loss: the signed errors
cancel, it has no minimum, and its gradient (-mean of the inputs, -1) does not depend on the
weights. preds has shape (4, 1) and outputs (4,), so outputs - preds broadcasts to (4, 4).

The repair: float inputs and targets, predictions of shape (4,), and the mean squared error
mean((preds - targets)²).

Keeping preds at shape (4, 1) makes preds - targets a (4, 4) table, whose mean square has
dL/dp_i = (p_i - mean t)/2 instead of (p_i - t_i)/2. For XOR's truth table the two give the same
gradients, because t - mean t = [-1, 1, 1, -1]/2 is orthogonal to both input columns and sums to
0; so that bug cannot be a diagnosed wrong answer at the shown values (it would equal the
reference). The hidden AND and OR tables tell it apart: it earns no credit there. The grader calls the student's xor_loss on fresh weights, biases and
truth tables (AND, OR) and reads the parameters' gradients after backward().
"""

import random

import torch

from autograder.harness import call
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

INPUTS = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]


def _preds(w: list[float], b: float) -> list[float]:
    return [w[0] * x1 + w[1] * x2 + b for x1, x2 in INPUTS]


def reference(w: list[float], b: float, targets: list[int]) -> torch.Tensor:
    weights = torch.tensor([w], dtype=torch.float64, requires_grad=True)
    bias = torch.tensor([b], dtype=torch.float64, requires_grad=True)
    preds = torch.nn.functional.linear(torch.tensor(INPUTS, dtype=torch.float64), weights, bias)
    loss = ((preds.squeeze(1) - torch.tensor(targets, dtype=torch.float64)) ** 2).mean()
    loss.backward()
    return torch.cat([weights.grad.flatten(), bias.grad])


def _grads_from(dl_dp: list[float]) -> list[float]:
    # p_i = w·x_i + b: dL/dw_k = Σ_i dL/dp_i x_ik, dL/db = Σ_i dL/dp_i
    return [sum(d * x[0] for d, x in zip(dl_dp, INPUTS, strict=True)),
            sum(d * x[1] for d, x in zip(dl_dp, INPUTS, strict=True)), sum(dl_dp)]


def analytic(w: list[float], b: float, targets: list[int]) -> list[float]:
    # L = (1/4) Σ (p_i - t_i)², dL/dp_i = (p_i - t_i) / 2
    return _grads_from([(p - t) / 2 for p, t in zip(_preds(w, b), targets, strict=True)])


def finite_diff(w: list[float], b: float, targets: list[int]) -> torch.Tensor:
    x = torch.tensor(INPUTS, dtype=torch.float64)
    t = torch.tensor(targets, dtype=torch.float64)

    def loss(theta: torch.Tensor) -> torch.Tensor:
        return ((x @ theta[:2] + theta[2] - t) ** 2).mean()

    return tensor_gradient(loss, torch.tensor([*w, b], dtype=torch.float64))


def _draw(rng: random.Random) -> dict:
    targets = [rng.randint(0, 1) for _ in range(4)]
    while len(set(targets)) < 2:  # a constant truth table cannot show the broadcasting bug
        targets = [rng.randint(0, 1) for _ in range(4)]
    return {"w": [rng.uniform(-1, 1), rng.uniform(-1, 1)], "b": rng.uniform(-1, 1),
            "targets": targets}


SETUP = """import torch.nn.functional as F

inputs = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])   # integers, as in the post
outputs = torch.tensor({{targets}})                        # the truth table, integers too
w0, b0 = {{w}}, {{b}}

from autograder.harness import grads_of


def gradients_of(loss_fn):
    \"\"\"What the grader runs: your loss on fresh weights (shape (1, 2), as F.linear wants) and
    bias, backward(), and their gradients [dL/dw1, dL/dw2, dL/db].\"\"\"
    return grads_of(lambda weights, bias: loss_fn(inputs, outputs, weights, bias), [w0], [b0])"""

EXERCISE = Exercise(
    title="Fix it: a linear model of XOR that runs and has a loss",
    prompt=r"""
A forum answer offers this "basic XOR gate" to explain autograd:

```python
inputs = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])
outputs = torch.tensor([0, 1, 1, 0])
weights = torch.randn(1, 2)
weights.requires_grad = True
bias = torch.randn(1, requires_grad=True)
preds = F.linear(inputs, weights, bias)
loss = (outputs - preds).mean()
loss.backward()
print(weights.grad)
```

Run it (in a `try`): it does not get as far as `backward()`. Then write
`xor_loss(inputs, outputs, weights, bias)` that returns a **real loss** for this model, the mean
squared error $\frac14\sum_i (p_i - t_i)^2$ over the four rows, with predictions
$p_i = w \cdot x_i + b$. It must work with the integer `inputs` and `outputs` of the setup cell,
and its `backward()` must fill `weights.grad` and `bias.grad`. The grader runs
`gradients_of(xor_loss)` with the weights `{{w}}` and bias `{{b|pretty}}`, then with fresh
parameters and other truth tables (AND, OR).
""",
    setup=SETUP,
    answer="xor_loss",
    call=call("grads_of(lambda weights, bias: xor_loss(inputs, outputs, weights, bias), [w0], [b0])"),
    placeholder="def xor_loss(inputs, outputs, weights, bias):\n    return ...",
    solution="""def xor_loss(inputs, outputs, weights, bias):
    preds = F.linear(inputs.float(), weights, bias).squeeze(1)   # shape (4,), like outputs
    return ((preds - outputs.float()) ** 2).mean()""",
    kind=Tensor(shape=(3,)),
    params={"w": [0.3, -0.2], "b": 0.1, "targets": [0, 1, 1, 0]},
    hidden=({"w": [-0.5, 0.8], "b": 0.25, "targets": [0, 0, 0, 1]},
            {"w": [0.1038, 0.415], "b": -0.3, "targets": [0, 1, 1, 1]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("not_a_loss", lambda w, b, targets: [-0.5, -0.5, -1.0],
              "This is the post's loss, (outputs - preds).mean(), once the dtypes agree. It is "
              "not a loss: positive and negative errors cancel, it has no minimum (it falls "
              "forever as the predictions grow), and its gradient, minus the mean input and -1, "
              "is the same whatever the weights and the targets. Gradient descent on it would "
              "push every prediction up without end.",
              "Square the errors before averaging them."),
        Wrong("mean_scales", lambda w, b, targets: [4 * g for g in analytic(w, b, targets)],
              "This is the gradient of the sum of squared errors, four times the mean's. The "
              "mean squared error divides by the number of rows.",
              "Use .mean() over the four rows, not .sum()."),
    ),
)
