"""gradcheck needs float64, and fails at kinks for legitimate reasons (content-map M32).

sin in float32 fails (a step of 1e-6 is a few float32 ulps); sin in float64 passes; relu at 0
fails although autograd is right (the central difference sees the average slope 0.5, autograd
uses relu'(0) = 0); abs at 0 passes (the central difference (|h| - |-h|)/2h is 0, like autograd).
"""

import warnings
from collections.abc import Callable

import torch
from torch.autograd import gradcheck

from autograder.kinds import Bool, Table
from gradtutor.key.exercise import Exercise, Wrong

ROWS = ("sin_float32", "sin_float64", "relu_with_0", "abs_with_0")
KIND = Table(rows=ROWS, columns=(("passes", Bool()),))
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3  # gradcheck's defaults


def _cases(x: list[float]) -> dict[str, tuple[Callable, torch.Tensor]]:
    kinked = [0.0, *x]
    return {"sin_float32": (torch.sin, torch.tensor(x, dtype=torch.float32)),
            "sin_float64": (torch.sin, torch.tensor(x, dtype=torch.float64)),
            "relu_with_0": (torch.relu, torch.tensor(kinked, dtype=torch.float64)),
            "abs_with_0": (torch.abs, torch.tensor(kinked, dtype=torch.float64))}


def reference(x: list[float]) -> dict:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gradcheck warns about float32 inputs, rightly
        for name, (fn, t) in _cases(x).items():
            out[name] = {"passes": gradcheck(fn, (t.requires_grad_(),), eps=EPS, atol=ATOL,
                                             rtol=RTOL, raise_exception=False)}
    return out


# derivatives as autograd defines them, written out by hand (relu'(0) = 0, abs'(0) = 0)
_DERIVATIVE = {torch.sin: torch.cos, torch.relu: lambda t: (t > 0).to(t.dtype), torch.abs: torch.sign}


def analytic(x: list[float]) -> dict:
    # gradcheck's comparison redone without autograd: central differences in the input's own
    # dtype against the hand-written derivative, with gradcheck's tolerances
    out = {}
    for name, (fn, t) in _cases(x).items():
        numeric = (fn(t + EPS) - fn(t - EPS)) / (2 * EPS)
        exact = _DERIVATIVE[fn](t)
        ok = torch.all((exact.double() - numeric.double()).abs() <= ATOL + RTOL * numeric.double().abs())
        out[name] = {"passes": bool(ok)}
    return out


def _flip(*names: str) -> Callable[..., dict]:
    def table(x: list[float]) -> dict:
        t = analytic(x)
        for n in names:
            t[n] = {"passes": not t[n]["passes"]}
        return t
    return table


EXERCISE = Exercise(
    title="When does gradcheck pass?",
    prompt=r"""
`torch.autograd.gradcheck(fn, (t,))` compares autograd's derivative of `fn` at `t` with a
central difference (step `eps=1e-6`, tolerances `atol=1e-5`, `rtol=1e-3`) and returns `True`
if they agree. With `x = {{x}}`, predict its verdict in four cases:

| row | function | input |
|---|---|---|
| `sin_float32` | `torch.sin` | `x` in float32 |
| `sin_float64` | `torch.sin` | `x` in float64 |
| `relu_with_0` | `torch.relu` | `[0.0] + x` in float64 |
| `abs_with_0` | `torch.abs` | `[0.0] + x` in float64 |

Fill in `verdicts`, e.g. `{"sin_float32": {"passes": True}, ...}`. You may run gradcheck
(`raise_exception=False` makes it return `False` instead of raising), but predict first.
""",
    setup="x = {{x}}",
    answer="verdicts",
    placeholder='verdicts = ...  # {"sin_float32": {"passes": ...}, "sin_float64": ..., ...}',
    solution="""from torch.autograd import gradcheck

cases = {
    "sin_float32": (torch.sin, torch.tensor(x, dtype=torch.float32)),
    "sin_float64": (torch.sin, torch.tensor(x, dtype=torch.float64)),
    "relu_with_0": (torch.relu, torch.tensor([0.0] + x, dtype=torch.float64)),
    "abs_with_0": (torch.abs, torch.tensor([0.0] + x, dtype=torch.float64)),
}
verdicts = {name: {"passes": gradcheck(fn, (t.requires_grad_(),), raise_exception=False)}
            for name, (fn, t) in cases.items()}""",
    kind=KIND,
    params={"x": [0.5, 1.2, -0.7, 2.0]},
    hidden=({"x": [-2.5, 0.3, 1.7, -0.9]},),
    draw=lambda rng: {"x": [rng.choice([-1, 1]) * rng.uniform(0.2, 3) for _ in range(4)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("gradcheck_precision", _flip("sin_float32"),
              "In float32 a step of 1e-6 is only a few units in the last place of x, and f(x ± h) "
              "keeps about 7 significant digits, so the difference quotient is mostly rounding "
              "noise: it misses cos(x) by far more than rtol=1e-3. gradcheck's defaults are "
              "designed for float64 inputs (and it warns when you pass float32).",
              "Estimate the rounding error of (f(x + h) - f(x - h)) / 2h when f carries 7 digits."),
        Wrong("finite_diff_at_kink", _flip("relu_with_0"),
              "At 0 the central difference (relu(h) - relu(-h)) / 2h = h / 2h = 0.5 straddles the "
              "kink and averages the two slopes, while autograd reports relu'(0) = 0 by "
              "convention. The check fails although autograd is right: a kink is not a bug.",
              "Compute (relu(h) - relu(-h)) / 2h by hand and compare it with relu'(0) in PyTorch."),
        Wrong("finite_diff_at_kink", _flip("abs_with_0"),
              "abs has a kink at 0 too, but its central difference (|h| - |-h|) / 2h is exactly 0, "
              "and autograd's abs'(0) is also 0, so gradcheck passes. Whether a kink fails depends "
              "on the average of its two slopes.",
              "Compute (|h| - |-h|) / 2h by hand."),
    ),
)
