"""no_grad vs detach, in numbers: with L = a·q + b + c where a was made under no_grad and
b = p.detach()·q, only the live paths carry gradients: p.grad = q, q.grad = p·q + 2p."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong


def reference(p0: float, q0: float) -> torch.Tensor:
    p = torch.tensor(p0, dtype=torch.float64, requires_grad=True)
    q = torch.tensor(q0, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        a = p * q
    b = p.detach() * q
    c = p * q
    (a * q + b + c).backward()
    return torch.stack([p.grad, q.grad])


def analytic(p0: float, q0: float) -> list[float]:
    # a is the constant p0 q0; b = (constant p0)·q; c = p·q
    # dL/dp: only c -> q0.   dL/dq: a (from a·q) + p0 (from b) + p0 (from c)
    return [q0, p0 * q0 + 2 * p0]


def finite_diff(p0: float, q0: float) -> list[float]:
    # hold the cut quantities at their values and nudge only the live inputs
    a, pd, h = p0 * q0, p0, 1e-6

    def L(p: float, q: float) -> float:
        return a * q + pd * q + p * q

    return [(L(p0 + h, q0) - L(p0 - h, q0)) / (2 * h), (L(p0, q0 + h) - L(p0, q0 - h)) / (2 * h)]


def draw(rng: random.Random) -> dict:
    return {"p0": rng.choice([-1, 1]) * rng.uniform(0.5, 3), "q0": rng.choice([-1, 1]) * rng.uniform(0.5, 3)}


EXERCISE = Exercise(
    title="Which paths still carry gradient?",
    prompt=r"""
```python
p = torch.tensor({{p0}}, requires_grad=True)
q = torch.tensor({{q0}}, requires_grad=True)
with torch.no_grad():
    a = p * q
b = p.detach() * q
c = p * q
L = a * q + b + c
L.backward()
```

What are `p.grad` and `q.grad`? Give them as a list `[p.grad, q.grad]`, computed from `p0` and
`q0`.
""",
    setup="p0, q0 = {{p0}}, {{q0}}",
    answer="pq_grads",
    placeholder="pq_grads = ...  # [p.grad, q.grad]",
    solution="""p = torch.tensor(p0, requires_grad=True)
q = torch.tensor(q0, requires_grad=True)
with torch.no_grad():
    a = p * q
b = p.detach() * q
c = p * q
L = a * q + b + c
L.backward()
pq_grads = [p.grad, q.grad]""",
    kind=Tensor(shape=(2,)),
    params={"p0": 2.0, "q0": 3.0},
    hidden=({"p0": -1.5, "q0": 0.5}, {"p0": 0.5, "q0": -2.0625}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("grad_modes", lambda p0, q0: [q0, p0 * q0 + p0],
              "The term b = p.detach() * q was treated as if it were made under no_grad. detach "
              "cuts only p: b is still recorded through q, so q collects p from it.",
              "For each of a·q, b and c, list which leaves it still reaches."),
        Wrong("detach_cuts_path", lambda p0, q0: [2 * q0, p0 * q0 + 2 * p0],
              "p received a gradient through b as well. p.detach() hands b a copy of p's value "
              "with no history, so no gradient flows from b back into p.",
              "Does any path from L to p run through p.detach()?"),
        Wrong("no_graph", lambda p0, q0: [q0**2 + q0, 2 * p0 * q0 + 2 * p0],
              "a was made under torch.no_grad(), so it is a constant: a * q sends a gradient to q "
              "(the value of a) but none to p, and q does not get a second share through a.",
              "What does autograd know about how a was computed?"),
    ),
)
