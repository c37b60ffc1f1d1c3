"""Chapter 11, Parts 1 and 3 beyond the per-unit self-tests: the tensor engine is graded by
behaviour on fresh random shapes, each diagnosis fires on a buggy engine written differently from
the unit's own (the novice corpus's engine, its slots rewritten) and not on a right one; the code
built on the engine (cross-entropy, the gradient check, the training) runs on the engine its cell
sees, with autograd refused; the widget and the lesson's facts agree with torch."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import answer_runs
import pytest
import torch

from autograder.tensor_harness import (
    ENGINE_ROWS,
    TARGET_ACCURACY,
    band,
    digits,
    digits_init,
    digits_logits,
    digits_report,
    engine_of,
    tensor_engine_report,
    unbroadcast_report,
    xent_report,
)
from exercises.ch11_tensors import _common as c
from exercises.ch11_tensors.tensor_engine import SOLUTION as ENGINE_SOLUTION

_spec = importlib.util.spec_from_file_location("novice_ch11", Path(__file__).parent / "novice" / "ch11.py")
novice = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(novice)


def run_answer(eid: str, source: str):
    """The answer cell run as grading runs it, with only torch imported before the setup."""
    return answer_runs.run_answer(eid, source, imports="import torch")


def failing(table: dict) -> set[str]:
    return {f"{r}.{k}" for r, row in table.items() for k, v in row.items() if v is False}


def tensor_class(source: str):
    ns: dict = {}
    exec(source, ns)
    return ns["Tensor"]


# ---------------------------------------------------------------- the engine

def test_the_solution_and_a_differently_written_engine_score_full_marks():
    for source in (ENGINE_SOLUTION, novice.ENGINE):
        fb = run_answer("tensor_engine", source)
        assert fb.score == 1.0 and fb.verdict == "correct", str(fb)


@pytest.mark.parametrize("slots, misconceptions", [
    ({"ub": "    return g"}, {"unbroadcast_missing"}),
    ({"ub": "    while g.dim() > len(shape):\n        g = g.sum(-1)\n    for i, n in enumerate(shape):\n"
            "        if n == 1 and g.shape[i] != 1:\n            g = g.sum(i, keepdim=True)\n    return g"},
     {"sum_wrong_axis"}),
    ({"acc": "self.grad = g"}, {"fanout_assign"}),
    ({"sumback": "            self._acc(out.grad.expand(self.data.shape))"}, {"keepdim_lost"}),
    ({"mmb": "out.grad.T @ self.data"}, {"matmul_grad_transposed"}),
    ({"getitem": "            g = torch.zeros_like(self.data)\n            g[idx] = out.grad\n"
                 "            self._acc(g)"},
     {"index_repeats_add"}),
    ({"zero": "pass"}, {"engine_not_zeroed"}),
    ({"tanh": "1 - self.data ** 2"}, {"local_derivative"}),
])
def test_each_engine_bug_is_diagnosed_from_behaviour(slots, misconceptions):
    fb = run_answer("tensor_engine", novice.engine(**slots))
    assert fb.score == 0.0 and fb.misconception in misconceptions, str(fb)


def test_the_buggy_engines_fail_the_probes_their_explanations_name():
    broadcast = {f"{r}.{k}" for r in ("bcast_ones", "bcast_both") for k in ("value", "grads", "shape")} - \
        {"bcast_ones.value", "bcast_both.value"}
    assert failing(tensor_engine_report(c.with_unbroadcast(c.unbroadcast_no_keepdim), 3)) == broadcast
    assert failing(tensor_engine_report(c.NoZeroEngine, 3)) == {"second_pass.grads"}
    assert failing(tensor_engine_report(c.MatmulTransposedEngine, 3)) == {"matmul.grads", "matmul.shape"}
    assert failing(tensor_engine_report(c.GetitemAssignEngine, 3)) == {"getitem.grads"}
    assert failing(tensor_engine_report(c.SumNoUnsqueezeEngine, 3)) == {
        "sum.grads", "sum.shape", "mean.grads", "mean.shape"}


def test_the_probes_are_fresh_random_shapes():
    """Different seeds build different shapes: an engine right only at the shown shapes cannot
    pass the hidden ones."""
    seen: dict[int, list[tuple]] = {}

    def recorder(seed):
        class Recording(c.Engine):
            def __init__(self, data, _parents=(), _vjps=None):
                super().__init__(data, _parents, _vjps)
                if not _parents:
                    seen.setdefault(seed, []).append(tuple(self.data.shape))
        return Recording

    for seed in (0, 101):
        assert failing(tensor_engine_report(recorder(seed), seed)) == set()
    assert seen[0] != seen[101] and len(set(seen[0])) > 5
    assert len(ENGINE_ROWS) == len(tensor_engine_report(c.Engine, 0))


def test_autograd_inside_the_engine_is_refused():
    source = ENGINE_SOLUTION.replace(
        "            self.grad += out.data * out.grad\n",
        "            with torch.enable_grad():\n"
        "                x = self.data.clone().requires_grad_(True)\n"
        "                (g,) = torch.autograd.grad(x.exp(), x, out.grad)\n"
        "            self.grad += g\n")
    assert source != ENGINE_SOLUTION
    fb = run_answer("tensor_engine", source)
    assert fb.score == 0.0 and "refused" in str(fb), str(fb)


def test_a_typed_in_table_is_not_an_engine():
    right = tensor_engine_report(tensor_class(ENGINE_SOLUTION), 0)
    fb = run_answer("tensor_engine", f"Tensor = {right!r}")
    assert fb.score == 0.0, str(fb)


# ---------------------------------------------------------------- unbroadcast

@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_unbroadcast_rows_isolate_each_pattern(seed):
    assert failing(unbroadcast_report(c.unbroadcast, seed)) == set()
    assert failing(unbroadcast_report(c.unbroadcast_identity, seed)) >= {
        "prefix.shape", "scalar.shape", "both.shape"}
    assert failing(unbroadcast_report(c.unbroadcast_no_keepdim, seed)) == {"ones.shape", "both.shape"}
    assert failing(unbroadcast_report(c.unbroadcast_from_left, seed)) == {
        "prefix.value", "prefix.shape", "both.value", "both.shape"}


def test_torchs_own_sum_to_size_is_what_unbroadcast_computes():
    g = torch.randn(5, 4, 3, dtype=torch.float64)
    for shape in ((4, 3), (4, 1), (1, 3), (5, 1, 3), (3,)):
        assert torch.allclose(c.unbroadcast(g, shape), g.sum_to_size(shape), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- code built on the engine

def test_the_engine_is_the_one_the_functions_cell_sees():
    ns: dict = {}
    exec(ENGINE_SOLUTION + "\n\ndef f(t):\n    return t", ns)
    assert engine_of(ns["f"]) is ns["Tensor"]
    lonely: dict = {}
    exec("def f(t):\n    return t", lonely)
    with pytest.raises(NameError, match="run the cell of your Tensor"):
        engine_of(lonely["f"])


def test_cross_entropy_without_an_engine_says_to_run_the_engine_cell():
    fb = run_answer("stable_cross_entropy", "def cross_entropy(logits, y):\n    return logits.sum()")
    assert fb.score == 0.0 and "run the cell of your Tensor" in " ".join(str(fb).split()), str(fb)


def test_cross_entropy_on_a_broken_engine_is_not_accepted():
    """The loss is graded through the engine: an engine that never sums gradients back fails the
    rows of the loss whose broadcasting it uses."""
    source = novice.xent(novice._XENT_RIGHT).replace(novice.ENGINE, novice.engine(ub="    return g"))
    fb = run_answer("stable_cross_entropy", source)
    assert fb.score == 0.0, str(fb)


def test_the_overflow_is_real_in_float64():
    z = torch.tensor([1000.0, 0.0], dtype=torch.float64)
    assert math.isinf(z.exp().sum().log().item())
    assert (z.max() + (z - z.max()).exp().sum().log()).item() == torch.logsumexp(z, 0).item() == 1000.0


def test_the_bands_are_chapter_twos():
    assert [band(r) for r in (1e-9, 1e-6, 1e-3, 0.5, float("nan"))] == [
        "happy", "kinks_only", "uncomfortable", "wrong", "wrong"]


def test_the_lesson_float32_and_float64_errors():
    errors = {}
    for dtype in (torch.float32, torch.float64):
        x, eps = torch.tensor(0.5, dtype=dtype), 1e-6
        numeric = ((x + eps).exp() - (x - eps).exp()) / (2 * eps)
        errors[dtype] = (abs(numeric - x.exp()) / x.exp()).item()
    assert errors[torch.float32] > 1e-3 and errors[torch.float64] < 1e-7


# ---------------------------------------------------------------- training to the target

@pytest.mark.parametrize("seed", [0, 3, 4, 17])
def test_the_reference_training_reaches_the_stated_accuracy(seed):
    cfg = c.DIGITS_TRAIN
    X, y, Xt, yt = digits(seed)
    params, losses = c.hand_digits(X, y, digits_init(seed, cfg["h"]), cfg["steps"], cfg["lr"])
    accuracy = (digits_logits(Xt, params).argmax(1) == yt).double().mean().item()
    assert accuracy >= TARGET_ACCURACY + 0.02 and losses[-1] < losses[0] / 4


def test_the_digits_splits_differ_by_seed_and_never_overlap():
    X0, _, Xt0, _ = digits(0)
    X1, _, _, _ = digits(1)
    assert len(X0) == 1347 and len(Xt0) == 450 and not torch.equal(X0, X1)
    rows = {tuple(r.tolist()) for r in X0}
    assert sum(tuple(r.tolist()) in rows for r in Xt0) < 30  # only images that are exact duplicates


def test_a_training_that_never_trains_misses_the_target():
    def frozen(X, y, params, steps, lr):
        return params, [2.3] * steps
    cfg = c.DIGITS_TRAIN
    assert digits_report(frozen, 0, **cfg)["train"]["accuracy_ok"] is False


def test_the_torch_demo_reaches_the_target():
    """The lesson's nn.Module + SGD cell, as written there (float32, 16 hidden units, 50 steps)."""
    import torch.nn as nn
    import torch.nn.functional as F
    from sklearn.datasets import load_digits

    data = load_digits()
    X = torch.tensor(data.data / 8.0 - 1.0, dtype=torch.float32)
    y = torch.tensor(data.target)
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(0))
    test, train_rows = perm[:450], perm[450:]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 16), nn.Tanh(), nn.Linear(16, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    for _ in range(50):
        optimizer.zero_grad()
        F.cross_entropy(model(X[train_rows]), y[train_rows]).backward()
        optimizer.step()
    with torch.no_grad():
        assert (model(X[test]).argmax(1) == y[test]).float().mean().item() >= TARGET_ACCURACY


def test_xent_report_runs_the_engines_methods_with_autograd_refused():
    source = novice.xent(novice._XENT_RIGHT).replace(
        "        out.back = lambda: self._acc(out.grad * out.data)\n",
        "        def back():\n            with torch.enable_grad():\n"
        "                x = self.data.clone().requires_grad_(True)\n"
        "                (g,) = torch.autograd.grad(x.exp(), x, out.grad)\n"
        "            self._acc(g)\n        out.back = back\n", 1)
    assert source != novice.xent(novice._XENT_RIGHT)
    ns: dict = {}
    exec(source, ns)
    with pytest.raises(RuntimeError, match="switched off|refused"):
        xent_report(ns["cross_entropy"], 0)


# ---------------------------------------------------------------- the widget

def test_the_broadcast_explorer_agrees_with_torch_and_says_what_it_draws():
    from autograder.visual.broadcast import SHAPES, broadcast_explorer, parse, summed_axes

    box = broadcast_explorer()
    a, b = box.controls["a"], box.controls["b"]
    assert a.description and b.description  # the dropdowns' accessible names
    for sa in SHAPES:
        for sb in SHAPES:
            a.value, b.value = sa, sb
            try:
                out = torch.broadcast_shapes(parse(sa), parse(sb))
            except RuntimeError:
                assert box.numbers["broadcasts"] == 0.0 and "do not broadcast" in box.readout.value
                continue
            ta = torch.zeros(parse(sa), requires_grad=True)
            tb = torch.zeros(parse(sb), requires_grad=True)
            (ta + tb).sum().backward()
            ax = summed_axes(parse(sa), tuple(out))
            uses = math.prod(out[i] for i in ax["added"] + ax["stretched"])
            assert box.numbers["uses_a"] == ta.grad.flatten()[0].item() == uses
            assert box.numbers["uses_b"] == tb.grad.flatten()[0].item()
            assert box.plot.tooltip.startswith("Drawing of the shapes") and str(tuple(out)) in box.plot.tooltip
