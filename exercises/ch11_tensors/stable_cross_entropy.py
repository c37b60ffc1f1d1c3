"""Cross-entropy from logits in the student's own engine, with the log-sum-exp shift: graded on
fresh logits of every size, the huge ones included, against torch's fused cross_entropy."""

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table
from gradtutor.key.exercise import Exercise, Wrong

from ._common import XENT_ROWS, Engine, FiniteDiffEngine, TorchTensor, call, cross_entropy, xent_report
from .tensor_engine import SOLUTION as ENGINE_SOLUTION

FUNCTION = '''def cross_entropy(logits, y):
    n = logits.data.shape[0]
    m = logits.data.max(1, keepdim=True).values   # a constant: it only moves exp's range
    shifted = logits - m                           # every entry <= 0, so exp cannot overflow
    lse = shifted.exp().sum(1, keepdim=True).log()  # log-sum-exp of the shifted row
    log_p = shifted - lse                          # log-softmax, never log(0)
    return -log_p[torch.arange(n), y].mean()'''


def _run(engine, **slips):
    return lambda seed: xent_report(lambda t, y: cross_entropy(t, y, **slips), seed, engine)


EXERCISE = Exercise(
    title="Cross-entropy in your engine, without overflow",
    points=2,
    prompt=r"""
Write `cross_entropy(logits, y)` with **your** `Tensor`'s operations: `logits` is a `Tensor` of
shape $(N, C)$, `y` a tensor of $N$ class labels; return the mean over the batch of
$\ell_n = \log \sum_j e^{z_{nj}} - z_{n y_n}$, as a `Tensor` your engine can differentiate.

Written as it reads, $e^{z}$ overflows to `inf` beyond $z \approx 709$ in float64, and
`log(softmax(z))` becomes $\log 0$ when one probability underflows. Chapter 7's remedy works in
your engine too: subtract each row's largest logit $m_n$ first (a constant, `logits.data`'s
row maximum), $\log\sum_j e^{z_{nj}} = m_n + \log\sum_j e^{z_{nj} - m_n}$; every exponent is
then at most 0.

The grader runs `xent_report(cross_entropy, seed)` with `seed = {{seed}}` (other seeds
when grading), with the `Tensor` your cell sees, on three kinds of logits (`moderate`, of size about 1; `large`, spread over
±1000; `shifted`, about $10^4$ plus small differences) and compares the loss (`value`) and
`logits.grad` after `backward()` (`grads`) with torch's `F.cross_entropy`.
""",
    setup="""seed = {{seed}}
from autograder.tensor_harness import xent_problem, xent_report   # what the grader runs
logits, y = xent_problem(seed, "large")   # one of its problems, to try yours on""",
    answer="cross_entropy",
    call=call("xent_report(cross_entropy, seed)"),
    placeholder="def cross_entropy(logits, y):\n    return ...  # a Tensor: the mean loss",
    solution=ENGINE_SOLUTION.replace(
        "def unbroadcast(grad, shape):",
        "# your Tensor from the engine exercise, repeated so this cell stands alone\n"
        "def unbroadcast(grad, shape):", 1) + "\n\n\n" + FUNCTION,
    refuse=AUTOGRAD,
    kind=Table(rows=XENT_ROWS, columns=(("value", Bool()), ("grads", Bool()))),
    params={"seed": 0},
    hidden=({"seed": 17}, {"seed": 29}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6)},
    reference=_run(TorchTensor),
    analytic=_run(Engine),
    finite_diff=_run(FiniteDiffEngine),
    wrong=(
        Wrong("logsumexp_overflow", _run(Engine, shift=False),
              "Moderate logits pass; large and shifted ones give inf or nan: exp of a logit "
              "above about 709 overflows float64, and inf/inf or inf − inf is nan. Subtracting "
              "the row's largest logit first changes nothing in exact arithmetic and keeps every "
              "exponent at most 0.",
              "What is the largest value exp receives in your code when a logit is 1000? "
              "Subtract something that makes it 0."),
        Wrong("log_softmax_underflow", _run(Engine, via_softmax=True),
              "Only the large logits fail: you take the log of softmax probabilities, and a "
              "class 1000 below the best has probability e^-1000, which is 0 in float64, so its "
              "log is -inf. Keep it in log space: log p = (z − m) − log Σ exp(z − m).",
              "Write log(softmax(z)_y) as one expression of z, without dividing and then taking "
              "the log."),
        Wrong("xent_mean_dropped", _run(Engine, mean=False),
              "Your loss and gradients are N times torch's: the sum over the batch, not its "
              "mean.",
              "Divide by the number of rows (or use your mean())."),
    ),
)
