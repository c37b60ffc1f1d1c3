"""Train the two-moons MLP on the student's own engine; graded against the same training in torch."""


import torch
import torch.nn.functional as F

from autograder.byhand import TORCH
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import ENGINE_TRAIN, call, mlp_grads, mlp_init, moons
from .value_engine import SOLUTION as ENGINE_SOLUTION

STEPS = ENGINE_TRAIN["steps"]


def _torch_train(seed, n, h, steps, lr, *, zero=True, sign=1.0, reduction="mean", hand=False, fd=False):
    X, y = moons(n, seed)
    params = [p.clone().requires_grad_(True) for p in mlp_init(seed, 2, h, 2).values()]
    losses = []
    for _ in range(steps):
        def loss_of(ps):
            return F.cross_entropy((X @ ps[0] + ps[1]).relu() @ ps[2] + ps[3], y, reduction=reduction)
        loss = loss_of(params)
        losses.append(float(loss))
        if hand:
            grads = mlp_grads(X, y, *(p.detach() for p in params))
        elif fd:
            grads = _central(loss_of, [p.detach() for p in params])
        else:
            loss.backward()
            grads = [p.grad for p in params]
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p -= sign * lr * g
        if zero and not hand and not fd:
            for p in params:
                p.grad = None
    return torch.tensor(losses, dtype=torch.float64)


def _central(loss_of, params, eps=1e-6):
    grads = []
    for i, p in enumerate(params):
        g = torch.zeros_like(p).reshape(-1)
        for j in range(p.numel()):
            e = torch.zeros_like(p).reshape(-1)
            e[j] = eps
            up = [q + e.reshape(p.shape) if k == i else q for k, q in enumerate(params)]
            down = [q - e.reshape(p.shape) if k == i else q for k, q in enumerate(params)]
            g[j] = (loss_of(up) - loss_of(down)) / (2 * eps)
        grads.append(g.reshape(p.shape))
    return grads


def _with(**kw):
    return lambda seed, n, h, steps, lr: _torch_train(seed, n, h, steps, lr, **kw)


EXERCISE = Exercise(
    title="Train the MLP on your engine",
    points=3,
    prompt=r"""
Now use **your** `Value` (from the engine exercise above) to train the two-layer network on
two moons: logits $s = \mathrm{relu}(x W_1 + b_1)\,W_2 + b_2$ (two classes), the loss the
**mean** cross-entropy over the $n$ points, $\ell_i = \log(e^{s_{i0}} + e^{s_{i1}}) - s_{i y_i}$,
and full-batch gradient descent.

Write `train_engine(X, y, W1, b1, W2, b2, steps, lr)`. The arguments are plain lists: `X` is
$n$ points `[x0, x1]`, `y` their labels, `W1` a $2 \times h$ list of lists, `b1` $h$ numbers,
`W2` $h \times 2$, `b2` 2 numbers. Wrap every parameter in a `Value` once, then `steps` times:
build the loss from them, record `loss.data`, call `loss.backward()`, and move each parameter:
`p.data -= lr * p.grad`. Return the list of the `steps` recorded losses.

You have `+`, `*`, `**`, `exp` and `log`: subtraction is `a + b * Value(-1.0)` and division by
$n$ is `* Value(1 / n)` (or add `__sub__`, `__radd__`, ... to your class).

The grader runs `engine_train_report(train_engine, seed, n, h, steps, lr)` (here
`{{seed}}, {{n}}, {{h}}, {{steps}}, {{lr}}`; other seeds when grading) and compares your losses
with the same training done by torch.
""",
    setup="""seed, n, h, steps, lr = {{seed}}, {{n}}, {{h}}, {{steps}}, {{lr}}
from autograder.harness import engine_train_report   # what the grader runs""",
    answer="train_engine",
    call=call("engine_train_report(train_engine, seed, n, h, steps, lr)"),
    placeholder="def train_engine(X, y, W1, b1, W2, b2, steps, lr):\n    return ...  # the list of losses",
    solution=ENGINE_SOLUTION.replace("class Value:", "# your Value from the engine exercise, repeated so this cell stands alone\nclass Value:")
    + """


def train_engine(X, y, W1, b1, W2, b2, steps, lr):
    W1 = [[Value(w) for w in row] for row in W1]
    W2 = [[Value(w) for w in row] for row in W2]
    b1, b2 = [Value(b) for b in b1], [Value(b) for b in b2]
    params = [p for row in W1 + W2 for p in row] + b1 + b2
    hidden, minus_one, inv_n = len(b1), Value(-1.0), Value(1.0 / len(X))
    losses = []
    for _ in range(steps):
        total = Value(0.0)
        for x, label in zip(X, y):
            hid = [(Value(x[0]) * W1[0][j] + Value(x[1]) * W1[1][j] + b1[j]).relu() for j in range(hidden)]
            s = []
            for k in range(2):
                acc = b2[k]
                for j in range(hidden):
                    acc = acc + hid[j] * W2[j][k]
                s.append(acc)
            total = total + (s[0].exp() + s[1].exp()).log() + s[label] * minus_one
        loss = total * inv_n
        losses.append(loss.data)
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
    return losses""",
    refuse=TORCH,
    kind=Tensor(shape=(STEPS,), rtol=1e-6),
    params={"seed": 0, **ENGINE_TRAIN},
    hidden=({"seed": 5, **ENGINE_TRAIN}, {"seed": 9, **ENGINE_TRAIN}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6), **ENGINE_TRAIN},
    reference=_with(),
    analytic=_with(hand=True),
    finite_diff=_with(fd=True),
    wrong=(
        Wrong("engine_not_zeroed", _with(zero=False),
              "Your first two losses are right, then the curve leaves torch's: each step's "
              "gradient is added to the ones before it. The parameters are leaves that every "
              "step's graph reuses; unless backward() zeroes the graph's gradients first (your "
              "engine's job) or you zero them, they accumulate across steps.",
              "Print p.grad for one parameter at each step. Does it start from zero?"),
        Wrong("descent_direction", _with(sign=-1.0),
              "Your loss rises: the update moves each parameter along its gradient. The gradient "
              "points uphill; descent subtracts it.",
              "Which sign does the update p.data -= lr * p.grad have in your code?"),
        Wrong("mean_scales", _with(reduction="sum"),
              "Your first loss is n times torch's and the steps are n times too large: the loss is "
              "the sum over the points, not the mean.",
              "Divide the summed loss by n before backward()."),
    ),
)
