"""Predict the shape of a sum over one axis with keepdim=True: the axis stays, with size 1."""

import random

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong


def reference(shape, axis):
    return torch.tensor(torch.zeros(shape, dtype=torch.float64).sum(axis, keepdim=True).shape,
                        dtype=torch.float64)


def analytic(shape, axis):
    return [1 if i == axis else n for i, n in enumerate(shape)]


def draw(rng: random.Random) -> dict:
    return {"shape": rng.sample(range(2, 8), 3), "axis": 1}


EXERCISE = Exercise(
    title="What keepdim keeps",
    prompt=r"""
`x` has shape `{{shape|pretty}}` (axes 0, 1 and 2). **Predict** the shape of
`x.sum({{axis}}, keepdim=True)` before you run anything, then set `kept` to it as a list of
three whole numbers (an expression of `shape` and `axis`, or read from torch once you have
predicted).
""",
    setup="shape, axis = {{shape}}, {{axis}}",
    answer="kept",
    solution="kept = [1 if i == axis else n for i, n in enumerate(shape)]",
    by_hand=True,
    kind=TensorOrSlip(shape=(3,), slips=((2,),)),
    params={"shape": [2, 3, 4], "axis": 1},
    hidden=({"shape": [5, 2, 3], "axis": 1}, {"shape": [4, 6, 7], "axis": 1}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("keepdim_lost", lambda shape, axis: [n for i, n in enumerate(shape) if i != axis],
              "This is the shape without keepdim: the summed axis removed. keepdim=True keeps "
              "it, with size 1, so the result still lines up with x axis by axis and broadcasts "
              "back onto it.",
              "How many axes does the result of a sum with keepdim=True have?"),
        Wrong("keepdim_lost", lambda shape, axis: [n for i, n in enumerate(shape) if i != axis] + [1],
              "keepdim does not move the summed axis to the end: it stays where it was, with "
              "size 1. Moved to the end, the result would line up with the wrong axes of x.",
              "Write x's shape and replace the summed axis's size by 1."),
        Wrong("keepdim_lost", lambda shape, axis: list(shape),
              "keepdim keeps the summed axis, but not its size: the sum leaves one number along "
              "that axis, so the axis stays with size 1.",
              "How many numbers are left along the axis you summed over?"),
        Wrong("sum_wrong_axis", lambda shape, axis: [1 if i == axis - 1 else n for i, n in enumerate(shape)],
              "This keeps the first axis with size 1: axes counted from 1. torch counts them "
              "from 0, so axis 1 is the second one.",
              "Number x's sizes 0, 1, 2 from the left. Which one does the sum run over?"),
    ),
)
