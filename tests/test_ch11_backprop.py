"""Chapter 11, part 2 (backprop by hand through a network) beyond the per-unit self-tests: right
answers written in other natural ways score full marks; each slip, written differently from the
unit's own slip, is diagnosed from behaviour; the grader reads gradients of every shape a
learner returns; the problems are fresh at every seed and shape, with the repeated tokens the
embedding's diagnosis needs; a slip at one layer changes its row and the rows below it only."""

from __future__ import annotations

import random

import pytest
import torch
from answer_runs import run_answer

from autograder.backprop_harness import (
    NET_ROWS,
    STEPS,
    embedding_problem,
    net_problem,
    net_report,
    read_grad,
)
from exercises.ch11_tensors import _backprop as bp
from gradtutor.key import registry


def solution(eid: str) -> str:
    return registry.get(eid).solution


def edited(eid: str, *edits: tuple[str, str]) -> str:
    source = solution(eid)
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return source


# ---------------------------------------------------------------- right answers, other forms

LINEAR_DICT = '''def linear_backward(x, W, b, dout):
    return {"dx": torch.einsum("no,io->ni", dout, W), "dW": torch.einsum("ni,no->io", x, dout),
            "db": dout.sum(dim=0, keepdim=True)}'''

BN_ONE_LINE = '''def batchnorm_backward(x, gamma, beta, dout, eps):
    n = x.shape[0]
    mu = x.mean(0, keepdim=True)
    var = x.var(0, keepdim=True, unbiased=False)
    xhat = (x - mu) / (var + eps).sqrt()
    dxhat = dout * gamma
    dx = (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / (n * (var + eps).sqrt())
    return dx, (dout * xhat).sum(0), dout.sum(0)'''

EMB_ONE_HOT = '''def embedding_backward(E, X, dout):
    onehot = F.one_hot(X.reshape(-1), E.shape[0]).to(dout.dtype)     # (N*T, V)
    return onehot.T @ dout.reshape(-1, E.shape[1])'''

EMB_LOOP = '''def embedding_backward(E, X, dout):
    dE = torch.zeros_like(E)
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            dE[X[i, j]] += dout[i, j]
    return dE'''

EMB_PUT = '''def embedding_backward(E, X, dout):
    return torch.zeros_like(E).index_put_((X,), dout, accumulate=True)'''


@pytest.mark.parametrize("eid, source", [
    ("linear_backward", None), ("linear_backward", LINEAR_DICT),
    ("batchnorm_backward", None), ("batchnorm_backward", BN_ONE_LINE),
    ("embedding_backward", None), ("embedding_backward", EMB_ONE_HOT),
    ("embedding_backward", EMB_LOOP), ("embedding_backward", EMB_PUT),
    ("network_backward", None),
])
def test_right_answers_in_several_forms_score_full_marks(eid, source):
    fb = run_answer(eid, source or solution(eid))
    assert fb.score == 1.0 and fb.verdict == "correct", str(fb)


def test_a_network_backward_built_from_layer_functions_scores_full_marks():
    """The lesson's route: the layer functions of the exercises above, chained."""
    source = "\n\n".join([solution("linear_backward"), BN_ONE_LINE, EMB_PUT, '''
def network_backward(X, y, P):
    f = net_forward(X, y, P)
    N = X.shape[0]
    g = {"logits": (torch.softmax(f["logits"], 1) - F.one_hot(y, f["logits"].shape[1])) / N}
    g["h"], g["W2"], g["b2"] = linear_backward(f["h"], P["W2"], P["b2"], g["logits"])
    g["hbn"] = g["h"] * (1 - torch.tanh(f["hbn"]) ** 2)
    g["hpre"], g["gamma"], g["beta"] = batchnorm_backward(f["hpre"], P["gamma"], P["beta"], g["hbn"], BN_EPS)
    demb, g["W1"], g["b1"] = linear_backward(f["emb"].flatten(1), P["W1"], P["b1"], g["hpre"])
    g["emb"] = demb.view(f["emb"].shape)
    g["E"] = embedding_backward(P["E"], X, g["emb"])
    return g'''])
    fb = run_answer("network_backward", source)
    assert fb.score == 1.0, str(fb)


# ---------------------------------------------------------------- slips, diagnosed by behaviour

@pytest.mark.parametrize("eid, edits, misconception", [
    ("linear_backward", [("dW = x.T @ dout ", "dW = dout.T @ x ")], "matmul_transpose"),
    ("linear_backward", [("dx = dout @ W.T ", "dx = (dout @ W.T).T ")], "matmul_transpose"),
    ("linear_backward", [("db = dout.sum(0) ", "db = dout ")], "broadcast_sums"),
    ("linear_backward", [("db = dout.sum(0) ", "db = dout.mean(0) ")], "broadcast_sums"),
    ("batchnorm_backward", [("var = (xc ** 2).mean(0)", "var = x.var(0)")], "bn_bessel"),
    ("batchnorm_backward", [("dgamma = (dout * xhat).sum(0)", "dgamma = (dout * x).sum(0)")], "bn_dgamma_xhat"),
    ("batchnorm_backward", [("dx = dxc + dmu / N", "dx = dxc")], "bn_term_dropped"),
    ("batchnorm_backward", [("dxc = dxhat * inv + dvar * 2 * xc / N", "dxc = dxhat * inv")], "bn_term_dropped"),
    ("batchnorm_backward", [("dxc = dxhat * inv + dvar * 2 * xc / N", "dxc = dxhat * inv + dvar * 2 * xc"),
                            ("dx = dxc + dmu / N", "dx = dxc + dmu")], "bn_mean_factor"),
    ("batchnorm_backward", [("dxc = dxhat * inv + dvar * 2 * xc / N", "dxc = dxhat * inv"),
                            ("dx = dxc + dmu / N", "dx = dxc")], "bn_stats_constant"),
    ("embedding_backward", [("dE.index_add_(0, X.reshape(-1), dout.reshape(-1, E.shape[1]))",
                             "dE[X] = dout")], "repeated_index"),
    ("embedding_backward", [("dE.index_add_(0, X.reshape(-1), dout.reshape(-1, E.shape[1]))",
                             "dE[X] += dout")], "repeated_index"),
    ("network_backward", [('g["logits"] = dlogits / N', 'g["logits"] = dlogits')], "xent_mean_dropped"),
    ("network_backward", [('dlogits[torch.arange(N), y] -= 1', 'pass')], "xent_softmax_only"),
    ("network_backward", [('torch.softmax(f["logits"], dim=1)', 'torch.softmax(f["logits"], dim=0)')],
     "softmax_axis"),
    ("network_backward", [('g["W2"] = f["h"].T @ g["logits"]', 'g["W2"] = g["logits"].T @ f["h"]')],
     "matmul_transpose"),
    ("network_backward", [('(1 - f["h"] ** 2)', '(1 - f["hbn"] ** 2)')], "tanh_derivative_input"),
    ("network_backward", [('inv * (dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0))', 'inv * dxhat')],
     "bn_stats_constant"),
    ("network_backward", [('g["E"] = torch.zeros_like(E).index_add_(0, X.reshape(-1), g["emb"].reshape(-1, '
                           'E.shape[1]))', 'g["E"] = torch.zeros_like(E)\n    g["E"][X] += g["emb"]')],
     "repeated_index"),
])
def test_each_slip_is_diagnosed(eid, edits, misconception):
    fb = run_answer(eid, edited(eid, *edits))
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_two_slips_in_the_network_are_both_named():
    fb = run_answer("network_backward", edited(
        "network_backward", ('(1 - f["h"] ** 2)', '(1 - f["hbn"] ** 2)'),
        ('g["b2"] = g["logits"].sum(0)', 'g["b2"] = g["logits"].mean(0)')))
    assert fb.score == 0.0 and fb.misconception == "several_mistakes", str(fb)
    assert "tanh" in fb.explanation and "b2" in fb.explanation, fb.explanation


def test_a_hard_coded_batch_size_is_right_at_the_shown_shapes_only():
    n = registry.get("network_backward").params["n"]
    fb = run_answer("network_backward", edited("network_backward", ("N = X.shape[0]", f"N = {n}")))
    assert fb.variants[0].score == 1.0 and fb.score < 1.0, str(fb)


def test_autograd_inside_the_network_backward_earns_nothing():
    source = '''
def network_backward(X, y, P):
    with torch.enable_grad():
        leaves = {k: p.clone().requires_grad_() for k, p in P.items()}
        f = net_forward(X, y, leaves)
        for k in ("emb", "hpre", "hbn", "h", "logits"):
            f[k].retain_grad()
        f["loss"].backward()
    return {k: (f[k].grad if k in f else leaves[k].grad) for k in
            ("logits", "h", "hbn", "hpre", "emb", "W2", "b2", "gamma", "beta", "W1", "b1", "E")}'''
    fb = run_answer("network_backward", source)
    assert fb.score == 0.0 and "done by hand" in fb.message, str(fb)


# ---------------------------------------------------------------- how the grader reads gradients

def test_read_grad_names_the_layout_of_every_shape_a_learner_returns():
    W = torch.zeros(3, 2, dtype=torch.float64)
    dirs = [torch.ones(3, 2, dtype=torch.float64)]
    g = torch.arange(6.0).reshape(3, 2)
    same = read_grad("W", g, W, 5, dirs)
    assert same["layout"] == "own_shape" and same["proj"].tolist() == [15.0]
    assert read_grad("W", g.T, W, 5, dirs) == {"proj": None, "layout": "transposed"}
    assert read_grad("W", torch.zeros(5, 3, 2), W, 5, dirs) == {"proj": None, "layout": "per_example"}
    b = torch.zeros(4, dtype=torch.float64)
    kept = read_grad("b", torch.ones(1, 4), b, 5, [torch.ones(4, dtype=torch.float64)])  # keepdim=True
    assert kept["layout"] == "own_shape" and float(kept["proj"][0]) == 4.0
    with pytest.raises(ValueError, match="shape of its tensor"):
        read_grad("W", torch.zeros(6), W, 5, dirs)
    with pytest.raises(ValueError, match="is None"):
        read_grad("W", None, W, 5, dirs)


def test_a_dict_missing_an_entry_is_told_which():
    X, y, P = net_problem(0, 4, 5, 2, 2, 3, 3)
    with pytest.raises(ValueError, match="no entry for"):
        net_report(lambda X, y, P: {"logits": torch.zeros(4, 3)}, 0, 4, 5, 2, 2, 3, 3)


def test_the_problems_are_fresh_at_every_seed_and_shape():
    ex = registry.get("network_backward")
    shapes = {tuple(v[k] for k in ("n", "v", "t", "d", "h", "c")) for v in ex.variants()}
    assert len(shapes) == len(ex.variants())
    a, b = net_problem(0, 6, 5, 2, 2, 3, 3), net_problem(1, 6, 5, 2, 2, 3, 3)
    assert not torch.equal(a[2]["W1"], b[2]["W1"])


def test_every_embedding_problem_repeats_a_token_within_a_row_and_across_rows():
    ex = registry.get("embedding_backward")
    rng = random.Random(11)
    for p in ex.variants() + [ex.draw(rng) for _ in range(20)]:
        E, X, dout = embedding_problem(**p)
        assert X[0, 0] == X[0, 1] and X[-1, -1] == X[0, 0], p


def test_a_slip_changes_its_layer_and_the_layers_below_only():
    """The lesson: "a slip at one layer shows in its own row and in every row below it"."""
    down = ("logits", "W2", "b2", "h", "hbn", "gamma", "beta", "hpre", "W1", "b1", "emb", "E")
    assert sorted(down) == sorted(NET_ROWS)
    p = registry.get("network_backward").params
    right = bp.net_with()(**p)
    for slips, first in [({"xent": {"mean": False}}, "logits"), ({"tanh": {"from_input": True}}, "hbn"),
                         ({"bn": {"paths": "none"}}, "hpre"), ({"emb": {"how": "assign"}}, "E")]:
        wrong = bp.net_with(**slips)(**p)
        changed = {r for r in NET_ROWS if not torch.allclose(wrong[r]["proj"], right[r]["proj"])}
        assert first in changed and not changed & set(down[:down.index(first)]), (slips, changed)
        assert changed - {"b1"} >= {r for r in down[down.index(first):] if r in STEPS}, (slips, changed)


def test_the_assign_forms_agree_so_the_diagnosis_does_not_depend_on_how_it_is_written():
    E, X, dout = embedding_problem(3, 4, 3, 5, 2)
    a = torch.zeros_like(E)
    a[X] = dout
    b = torch.zeros_like(E)
    b[X] += dout
    c = torch.zeros_like(E)
    c[X.reshape(-1)] = dout.reshape(-1, 2)
    assert torch.equal(a, b) and torch.equal(a, c)
    assert not torch.equal(a, bp.embedding_grad(E, X, dout))
