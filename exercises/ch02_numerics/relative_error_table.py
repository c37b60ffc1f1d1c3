"""CS231n's relative error |a - n| / max(|a|, |n|) and its verdict bands (content-map Ch 1 item 1.4).

The shown values make the point: an absolute error of 0.3 on a gradient of 250 is fine-ish, an
absolute error of 3e-6 on a gradient of 1e-5 is a bug.
"""

import random
from collections.abc import Callable

import torch

from autograder.exercise import Exercise, Wrong
from autograder.kinds import Choice, Number, Table

ROWS = ("w", "b", "v")
VERDICTS = ("pass", "suspicious", "fail")
KIND = Table(rows=ROWS, columns=(("rel_error", Number(rtol=1e-3, atol=1e-15)),
                                 ("verdict", Choice(options=VERDICTS))))


def verdict(r: float) -> str:
    return "pass" if r < 1e-7 else "suspicious" if r <= 1e-2 else "fail"


def _table(errors: list[float]) -> dict:
    return {name: {"rel_error": e, "verdict": verdict(e)} for name, e in zip(ROWS, errors, strict=True)}


def reference(autograd: list[float], numeric: list[float]) -> dict:
    a = torch.tensor(autograd, dtype=torch.float64)
    n = torch.tensor(numeric, dtype=torch.float64)
    return _table(((a - n).abs() / torch.maximum(a.abs(), n.abs())).tolist())


def _errors(formula: Callable[[float, float], float]) -> Callable[..., dict]:
    def table(autograd: list[float], numeric: list[float]) -> dict:
        return _table([formula(a, n) for a, n in zip(autograd, numeric, strict=True)])
    return table


analytic = _errors(lambda a, n: abs(a - n) / max(abs(a), abs(n)))


def draw(rng: random.Random) -> dict:
    bands = {"pass": (-12, -8.5), "suspicious": (-6, -3), "fail": (-1.3, -0.3)}
    autograd, numeric = [], []
    for band in rng.sample(VERDICTS, 3):  # one row per band, in random order
        a = rng.choice([-1, 1]) * 10 ** rng.uniform(-6, 3)
        r = 10 ** rng.uniform(*bands[band])
        autograd.append(a)
        numeric.append(a + abs(a) * r)  # numeric > autograd, so a signed error is negative
    return {"autograd": autograd, "numeric": numeric}


EXERCISE = Exercise(
    id="relative_error_table",
    chapter=2,
    title="Relative error, and what it tells you",
    prompt=r"""
A gradient check compared autograd's gradient with a central-difference estimate for three
parameters `w`, `b`, `v`:

* autograd: `grad_autograd = {{autograd}}`
* numeric: `grad_numeric = {{numeric}}`

For each parameter compute the **relative error**

$$r = \frac{|a - n|}{\max(|a|, |n|)}$$

and give a verdict: `"pass"` if $r < 10^{-7}$, `"suspicious"` if $10^{-7} \le r \le 10^{-2}$,
`"fail"` if $r > 10^{-2}$. Fill in the table `checks`.
""",
    setup="grad_autograd = {{autograd}}\ngrad_numeric = {{numeric}}",
    answer="checks",
    placeholder='checks = ...  # {"w": {"rel_error": ..., "verdict": ...}, "b": {...}, "v": {...}}',
    solution="""def rel_error(a, n):
    return abs(a - n) / max(abs(a), abs(n))

def verdict(r):
    return "pass" if r < 1e-7 else "suspicious" if r <= 1e-2 else "fail"

checks = {}
for name, a, n in zip(["w", "b", "v"], grad_autograd, grad_numeric):
    r = rel_error(a, n)
    checks[name] = {"rel_error": r, "verdict": verdict(r)}""",
    kind=KIND,
    params={"autograd": [250.0, 1.0e-5, -3.2], "numeric": [250.3, 1.3e-5, -3.20000001]},
    hidden=({"autograd": [-0.004, 81.0, 7.5e-4], "numeric": [-0.0041, 81.0000000003, 7.52e-4]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("absolute_error", _errors(lambda a, n: abs(a - n)),
              "These are absolute errors |a - n|. Whether a difference is large depends on the "
              "size of the gradient: 0.3 out of 250 is a 0.1% disagreement, while 3e-6 out of "
              "1e-5 is 30%. Dividing by the larger magnitude makes the errors comparable.",
              "Divide each difference by the larger of |a| and |n|."),
        Wrong("signed_error", _errors(lambda a, n: (a - n) / max(abs(a), abs(n))),
              "Without the absolute value, a difference can be negative, and a negative number "
              "is below every threshold: such a gradient check passes whatever the gradients are.",
              "An error measures a distance. Can a distance be negative?"),
    ),
)
