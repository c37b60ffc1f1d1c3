"""#26, must-show 6, the widgets: numbers without a signed zero, and a chain-rule stepper whose
nodes are the lesson's and whose defaults teach (distinct values, no exercise's answer)."""

from __future__ import annotations

import re

import torch

from autograder import chain_rule_stepper, vjp_explorer
from autograder.visual.widgets import CHAIN_LABELS, num, vec
from gradtutor.key import registry
from gradtutor.key.answer_key import practice_params


def test_a_signed_zero_reads_zero() -> None:
    assert num(-0.0) == "0.0" and vec([-0.0, 1.5]) == "[0.0, 1.5]"
    assert num(-2.0) == "-2.0" and num(-1e-20) == "-1e-20"  # only the zero loses its sign


def test_the_vjp_explorer_shows_no_minus_zero() -> None:
    """A zero in the seed times a negative slope is -0.0 in torch: shown as 0."""
    box = vjp_explorer(x0=(0.5, -1.0, 1.5))  # chapter 4's call
    box.controls["v2"].value = 0.0
    assert str(box.numbers["grad1"]) == "-0.0"  # torch's value is a signed zero
    assert "-0.0" not in box.readout.value and "-0.0" not in box.plot.tooltip


def _chain_values(box) -> list[float]:
    """The values a student predicts: the nodes and x.grad (the share from x·y is y, y.grad is
    x and ∂z/∂z, ∂z/∂(x·y), ∂z/∂(x²) are 1 at any values)."""
    n = box.numbers
    return [n[k] for k in ("x", "y", "a", "b", "z", "x_from_b", "x_grad")]


def test_the_chain_rule_stepper_names_its_nodes_as_the_lesson_does() -> None:
    box = chain_rule_stepper()
    for _ in range(8):
        box.controls["Next ▶"].click()
    words = box.plot.tooltip + box.readout.value
    lesson = registry.chapters()[0].lesson.read_text()
    assert "x·y = " in words and "x² = " in words and "xy + x^2" in lesson
    assert not re.search(r"(?<![\w∂(])[ab] = ", words)  # no node the lesson never defines
    assert set(CHAIN_LABELS.values()) == {"x", "y", "x·y", "x²", "z"}


def test_the_chain_rule_steppers_defaults_teach_and_give_no_answer_away() -> None:
    box = chain_rule_stepper()
    values = _chain_values(box)
    assert len(set(values)) == len(values) and 1.0 not in values and 0.0 not in values
    x = torch.tensor(box.numbers["x"], requires_grad=True)
    y = torch.tensor(box.numbers["y"], requires_grad=True)
    (x * y + x**2).backward()
    assert (box.numbers["x_grad"], box.numbers["y_grad"]) == (x.grad.item(), y.grad.item())
    # the lesson calls it with its defaults; no chapter 1 exercise asks about these values
    assert "chain_rule_stepper()" in registry.chapters()[0].lesson.read_text()
    at = (box.numbers["x"], box.numbers["y"])
    for exercise_id in registry.chapters()[0].exercise_ids():
        ex = registry.get(exercise_id)
        for params in (*ex.variants(), *practice_params(exercise_id)):
            numbers = tuple(v for v in params.values() if isinstance(v, float))
            assert numbers[:2] != at, (exercise_id, params)

