"""CS231n's relative error |a - n| / max(|a|, |n|) and its four verdict bands (content-map Ch 1
item 1.4), as the CS231n notes (cs231n.github.io/neural-networks-3/#gradcheck) give them:
r > 1e-2 "usually means the gradient is probably wrong"; 1e-2 > r > 1e-4 "should make you feel
uncomfortable"; 1e-4 > r "is usually okay for objectives with kinks" (too high without kinks);
1e-7 and less "you should be happy". The notes leave the boundaries themselves open; the
exercise puts each boundary value in the more worrying band and no variant lands on one.

The shown values make the point: an absolute error of 0.3 on a gradient of 250 is uncomfortable,
an absolute error of 3e-6 on a gradient of 1e-5 is a bug.
"""

import random
from collections.abc import Callable

import torch

from autograder.kinds import Choice, Number, Table
from gradtutor.key.exercise import Exercise, Wrong

ROWS = ("w", "b", "v", "u")
VERDICTS = ("happy", "kinks_only", "uncomfortable", "wrong")
KIND = Table(rows=ROWS, columns=(("rel_error", Number(rtol=1e-3, atol=1e-15)),
                                 ("verdict", Choice(options=VERDICTS))))


def verdict(r: float) -> str:
    if r < 1e-7:
        return "happy"
    if r < 1e-4:
        return "kinks_only"
    return "uncomfortable" if r <= 1e-2 else "wrong"


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
    bands = {"happy": (-12, -8), "kinks_only": (-6.7, -4.3), "uncomfortable": (-3.7, -2.3),
             "wrong": (-1.3, -0.3)}
    autograd, numeric = [], []
    for band in rng.sample(VERDICTS, 4):  # one row per band, in random order
        a = rng.choice([-1, 1]) * 10 ** rng.uniform(-6, 3)
        r = 10 ** rng.uniform(*bands[band])
        autograd.append(a)
        numeric.append(a + abs(a) * r)  # numeric > autograd, so a signed error is negative
    return {"autograd": autograd, "numeric": numeric}


EXERCISE = Exercise(
    title="Relative error, and what it tells you",
    prompt=r"""
A gradient check compared autograd's gradient with a central-difference estimate for four
parameters `w`, `b`, `v`, `u`:

* autograd: `grad_autograd = {{autograd}}`
* numeric: `grad_numeric = {{numeric}}`

For each parameter compute the **relative error**

$$r = \frac{|a - n|}{\max(|a|, |n|)}$$

and give CS231n's verdict: `"happy"` if $r < 10^{-7}$; `"kinks_only"` if
$10^{-7} \le r < 10^{-4}$ (fine for a function with kinks, too high for a smooth one);
`"uncomfortable"` if $10^{-4} \le r \le 10^{-2}$; `"wrong"` if $r > 10^{-2}$. Fill in the
table `checks`.
""",
    setup="grad_autograd = {{autograd}}\ngrad_numeric = {{numeric}}",
    answer="checks",
    placeholder='checks = ...  # {"w": {"rel_error": ..., "verdict": ...}, "b": {...}, "v": ..., "u": ...}',
    solution="""def rel_error(a, n):
    return abs(a - n) / max(abs(a), abs(n))

def verdict(r):
    if r < 1e-7:
        return "happy"
    if r < 1e-4:
        return "kinks_only"
    return "uncomfortable" if r <= 1e-2 else "wrong"

checks = {}
for name, a, n in zip(["w", "b", "v", "u"], grad_autograd, grad_numeric):
    r = rel_error(a, n)
    checks[name] = {"rel_error": r, "verdict": verdict(r)}""",
    kind=KIND,
    params={"autograd": [250.0, 1.0e-5, -3.2, 0.02], "numeric": [250.3, 1.3e-5, -3.20000001, 0.0200004]},
    hidden=({"autograd": [-0.004, 81.0, 7.5e-4, 12.0],
             "numeric": [-0.0041, 81.0000000003, 7.52e-4, 12.0006]},),
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
