"""register_hook on a leaf sees each incoming gradient; register_post_accumulate_grad_hook
runs after it is added into .grad and sees the parameter, whose .grad holds the running sum."""

import random

import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

KIND = Table(rows=("register_hook", "post_accumulate"),
             columns=(("first", Number()), ("second", Number())))


def reference(w0: float, a: float, b: float) -> dict:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    pre, post = [], []
    w.register_hook(lambda grad: pre.append(grad.item()))
    w.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.item()))
    (a * w).backward()
    (b * w * w).backward()
    return {"register_hook": {"first": pre[0], "second": pre[1]},
            "post_accumulate": {"first": post[0], "second": post[1]}}


def analytic(w0: float, a: float, b: float) -> dict:
    g1, g2 = a, 2 * b * w0
    return {"register_hook": {"first": g1, "second": g2},
            "post_accumulate": {"first": g1, "second": g1 + g2}}


def finite_diff(w0: float, a: float, b: float) -> dict:
    g1, g2 = central(lambda w: a * w, w0), central(lambda w: b * w * w, w0)
    return {"register_hook": {"first": g1, "second": g2},
            "post_accumulate": {"first": g1, "second": g1 + g2}}


def draw(rng: random.Random) -> dict:
    return {"w0": rng.uniform(0.5, 2), "a": rng.uniform(1, 4), "b": rng.uniform(0.5, 3)}


EXERCISE = Exercise(
    title="Before and after accumulation",
    prompt=r"""

```python
w = torch.tensor({{w0}}, requires_grad=True)
pre, post = [], []
w.register_hook(lambda grad: pre.append(grad.item()))
w.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.item()))
({{a}} * w).backward()
({{b}} * w * w).backward()     # no zero_grad in between
```

Fill in `hook_calls`: what each hook recorded in its first and second call,
`{"register_hook": {"first": pre[0], "second": pre[1]}, "post_accumulate": {"first": post[0], "second": post[1]}}`.
""",
    setup="w0, a, b = {{w0}}, {{a}}, {{b}}",
    answer="hook_calls",
    placeholder='hook_calls = ...  # {"register_hook": {"first": ..., "second": ...}, "post_accumulate": {...}}',
    solution="""g1 = a            # d(a·w)/dw
g2 = 2 * b * w0   # d(b·w²)/dw
hook_calls = {"register_hook": {"first": g1, "second": g2},
              "post_accumulate": {"first": g1, "second": g1 + g2}}""",
    by_hand=True,
    kind=KIND,
    params={"w0": 1.5, "a": 3.0, "b": 2.0},
    hidden=({"w0": 0.5188, "a": 2.0, "b": 3.0},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("post_accumulate_hook",
              table_with(analytic, post_accumulate=lambda w0, a, b: {"second": 2 * b * w0}),
              "The post-accumulate hook runs after the new gradient has been added into "
              "w.grad, and it reads p.grad: with no zero_grad between the two backward calls, "
              "that is the sum of both gradients, not the second one alone.",
              "What is in w.grad after the second backward, and when does this hook read it?"),
        Wrong("post_accumulate_hook",
              table_with(analytic, register_hook=lambda w0, a, b: {"second": a + 2 * b * w0}),
              "register_hook on a leaf runs before accumulation and receives only the gradient "
              "arriving from this backward pass; it never sees what is already in w.grad.",
              "Does a tensor hook receive the incoming gradient or the stored .grad?"),
        Wrong("power_rule",
              table_with(analytic, register_hook=lambda w0, a, b: {"second": b * w0},
                         post_accumulate=lambda w0, a, b: {"second": a + b * w0}),
              "The hooks' timing is right, but the second gradient, of b·w², was taken as b·w: "
              "the factor the power rule brings down went missing, in both rows.",
              "Expand b·(w + h)² and keep the part proportional to h."),
    ),
)
