"""Train a digit classifier on the student's own engine (scikit-learn's 8×8 digits, shipped with
the package): graded on hidden seeds by the loss curve (the gradients) and the test accuracy."""

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import DIGITS_TRAIN, call, digits_report, hand_digits, torch_digits, train_digits
from .stable_cross_entropy import FUNCTION as XENT_FUNCTION
from .tensor_engine import SOLUTION as ENGINE_SOLUTION

STEPS = DIGITS_TRAIN["steps"]

FUNCTION = '''def train(X, y, params, steps, lr):
    X = Tensor(X)
    p = {k: Tensor(v) for k, v in params.items()}
    losses = []
    for _ in range(steps):
        hidden = (X @ p["W1"] + p["b1"]).tanh()    # b1 broadcasts over the batch
        loss = cross_entropy(hidden @ p["W2"] + p["b2"], y)
        losses.append(loss.data.item())
        loss.backward()                           # zeroes the graph's .grad first
        for t in p.values():
            t.data -= lr * t.grad                 # plain tensors: no graph to keep
    return {k: t.data for k, t in p.items()}, losses'''


def _with(train, **slips):
    return lambda seed, h, steps, lr: digits_report(
        lambda X, y, params, steps, lr: train(X, y, params, steps, lr, **slips), seed, h, steps, lr)


EXERCISE = Exercise(
    title="Train on the digits with your engine",
    points=3,
    prompt=r"""
Train a network on scikit-learn's 8×8 handwritten digits with **your** `Tensor` and your
`cross_entropy`: logits $s = \tanh(X W_1 + b_1)\,W_2 + b_2$ (64 pixels in, `h` hidden units, 10
classes), the mean cross-entropy, full-batch gradient descent.

Write `train(X, y, params, steps, lr)`: `X` is a float64 tensor of images (one row of 64
pixels, scaled to [-1, 1], per image), `y` their labels, `params` a dict of tensors `W1` (64 × h),
`b1` (h), `W2` (h × 10), `b2` (10). Wrap each parameter in a `Tensor` once, then `steps` times:
compute the loss, record it as a number, `backward()`, and move each parameter's `.data` by
`lr` times its `.grad`. Return `(params, losses)`: a dict of the trained tensors (`.data`)
and the list of the `steps` losses.

The grader runs `digits_report(train, seed, h, steps, lr)` (here `{{seed}}, {{h}}, {{steps}},
{{lr}}`; other seeds when grading: other train/test splits and starting weights). It compares
your losses with the same training done by torch (the gradients show in them from the second
step on), and checks that your trained network classifies at least 90% of the held-out test
images right (`accuracy_ok`).
""",
    setup="""seed, h, steps, lr = {{seed}}, {{h}}, {{steps}}, {{lr}}
from autograder.tensor_harness import digits_report   # what the grader runs""",
    answer="train",
    call=call("digits_report(train, seed, h, steps, lr)"),
    placeholder="def train(X, y, params, steps, lr):\n    return ...  # (params, losses)",
    solution=ENGINE_SOLUTION.replace(
        "def unbroadcast(grad, shape):",
        "# your Tensor and cross_entropy from the exercises above, repeated so this cell stands alone\n"
        "def unbroadcast(grad, shape):", 1) + "\n\n\n" + XENT_FUNCTION + "\n\n\n" + FUNCTION,
    refuse=AUTOGRAD,
    kind=Table(rows=("train",), columns=(("losses", Tensor(shape=(STEPS,), rtol=1e-6)),
                                         ("accuracy_ok", Bool()))),
    params={"seed": 0, **DIGITS_TRAIN},
    hidden=({"seed": 3, **DIGITS_TRAIN}, {"seed": 4, **DIGITS_TRAIN}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6), **DIGITS_TRAIN},
    reference=_with(torch_digits),
    analytic=_with(hand_digits),
    wrong=(
        Wrong("xent_mean_dropped", _with(train_digits, mean=False),
              "Your first loss is N times torch's (N the number of images) and the steps are N "
              "times too large: the loss is the sum over the batch, not the mean, and the "
              "training diverges.",
              "Does your cross_entropy divide by the batch size?"),
        Wrong("descent_direction", _with(train_digits, sign=-1.0),
              "Your loss rises: each update moves the parameters along the gradient, uphill. "
              "Descent subtracts it.",
              "Which sign does your update have?"),
        Wrong("engine_not_zeroed", _with(train_digits, zero=False),
              "The first two losses are right, then your curve leaves torch's: each step's "
              "gradient is added onto the gradients of the steps before. The parameters are "
              "leaves every step's graph reuses; their .grad must start each backward from zero.",
              "Print one parameter's .grad at two successive steps. Does it start from zero?"),
    ),
)
