"""Write attach_clip(w, c): register a hook that clips w's gradient to [-c, c] on its way into
w.grad, and return the handle. Graded on fresh tensors: the clipped gradient, and the plain
gradient once the handle has been removed."""

import random

from autograder.harness import call, clip_run
from autograder.kinds import Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import central

N = 3
KIND = Table(rows=("with_hook", "after_remove"), columns=(("grad", Tensor(shape=(N,))),))


def reference(w: list, x: list, c: float) -> dict:
    return clip_run(lambda t, c: t.register_hook(lambda g: g.clamp(-c, c)), w, x, c)


def _grad(w: list, x: list) -> list:
    return [2 * a * b * b for a, b in zip(w, x, strict=True)]


def analytic(w: list, x: list, c: float) -> dict:
    g = _grad(w, x)
    return {"with_hook": {"grad": [min(max(v, -c), c) for v in g]}, "after_remove": {"grad": g}}


def finite_diff(w: list, x: list, c: float) -> dict:
    g = [central(lambda t, b=b: (t * b) ** 2, a) for a, b in zip(w, x, strict=True)]
    return {"with_hook": {"grad": [min(max(v, -c), c) for v in g]}, "after_remove": {"grad": g}}


def _by_norm(w: list, x: list, c: float) -> dict:
    g = _grad(w, x)
    norm = sum(v * v for v in g) ** 0.5
    return {"with_hook": {"grad": [v * min(1.0, c / norm) for v in g]}, "after_remove": {"grad": g}}


def draw(rng: random.Random) -> dict:
    c = rng.uniform(0.5, 2)
    # one gradient entry inside [-c, c], two far outside (one of each sign)
    w = [0.1 * c, rng.uniform(1.5, 3), -rng.uniform(1.5, 3)]
    return {"w": w, "x": [1.0, rng.uniform(1, 2), rng.uniform(1, 2)], "c": c}


EXERCISE = Exercise(
    title="Clip a gradient on its way, then remove the hook",
    prompt=r"""
Write a function `attach_clip(w, c)` that registers a hook on the leaf `w` which clips each
entry of the incoming gradient to $[-c, c]$ (so that `w.grad` receives the clipped values),
and **returns the handle** that `register_hook` gives back. This one is with autograd: use
`Tensor.register_hook`.

The grader runs `clip_run(attach_clip, w, x, c)` (imported in the setup): it computes
$L = \sum_i (w_i x_i)^2$ and calls `backward()` with your hook in place, then calls
`handle.remove()` and runs `backward()` again; it reports `w.grad` both times. It does so with
`w = {{w}}`, `x = {{x}}`, `c = {{c}}` and at fresh values.
""",
    setup="""w, x, c = {{w}}, {{x}}, {{c}}
from autograder.harness import clip_run   # what the grader runs""",
    answer="attach_clip",
    call=call("clip_run(attach_clip, w, x, c)"),
    placeholder="def attach_clip(w, c):\n    return ...",
    solution="""def attach_clip(w, c):
    return w.register_hook(lambda grad: grad.clamp(-c, c))   # a new tensor replaces the gradient""",
    kind=KIND,
    params={"w": [0.2, 2.0, -1.5], "x": [1.0, 1.0, 2.0], "c": 1.0},
    hidden=({"w": [0.1, -3.0, 2.5], "x": [2.0, 1.0, 1.5], "c": 2.0},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("hook_return_ignored",
              lambda w, x, c: {"with_hook": {"grad": _grad(w, x)}, "after_remove": {"grad": _grad(w, x)}},
              "The hook ran, but w.grad is not clipped: grad.clamp(-c, c) makes a new tensor, "
              "and a hook changes the gradient only by returning it. A hook that returns None "
              "leaves the gradient as it was.",
              "What does your hook return?"),
        Wrong("clip_value_vs_norm", _by_norm,
              "This scales the whole gradient down to norm c (what clip_grad_norm_ does), which "
              "keeps its direction. Clipping by value clamps each entry to [-c, c] on its own: "
              "small entries stay, large ones are cut to ±c.",
              "Clamp each entry; do not rescale the vector."),
        Wrong("hook_handle_kept",
              lambda w, x, c: {"with_hook": analytic(w, x, c)["with_hook"], "after_remove": analytic(w, x, c)["with_hook"]},
              "The gradient is still clipped after handle.remove(): the hook that was removed is "
              "not the one that ran, so yours stays registered (for example, the function "
              "registered two hooks, or returned something other than that hook's handle, "
              "which nothing can remove). The handle "
              "register_hook returns is the only way to take that hook off again.",
              "Return the very handle that register_hook gave you."),
    ),
)
