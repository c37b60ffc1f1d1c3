"""Outline Ch 5 (repeated index, embedding rows): a token that appears k times in a batch
collects k gradients in its row of the embedding table; rows of unused tokens stay zero."""

import random

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

VOCAB, DIM = 4, 2


def _table() -> torch.Tensor:
    # the table's values do not enter the gradient (L is linear in each looked-up row)
    return torch.arange(VOCAB * DIM, dtype=torch.float64).reshape(VOCAB, DIM) / 10


def reference(tokens: list, u: list) -> torch.Tensor:
    emb = torch.nn.Embedding(VOCAB, DIM, dtype=torch.float64)
    with torch.no_grad():
        emb.weight.copy_(_table())
    (emb(torch.tensor(tokens)) @ torch.tensor(u, dtype=torch.float64)).sum().backward()
    return emb.weight.grad


def analytic(tokens: list, u: list) -> list[list[float]]:
    # each occurrence of token r adds u to row r
    return [[tokens.count(r) * uj for uj in u] for r in range(VOCAB)]


def finite_diff(tokens: list, u: list) -> torch.Tensor:
    tu, ids = torch.tensor(u, dtype=torch.float64), torch.tensor(tokens)
    return tensor_gradient(lambda w: (F.embedding(ids, w) @ tu).sum(), _table())


def draw(rng: random.Random) -> dict:
    n = rng.randint(3, 7)
    tokens = [rng.randrange(VOCAB) for _ in range(n - 1)]
    tokens.append(tokens[0])  # at least one repeat
    return {"tokens": tokens, "u": [rng.choice([-1, 1]) * rng.uniform(0.5, 2) for _ in range(DIM)]}


EXERCISE = Exercise(
    title="Embedding rows collect their tokens' gradients",
    prompt=r"""
An embedding table maps each of 4 token ids to a row of 2 numbers. A batch of
tokens looks up its rows, and a made-up loss weights the two columns by `u`:

```python
emb = torch.nn.Embedding(4, 2)
tokens = torch.tensor({{tokens}})
u = torch.tensor({{u}})
L = (emb(tokens) @ u).sum()
L.backward()
```

What is `emb.weight.grad` (shape $4\times 2$)? Compute it from `tokens0` and `u0`.
""",
    setup="tokens0 = {{tokens}}\nu0 = {{u}}",
    answer="emb_grad",
    placeholder="emb_grad = ...  # 4x2, one row per token id",
    solution="""emb = torch.nn.Embedding(4, 2)
L = (emb(torch.tensor(tokens0)) @ torch.tensor(u0)).sum()
L.backward()
emb_grad = emb.weight.grad""",
    kind=Tensor(shape=(VOCAB, DIM)),
    params={"tokens": [1, 3, 1, 1], "u": [1.0, -0.5]},
    hidden=({"tokens": [0, 2, 2, 0, 2], "u": [2.075, 0.5188]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("repeated_index", lambda tokens, u: [[float(r in tokens) * uj for uj in u] for r in range(VOCAB)],
              "Each used row got u once, however often its token appears. Every occurrence of a "
              "token is a separate lookup feeding a separate term of L, and the embedding's "
              "backward adds all of them into the same row.",
              "How many terms of L use row 1 of the table?"),
        Wrong("chain_rule_dropped", lambda tokens, u: [[float(tokens.count(r))] * len(u) for r in range(VOCAB)],
              "The counts are right, but each looked-up row is multiplied by u before it reaches "
              "L, so each occurrence sends back u, not 1.",
              "What is the gradient of (row · u) with respect to the row?"),
    ),
)
