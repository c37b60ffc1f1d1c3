"""A tensor made under inference_mode cannot be saved for backward; the exercise asks what the
error protects you from (issue #14). Inference tensors do not track a version counter
(t._version raises), so autograd could not tell whether a saved one was changed in place before
backward reads it. A tensor made under no_grad has a version counter and is accepted.
"""

import torch

from exercises.ch03_mechanics._protections import KIND, message_of, protection_of, table, wrong
from gradtutor.key.exercise import Exercise


def _snippet(w0: float, t0: float):
    def run() -> None:
        w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
        with torch.inference_mode():
            t = torch.tensor(t0, dtype=torch.float64) * 2
        (w * t).backward()
    return run


def reference(w0: float, t0: float) -> str | None:
    return protection_of(_snippet(w0, t0))


def analytic(w0: float, t0: float) -> str:
    # w * t saves t for w's gradient; an inference tensor has no version counter, so the usual
    # check that a saved tensor was not modified in place cannot be made
    return "unversioned_save"


MESSAGE = message_of(_snippet(2.0, 3.0))

EXERCISE = Exercise(
    title="An inference tensor in a tracked product: what the error protects",
    prompt=r"""
```python
w = torch.tensor({{w0}}, requires_grad=True)
with torch.inference_mode():
    t = torch.tensor({{t0}}) * 2
y = w * t
y.backward()
```

This raises `""" + MESSAGE + r"""`. (With `torch.no_grad()` in place of
`torch.inference_mode()` it runs, and `w.grad` is `2 * t0`.) What would go wrong if autograd
saved `t` anyway? Pick the answer from the table and bind its key (a string) to
`inference_protects`.

""" + table() + "\n",
    setup="w0, t0 = {{w0}}, {{t0}}",
    answer="inference_protects",
    placeholder='inference_protects = ...  # one key of the table, e.g. "freed_values"',
    solution="""with torch.inference_mode():
    t = torch.tensor(t0) * 2
try:
    t._version                       # autograd's in-place check reads this counter
    tracked = True
except RuntimeError:                 # "Inference tensors do not track version counter"
    tracked = False
inference_protects = "unversioned_save" if not tracked else None""",
    kind=KIND,
    params={"w0": 2.0, "t0": 3.0},
    hidden=({"w0": -1.0, "t0": 0.5},),
    draw=lambda rng: {"w0": rng.uniform(-3, 3), "t0": rng.uniform(-3, 3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        wrong("stale_value",
              "Nothing has been changed in place here, so no saved value is stale yet. The "
              "refusal is about the possibility: an inference tensor has no version counter "
              "(t._version raises), so autograd could never check that t is unchanged when "
              "backward reads it. It refuses to save it at all.",
              "Print t._version for a tensor made under no_grad and one made under "
              "inference_mode."),
        wrong("never_updated",
              "w is a leaf that requires grad, and its .grad would be filled; with no_grad in "
              "place of inference_mode the same code runs. The problem is t: w * t must save it "
              "for w's gradient, and an inference tensor cannot be tracked for in-place changes.",
              "Which tensor does MulBackward0 save to compute w's gradient?"),
        wrong("guessed_seed",
              "y = w * t is a single number, so backward() needs no seed. The refusal comes from t,"
              " the tensor made under inference_mode and saved by the product.",
              "What does inference_mode leave out of the tensors it makes, and what does a saved "
              "tensor need?"),
        wrong("freed_values",
              "This is the first and only walk of the graph, so nothing was freed. The refusal "
              "comes from t, made under inference_mode and saved by the product.",
              "What does inference_mode leave out of the tensors it makes, and what does a saved "
              "tensor need?"),
        wrong("no_nudge",
              "t holds a float, and w is a float that requires grad: both have derivatives. The "
              "refusal comes from how t was made, under inference_mode.",
              "What does inference_mode leave out of the tensors it makes, and what does a saved "
              "tensor need?"),
    ),
)
