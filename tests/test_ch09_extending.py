"""Chapter 9 beyond the per-unit self-tests: the facts the lesson states that are not obvious,
shown in torch, and students' Functions, hooks and loops graded on fresh inputs."""

from __future__ import annotations

import math

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable
from torch.autograd.graph import save_on_cpu, saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

from autograder.harness import function_report
from autograder.judge import error_cause
from autograder.selfcheck import grade_feedback
from exercises.ch09_extending import (
    checkpoint_recompute,
    gated_function,
    logging_graph,
    softplus_function,
    square_function_fix,
    ste_clamp_function,
)
from gradtutor.key import registry

F64 = torch.float64


def f64(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=F64, requires_grad=True)


# ---------------------------------------------------------------- 1. custom Functions

def test_forward_of_a_function_runs_unrecorded():
    seen = {}

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            inner = x * 2
            seen["grad_enabled"], seen["inner_requires_grad"] = torch.is_grad_enabled(), inner.requires_grad
            return inner

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    out = Probe.apply(f64(1.0))
    assert seen == {"grad_enabled": False, "inner_requires_grad": False}
    assert type(out.grad_fn).__name__ == "ProbeBackward"  # the whole call is one node


def test_setup_context_style_is_what_torch_func_needs():
    class CtxStyle(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    with pytest.raises(RuntimeError, match="setup_context"):
        torch.func.grad(lambda t: CtxStyle.apply(t).sum())(torch.ones(2))


def test_needs_input_grad_and_a_number_argument():
    flags = []

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            flags.append(ctx.needs_input_grad)
            return g * ctx.factor, None

    x = f64(1.0, 2.0)
    Scale.apply(x, 3.0).sum().backward()
    assert flags == [(True, False)] and x.grad.tolist() == [3.0, 3.0]


def test_a_saved_intermediate_breaks_double_backward_and_recomputing_fixes_it():
    x, y = [1.0, -2.0, 0.5], [0.0, 1.0, -1.5]
    saved = function_report(gated_function._SavedIntermediate.apply,
                            [torch.tensor(x), torch.tensor(y)], torch.ones(3))["report"]
    recomputed = function_report(gated_function._Swapped.apply, [torch.tensor(x), torch.tensor(y)],
                                 torch.ones(3))["report"]
    assert saved["gradcheck"] and not saved["gradgradcheck"]
    assert not recomputed["gradcheck"]  # swapped gradients: gradcheck names the bug


def test_the_wrong_functions_fail_the_check_their_explanations_name():
    x, g = torch.tensor([0.7, -1.2, 2.0]), torch.tensor([1.0, 0.5, -1.0])
    buggy = function_report(square_function_fix._Buggy.apply, [x], g)["report"]
    assert not buggy["gradcheck"]
    detached = function_report(softplus_function._Detached.apply, [torch.tensor([-2.0, 0.5, 800.0])],
                               g)["report"]
    assert detached["gradcheck"] and not detached["gradgradcheck"]
    naive = function_report(softplus_function._Naive.apply, [torch.tensor([-2.0, 0.5, 800.0])], g)["report"]
    assert math.isinf(naive["value"][2].item()) and math.isnan(naive["grad"][2].item())


def test_exp_overflows_in_float64_just_above_709_78():
    assert torch.isfinite(torch.exp(torch.tensor(709.7, dtype=F64)))
    assert torch.isinf(torch.exp(torch.tensor(709.8, dtype=F64)))
    assert 709.7 < math.log(torch.finfo(F64).max) < 709.8  # the bound the softplus prompt prints


def test_a_straight_through_backward_fails_gradcheck_and_none_is_no_gradient():
    x, g = torch.tensor([-3.0, 0.25, 2.5, -0.5]), torch.tensor([1.0, -2.0, 0.5, 1.5])
    true_clamp = function_report(lambda t: ste_clamp_function._TrueClamp.apply(t, -1.0, 1.0), [x], g,
                                 second=False)["report"]
    assert true_clamp["gradcheck"]
    assert true_clamp["grad"].tolist() == [0.0, -2.0, 0.0, 1.5]
    ste = function_report(lambda t: t + (t.clamp(-1.0, 1.0) - t).detach(), [x], g, second=False)["report"]
    assert not ste["gradcheck"] and ste["grad"].tolist() == g.tolist()
    none = function_report(lambda t: ste_clamp_function._NoneBackward.apply(t, -1.0, 1.0), [x], g,
                           second=False)["report"]
    assert none["grad"] is None


def test_mark_non_differentiable_and_once_differentiable():
    index_grads = []

    class MaxWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            value, index = x.max(dim=0)
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(index)
            ctx.n = x.shape[0]
            return value, index

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_value, grad_index):
            index_grads.append(grad_index)
            (index,) = ctx.saved_tensors
            grad = torch.zeros(ctx.n, dtype=grad_value.dtype)
            grad[index] = grad_value
            return grad

    x = f64(0.5, 3.0, -1.0)
    value, index = MaxWithIndex.apply(x)
    assert value.requires_grad and not index.requires_grad
    torch.autograd.grad(value, x, retain_graph=True)
    assert index_grads[0].shape == index.shape and not index_grads[0].any()  # always zeros
    assert not gradgradcheck(lambda t: MaxWithIndex.apply(t)[0], (x,), raise_exception=False)
    (g,) = torch.autograd.grad(value**2, x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


# ---------------------------------------------------------------- 2. hooks

def test_a_tensor_hook_runs_once_with_the_sum_and_its_return_replaces_the_gradient():
    x = f64(1.2)
    y = 2.5 * x
    calls = []
    y.register_hook(lambda grad: calls.append(grad.item()) or 2 * grad)
    (y * y + 3 * y).backward()
    assert calls == [pytest.approx(2 * 3.0 + 3)]
    assert x.grad.item() == pytest.approx(2 * 9.0 * 2.5)


def test_leaf_hook_sees_the_incoming_gradient_post_hook_the_sum_and_only_on_leaves():
    w = f64(1.5)
    pre, post = [], []
    w.register_hook(lambda grad: pre.append(grad.item()))
    w.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.item()))
    (3 * w).sum().backward()
    (2 * w * w).sum().backward()
    assert pre == [3.0, 6.0] and post == [3.0, 9.0]
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_removing_a_handle_removes_the_hook():
    w = f64(2.0, -3.0)
    handle = w.register_hook(lambda grad: grad.clamp(-1, 1))
    (w**2).sum().backward()
    assert w.grad.tolist() == [1.0, -1.0]
    handle.remove()
    w.grad = None
    (w**2).sum().backward()
    assert w.grad.tolist() == [4.0, -6.0]


def test_module_backward_hook_grad_input_is_at_the_input_and_none_for_data():
    lin = torch.nn.Linear(2, 2, dtype=F64)
    seen = {}
    lin.register_full_backward_hook(lambda m, gi, go: seen.update(gi=gi[0], go=go[0]))
    c = torch.tensor([1.0, -1.0], dtype=F64)
    (lin(f64(1.0, 2.0)) * c).sum().backward()
    assert torch.allclose(seen["gi"], lin.weight.detach().T @ c) and torch.equal(seen["go"], c)
    with pytest.warns(UserWarning, match="module outputs"):
        (lin(torch.tensor([1.0, 2.0], dtype=F64)) * c).sum().backward()
    assert seen["gi"] is None  # the input needs no gradient: the hook still fires, with None


# ---------------------------------------------------------------- 3. parameters and optimizers

def test_frozen_parameter_has_no_grad_and_sgd_skips_it():
    a, b = f64(0.5), f64(1.0)
    b.requires_grad_(False)
    opt = torch.optim.SGD([a, b], lr=0.1)
    (a * b).sum().backward()
    opt.step()
    assert b.grad is None and b.item() == 1.0 and a.item() == pytest.approx(0.4)


def test_param_groups_fall_back_to_the_defaults():
    a, b = f64(1.0), f64(2.0)
    opt = torch.optim.SGD([{"params": [a], "lr": 1e-4}, {"params": [b]}], lr=1e-2, momentum=0.9)
    assert [(g["lr"], g["momentum"]) for g in opt.param_groups] == [(1e-4, 0.9), (1e-2, 0.9)]


@pytest.mark.parametrize("make", [lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)],
                         ids=["sgd_momentum", "adamw_weight_decay"])
def test_a_zero_grad_still_moves_a_parameter_none_does_not(make):
    moved = {}
    for set_to_none in (True, False):
        w = f64(1.0)
        opt = make([w])
        (w * w).sum().backward()
        opt.step()
        before = w.item()
        opt.zero_grad(set_to_none=set_to_none)
        opt.step()
        moved[set_to_none] = w.item() != before
    assert moved == {True: False, False: True}


def test_zero_grad_sets_none_by_default():
    w = f64(1.0)
    opt = torch.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad()
    assert w.grad is None


def test_clip_grad_norm_returns_the_norm_before_clipping_and_uses_one_scale():
    w1, w2 = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    w1.grad, w2.grad = torch.tensor([3.0, 0.0]), torch.tensor([0.0, 4.0])
    total = torch.nn.utils.clip_grad_norm_([w1, w2], 1.0)
    assert total.item() == 5.0
    assert torch.allclose(w1.grad, torch.tensor([3.0, 0.0]) / (5 + 1e-6))
    assert torch.allclose(w2.grad, torch.tensor([0.0, 4.0]) / (5 + 1e-6))
    w1.grad, w2.grad = torch.tensor([0.3, 0.0]), torch.tensor([0.0, 0.4])
    torch.nn.utils.clip_grad_norm_([w1, w2], 1.0)
    assert w1.grad.tolist() == pytest.approx([0.3, 0.0])  # below max_norm: untouched


def test_post_accumulate_hook_steps_inside_backward():
    p = f64(1.0, 2.0)
    opt = torch.optim.SGD([p], lr=0.1)

    def step_now(param):
        opt.step()
        opt.zero_grad()

    p.register_post_accumulate_grad_hook(step_now)
    p.sum().backward()
    assert p.grad is None and p.tolist() == pytest.approx([0.9, 1.9])


# ---------------------------------------------------------------- 4. memory

def test_running_total_keeps_every_graph_and_item_detach_keep_none():
    assert logging_graph.reference(n=7, w0=1.0) == {"loss": {"graphs": 7}, "item": {"graphs": 0},
                                                     "detach": {"graphs": 0}}
    w = torch.tensor(1.0, dtype=F64, requires_grad=True)
    total = torch.zeros((), dtype=F64)
    total += (w - 1) ** 2
    assert total.requires_grad and total.grad_fn is not None  # an in-place add on a plain tensor


def _block(t: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.sin(t) ** 2)


def packed_by(store: list):
    def pack(t: torch.Tensor) -> torch.Tensor:
        store.append(t)
        return t
    return pack


def test_saved_tensor_hooks_see_three_saved_and_checkpoint_keeps_only_the_input():
    counts = {}
    for use_checkpoint in (False, True):
        x = f64(0.5, 1.0, -1.0)
        packed: list[torch.Tensor] = []
        with saved_tensors_hooks(packed_by(packed), lambda t: t):
            out = checkpoint(_block, x, use_reentrant=False) if use_checkpoint else _block(x)
        out.sum().backward()
        counts[use_checkpoint] = (len(packed), packed[0] is x, x.grad.clone())
    assert counts[False][:2] == (3, True) and counts[True][:2] == (1, True)
    assert torch.equal(counts[False][2], counts[True][2])


def test_checkpoint_reruns_the_block_and_keeps_the_gradients():
    ref = checkpoint_recompute.reference([0.5, -1.0])
    assert ref["plain"]["runs"] == 1 and ref["checkpoint"]["runs"] == 2
    assert torch.equal(ref["plain"]["grad"], ref["checkpoint"]["grad"])


def test_save_on_cpu_on_a_cpu_graph_gives_the_same_gradient():
    x = f64(0.5, 1.0)
    with save_on_cpu():
        _block(x).sum().backward()
    y = f64(0.5, 1.0)
    _block(y).sum().backward()
    assert torch.equal(x.grad, y.grad)


# ---------------------------------------------------------------- 5. forward mode

def test_dual_tangent_is_jv_and_jacfwd_equals_jacrev():
    def f(t):
        return torch.stack([t[0] * t[1], torch.sin(t[2]) + t[0] ** 2, t[1] * t[2]])

    x, v = torch.tensor([1.0, 2.0, 0.5], dtype=F64), torch.tensor([1.0, 0.0, -1.0], dtype=F64)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(f(fwAD.make_dual(x, v))).tangent
    J = torch.func.jacrev(f)(x)
    assert torch.allclose(tangent, J @ v) and not torch.allclose(tangent, v @ J)
    assert torch.allclose(torch.func.jacfwd(f)(x), J)


def test_hessian_is_jacfwd_of_jacrev():
    def f(t):
        return (t**3).sum() + t[0] * t[1]

    x = torch.tensor([1.0, -2.0], dtype=F64)
    assert torch.allclose(torch.func.hessian(f)(x), torch.func.jacfwd(torch.func.jacrev(f))(x))


# ---------------------------------------------------------------- 6. gradients that are not there

def test_unused_none_round_zero_comparison_none_and_materialize():
    a, b, c, d = f64(2.0), f64(3.0), f64(1.3), f64(0.5)
    out = a * a + torch.round(c) * a + (d > 0).double() * a
    grads = torch.autograd.grad(out, (a, b, c, d), allow_unused=True, retain_graph=True)
    assert grads[1] is None and grads[2].item() == 0.0 and grads[3] is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        torch.autograd.grad(out, (a, b), retain_graph=True)
    zeros = torch.autograd.grad(out, (b,), allow_unused=True, materialize_grads=True)
    assert zeros[0].item() == 0.0


def test_argmax_casts_and_comparisons_have_no_graph_but_indexing_does():
    x = f64(1.0, 5.0, 2.0)
    for t in (x.argmax(), x.long(), x > 1):
        assert t.grad_fn is None and not t.requires_grad
    assert torch.round(x).grad_fn is not None
    x[x.argmax()].backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]


def test_the_detach_trick_has_round_values_and_identity_gradient():
    x = f64(0.3, 1.7, -2.2)
    y = x + (torch.round(x) - x).detach()
    y.backward(torch.tensor([1.0, -0.5, 2.0], dtype=F64))
    assert y.tolist() == [0.0, 2.0, -2.0] and x.grad.tolist() == [1.0, -0.5, 2.0]
    assert not gradcheck(lambda t: t + (torch.round(t) - t).detach(), (f64(0.3, 1.7),),
                         raise_exception=False)


# ---------------------------------------------------------------- students' code, graded fresh

def _grade(exercise_id: str, source: str):
    ex = registry.get(exercise_id)
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    exec(source, ns)
    return grade_feedback(exercise_id, ns[ex.answer], namespace=ns, history=[source, "grade cell"])


SQUARE = """class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return {backward}
"""

STUDENTS = {
    "square: right, written as x + x": ("square_function_fix", SQUARE.format(backward="grad_out * (x + x)"),
                                       "correct", None),
    "square: chapter 2's bug": ("square_function_fix", SQUARE.format(backward="grad_out * x"),
                                "wrong", "power_rule"),
    "square: cheats with a fake report": (
        "square_function_fix",
        SQUARE.format(backward="grad_out * x")
        + "\ndef function_report(*a, **k):\n    return {'report': {}}\n", "wrong", "power_rule"),
    "softplus: numpy backward under once_differentiable": ("softplus_function", """
from torch.autograd.function import once_differentiable

class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.from_numpy(1 / (1 + __import__("numpy").exp(-x.numpy())))
""", "wrong", "backward_not_differentiable"),
    "accumulation: zero_grad inside the loop": ("grad_accumulation", """
def accumulated_grad(w, X, Y, k):
    for X_mb, Y_mb in zip(X.chunk(k), Y.chunk(k)):
        w.grad = None
        (torch.nn.functional.mse_loss(X_mb @ w, Y_mb) / k).backward()
    return w.grad
""", "wrong", "accumulation"),
    "clip hook: clamps but returns nothing": ("clip_hook", """
def attach_clip(w, c):
    def hook(grad):
        grad.clamp(-c, c)
    return w.register_hook(hook)
""", "wrong", "hook_return_ignored"),
    "dual numbers: torch.func.jvp is right too": ("dual_jvp", """
def jvp_dual(f, x, v):
    return torch.func.jvp(f, (x,), (v,))[1]
""", "correct", None),
    "saved tensors: counted once per distinct tensor": ("saved_tensor_count", """
def count_saved(fn, x):
    seen = set()
    def pack(t):
        seen.add(id(t))
        return t
    with saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
    return len(seen)
""", "wrong", "saved_per_use"),
    "saved tensors: the lesson's list-append counter": ("saved_tensor_count", """
def count_saved(fn, x):
    packed = []
    with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        fn(x)
    return len(packed)
""", "correct", None),
    "ste round: detach on the wrong term": ("round_ste", """
def round_ste(x):
    return x.detach() + (torch.round(x) - x)
""", "wrong", "detach_cuts_path"),
}


@pytest.mark.parametrize("name", STUDENTS)
def test_students_code_is_graded_on_fresh_inputs(name):
    exercise_id, source, verdict, misconception = STUDENTS[name]
    fb = _grade(exercise_id, source)
    assert fb.verdict == verdict, str(fb)
    assert fb.misconception == misconception, str(fb)


def test_a_typed_in_report_earns_only_part_of_the_credit():
    ex = registry.get("square_function_fix")
    shown = square_function_fix.reference(**ex.params)
    source = f"""values = {shown['report']['value'].tolist()}
grads = {shown['report']['grad'].tolist()}

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.tensor(values, dtype=torch.float64)

    @staticmethod
    def backward(ctx, grad_out):
        return torch.tensor(grads, dtype=torch.float64)
"""
    fb = _grade("square_function_fix", source)
    assert fb.verdict != "correct" and fb.score < 1.0, str(fb)


def test_every_chapter_9_unit_is_in_the_lesson_and_has_a_misconception_of_its_own():
    from gradtutor.key.misconceptions import CATALOGUE

    chapter = next(c for c in registry.chapters() if c.number == 9)
    ids = chapter.exercise_ids()
    assert len(ids) >= 14 and len(set(ids)) == len(ids)
    new = {w.misconception for eid in ids for w in registry.get(eid).wrong}
    assert new <= set(CATALOGUE)
    first_use = {}
    for c in registry.chapters():
        for eid in c.exercise_ids():
            for w in registry.get(eid).wrong:
                first_use.setdefault(w.misconception, c.number)
    assert sum(1 for m in new if first_use[m] == 9) >= 10


# ---------------------------------------------------------------- the widget

def test_clip_explorer_shows_torch_and_the_formula_and_follows_the_slider():
    import ipywidgets

    from autograder import clip_explorer
    from autograder.visual.widgets import clipped_gradients

    box = clip_explorer()
    assert isinstance(box, ipywidgets.VBox) and bytes(box.plot.value).startswith(b"\x89PNG")
    total = math.sqrt(1.5**2 + 2.0**2 + 0.5**2 + 1.0**2 + 0.25**2)
    assert box.numbers["returned"] == pytest.approx(total) == box.numbers["total_by_hand"]
    assert box.numbers["norm_after"] == pytest.approx(1.0, rel=1e-5)
    before = bytes(box.plot.value)
    box.controls["max_norm"].value = 4.0  # above the total norm: nothing is clipped
    assert bytes(box.plot.value) != before
    assert box.numbers["scale"] == 1.0 and box.numbers["norm_after"] == pytest.approx(total)
    c = clipped_gradients([[3.0, 0.0], [0.0, 4.0]], 1.0)
    assert torch.allclose(c["by_norm"], torch.tensor(c["by_norm_by_hand"], dtype=F64))
    assert c["by_value"].tolist() == [1.0, 0.0, 0.0, 1.0]  # clamps entries, turns the direction


def test_what_each_node_of_the_block_saves():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    out = _block(x)
    exp_node = out.grad_fn
    pow_node = exp_node.next_functions[0][0]
    sin_node = pow_node.next_functions[0][0]
    assert torch.equal(exp_node._saved_result, out)  # exp saves its output
    assert torch.equal(pow_node._saved_self, torch.sin(x))  # the square saves its input sin x
    assert sin_node._saved_self is x  # sin saves x itself


def test_sign_and_floor_are_recorded_with_a_zero_gradient():
    t = torch.tensor([0.3, -1.7], requires_grad=True)
    (torch.sign(t) + torch.floor(t)).sum().backward()
    assert t.grad.tolist() == [0.0, 0.0]


def test_float32_softplus_written_out_overflows_near_88_7_but_f_softplus_does_not():
    assert 88.7 < math.log(torch.finfo(torch.float32).max) < 88.8
    xs = torch.tensor([88.0, 89.0])
    assert torch.isinf(torch.log(1 + torch.exp(xs))).tolist() == [False, True]
    assert torch.nn.functional.softplus(torch.tensor(100.0)).item() == 100.0


def test_grad_scaler_scales_grads_until_unscale_and_clipping_then_sees_the_true_norm():
    w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    scaler.scale((w * w).sum() / 2).backward()
    assert w.grad.tolist() == [3072.0, 4096.0]
    scaler.unscale_(opt)
    assert torch.nn.utils.clip_grad_norm_([w], 1.0).item() == pytest.approx(5.0)
    scaler.step(opt)
    assert w.tolist() == pytest.approx([3.0 - 0.1 * 0.6, 4.0 - 0.1 * 0.8], rel=1e-5)


def test_gradgradcheck_checks_the_backward_s_derivative_not_the_backward():
    x = torch.tensor([0.7, -1.2, 2.0])
    buggy = function_report(square_function_fix._Buggy.apply, [x], torch.ones(3))["report"]
    assert not buggy["gradcheck"] and buggy["gradgradcheck"]


def test_mul_saves_both_operands_relu_and_sigmoid_their_output_log_and_add_as_stated():
    t = torch.tensor([0.5, -1.0], requires_grad=True)
    prod = t * t
    assert prod.grad_fn._saved_self is t and prod.grad_fn._saved_other is t
    r = torch.relu(t)
    assert torch.equal(r.grad_fn._saved_result, r)
    s = torch.sigmoid(torch.log(t.abs() + 1))
    assert torch.equal(s.grad_fn._saved_result, s)
    added = t + t
    assert not [a for a in dir(added.grad_fn) if a.startswith("_saved_") and a != "_saved_alpha"]


# ---------------------------------------------------------------- inputs of different shapes (issue #26)

LINEAR = """class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, W, b):
        ctx.save_for_backward(x, W)
        return x.mm(W.t()) + b

    @staticmethod
    def backward(ctx, g):
        x, W = ctx.saved_tensors
        return g.mm(W), {grad_W}, {grad_b}
"""


def test_linear_function_unsummed_bias_gradient_is_summed_by_autograd_and_passes():
    fb = _grade("linear_function", LINEAR.format(grad_W="g.t().mm(x)", grad_b="g"))
    assert fb.verdict == "correct" and fb.score == 1.0, str(fb)


def test_linear_function_transposed_weight_gradient_is_not_accepted():
    fb = _grade("linear_function", LINEAR.format(grad_W="x.t().mm(g)", grad_b="g.sum(0)"))
    assert fb.verdict != "correct" and fb.score < 1.0, str(fb)


def test_linear_function_bias_mean_is_named():
    fb = _grade("linear_function", LINEAR.format(grad_W="g.t().mm(x)", grad_b="g.mean(0)"))
    assert fb.verdict != "correct" and fb.misconception == "broadcast_sums", str(fb)


# ------------------------------------------------ set_materialize_grads and torch.func (issue #26)

SINCOS = """class SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{off}        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
{body}"""
CHECKED = """        grad = torch.zeros_like(x)
        if g_sin is not None:
            grad = grad + g_sin * torch.cos(x)
        if g_cos is not None:
            grad = grad - g_cos * torch.sin(x)
        return grad
"""
OFF = "        ctx.set_materialize_grads(False)\n"


@pytest.mark.parametrize("off, body, misconception", [
    (OFF, CHECKED, None),
    ("", CHECKED, "materialize_grads"),  # right gradients, but zeros arrive for the unused output
    (OFF, "        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n", "materialize_grads"),  # None * tensor
    (OFF, "        if g_sin is None or g_cos is None:\n            return None\n" + CHECKED,
     "backward_none_is_zero"),
])
def test_sincos_none_grads_reads_what_arrives_in_backward(off, body, misconception):
    fb = _grade("sincos_none_grads", SINCOS.format(off=off, body=body))
    if misconception is None:
        assert fb.verdict == "correct", str(fb)
    else:
        assert fb.verdict != "correct" and fb.misconception == misconception, str(fb)


LSE = """class LogSumExp(torch.autograd.Function):
{rule}
    @staticmethod
    def forward(x):
        return torch.logsumexp(x, 0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * torch.exp(x - out)
"""
LSE_CTX = """class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x):
        out = torch.logsumexp(x, 0)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * torch.exp(x - out)
"""


@pytest.mark.parametrize("source, misconception", [
    (LSE.format(rule="    generate_vmap_rule = True"), None),
    (LSE.format(rule=""), "vmap_rule"),  # grad and jacrev work, vmap does not
    (LSE_CTX, "func_setup_context"),  # forward(ctx, x): every torch.func transform refuses it
])
def test_logsumexp_vmap_is_graded_under_the_transforms(source, misconception):
    fb = _grade("logsumexp_vmap", source)
    if misconception is None:
        assert fb.verdict == "correct", str(fb)
    else:
        assert fb.verdict != "correct" and fb.misconception == misconception, str(fb)


def test_a_function_backward_that_uses_autograd_is_refused_under_the_transforms_too():
    source = LSE.format(rule="    generate_vmap_rule = True").replace(
        "        return g * torch.exp(x - out)",
        "        with torch.enable_grad():\n            t = x.detach().requires_grad_()\n"
        "            return (g * torch.autograd.grad(torch.logsumexp(t, 0), t)[0],)")
    fb = _grade("logsumexp_vmap", source)
    assert fb.score == 0.0 and "done by hand" in str(fb), str(fb)


@pytest.mark.parametrize("grads, misconception", [
    ("g.mm(W), g.t().mm(x)", "custom_grad_order"),       # two gradients for three inputs
    ("g.mm(W), x.t().mm(g), g.sum(0)", "matmul_transpose"),  # the weight's gradient transposed
])
def test_torchs_error_about_a_backwards_gradients_names_the_mistake(grads, misconception):
    fb = _grade("linear_function", LINEAR.replace("return g.mm(W), {grad_W}, {grad_b}", f"return {grads}"))
    assert fb.verdict == "invalid" and fb.misconception == misconception, str(fb)
    assert fb.explanation and fb.hint


def test_an_error_without_its_text_gets_no_cause():
    text = "function LinearBackward returned an incorrect number of gradients (expected 3, got 2)"
    assert error_cause({"t": "error", "v": "RuntimeError", "text": text})[0] == "custom_grad_order"
    assert error_cause({"t": "error", "v": "RuntimeError"}) is None  # the sandbox sends no text
    assert error_cause({"t": "error", "v": "ValueError", "text": text}) is None  # another exception
    shapes = "returned an invalid gradient at index 2 - got [4] but expected shape compatible with [2]"
    assert error_cause({"t": "error", "v": "RuntimeError", "text": shapes}) is None  # not a transpose
