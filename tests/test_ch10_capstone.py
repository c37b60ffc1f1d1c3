"""Chapter 10 beyond the per-unit self-tests: each diagnosis fires on a buggy implementation
written differently from the unit's own (so it comes from behaviour, not from one answer's
text) and not on a right one; the grading runs on fresh inputs, so a typed-in constant or an
answer right only at the shown inputs fails."""

from __future__ import annotations

import math

import pytest
import torch
from answer_runs import run_answer

from autograder.harness import engine_report, loop_report
from autograder.selfcheck import grade_feedback
from exercises.ch10_capstone import _common as c
from exercises.ch10_capstone.fix_training_loop import SOLUTION as LOOP_SOLUTION
from exercises.ch10_capstone.value_engine import SOLUTION as ENGINE_SOLUTION
from gradtutor.key import registry


def failing(table: dict) -> set[str]:
    return {f"{r}.{k}" for r, row in table.items() for k, v in row.items() if v is False}


# ---------------------------------------------------------------- the engine, rewritten by bug

def engine_source(*, assign=False, order="reverse", zero=True, tanh="1 - t ** 2") -> str:
    """The student's engine written in another style (a dict of local derivatives, an
    iterative topological sort), with one bug switched on."""
    add = "=" if assign else "+="
    walk = {"reverse": "reversed(topo)", "forward": "topo"}[order]
    return f'''
import math

class Value:
    def __init__(self, data, _children=(), _local=()):
        self.data, self.grad = float(data), 0.0
        self._prev, self._local = list(_children), list(_local)

    def _backward(self):
        for child, d in zip(self._prev, self._local):
            child.grad {add} d * self.grad

    def __add__(self, o): return Value(self.data + o.data, (self, o), (1.0, 1.0))
    def __mul__(self, o): return Value(self.data * o.data, (self, o), (o.data, self.data))
    def __pow__(self, k): return Value(self.data ** k, (self,), (k * self.data ** (k - 1),))
    def tanh(self):
        t = math.tanh(self.data)
        x = self.data
        return Value(t, (self,), ({tanh},))
    def relu(self): return Value(max(self.data, 0.0), (self,), (1.0 if self.data > 0 else 0.0,))
    def exp(self):
        e = math.exp(self.data)
        return Value(e, (self,), (e,))
    def log(self): return Value(math.log(self.data), (self,), (1.0 / self.data,))

    def backward(self):
        topo, seen, stack = [], set(), [(self, False)]
        while stack:                       # iterative depth-first search
            v, done = stack.pop()
            if done:
                topo.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((c, False) for c in v._prev)
        {"" if zero else "#"}for v in topo: v.grad = 0.0
        self.grad = 1.0
        for v in {walk}:
            v._backward()
'''


def test_the_solution_and_a_differently_written_engine_score_full_marks():
    for source in (ENGINE_SOLUTION, engine_source()):
        fb = run_answer("value_engine", source)
        assert fb.score == 1.0 and fb.verdict == "correct", str(fb)


@pytest.mark.parametrize("bug, misconception", [
    ({"assign": True}, "fanout_assign"),
    ({"order": "forward"}, "topo_order"),
    ({"zero": False}, "engine_not_zeroed"),
    ({"tanh": "1 - x ** 2"}, "local_derivative"),   # tanh' from the input instead of the output
    ({"tanh": "1 - t"}, "local_derivative"),        # another wrong tanh', same diagnosis
])
def test_each_engine_bug_is_diagnosed_from_behaviour(bug, misconception):
    fb = run_answer("value_engine", engine_source(**bug))
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)
    if "tanh" in bug:
        assert "tanh" in fb.explanation  # the operation is named


def test_two_bugs_at_once_name_every_failing_probe():
    fb = run_answer("value_engine", engine_source(zero=False, tanh="1 - x ** 2"))
    assert fb.score == 0.0
    for cell in ("tanh.grads", "second_pass.grads", "two_outputs.grads"):
        assert cell in fb.message, fb.message


def test_the_probes_are_fresh_random_graphs():
    """Different seeds build different graphs: an engine that special-cases the shown graphs'
    numbers cannot pass the hidden ones."""
    seen: dict[int, list[float]] = {}

    def recorder(seed):
        class Recording(c.Engine):
            def __init__(self, data, _children=()):
                super().__init__(data, _children)
                if not _children:
                    seen.setdefault(seed, []).append(float(data))
        return Recording

    for seed in (0, 101):
        assert failing(engine_report(recorder(seed), seed)) == set()
    assert seen[0] != seen[101] and len(seen[0]) > 50

    ns: dict = {}
    exec(ENGINE_SOLUTION, ns)
    right = engine_report(ns["Value"], 0)
    assert failing(right) == set()
    # a typed-in table (the shown values' answer) is not a class: not even read as an answer
    fb = run_answer("value_engine", f"Value = {right!r}")
    assert fb.score == 0.0 and fb.verdict == "invalid", str(fb)


def test_an_engine_on_tensors_is_refused():
    """.data must be a number: an engine that wraps torch tensors (and so torch's autograd) is
    an error the student is told about, not a pass. Since #26 torch is refused inside the class
    (refuse=TORCH), so the message says that, before the harness's TypeError on .data."""
    source = '''
import torch
class Value:
    def __init__(self, data): self.data = torch.tensor(float(data)); self.grad = 0.0
    def __add__(self, o): return Value(self.data + o.data)
'''
    fb = run_answer("value_engine", source)
    assert fb.score == 0.0 and "used torch, which is refused" in str(fb), str(fb)


def test_the_buggy_engines_fail_the_probes_their_explanations_name():
    assert failing(engine_report(c.AssignEngine, 5)) == {"reuse.grads", "fanout.grads"}
    assert failing(engine_report(c.RecursiveEngine, 5)) == {"fanout.grads"}
    assert failing(engine_report(c.NoZeroEngine, 5)) == {"second_pass.grads", "two_outputs.grads"}
    assert failing(engine_report(c.wrong_local("log"), 5)) == {"log.grads"}


def test_plus_equals_matters_for_x_plus_x_in_micrograd():
    """Karpathy's bug: b = a + a with '=' gives a.grad = 1, not 2."""
    a = c.AssignEngine(3.0)
    (a + a).backward()
    b = c.Engine(3.0)
    (b + b).backward()
    assert (a.grad, b.grad) == (1.0, 2.0)


# ---------------------------------------------------------------- the MLP backward

MLP_RIGHT = registry.get("mlp_backward").solution


def test_mlp_backward_is_graded_on_other_shapes():
    ex = registry.get("mlp_backward")
    shapes = {(v["n"], v["d"], v["h"], v["c"]) for v in ex.variants()}
    assert len(shapes) == len(ex.variants())
    assert run_answer("mlp_backward", MLP_RIGHT).score == 1.0


def test_an_mlp_backward_right_only_at_the_shown_shapes_fails_elsewhere():
    """Hard-coding N (the shown batch size) instead of X.shape[0]."""
    n = registry.get("mlp_backward").params["n"]
    fb = run_answer("mlp_backward", MLP_RIGHT.replace("N = X.shape[0]", f"N = {n}"))
    assert fb.variants[0].score == 1.0 and fb.score < 1.0, str(fb)


@pytest.mark.parametrize("edit, misconception", [
    (("dS /= N", "pass"), "xent_mean_dropped"),
    (("dZ = dH * (Z > 0)", "dZ = dH"), "relu_mask_missing"),
    (("dS[torch.arange(N), y] -= 1", "pass"), "xent_softmax_only"),
])
def test_mlp_backward_slips_are_diagnosed(edit, misconception):
    fb = run_answer("mlp_backward", MLP_RIGHT.replace(*edit))
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_autograd_inside_mlp_backward_does_not_work():
    source = '''
def mlp_backward(X, y, W1, b1, W2, b2):
    ps = [p.requires_grad_() for p in (W1, b1, W2, b2)]
    loss = F.cross_entropy((X @ ps[0] + ps[1]).relu() @ ps[2] + ps[3], y)
    return torch.autograd.grad(loss, ps)'''
    fb = run_answer("mlp_backward", source)
    assert fb.score == 0.0, str(fb)


# ---------------------------------------------------------------- training on the engine

def test_train_engine_uses_the_learners_engine():
    ns: dict = {}
    exec(ENGINE_SOLUTION, ns)
    source = registry.get("train_engine").solution.split("def train_engine", 1)[1]
    source = "def train_engine" + source
    assert run_answer("train_engine", source, ns).score == 1.0
    ns_bad: dict = {}
    exec(engine_source(zero=False), ns_bad)  # an engine that never zeroes: grads pile up across steps
    fb = run_answer("train_engine", source, ns_bad)
    assert fb.score == 0.0 and fb.misconception == "engine_not_zeroed", str(fb)


# ---------------------------------------------------------------- the loop

def loop_with(*bugs: str) -> str:
    """The repaired loop with planted lines put back, edited in the solution's own text."""
    lines = {
        "zero_grad": ("p.grad = None", "pass"),
        "frozen_layer": ("    params = [W1, b1, W2, b2]\n",
                         "    W2.requires_grad_(False)\n    b2.requires_grad_(False)\n"
                         "    params = [W1, b1, W2, b2]\n"),
        "non_leaf": ('init["b1"].double().requires_grad_()', 'init["b1"].requires_grad_().double()'),
        "where_nan": ("torch.where(sq > 0, safe.sqrt(), 0.0)", "torch.where(sq > 0, sq.sqrt(), 0.0)"),
        "accumulation": ("(loss + lam * penalty) / accum", "(loss + lam * penalty)"),
        "logged_graph": ("total += objective.item()", "total = total + objective"),
        "data_in_penalty": ("sq = (W1 ** 2).sum(0)", "sq = (W1.data ** 2).sum(0)"),
    }
    source = LOOP_SOLUTION
    for b in bugs:
        old, new = lines[b]
        assert old in source, b
        source = source.replace(old, new)
    if {"frozen_layer", "non_leaf"} & set(bugs):  # no .grad there: the planted update skips it
        source = source.replace("                p -= lr * p.grad",
                                "                if p.grad is not None:\n                    p -= lr * p.grad")
    return source


def test_the_repaired_loop_scores_full_marks_and_the_planted_one_nothing():
    assert run_answer("fix_training_loop", LOOP_SOLUTION).score == 1.0
    from exercises.ch10_capstone.fix_training_loop import PLANTED
    fb = run_answer("fix_training_loop", PLANTED)
    assert fb.score == 0.0 and fb.misconception == "loop_several_bugs", str(fb)


@pytest.mark.parametrize("bug", c.BUGS)
def test_each_bug_left_in_is_diagnosed(bug):
    fb = run_answer("fix_training_loop", loop_with(bug))
    misconception = {"zero_grad": "accumulation", "frozen_layer": "frozen_param",
                     "non_leaf": "accidental_nonleaf", "where_nan": "where_nan",
                     "accumulation": "accumulation_not_averaged", "logged_graph": "logging_keeps_graph",
                     "data_in_penalty": "data_silent"}[bug]
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_two_bugs_left_in_are_both_named():
    fb = run_answer("fix_training_loop", loop_with("zero_grad", "logged_graph"))
    assert fb.score == 0.0
    assert "loop.zero_grad" in fb.message and "loop.logged_graph" in fb.message, fb.message


def test_another_right_repair_passes():
    """torch's own norm (subgradient 0 at a zero column) and zero_() instead of None."""
    source = LOOP_SOLUTION.replace(
        "penalty = torch.where(sq > 0, safe.sqrt(), 0.0).sum()",
        "penalty = torch.linalg.vector_norm(W1, dim=0).sum()").replace(
        "p.grad = None", "p.grad.zero_()")
    assert run_answer("fix_training_loop", source).score == 1.0


def test_the_checks_are_behaviour_on_fresh_data():
    right = loop_report(c.planted_loop(()), 3)["loop"]
    other = loop_report(c.planted_loop(()), 4)["loop"]
    assert not math.isclose(float(right["loss"]), float(other["loss"]))
    assert all(right[k] for k in c.LOOP_CHECKS) and all(other[k] for k in c.LOOP_CHECKS)


# ---------------------------------------------------------------- facts the lesson states

def test_where_nan_and_the_double_where():
    W = torch.tensor([[0.6, 0.0], [0.8, 0.0]], dtype=torch.float64, requires_grad=True)
    sq = (W ** 2).sum(0)
    torch.where(sq > 0, sq.sqrt(), 0.0).sum().backward()
    assert torch.isnan(W.grad[:, 1]).all() and torch.isfinite(W.grad[:, 0]).all()
    W.grad = None
    torch.linalg.vector_norm(W, dim=0).sum().backward()
    assert W.grad[:, 1].tolist() == [0.0, 0.0]


def test_cast_after_requires_grad_is_not_a_leaf():
    b = torch.zeros(3).requires_grad_().double()
    assert not b.is_leaf and b.grad_fn is not None


def test_a_bare_number_cannot_stand_in_for_the_answers():
    for eid in ("mlp_backward", "train_engine", "safe_group_lasso", "fix_training_loop"):
        name = registry.get(eid).answer
        fb = run_answer(eid, f"{name} = 0.5")
        assert fb.score == 0.0, (eid, str(fb))


def test_an_order_without_a_visited_set_is_told_apart_from_assigning_closures():
    """#26: both fail the reuse and fan-out rows; only the one without a visited set runs a
    shared node's _backward more than once (engine_report(once=True))."""
    assert failing(engine_report(c.NoVisitedEngine, 5, once=True)) >= {"each_node_once.grads"}
    assert "each_node_once.grads" not in failing(engine_report(c.AssignEngine, 5, once=True))
    assert "each_node_once" not in engine_report(c.Engine, 5)  # the students' own call: as before
    no_visited = ENGINE_SOLUTION.replace("if v not in seen:", "if True:")
    assert no_visited != ENGINE_SOLUTION
    fb = run_answer("value_engine", no_visited)
    assert fb.score == 0.0 and fb.misconception == "topo_order", str(fb)


@pytest.mark.parametrize("body, misconception", [
    ("sq = (W ** 2).sum(0)\n    return torch.where(sq > 0, sq.sqrt(), 0.0).sum()", "where_nan"),
    ("return (W ** 2).sum(0).sqrt().sum()", None),  # the same NaN, but no torch.where to blame
])
def test_a_where_story_is_told_only_to_code_that_calls_where(body, misconception):
    source = f"def group_lasso(W):\n    {body}\n"
    ex = registry.get("safe_group_lasso")
    ns: dict = {}
    exec("import torch\n" + ex.setup_code(ex.params) + "\n" + source, ns)
    fb = grade_feedback("safe_group_lasso", ns["group_lasso"], namespace=ns, history=[source, "grade cell"])
    assert fb.score < 1.0 and fb.misconception == misconception, str(fb)
