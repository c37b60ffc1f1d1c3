"""A logging loop that adds each loss to a running total: total += loss keeps every iteration's
graph alive (reachable from total), loss.item() and loss.detach() keep none."""


import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("loss", "item", "detach")
KIND = Table(rows=ROWS, columns=(("graphs", Number()),))


def graphs_reachable(total) -> int:
    """How many iterations' graphs hang off ``total``: each one has exactly one PowBackward0."""
    fn = getattr(total, "grad_fn", None)
    seen, stack, count = set(), [fn], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += type(node).__name__ == "PowBackward0"
        stack.extend(nxt for nxt, _ in node.next_functions)
    return count


def _loop(n: int, w0: float, how: str) -> int:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    total = 0.0 if how == "item" else torch.zeros((), dtype=torch.float64)
    for i in range(n):
        loss = (w * i - 1.0) ** 2
        if how == "loss":
            total += loss
        elif how == "item":
            total += loss.item()
        else:
            total += loss.detach()
    return graphs_reachable(total)


def reference(n: int, w0: float) -> dict:
    return {how: {"graphs": _loop(n, w0, how)} for how in ROWS}


def analytic(n: int, w0: float) -> dict:
    return {"loss": {"graphs": n}, "item": {"graphs": 0}, "detach": {"graphs": 0}}


EXERCISE = Exercise(
    title="Why memory grows: a running total of losses",
    prompt=r"""
A loop logs the running loss of {{n}} iterations, in three ways (`w` requires grad;
no `backward()` runs, as in an evaluation or logging loop):

```python
total = torch.zeros(())    # or 0.0 for the .item() version
for i in range({{n}}):
    loss = (w * i - 1.0) ** 2
    total += loss            # row "loss"
    # total += loss.item()   # row "item"
    # total += loss.detach() # row "detach"
```

Each iteration's loss has its own small graph (its `PowBackward0`, `MulBackward0` ... and the
tensors they saved). Fill in `kept_alive = {"loss": {"graphs": ...}, "item": {...}, "detach": {...}}`:
for each version, how many iterations' graphs are still reachable from `total` after the loop
(and so cannot be freed)?
""",
    setup="n = {{n}}",
    answer="kept_alive",
    placeholder='kept_alive = ...  # {"loss": {"graphs": ...}, "item": {"graphs": ...}, "detach": {"graphs": ...}}',
    solution="""kept_alive = {"loss": {"graphs": n},     # total's grad_fn chains every AddBackward0 to each loss graph
              "item": {"graphs": 0},     # a Python float holds no graph
              "detach": {"graphs": 0}}   # a detached tensor has no grad_fn""",
    by_hand=True,
    kind=KIND,
    params={"n": 5, "w0": 1.0},
    hidden=({"n": 12, "w0": -0.5},),
    draw=lambda rng: {"n": rng.randint(2, 20), "w0": rng.uniform(-2, 2)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("logging_keeps_graph", table_with(analytic, loss=lambda n, w0: {"graphs": 1}),
              "Rebinding loss does not free the previous iteration's graph: total += loss "
              "makes total the output of an AddBackward0 whose inputs are the old total and "
              "this loss, so total's graph links back to every loss ever added. Memory grows "
              "with each iteration until total itself is freed.",
              "Follow total.grad_fn.next_functions: what does each AddBackward0 point to?"),
        Wrong("detach_cuts_path", table_with(analytic, detach=lambda n, w0: {"graphs": n}),
              "loss.detach() returns a tensor with the same values and no grad_fn, so adding it "
              "records nothing: total never requires grad and holds no graph. detach() shares "
              "the storage, not the history.",
              "What is loss.detach().grad_fn?"),
    ),
)
