"""backward() on a vector output without a seed raises (content map M01); the exercise asks
what the error protects you from (issue #14): a vector output has no single gradient, and
PyTorch will not guess the weights of its entries.
"""

import torch

from exercises.ch03_mechanics._protections import KIND, message_of, protection_of, table, wrong
from gradtutor.key.exercise import Exercise


def _snippet(x0: list[float]):
    def run() -> None:
        x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (x**2).backward()
    return run


def reference(x0: list[float]) -> str | None:
    return protection_of(_snippet(x0))


def analytic(x0: list[float]) -> str:
    # backward() seeds with dy/dy = 1 only when y holds one element; for len(x0) elements any
    # seed v gives a different vᵀJ, and none is the gradient
    return "guessed_seed"


MESSAGE = message_of(_snippet([1.0, 2.0, 3.0]))

EXERCISE = Exercise(
    title="A vector output with no seed: what the error protects",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2
y.backward()
```

The last line raises `""" + MESSAGE + r"""`. What would go wrong if PyTorch ran it anyway?
Pick the answer from the table and bind its key (a string) to `nonscalar_protects`.

""" + table() + "\n",
    setup="x0 = {{x0}}",
    answer="nonscalar_protects",
    placeholder='nonscalar_protects = ...  # one key of the table, e.g. "freed_values"',
    solution="""# vᵀJ depends on the seed v: two seeds, two different "gradients"
x = torch.tensor(x0, requires_grad=True)
(x ** 2).backward(torch.ones(len(x0)))
with_ones = x.grad.clone()
x.grad = None
(x ** 2).backward(torch.arange(1.0, len(x0) + 1))
nonscalar_protects = "guessed_seed" if not torch.equal(with_ones, x.grad) else None""",
    kind=KIND,
    params={"x0": [1.0, 2.0, 3.0]},
    hidden=({"x0": [0.5, -1.0, 2.5]},),
    draw=lambda rng: {"x0": [rng.uniform(0.5, 3) * rng.choice((-1, 1)) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        wrong("freed_values",
              "Nothing has been freed: this is the first backward() on this graph. The complaint "
              "is about where to start: y holds several numbers, and backward() has no seed.",
              "How many elements does y hold, and what would backward() start from?"),
        wrong("stale_value",
              "Nothing was changed in place here. The problem comes before any saved value is "
              "read: a vector output has no single gradient until you say how much each entry "
              "matters (the seed).",
              "Try y.backward(v) with two different seeds v. Do you get the same x.grad?"),
        wrong("never_updated",
              "x is a leaf that requires grad, so its .grad would be filled. The error is about "
              "the start of the backward pass, not about x.",
              "What does backward() need at y that a one-element output has for free?"),
        wrong("no_nudge",
              "x holds floats, so it can be nudged and has a derivative. The trouble is y: it holds"
              " three numbers, and backward() needs to know how to weigh them.",
              'How many numbers does y hold, and what would backward() start from?'),
        wrong("unversioned_save",
              "That protects saved tensors without a version counter. x and y are ordinary tensors;"
              " the refusal comes from the shape of the tensor backward() is called on.",
              'How many numbers does y hold, and what would backward() start from?'),
    ),
)
