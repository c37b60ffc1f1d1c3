"""Fix it: a detach that cuts the wrong path (a TD-style target).

With q = w·s and the target r + γ·w·s', the loss (q - target)² should treat the target as a
constant (detach it): dL/dw = 2(ws - r - γ w s')·s. The snippet detaches the prediction instead,
so the only gradient left flows through the target: 2(ws - r - γ w s')·(-γ s'). With no detach
at all, both paths count: 2(ws - r - γ w s')·(s - γ s').
"""

import torch

from autograder.harness import call
from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(w0: float, s: float, r: float, s_next: float, gamma: float) -> torch.Tensor:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    q = w * s
    target = r + gamma * w * s_next
    ((q - target.detach()) ** 2).backward()
    return w.grad


def _error(w0: float, s: float, r: float, s_next: float, gamma: float) -> float:
    return w0 * s - r - gamma * w0 * s_next


def analytic(w0: float, s: float, r: float, s_next: float, gamma: float) -> float:
    return 2 * _error(w0, s, r, s_next, gamma) * s


def finite_diff(w0: float, s: float, r: float, s_next: float, gamma: float) -> float:
    target = r + gamma * w0 * s_next  # a constant: the target's value at the current w
    return central_diff(lambda w: (w * s - target) ** 2, w0)


def _draw(rng) -> dict:
    p = {"w0": rng.uniform(-2, 2), "s": rng.choice((-1, 1)) * rng.uniform(0.5, 2),
         "r": rng.uniform(-2, 2), "s_next": rng.choice((-1, 1)) * rng.uniform(0.5, 2),
         "gamma": rng.uniform(0.5, 0.99)}
    while abs(_error(**p)) < 0.2:  # away from a zero error, where every variant gives 0
        p["r"] = rng.uniform(-2, 2)
    return p


SETUP = '''w0, s, r, s_next, gamma = {{w0}}, {{s}}, {{r}}, {{s_next}}, {{gamma}}
from autograder.harness import grads_of

def grad_of_w(loss_fn):
    """What the grader runs: your loss at a fresh w, backward(), and w.grad."""
    return grads_of(lambda w: loss_fn(w, s, r, s_next, gamma), w0)'''

EXERCISE = Exercise(
    title="Fix it: a detach on the wrong path",
    prompt=r"""
A value $q(s) = w\,s$ is trained towards a target built from the *next* state,
$r + \gamma\, q(s')$. The target is meant to be a constant: the gradient should move $q(s)$
towards it, not move the target. This loss gets it backwards:

```python
def td_loss(w, s, r, s_next, gamma):
    q = w * s
    target = r + gamma * w * s_next
    return (q.detach() - target) ** 2
```

Repair `td_loss` so that `backward()` gives the gradient with the target held constant. The
grader calls `grad_of_w(td_loss)` (setup cell) at $w = {{w0|pretty}}$, $s = {{s|pretty}}$,
$r = {{r|pretty}}$, $s' = {{s_next|pretty}}$, $\gamma = {{gamma|pretty}}$, and at fresh values.
""",
    setup=SETUP,
    answer="td_loss",
    call=call("grads_of(lambda w: td_loss(w, s, r, s_next, gamma), w0)"),
    placeholder="def td_loss(w, s, r, s_next, gamma):\n    return ...",
    solution="""def td_loss(w, s, r, s_next, gamma):
    q = w * s
    target = r + gamma * w * s_next
    return (q - target.detach()) ** 2   # the target is a constant; q keeps its path to w""",
    kind=Number(),
    params={"w0": 0.5, "s": 2.0, "r": 1.0, "s_next": 1.0, "gamma": 0.9},
    hidden=({"w0": -1.0, "s": 1.5, "r": 0.5, "s_next": -1.0, "gamma": 0.8},
            {"w0": 1.5563, "s": -1.0, "r": -0.5, "s_next": 2.0, "gamma": 0.95}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("target_not_detached",
              lambda w0, s, r, s_next, gamma: 2 * _error(w0, s, r, s_next, gamma) * (-gamma * s_next),
              "This is the snippet as written: the detach sits on the prediction q, so the only "
              "path left from the loss to w runs through the target. The gradient then moves "
              "the target towards q, the opposite of what the loss is for.",
              "detach() cuts the path through the tensor it is called on. Which of the two "
              "should be the constant?"),
        Wrong("target_not_detached",
              lambda w0, s, r, s_next, gamma: 2 * _error(w0, s, r, s_next, gamma) * (s - gamma * s_next),
              "With no detach at all both paths count: q moves towards the target and the "
              "target towards q (the full gradient, s - γ s' instead of s). The target is meant "
              "to be held constant.",
              "Cut the path through the target, and only that one."),
    ),
)
