"""Count what a graph saves with torch.autograd.graph.saved_tensors_hooks: a pack hook runs once
per tensor saved for backward. sin saves its input, the square its input, exp its output, add
nothing (3 per block); t * t saves t twice and relu its output (3 per step); a checkpointed
block keeps only its input (1)."""



import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

from autograder.harness import call
from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("chain", "checkpointed", "square_relu")
KIND = Table(rows=ROWS, columns=(("saved", Number()),))


def _block(t: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.sin(t) ** 2) + t


def _functions(n: int) -> dict:
    def chain(t):
        for _ in range(n):
            t = _block(t)
        return t

    def checkpointed(t):
        for _ in range(n):
            t = checkpoint(_block, t, use_reentrant=False)
        return t

    def square_relu(t):
        for _ in range(n):
            t = t * t + torch.relu(t)
        return t

    return {"chain": chain, "checkpointed": checkpointed, "square_relu": square_relu}


def _count(fn, x: torch.Tensor) -> int:
    packed = [0]

    def pack(t: torch.Tensor) -> torch.Tensor:
        packed[0] += 1
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return packed[0]


def reference(n: int, x: list) -> dict:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    return {name: {"saved": _count(fn, t)} for name, fn in _functions(n).items()}


def analytic(n: int, x: list) -> dict:
    # per block: sin(t) saves t, (·)² saves sin t, exp saves its result, + saves no tensor;
    # per step: t * t saves both operands (t twice), relu saves its result, + nothing;
    # checkpoint keeps only the tensor it is given
    return {"chain": {"saved": 3 * n}, "checkpointed": {"saved": n}, "square_relu": {"saved": 3 * n}}


SETUP = """from torch.autograd.graph import saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

n = {{n}}
x = torch.tensor({{x}}, dtype=torch.float64, requires_grad=True)

def block(t):
    return torch.exp(torch.sin(t) ** 2) + t

def chain(t):                # n blocks in a row
    for _ in range(n):
        t = block(t)
    return t

def checkpointed(t):         # the same, each block checkpointed
    for _ in range(n):
        t = checkpoint(block, t, use_reentrant=False)
    return t

def square_relu(t):          # n steps of t * t + relu(t)
    for _ in range(n):
        t = t * t + torch.relu(t)
    return t"""

EXERCISE = Exercise(
    title="Count what the graph saves",
    prompt=r"""
Write `count_saved(fn, x)`: run `fn(x)` inside `torch.autograd.graph.saved_tensors_hooks`
with a `pack` hook that counts how many tensors are saved for backward (and returns the tensor
unchanged; `unpack` returns it as it is), and return that count. With autograd.

The grader calls it on the three functions of the setup, with `n = {{n}}` and at other `n`:
`{"chain": {"saved": count_saved(chain, x)}, "checkpointed": {...}, "square_relu": {...}}`.
Before you run it, predict the three counts for $n = {{n}}$: which operations save what?
""",
    setup=SETUP,
    answer="count_saved",
    call=call("saved_table(count_saved, {'chain': chain, 'checkpointed': checkpointed, "
              "'square_relu': square_relu}, x)"),
    placeholder="def count_saved(fn, x):\n    return ...",
    solution="""def count_saved(fn, x):
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return len(packed)""",
    kind=KIND,
    params={"n": 2, "x": [0.5, -1.0, 2.0]},
    hidden=({"n": 5, "x": [1.5, 0.25, -0.75]},),
    draw=lambda rng: {"n": rng.randint(1, 8), "x": [rng.uniform(-2, 2) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("checkpoint_keeps_inputs", table_with(analytic, checkpointed={"saved": 0}),
              "A checkpointed block saves nothing of what runs inside it, but it does keep the "
              "tensor it was given: backward must rerun the block from that input.",
              "What does checkpoint need in order to recompute the block during backward?"),
        Wrong("saved_per_use", table_with(analytic, square_relu=lambda n, x: {"saved": 2 * n}),
              "t * t saves both of its operands for backward, even when they are the same "
              "tensor: the pack hook runs twice for it (the same storage, so no extra memory, "
              "but two saved slots), and relu saves what its own backward needs besides.",
              "d(a·b)/da needs b and d(a·b)/db needs a. What does mul save when a is b?"),
        Wrong("saved_per_use", lambda n, x: {"chain": {"saved": 4 * n}, "checkpointed": {"saved": n},
                                             "square_relu": {"saved": 3 * n}},
              "This counts one saved tensor per operation. Addition saves no tensor: the "
              "gradient of a + b is the incoming gradient itself, for both, so its backward "
              "needs none of the values.",
              "What does the backward of + need to know about its inputs?"),
    ),
)
