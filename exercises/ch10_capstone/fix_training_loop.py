"""Repair a training loop with seven planted bugs. Graded by running the repaired loop on
hidden data and seeds (autograder.harness.loop_report): the final objective and its gradient,
and one behaviour per bug, so every bug left in is named by the entry it breaks."""

from autograder.kinds import Bool, Number, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import BUGS, LOOP, LOOP_CHECKS, call, hand_loop, loop_report, planted_loop

KIND = Table(rows=("loop",), columns=(("loss", Number()), ("grads", Tensor(shape=(3,))),
                                      *((name, Bool()) for name in LOOP_CHECKS)))

PLANTED = '''def train(X, y, init, steps, lr, accum, lam):
    W1 = init["W1"].double().requires_grad_()
    b1 = init["b1"].requires_grad_().double()
    W2 = init["W2"].double().requires_grad_()
    b2 = init["b2"].double().requires_grad_()
    for p in (W2, b2):
        p.requires_grad_(False)
    params = [W1, b1, W2, b2]
    history = []
    for step in range(steps):
        total = 0.0
        for Xb, yb in zip(X.chunk(accum), y.chunk(accum)):
            loss = F.cross_entropy((Xb @ W1 + b1).relu() @ W2 + b2, yb)
            sq = (W1.data ** 2).sum(0)    # squared norm of each hidden unit's weights
            penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()
            objective = loss + lam * penalty
            objective.backward()
            total = total + objective
        history.append(total)
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= lr * p.grad
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}, history'''

SOLUTION = '''def train(X, y, init, steps, lr, accum, lam):
    W1 = init["W1"].double().requires_grad_()
    b1 = init["b1"].double().requires_grad_()     # cast first: requires_grad_ on the leaf we keep
    W2 = init["W2"].double().requires_grad_()     # the head trains too: no requires_grad_(False)
    b2 = init["b2"].double().requires_grad_()
    params = [W1, b1, W2, b2]
    history = []
    for step in range(steps):
        total = 0.0
        for Xb, yb in zip(X.chunk(accum), y.chunk(accum)):
            loss = F.cross_entropy((Xb @ W1 + b1).relu() @ W2 + b2, yb)
            sq = (W1 ** 2).sum(0)                 # W1, not W1.data: the penalty must reach W1
            safe = torch.where(sq > 0, sq, 1.0)   # sqrt never sees a 0, even where it is not picked
            penalty = torch.where(sq > 0, safe.sqrt(), 0.0).sum()
            objective = (loss + lam * penalty) / accum   # accum micro-batches make one step
            objective.backward()
            total += objective.item()             # a number: no graph kept alive
        history.append(total)
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        for p in params:
            p.grad = None                         # the next step starts from zero
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}, history'''


def _run(train):
    return lambda seed: loop_report(train, seed)


BUG_TEXT = {
    "zero_grad": ("accumulation",
                  "zero_grad is False: two steps of your loop are not one step done twice. Nothing "
                  "clears .grad after the update, so each step's gradient is added onto all the "
                  "earlier ones and the steps grow.",
                  "After the update, what should every parameter's .grad be before the next backward?"),
    "frozen_layer": ("frozen_param",
                     "frozen_layer is False: W2 and b2 never move. requires_grad_(False) freezes them "
                     "(left over from fine-tuning a pretrained head), so they get no .grad and the "
                     "update skips them; here the whole network should train.",
                     "Which parameters have requires_grad False, and should they?"),
    "non_leaf": ("accidental_nonleaf",
                 "non_leaf is False: b1 never moves. init['b1'].requires_grad_().double() casts after "
                 "requires_grad_, so b1 is the output of a cast, not a leaf: backward fills the "
                 "float32 tensor behind it, and b1.grad stays None.",
                 "Print b1.is_leaf. Which order of .double() and .requires_grad_() makes a leaf?"),
    "where_nan": ("where_nan",
                  "where_nan is False: from a start with a pruned unit (a zero column of W1) the "
                  "parameters become NaN. torch.where differentiates both branches, and sqrt at 0 "
                  "has an infinite slope: 0 · inf = NaN in the branch it does not pick.",
                  "Keep sqrt from ever seeing a 0, even in the branch torch.where throws away."),
    "accumulation": ("accumulation_not_averaged",
                     "accumulation is False: one step over 4 micro-batches is not the step over the "
                     "whole batch. Each micro-batch's mean loss is backpropagated in full, so the "
                     "summed gradient is 4 times the batch's.",
                     "The step should be the same whatever accum is. What must each micro-batch's "
                     "objective be divided by?"),
    "logged_graph": ("logging_keeps_graph",
                     "logged_graph is False: history holds tensors that require grad. total = total + "
                     "objective keeps every micro-batch's graph alive until the history is dropped "
                     "(memory grows with every step). The results are right; the memory is not.",
                     "Log a number, not the tensor: which method turns a one-element tensor into a float?"),
    "data_in_penalty": ("data_silent",
                        "data_in_penalty is False: the penalty changes nothing. W1.data leaves the "
                        "graph, so the penalty is a constant to autograd and never pushes a column "
                        "towards zero (which also hid the torch.where NaN).",
                        "Keep W1 itself in the penalty: what does .data do to the graph?"),
}

EXERCISE = Exercise(
    title="Fix the training loop (fix-it)",
    points=4,
    prompt=r"""
This loop should train the two-moons MLP with full-batch gradient descent on
$$J = \text{mean cross-entropy} + \lambda \sum_j \lVert W_1[:, j] \rVert,$$
one step per pass over the data, split into `accum` equal micro-batches (gradient
accumulation: the step must be the same whatever `accum` is). `init` holds float32 tensors;
every parameter trains, in float64. It returns the final parameters and `history`, the
objective logged once per step. It has **seven** bugs:

```python
"""
    + PLANTED + r"""
```

Write the repaired `train` (same signature and return). The grader runs
`loop_report(train, seed)` (here `seed = {{seed}}`; other seeds and data when grading): the
objective $J$ and its gradient at the parameters your loop returns after """ + f"{LOOP['steps']}"
    + r""" steps, and one check for each behaviour a right loop must have. Finding the bugs is
the exercise: after your first attempt, the feedback names each check your loop still fails
and what it saw, so you can fix them one at a time.
""",
    setup="""seed = {{seed}}
import torch.nn.functional as F
from autograder.harness import loop_report   # what the grader runs""",
    answer="train",
    call=call("loop_report(train, seed)"),
    placeholder="train = ...  # replace with your repaired def train(X, y, init, steps, lr, accum, lam)",
    solution=SOLUTION,
    kind=KIND,
    params={"seed": 0},
    hidden=({"seed": 17}, {"seed": 29}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6)},
    reference=_run(planted_loop(())),
    analytic=_run(hand_loop),
    wrong=(
        Wrong("loop_several_bugs", _run(planted_loop(BUGS)),
              "This is the loop as it was given: six of its checks fail (the seventh, where_nan, "
              "is hidden by the .data bug, which keeps the penalty out of the graph).",
              "Start with the check the feedback lists first; each one names a bug."),
        *(Wrong(BUG_TEXT[b][0], _run(planted_loop([b])), BUG_TEXT[b][1], BUG_TEXT[b][2]) for b in BUGS),
    ),
)
