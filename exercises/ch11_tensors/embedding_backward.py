"""The embedding lookup's backward by hand: a scatter-add into the rows the tokens name, which
must add up at a repeated token; checked against autograd on fresh batches."""

import random

import torch

from autograder.backprop_harness import LAYOUTS, call, embedding_problem, embedding_report
from autograder.byhand import AUTOGRAD
from autograder.harness import directions
from autograder.kinds import Choice, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._backprop import embedding_grad, layer_autograd

KIND = Table(rows=("E",), columns=(("proj", Tensor(shape=(3,))), ("layout", Choice(options=LAYOUTS))))


def _with(how):
    return lambda seed, n, t, v, d: embedding_report(
        lambda E, X, dout: embedding_grad(E, X, dout, how=how), seed, n, t, v, d)


def reference(seed, n, t, v, d):
    E, X, dout = embedding_problem(seed, n, t, v, d)
    grads = layer_autograd(lambda E_, X_: torch.nn.functional.embedding(X_, E_), [E, X], dout, 1)
    return embedding_report(lambda *_: grads[0], seed, n, t, v, d)


def finite_diff(seed, n, t, v, d, eps=1e-6):
    """⟨dout, E[X]⟩ along each direction r: the lookup is linear, so the difference is exact
    up to rounding."""
    E, X, dout = embedding_problem(seed, n, t, v, d)
    proj = [(((E + eps * r)[X] - (E - eps * r)[X]) * dout).sum() / (2 * eps)
            for r in directions(seed, [tuple(E.shape)])[0]]
    return {"E": {"proj": torch.stack(proj), "layout": "own_shape"}}


def draw(rng: random.Random) -> dict:
    return {"seed": rng.randrange(10**6), "n": rng.randint(2, 6), "t": rng.randint(2, 4),
            "v": rng.randint(4, 12), "d": rng.randint(2, 5)}


EXERCISE = Exercise(
    title="The embedding's backward, by hand",
    points=2,
    prompt=r"""
An embedding table $E$ ($V \times D$: one row of $D$ numbers per token) and a batch of token
ids $X$ ($N \times T$, integers below $V$). The lookup `emb = E[X]` has shape
$N \times T \times D$: $\mathrm{emb}_{n,t} = E_{X_{n,t}}$. As in real text, a token can occur
more than once in the batch, even twice in one row.

Write `embedding_backward(E, X, dout)` returning `dE`, the gradient of $L$ with respect to
$E$ given `dout` $= \partial L / \partial\,\mathrm{emb}$ ($N \times T \times D$), **by hand**:
tensor operations only, no autograd. Ask, for one row $E_v$: which entries of `emb` did it
make, and how do their gradients combine?

The grader runs `embedding_report(embedding_backward, seed, n, t, v, d)` on a fresh batch (here
`seed, n, t, v, d = {{seed}}, {{n}}, {{t}}, {{v}}, {{d}}`; when grading, other seeds **and
other shapes**) and compares `dE` with autograd's through three fixed random projections.
""",
    setup="""seed, n, t, v, d = {{seed}}, {{n}}, {{t}}, {{v}}, {{d}}
from autograder.backprop_harness import embedding_problem, embedding_report   # what the grader runs
E, X, dout = embedding_problem(seed, n, t, v, d)   # one such batch, to try yours on""",
    answer="embedding_backward",
    call=call("embedding_report(embedding_backward, seed, n, t, v, d)"),
    placeholder="def embedding_backward(E, X, dout):\n    return ...  # dE",
    solution="""def embedding_backward(E, X, dout):
    dE = torch.zeros_like(E)
    # every use of row X[n, t] adds its gradient: index_add_ adds at repeated ids too
    dE.index_add_(0, X.reshape(-1), dout.reshape(-1, E.shape[1]))
    return dE""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0, "n": 4, "t": 3, "v": 6, "d": 2},
    hidden=({"seed": 7, "n": 3, "t": 2, "v": 5, "d": 3}, {"seed": 31, "n": 5, "t": 4, "v": 9, "d": 2}),
    draw=draw,
    reference=reference,
    analytic=_with("add"),
    finite_diff=finite_diff,
    wrong=(
        Wrong("repeated_index", _with("assign"),
              "Your dE keeps one gradient per token: writing at an index tensor with repeated "
              "ids (dE[X] = dout, and also dE[X] += dout, which reads all the old rows first and "
              "then writes) stores one of the values for a repeated id and drops the rest. A row "
              "of E used k times in the batch has k gradients to add.",
              "Is there an operation that adds at every index, repeated ones too (look at "
              "index_add_ or index_put_ with accumulate=True), or a loop that adds one token at "
              "a time?"),
        Wrong("repeated_index", _with("rows"),
              "Your loop adds one example at a time, so a token in two examples gets both, but "
              "inside one example it writes dE[X[n]] += dout[n] with an index tensor: a token "
              "that occurs twice in one row keeps only one of its two gradients.",
              "Make the innermost step add a single token's gradient, or use an operation that "
              "adds at repeated indices."),
    ),
)
