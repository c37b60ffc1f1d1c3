"""Write unbroadcast(grad, shape): sum a gradient back to the shape of an input that broadcasting
stretched. Graded on fresh pairs of shapes of every broadcasting pattern."""

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table
from gradtutor.key.exercise import Exercise, Wrong

from ._common import (
    UNBROADCAST_ROWS,
    call,
    unbroadcast,
    unbroadcast_from_left,
    unbroadcast_identity,
    unbroadcast_leading_only,
    unbroadcast_no_keepdim,
    unbroadcast_ones_only,
    unbroadcast_report,
)


def _run(fn):
    return lambda seed: unbroadcast_report(fn, seed)


def _torch_sum_to_size(grad, shape):
    return grad.sum_to_size(shape) if shape else grad.sum()


def _by_axes(grad, shape):
    """Another route: the axes to sum listed first, then one sum over all of them."""
    lead = grad.dim() - len(shape)
    axes = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1]
    out = grad.sum(axes, keepdim=True) if axes else grad
    return out.reshape(shape)


EXERCISE = Exercise(
    title="unbroadcast: sum the gradient back",
    points=2,
    prompt=r"""
In `x + y`, broadcasting lines the shapes up **from the right**, puts size-1 axes in front of
the shorter one, then stretches every size-1 axis to the other's size: (3, 1) + (1, 4) gives
(3, 4), () + (2, 3) gives (2, 3), (5, 4, 1) + (4, 3) gives (5, 4, 3). An entry of `x` used at
several positions of the result gets the **sum** of their gradients.

Write `unbroadcast(grad, shape)`: `grad` has the shape of the result, `shape` is the input's
(a tuple); return the gradient of the input, of exactly that shape. Two steps: sum over the
leading axes broadcasting added, then over each axis where `shape` has a 1 and `grad` does not,
with `keepdim=True`. Torch arithmetic only, no autograd (and not `sum_to_size`, which is the
answer).

The grader runs `unbroadcast_report(unbroadcast, seed)` (here `seed = {{seed}}`; other seeds
when grading): fresh shapes for each pattern (`same`: nothing to undo; `prefix`: leading axes
added; `ones`: a size-1 axis stretched; `scalar`: a 0-d input; `both`: leading and size-1 at
once), and says whether your result has torch's numbers (`value`) and the input's shape
(`shape`).
""",
    setup="""seed = {{seed}}
from autograder.tensor_harness import unbroadcast_report   # what the grader runs""",
    answer="unbroadcast",
    call=call("unbroadcast_report(unbroadcast, seed)"),
    placeholder="def unbroadcast(grad, shape):\n    return ...  # grad summed back to shape",
    solution='''def unbroadcast(grad, shape):
    while grad.dim() > len(shape):             # the axes broadcasting put in front
        grad = grad.sum(0)
    for axis, size in enumerate(shape):        # the axes stretched from size 1
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis, keepdim=True)  # keep the axis: the input has it
    return grad''',
    refuse=AUTOGRAD,
    kind=Table(rows=UNBROADCAST_ROWS, columns=(("value", Bool()), ("shape", Bool()))),
    params={"seed": 0},
    hidden=({"seed": 11}, {"seed": 23}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6)},
    reference=_run(_torch_sum_to_size),
    analytic=_run(unbroadcast),
    finite_diff=_run(_by_axes),
    wrong=(
        Wrong("unbroadcast_missing", _run(unbroadcast_identity),
              "Your function returns the gradient in the result's shape: every row but `same` "
              "fails. An input entry used at several positions of the result gets the sum of "
              "their gradients, so the gradient must be summed back to the input's shape.",
              "Compare grad.shape with shape. Which axes of grad does the input not have, or "
              "have with size 1?"),
        Wrong("unbroadcast_missing", _run(unbroadcast_leading_only),
              "The leading axes are summed away, but the stretched size-1 axes are not: rows "
              "`ones` and `both` fail. An input of shape (3, 1) in a (3, 4) result was used 4 "
              "times along axis 1, so its gradient is summed over axis 1 too.",
              "After the leading axes, walk over shape: where it has a 1 and grad does not, sum."),
        Wrong("unbroadcast_missing", _run(unbroadcast_ones_only),
              "The stretched size-1 axes are summed, but the axes broadcasting added in front "
              "are not: rows `prefix`, `scalar` and `both` fail. (4,) in a (5, 4) result was used "
              "once per row, so its gradient sums over axis 0.",
              "First make grad as short as shape: while it has more axes, sum over axis 0."),
        Wrong("keepdim_lost", _run(unbroadcast_no_keepdim),
              "The numbers are right, but where the input has a size-1 axis your result does not "
              "(rows `ones` and `both`: the shape is wrong): the sum over the stretched axis "
              "dropped it. A gradient has the shape of its tensor, and (3,) does not add into "
              "(3, 1) the way you want: it broadcasts to (3, 3).",
              "Which argument of sum keeps the summed axis, with size 1?"),
        Wrong("sum_wrong_axis", _run(unbroadcast_from_left),
              "Rows `prefix` and `both` fail: your function sums the extra axes at the end, but "
              "broadcasting lines shapes up from the right, so the axes it adds are at the "
              "front. (4,) in a (5, 4) result is (1, 4): sum over axis 0, not axis -1.",
              "Right-align the two shapes. Where are the axes the input lacks?"),
    ),
)
