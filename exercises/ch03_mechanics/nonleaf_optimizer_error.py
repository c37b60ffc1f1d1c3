"""Content-map M09: an optimizer refuses a non-leaf parameter with ValueError; the exercise asks
what the error protects you from (issue #14): a non-leaf's .grad is never filled, so the
optimizer would hold a parameter that never moves.
"""

import torch

from exercises.ch03_mechanics._protections import KIND, message_of, protection_of, table, wrong
from gradtutor.key.exercise import Exercise


def _snippet(vals: list[float]):
    def run() -> None:
        w = torch.tensor(vals, dtype=torch.float32, requires_grad=True).double()
        torch.optim.SGD([w], lr=0.1)
    return run


def reference(vals: list[float]) -> str | None:
    return protection_of(_snippet(vals))


def analytic(vals: list[float]) -> str:
    # .double() is an operation (ToCopyBackward0): w is a non-leaf, and backward() never fills
    # a non-leaf's .grad, so an optimizer step would find nothing to apply
    return "never_updated"


def message() -> str:
    """What torch raises at the shown values. Built when the prompt is written, not when the unit
    loads: torch's first optimizer imports torch._dynamo, 1.5-2 s the judge has no use for."""
    return message_of(_snippet([0.5, -1.5, 2.0]))

EXERCISE = Exercise(
    title="Handing a non-leaf to an optimizer: what the error protects",
    prompt=r"""
```python
w = torch.tensor({{vals}}, requires_grad=True).double()
opt = torch.optim.SGD([w], lr=0.1)
```

The second line raises `{{message|pretty}}`. What would go wrong if the optimizer accepted
`w`? Pick the answer from the table and bind its key (a string) to `nonleaf_protects`.

""" + table() + "\n",
    setup="vals = {{vals}}",
    answer="nonleaf_protects",
    placeholder='nonleaf_protects = ...  # one key of the table, e.g. "freed_values"',
    solution="""import warnings

w = torch.tensor(vals, requires_grad=True).double()
(w ** 2).sum().backward()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # reading a non-leaf's .grad warns
    never_filled = w.grad is None
nonleaf_protects = "never_updated" if never_filled else None""",
    kind=KIND,
    params={"vals": [0.5, -1.5, 2.0]},
    prompt_fields={"message": message},
    hidden=({"vals": [1.0, 2.0]},),
    draw=lambda rng: {"vals": [rng.uniform(-3, 3) for _ in range(rng.randint(1, 4))]},
    reference=reference,
    analytic=analytic,
    wrong=(
        wrong("no_nudge",
              "w holds floats (float64 after .double()), so it can be nudged and has a "
              "derivative. The trouble is that .double() is an operation: w is its result, a "
              "non-leaf, and backward() never fills a non-leaf's .grad, so an optimizer step "
              "would never move it.",
              "Check w.is_leaf and w.grad after a backward()."),
        wrong("freed_values",
              "No backward() has run yet; the optimizer checks its parameters when it is built. "
              "It refuses w because w is not a leaf: its .grad would stay None forever.",
              "What does w.grad hold after (w ** 2).sum().backward()?"),
        wrong("guessed_seed",
              "That is what backward() on a vector output refuses to do. No backward() runs here: "
              "the optimizer looks at w when it is built, and what it checks is where w came from.",
              'Print w.is_leaf and w.grad_fn: what made w?'),
        wrong("unversioned_save",
              "That protects a tensor saved for backward without a version counter (an inference "
              "tensor). w is an ordinary tensor with a version counter, and nothing is saved or "
              "changed in place here; the refusal is about w itself.",
              'Print w.is_leaf and w.grad_fn: what made w?'),
        wrong("stale_value",
              "That is the error for a saved tensor changed in place before backward. Nothing is "
              "changed in place here, and no backward() runs: the optimizer looks at w when it is "
              "built.",
              'Print w.is_leaf and w.grad_fn: what made w?'),
    ),
)
