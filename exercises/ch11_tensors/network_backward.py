"""Backprop by hand through the whole network (Karpathy's "Becoming a Backprop Ninja",
exercise 1): every intermediate gradient checked against ``retain_grad()``, on fresh batches,
shapes and seeds; a slip at one layer is named by the rows it changes."""

import random

from autograder.backprop_harness import LAYOUTS, NET_ROWS, call
from autograder.byhand import AUTOGRAD
from autograder.kinds import Choice, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._backprop import net_finite_diff, net_retain_grad, net_with

KIND = Table(rows=NET_ROWS, columns=(("proj", Tensor(shape=(3,))), ("layout", Choice(options=LAYOUTS))))


def draw(rng: random.Random) -> dict:
    return {"seed": rng.randrange(10**6), "n": rng.randint(4, 12), "v": rng.randint(5, 10),
            "t": rng.randint(2, 4), "d": rng.randint(2, 4), "h": rng.randint(3, 7), "c": rng.randint(2, 5)}


EXERCISE = Exercise(
    title="The whole network's backward, one tensor at a time",
    points=4,
    prompt=r"""
The network of this part, on a batch of $N$ contexts of $T$ token ids `X` with labels `y`,
and the parameters in the dict `P`:
$$\mathrm{emb} = E[X],\quad h_{\mathrm{pre}} = \mathrm{flat}(\mathrm{emb})\,W_1 + b_1,\quad
h_{\mathrm{bn}} = \gamma\,\frac{h_{\mathrm{pre}} - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta,\quad
h = \tanh(h_{\mathrm{bn}}),\quad \mathrm{logits} = h\,W_2 + b_2,$$
$$L = \frac1N \sum_n \Big(-\mathrm{logits}_{n, y_n} + \log\sum_j e^{\mathrm{logits}_{nj}}\Big),$$
with $\mu$ and $\sigma^2$ the batch mean and the biased batch variance of each column of
$h_{\mathrm{pre}}$, and $\mathrm{flat}$ the reshape of $N \times T \times D$ to
$N \times TD$. `net_forward(X, y, P)` computes it and returns every intermediate in a dict
(`"emb"`, `"hpre"`, `"hbn"`, `"h"`, `"logits"`, `"loss"`).

Write `network_backward(X, y, P)` returning a dict with the gradient of $L$ with respect to
each intermediate, `"logits"`, `"h"`, `"hbn"`, `"hpre"`, `"emb"`, and each parameter, `"W2"`,
`"b2"`, `"gamma"`, `"beta"`, `"W1"`, `"b1"`, `"E"`: **by hand**, one tensor at a time from the
loss down, tensor operations only, no autograd. You may call `net_forward` for the forward
pass, and reuse your functions from the exercises above by copying them into this cell.

The grader runs `net_report(network_backward, seed, n, v, t, d, h, c)` on a fresh batch and
network (here `seed, n, v, t, d, h, c = {{seed}}, {{n}}, {{v}}, {{t}}, {{d}}, {{h}}, {{c}}`;
when grading, other seeds **and other shapes**) and compares each of your twelve gradients with
the `.grad` that `retain_grad()` keeps, through three fixed random projections. A wrong row
tells you where to look: a slip at one layer changes its row and every row below it.
""",
    setup="""seed, n, v, t, d, h, c = {{seed}}, {{n}}, {{v}}, {{t}}, {{d}}, {{h}}, {{c}}
from autograder.backprop_harness import BN_EPS, net_forward, net_problem, net_report   # what the grader runs
X, y, P = net_problem(seed, n, v, t, d, h, c)   # one such batch and network, to try yours on""",
    answer="network_backward",
    call=call("net_report(network_backward, seed, n, v, t, d, h, c)"),
    placeholder="def network_backward(X, y, P):\n    f = net_forward(X, y, P)\n    return ...  # a dict of twelve gradients",
    solution="""def network_backward(X, y, P):
    f = net_forward(X, y, P)
    N = X.shape[0]
    g = {}
    dlogits = torch.softmax(f["logits"], dim=1)
    dlogits[torch.arange(N), y] -= 1          # softmax minus one-hot ...
    g["logits"] = dlogits / N                 # ... over N: the loss is a mean
    g["W2"] = f["h"].T @ g["logits"]
    g["b2"] = g["logits"].sum(0)
    g["h"] = g["logits"] @ P["W2"].T
    g["hbn"] = g["h"] * (1 - f["h"] ** 2)     # tanh' = 1 - tanh^2, from the output h
    hpre = f["hpre"]
    xc = hpre - hpre.mean(0)
    inv = 1 / torch.sqrt((xc ** 2).mean(0) + BN_EPS)
    xhat = xc * inv
    g["gamma"] = (g["hbn"] * xhat).sum(0)
    g["beta"] = g["hbn"].sum(0)
    dxhat = g["hbn"] * P["gamma"]
    # three paths from hpre: directly, through the mean, through the variance
    g["hpre"] = inv * (dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0))
    flat = f["emb"].reshape(N, -1)
    g["W1"] = flat.T @ g["hpre"]
    g["b1"] = g["hpre"].sum(0)
    g["emb"] = (g["hpre"] @ P["W1"].T).reshape(f["emb"].shape)
    E = P["E"]
    g["E"] = torch.zeros_like(E).index_add_(0, X.reshape(-1), g["emb"].reshape(-1, E.shape[1]))
    return g""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0, "n": 8, "v": 7, "t": 3, "d": 2, "h": 5, "c": 4},
    hidden=({"seed": 7, "n": 6, "v": 5, "t": 2, "d": 3, "h": 4, "c": 3},
            {"seed": 31, "n": 11, "v": 9, "t": 4, "d": 2, "h": 6, "c": 2}),
    draw=draw,
    reference=net_retain_grad,
    analytic=net_with(),
    finite_diff=net_finite_diff,
    wrong=(
        Wrong("xent_mean_dropped", net_with(xent={"mean": False}),
              "Every gradient is N times too large, from the logits down: the loss is a mean over "
              "the batch, so ∂L/∂logits carries a 1/N that your backward left out.",
              "L averages over N examples. Where does that 1/N go in ∂L/∂logits?"),
        Wrong("xent_softmax_only", net_with(xent={"onehot": False}),
              "Your ∂L/∂logits is softmax(logits)/N: the −1 at each example's true class is "
              "missing, so every row below it is off too.",
              "Differentiate −logits[n, y_n] with respect to the logits: where is it not zero?"),
        Wrong("softmax_axis", net_with(xent={"dim": 0}),
              "Your softmax normalises each class over the batch (dim=0): the probabilities of "
              "one example, a row of the logits, are what the loss normalises, over the classes.",
              "Which axis of the N × C logits does log Σ_j e^{logits_nj} sum over?"),
        Wrong("matmul_transpose", net_with(linear2={"dW_t": True}),
              "Your dW2 has the shape of W2 transposed: with logits = h W2, ∂L/∂W2 is the product "
              "of hᵀ and ∂L/∂logits, which has W2's shape (H × C).",
              "Write the shapes under each factor: which product of h and ∂L/∂logits is H × C?"),
        Wrong("broadcast_sums", net_with(linear2={"db": "mean"}),
              "Your db2 is N times too small: b2 is added to every row of the batch (broadcast), "
              "so its gradient is the sum of ∂L/∂logits over the rows; the 1/N of the loss is "
              "already inside ∂L/∂logits.",
              "b2 was used N times in the forward pass. How do N uses combine in backward?"),
        Wrong("tanh_derivative_input", net_with(tanh={"from_input": True}),
              "Your ∂L/∂h_bn uses 1 − h_bn² for tanh': the formula 1 − tanh² squares the output "
              "h = tanh(h_bn), not the input. Every row from h_bn down inherits the slip.",
              "tanh'(u) = 1 − tanh(u)². Which of your tensors holds tanh(u)?"),
        Wrong("bn_stats_constant", net_with(bn={"paths": "none"}),
              "Your ∂L/∂h_pre treats the batch mean and variance as constants: dx̂·γ/√(σ²+ε) "
              "alone. Each h_pre[n] moves μ and σ², and through them every row of its column: "
              "two more terms. The rows above h_pre are right.",
              "How many paths lead from h_pre[n] to h_bn? Follow the ones through μ and σ²."),
        Wrong("bn_term_dropped", net_with(bn={"paths": "mean"}),
              "Your ∂L/∂h_pre has the direct term and the one through μ, but not the one through "
              "σ²: each h_pre[n] moves the variance, which scales every x̂ of its column.",
              "Differentiate σ² = mean((h_pre − μ)²) with respect to h_pre[n]."),
        Wrong("bn_bessel", net_with(bn={"ddof": 1}),
              "You normalised with the unbiased variance (N − 1, torch.var's default) in the "
              "backward; the forward pass divides by N, as batch norm does in training.",
              "Which variance does net_forward use: torch.var(x, 0), or a mean of squares?"),
        Wrong("repeated_index", net_with(emb={"how": "assign"}),
              "Your dE keeps one gradient per token: writing at an index tensor with repeated "
              "ids (dE[X] = ..., or dE[X] += ...) stores one of the values for a repeated id and "
              "drops the rest. A row of E used k times has k gradients to add.",
              "Is there an operation that adds at every index, repeated ones too?"),
    ),
)
