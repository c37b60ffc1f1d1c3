"""Content-map M10: integer tensors cannot require gradients (RuntimeError at creation); the
exercise asks what the error protects you from (issue #14): an integer cannot be nudged by an
arbitrarily small step, so it has no derivative.
"""

import torch

from exercises.ch03_mechanics._protections import KIND, message_of, protection_of, table, wrong
from gradtutor.key.exercise import Exercise


def reference(vals: list[int]) -> str | None:
    return protection_of(lambda: torch.tensor(vals, requires_grad=True))


def analytic(vals: list[int]) -> str:
    # Python ints make an int64 tensor; a derivative needs a continuum of values, so autograd
    # accepts only floating-point (and complex) dtypes
    return "no_nudge"


MESSAGE = message_of(lambda: torch.tensor([1, 2, 3], requires_grad=True))

EXERCISE = Exercise(
    title="A parameter made of integers: what the error protects",
    prompt=r"""
```python
w = torch.tensor({{vals}}, requires_grad=True)
```

Note the numbers: no decimal points. The line raises `""" + MESSAGE + r"""`. What would go
wrong if PyTorch let it through? Pick the answer from the table and bind its key (a string) to
`int_protects`.

""" + table() + "\n",
    setup="vals = {{vals}}",
    answer="int_protects",
    placeholder='int_protects = ...  # one key of the table, e.g. "freed_values"',
    solution="""# the smallest step an integer tensor can take is 1: no nudge of size h -> 0 exists
w = torch.tensor(vals)
print(w.dtype, (w + 1e-3).dtype)   # a nudge only exists after leaving the integers
int_protects = "no_nudge" if not w.is_floating_point() else None""",
    kind=KIND,
    params={"vals": [1, 2, 3]},
    hidden=({"vals": [4, -1]},),
    draw=lambda rng: {"vals": [rng.randint(-9, 9) for _ in range(rng.randint(1, 4))]},
    reference=reference,
    analytic=analytic,
    wrong=(
        wrong("never_updated",
              "Close, but the check comes earlier and for a more basic reason: no optimizer is "
              "involved yet. A derivative asks how the output changes under an arbitrarily "
              "small nudge of the input, and an integer tensor cannot be nudged by less than 1. "
              "So only floating-point (and complex) tensors may require gradients.",
              "What is the smallest change you can make to an entry of torch.tensor([1, 2, 3])?"),
        wrong("guessed_seed",
              "No backward() has been called: the error comes when the tensor is created. It is "
              "about the dtype: an integer has no derivative, because it cannot be nudged.",
              "Print torch.tensor(vals).dtype."),
        wrong("freed_values",
              "That is the error for walking a graph a second time. Here no graph exists yet: the "
              "line fails as the tensor is made, because of what its numbers are.",
              'Look at the dtype of torch.tensor([1, 2, 3]). What does a gradient need from a number?'),
        wrong("unversioned_save",
              "That protects saved tensors without a version counter. Nothing is saved here: the "
              "line fails as the tensor is made, because of its dtype.",
              'Look at the dtype of torch.tensor([1, 2, 3]). What does a gradient need from a number?'),
        wrong("stale_value",
              "That is the error for a saved tensor changed in place. Nothing is saved or changed "
              "here: the line fails as the tensor is made, because of its dtype.",
              'Look at the dtype of torch.tensor([1, 2, 3]). What does a gradient need from a number?'),
    ),
)
