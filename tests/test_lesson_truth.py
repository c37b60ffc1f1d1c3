"""The lessons' statements about torch, checked against torch (issue #14, must-show 1).

Each test runs the fact a lesson states, and where a lesson used to state the opposite, a second
assertion keeps the wrong sentence from coming back.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

from gradtutor.key import registry

REPO = Path(__file__).resolve().parents[1]


def lesson(slug: str) -> str:
    return " ".join((REPO / "exercises" / slug / "lesson.md").read_text().split())


# ---------------------------------------------------------------- 1. fan-out is not accumulation


def test_fanout_is_summed_by_the_engine_before_grad_is_written():
    """z = x*y + x**2 at (2, 3): the hook on x fires once, with 3 + 4 = 7, and .grad is
    written once."""
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    arrivals: list[float] = []
    writes: list[float] = []
    x.register_hook(lambda g: arrivals.append(g.item()))
    x.register_post_accumulate_grad_hook(lambda t: writes.append(t.grad.item()))
    (x * y + x**2).backward()
    assert arrivals == [7.0]
    assert writes == [7.0]


def test_fanout_at_an_intermediate_tensor_is_summed_too_and_it_keeps_no_grad():
    x = torch.tensor(2.0, requires_grad=True)
    m = x * 3  # m = 6 feeds m*m and + m
    arrivals: list[float] = []
    m.register_hook(lambda g: arrivals.append(g.item()))
    (m * m + m).backward()
    assert arrivals == [2 * 6.0 + 1]
    with pytest.warns(UserWarning):
        assert m.grad is None  # a non-leaf: the sum passed through, nothing was stored


def test_grad_accumulates_across_backward_calls():
    x = torch.tensor(2.0, requires_grad=True)
    for _ in range(3):
        (x**2).backward()
    assert x.grad.item() == 3 * 4.0


def test_lessons_no_longer_give_fanout_as_the_reason_grad_accumulates():
    assert "it is why PyTorch *accumulates*" not in lesson("ch01_graphs")
    assert "accumulating into `.grad` does exactly that" not in lesson("ch03_mechanics")
    from autograder.visual import widgets
    assert not any("add up in x.grad" in step for step in widgets.CHAIN_STEPS)
    explanations = " ".join(w.explanation for w in registry.get("fanout_xy").wrong)
    assert "adds them in x.grad" not in explanations


# ---------------------------------------------------------------- 2. what a leaf is


def test_every_tensor_that_does_not_require_grad_is_a_leaf():
    made = torch.tensor(2.0) * 3
    assert made.is_leaf and made.grad_fn is None
    u = torch.tensor(1.5, requires_grad=True)
    with torch.no_grad():
        quiet = u * 2
    assert quiet.is_leaf and not quiet.requires_grad
    assert u.detach().is_leaf
    recorded = u * 2
    assert not recorded.is_leaf and recorded.grad_fn is not None


def test_chapter_1_defines_a_leaf_by_its_missing_grad_fn():
    text = lesson("ch01_graphs")
    assert "A leaf was not produced by any operation" not in text
    assert "`(torch.tensor(2.) * 3).is_leaf` is `True`" in text


# ---------------------------------------------------------------- 3. the (x / div)[mask] example


def test_masked_division_example_gives_nan_and_is_credited_to_the_maskedtensor_tutorial():
    x = torch.tensor([1.0, 1.0], requires_grad=True)
    div = torch.tensor([0.0, 1.0])
    (x / div)[div != 0].backward()
    assert math.isnan(x.grad[0].item()) and x.grad[1].item() == 1.0
    text = lesson("ch07_kinks")
    assert "PyTorch's own autograd notes" not in text
    assert "*MaskedTensor Overview* tutorial" in text and "issue #4132" in text


# ---------------------------------------------------------------- 4. softmax overflow


def _by_hand(z: list[float], target: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    t = torch.tensor(z, requires_grad=True)  # float32, as in the lesson
    p = t.exp() / t.exp().sum()
    loss = -p[target].log()
    loss.backward()
    return p.detach(), loss.detach(), t.grad


def test_chapter_7_overflow_demo_loss_is_inf_and_only_the_gradient_is_nan():
    p, loss, grad = _by_hand([500.0, 0.0, 3.0], 2)
    assert math.isnan(p[0].item()) and p[1:].tolist() == [0.0, 0.0]
    assert loss.item() == math.inf
    assert torch.isnan(grad).all()
    text = lesson("ch07_kinks")
    assert "`inf / inf` is NaN." not in text
    assert "$-\\log 0 = +\\infty$, not NaN" in text


def test_softmax_overflow_probabilities_are_nan_and_zero():
    ex = registry.get("softmax_overflow")
    p, loss, _ = _by_hand(ex.params["z"], ex.params["target"])
    assert math.isnan(p[0].item()) and p[1].item() == 0.0  # p = [nan, 0.], not [nan, nan]
    assert loss.item() == math.inf
    explanations = " ".join(w.explanation for w in ex.wrong)
    assert "probabilities inf/inf = NaN" not in explanations


def test_fused_cross_entropy_is_finite_at_the_same_logits():
    z = torch.tensor([500.0, 0.0, 3.0], requires_grad=True)
    loss = F.cross_entropy(z[None], torch.tensor([2]))
    loss.backward()
    assert math.isfinite(loss.item()) and torch.isfinite(z.grad).all()


# ---------------------------------------------------------------- 5. torch.func.grad's mechanism


def test_func_grad_calls_autograd_grad_with_create_graph_and_allow_unused():
    calls: list[dict] = []
    real = torch.autograd.grad

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    with mock.patch.object(torch.autograd, "grad", spy):
        value = torch.func.grad(lambda t: t**3)(torch.tensor(2.0))
    assert value.item() == 12.0
    assert calls and all(c.get("create_graph") is True and c.get("allow_unused") is True for c in calls)


def test_func_grad_fills_zeros_where_no_output_requires_grad():
    c = 2.0
    assert torch.func.grad(torch.func.grad(lambda t: c * t))(torch.tensor(1.0)).item() == 0.0
    # and the function's output not depending on its input at all: zeros, no error
    assert torch.func.grad(lambda t: torch.tensor(3.0))(torch.tensor(1.0)).item() == 0.0
    t = torch.tensor(1.0, requires_grad=True)
    (first,) = torch.autograd.grad(c * t, t, create_graph=True)
    assert first.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(first, t)


def test_chapter_8_no_longer_says_func_traces_the_function_afresh():
    text = lesson("ch08_higher")
    assert "because it traces" not in text
    assert "create_graph=True, allow_unused=True" in text
    explanations = " ".join(w.explanation for w in registry.get("func_errors").wrong)
    assert "traces the function itself" not in explanations


# ---------------------------------------------------------------- 6. CS231n's thresholds

CS231N_BANDS = [  # (relative error, verdict) well inside each of CS231n's four bands
    (0.3, "wrong"), (2e-2, "wrong"), (5e-3, "uncomfortable"), (2e-4, "uncomfortable"),
    (5e-5, "kinks_only"), (3e-7, "kinks_only"), (5e-8, "happy"), (1e-12, "happy")]


@pytest.mark.parametrize(("r", "verdict"), CS231N_BANDS)
def test_relative_error_verdicts_are_cs231ns_four_bands(r, verdict):
    from exercises.ch02_numerics.relative_error_table import verdict as graded_verdict
    assert graded_verdict(r) == verdict


def test_chapter_2_quotes_cs231n_exactly():
    text = lesson("ch02_numerics")
    for quote in ('"relative error > 1e-2 usually means the gradient is probably wrong"',
                  '"1e-2 > relative error > 1e-4 should make you feel uncomfortable"',
                  '"1e-4 > relative error is usually okay for objectives with kinks.',
                  '"1e-7 and less you should be happy."'):
        assert quote in text
    assert "$10^{-7} \\le r \\le 10^{-2}$ deserves a closer look" not in text


def test_every_shown_variant_of_relative_error_table_uses_all_four_bands():
    ex = registry.get("relative_error_table")
    for params in ex.variants():
        verdicts = {row["verdict"] for row in ex.reference(**params).values()}
        assert verdicts == {"happy", "kinks_only", "uncomfortable", "wrong"}


# ---------------------------------------------------------------- 7. prompts name the graded variable


def test_jvp_column_prompt_asks_for_the_graded_name():
    prompt = registry.get("jvp_column").prompt_text()
    assert "tangent_out" not in prompt and "`column`" in prompt


@pytest.mark.parametrize("eid", registry.ids())
def test_a_prompt_that_asks_what_a_name_is_asks_for_the_answer(eid):
    ex = registry.get(eid)
    for asked in re.findall(r"[Ww]hat (?:is|are) `([A-Za-z_]\w*)`", ex.prompt):
        assert asked == ex.answer, f"{eid}: the prompt asks for `{asked}`, the grader reads `{ex.answer}`"


# ---------------------------------------------------------------- seed 002: ReLU'(0) and the documented rule


def _slope_at_zero(fn) -> float:
    x = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    fn(x).backward()
    return x.grad.item()


def test_relu_and_abs_at_zero_take_the_minimum_norm_subgradient_not_the_left_slope():
    assert _slope_at_zero(torch.relu) == 0.0  # sub-gradients [0, 1]: minimum norm 0
    assert _slope_at_zero(torch.abs) == 0.0  # sub-gradients [-1, 1]: 0, not the left slope -1


def test_clamp_and_maximum_do_not_follow_the_minimum_norm_rule():
    assert _slope_at_zero(lambda t: t.clamp(min=0)) == 1.0
    assert _slope_at_zero(lambda t: torch.maximum(t, torch.zeros_like(t))) == 0.5


def test_chapter_7_quotes_the_documented_rule():
    text = lesson("ch07_kinks")
    assert "*Gradients for non-differentiable functions*" in text
    assert ("If the function is convex (at least locally), use the sub-gradient of minimum norm "
            "(it is the steepest descent direction).") in text


# ---------------------------------------------------------------- further statements checked on the second read


def test_one_minus_sigmoid_is_exactly_zero_in_float32_from_about_17():
    xs = torch.linspace(0, 30, 3001)  # float32, as in chapter 7 §5
    first_zero = xs[(1 - torch.sigmoid(xs)) == 0][0].item()
    assert 16.5 < first_zero < 17.5
    assert torch.sigmoid(torch.tensor(20.0)).item() == 1.0


def test_a_graph_that_saved_nothing_can_be_walked_twice_but_x_times_2_saves():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x - 3).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("corner", [-1.0, 1.0])
def test_hardtanh_corners_are_flat_and_clamp_passes_them(corner):
    assert _slope_at(F.hardtanh, corner) == 0.0
    assert _slope_at(lambda t: t.clamp(-1, 1), corner) == 1.0


def _slope_at(fn, at: float) -> float:
    x = torch.tensor(at, dtype=torch.float64, requires_grad=True)
    fn(x).backward()
    return x.grad.item()


def test_gradcheck_defaults_are_the_ones_chapter_2_quotes():
    import inspect

    params = inspect.signature(torch.autograd.gradcheck).parameters
    assert (params["eps"].default, params["atol"].default, params["rtol"].default) == (1e-6, 1e-5, 1e-3)


def test_inference_tensors_cannot_be_saved_but_no_grad_results_can():
    u = torch.tensor(2.0, requires_grad=True)
    with torch.inference_mode():
        frozen = torch.tensor([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (u * frozen).sum().backward()
    with torch.no_grad():
        quiet = torch.tensor([1.0, 2.0]) * 2
    (u * quiet).sum().backward()
    assert u.grad.item() == 6.0


def test_backward_with_create_graph_then_grad_backward_accumulates_f1_plus_f2():
    x = torch.tensor(3.0, requires_grad=True)
    with pytest.warns(UserWarning):  # chapter 8 says PyTorch warns about a reference cycle
        (x**2).backward(create_graph=True)
    x.grad.backward()
    assert x.grad.item() == 6.0 + 2.0


# ---------------------------------------------------------------- what the errors protect you from


def test_each_protection_is_keyed_by_a_message_torch_really_prints():
    from exercises.ch03_mechanics._protections import MESSAGES, protection_of

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    snippets = {
        "guessed_seed": lambda: (x**2).backward(),
        "no_nudge": lambda: torch.tensor([1, 2], requires_grad=True),
        "never_updated": lambda: torch.optim.SGD([torch.tensor([1.0], requires_grad=True).double()], lr=0.1),
    }

    def twice() -> None:
        y = (x**3).sum()
        y.backward()
        y.backward()

    def stale() -> None:
        y = x.sigmoid()
        y.mul_(2)
        y.sum().backward()

    def inference() -> None:
        with torch.inference_mode():
            t = torch.tensor([1.0, 2.0]) * 2
        (x * t).sum().backward()

    snippets.update(freed_values=twice, stale_value=stale, unversioned_save=inference)
    assert set(snippets) == set(MESSAGES.values())
    for key, action in snippets.items():
        assert protection_of(action) == key


def test_inference_tensors_have_no_version_counter_and_no_grad_results_do():
    with torch.inference_mode():
        frozen = torch.tensor([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="do not track version counter"):
        frozen._version  # noqa: B018 - reading it is the test
    with torch.no_grad():
        quiet = torch.tensor([1.0, 2.0]) * 2
    assert quiet._version == 0


def test_a_non_leafs_grad_is_never_filled():
    w = torch.tensor([0.5, -1.5], requires_grad=True).double()
    (w**2).sum().backward()
    with pytest.warns(UserWarning):
        assert w.grad is None


# --- predict, then run (issue #14, must-show 3) ---------------------------------------------

def _numbered_sections(lesson: str) -> list[tuple[str, str]]:
    parts = re.split(r"(?m)^(## \d+\..*)$", lesson)
    return [(parts[i], re.split(r"(?m)^## ", parts[i + 1])[0]) for i in range(1, len(parts), 2)]


LESSONS = sorted(REPO.glob("exercises/ch*/lesson.md"))


@pytest.mark.parametrize("path", LESSONS, ids=[p.parent.name for p in LESSONS])
def test_every_section_asks_for_a_prediction_before_it_runs(path: Path) -> None:
    """Each numbered section with a demo asks the student to predict before a cell that then
    answers the question (a demo or an exercise): the prose right before that cell says so."""
    missing = []
    for head, body in _numbered_sections(path.read_text()):
        if "```python" not in body:
            continue  # a section that is one exercise and no demo
        prose_before_blocks = re.split(r"```(?:python|exercise)\n.*?```", body, flags=re.S)[:-1]
        if not any(re.search(r"\bpredict\b", prose, re.I) for prose in prose_before_blocks):
            missing.append(head)
    assert not missing, missing


# --- the second read of chapters 5, 6 and 8 (docs/lesson-review.md) --------------------------

def test_xor_target_is_uncorrelated_with_the_inputs_not_orthogonal_to_them():
    """Chapter 5 §3 said the XOR truth table is orthogonal to both input columns; its dot products
    with them are 1. Centred, it is orthogonal, so the least-squares fit is w = 0, b = 1/2."""
    X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    t = torch.tensor([0.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    assert (X.T @ t).tolist() == [1.0, 1.0]
    assert (X.T @ (t - t.mean())).tolist() == [0.0, 0.0]
    fit = torch.linalg.lstsq(torch.cat([X, torch.ones(4, 1, dtype=torch.float64)], 1), t[:, None]).solution
    assert torch.allclose(fit.ravel(), torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64), atol=1e-12)
    assert "orthogonal to both input columns, so" not in lesson("ch05_shapes")


def test_no_grad_leaves_factories_with_requires_grad_alone():
    """Chapter 6 §2 said every result inside no_grad has requires_grad=False; the docstring's
    exception (quoted in the lesson) holds, and an in-place update keeps a leaf a leaf."""
    w = torch.tensor(1.0, requires_grad=True)
    with torch.no_grad():
        made = torch.zeros(3, requires_grad=True)
        w -= 0.5
        product = w * 2
    assert made.requires_grad and made.is_leaf
    assert w.requires_grad and w.is_leaf
    assert not product.requires_grad and product.grad_fn is None
    quoted = ("All factory functions, or functions that create a new Tensor and take a "
              "requires_grad kwarg, will NOT be affected by this mode.")
    assert quoted in " ".join(torch.no_grad.__doc__.split())
    assert quoted in lesson("ch06_control")


def test_func_grad_needs_a_zero_dimensional_output_backward_does_not():
    """Chapter 8 §5 likened func.grad's output rule to backward() without a seed; backward seeds
    a (1,)-shaped output, func.grad raises on it."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x**2).sum().reshape(1).backward()
    assert x.grad.tolist() == [2.0, 4.0]
    message = "Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims"
    with pytest.raises(RuntimeError, match=message):
        torch.func.grad(lambda t: (t**2).sum().reshape(1))(torch.tensor([1.0, 2.0]))
    assert "0-dimensional tensor" in lesson("ch08_higher")
    assert "single-number output**, like `backward()` without a seed" not in lesson("ch08_higher")


def test_per_sample_gradients_sum_to_the_summed_loss_and_average_to_the_mean():
    w = torch.tensor([1.0, -1.0], dtype=torch.float64)
    X = torch.tensor([[0.0, 1.0], [2.0, 2.0], [1.0, 0.5]], dtype=torch.float64)
    per = torch.func.vmap(torch.func.grad(lambda w, x: torch.sin(w @ x)), in_dims=(None, 0))(w, X)
    total = torch.func.grad(lambda w: torch.sin(X @ w).sum())(w)
    mean = torch.func.grad(lambda w: torch.sin(X @ w).mean())(w)
    assert torch.allclose(per.sum(0), total) and torch.allclose(per.mean(0), mean)
    assert not torch.allclose(per.sum(0), mean)
    stated = "their sum is the gradient of the summed batch loss, their mean that of the mean loss"
    assert stated in lesson("ch08_higher")


def test_autograd_grad_without_create_graph_returns_a_tensor_without_history():
    x = torch.tensor(1.0, requires_grad=True)
    (first,) = torch.autograd.grad(torch.sin(x), x)
    assert isinstance(first, torch.Tensor) and first.grad_fn is None and not first.requires_grad
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        torch.autograd.grad(first, x)


def test_embedding_has_its_own_backward_and_adds_like_indexing():
    emb = torch.nn.Embedding(4, 2)
    out = emb(torch.tensor([1, 1, 1, 3]))
    assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
    out.sum().backward()
    assert emb.weight.grad[:, 0].tolist() == [0.0, 3.0, 0.0, 1.0]
    x = torch.zeros(4, requires_grad=True)
    picked = x[torch.tensor([3, 3, 3, 0])]
    assert type(picked.grad_fn).__name__ == "IndexBackward0"
    picked.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 3.0]
    assert "`nn.Embedding` is exactly this" not in lesson("ch05_shapes")


def test_second_derivative_through_x_grad_needs_the_first_derivative_kept():
    """second_derivative_cube's hint said to set x.grad = None between the two backward calls;
    then x.grad.backward() has nothing to call. Kept in a variable first, it gives f'' alone."""
    x = torch.tensor(2.0, requires_grad=True)
    (x**3).backward(create_graph=True)
    x.grad = None
    with pytest.raises(AttributeError):
        x.grad.backward()
    x = torch.tensor(2.0, requires_grad=True)
    (x**3).backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0
    hint = registry.get("second_derivative_cube").wrong[0].hint
    assert "g = x.grad" in hint and "between the two backward calls" not in hint


# --- the read of chapters 9 and 10 against torch 2.13 (issue #26) ------------------------------

def _moons_mlp_step(lam: float, *, proximal: bool, steps: int = 200, lr: float = 0.5) -> list[float]:
    """Full-batch steps on chapter 10's two moons with the group-lasso penalty on W1's columns,
    either as a plain gradient term or as a proximal step (block soft-thresholding) after each
    step on the loss; returns the smallest column norm seen after each step."""
    from autograder.harness import MLP_NAMES, mlp_init, moons

    X, y = moons(200, 0)
    p = {k: v.clone().requires_grad_() for k, v in mlp_init(0, 2, 16, 2).items()}
    smallest = []
    for _ in range(steps):
        W1, b1, W2, b2 = (p[k] for k in MLP_NAMES)
        objective = F.cross_entropy((X @ W1 + b1).relu() @ W2 + b2, y)
        if not proximal:
            objective = objective + lam * torch.linalg.vector_norm(W1, dim=0).sum()
        grads = torch.autograd.grad(objective, list(p.values()))
        with torch.no_grad():
            for t, g in zip(p.values(), grads, strict=True):
                t -= lr * g
            if proximal:  # shrink each column's norm by lr·λ, to exactly 0 below that
                norms = torch.linalg.vector_norm(p["W1"], dim=0)
                p["W1"] *= (1 - lr * lam / norms.clamp(min=1e-300)).clamp(min=0)
        smallest.append(torch.linalg.vector_norm(p["W1"], dim=0).min().item())
    return smallest


@pytest.mark.parametrize("lam", [0.05, 0.5, 2.0])
def test_plain_gradient_steps_never_zero_a_column_a_proximal_step_does(lam):
    """Chapter 10 said the penalty "pushes the weights into a hidden unit to exactly zero as a
    group": with plain gradient steps no column reaches 0 in 200 steps, even at λ = 2, where
    the proximal step zeroes columns."""
    plain = _moons_mlp_step(lam, proximal=False)
    assert min(plain) > 0.0
    assert min(plain) < 0.05  # close to zero, though: the pull is real
    assert min(_moons_mlp_step(lam, proximal=True)) == 0.0


def test_chapter_10_no_longer_says_the_penalty_reaches_exactly_zero():
    text = lesson("ch10_capstone")
    assert "to exactly zero as a group" not in text
    assert "plain gradient steps overshoot and hover near zero without reaching it exactly" in text
    assert "*proximal* step" in text
    assert "to exactly zero" not in " ".join(registry.get("group_lasso_nan").prompt.split())


def test_the_planted_loop_falls_then_climbs_and_warns():
    """Chapter 10 said "None of them raises an error: the loop runs, and the loss even goes
    down". With the seven bugs in, the logged loss falls for a few steps, climbs above its start
    by the last step, and reading the non-leaf b1's .grad prints a UserWarning."""
    from autograder.harness import LOOP, loop_init, moons
    from exercises.ch10_capstone._common import BUGS, planted_loop

    X, y = moons(LOOP["n"], 0)
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        _, history = planted_loop(BUGS)(X, y, loop_init(0, LOOP["h"], None), LOOP["steps"],
                                        LOOP["lr"], LOOP["accum"], LOOP["lam"])
    losses = [float(torch.as_tensor(v).detach()) for v in history]
    lowest = losses.index(min(losses))
    assert 2 <= lowest <= 5
    assert all(a > b for a, b in zip(losses[:lowest], losses[1 : lowest + 1], strict=True))
    assert losses[-1] > losses[0]
    text = lesson("ch10_capstone")
    assert "the loss even goes down" not in text
    assert "falls for a few steps, then climbs above where it started" in text
    assert "`UserWarning`" in text


def test_chapter_10_compares_the_two_trainings_by_their_sizes_not_a_speed_factor():
    """"fifty times faster" compared different models (and a speed is the machine's, not a
    fact a test can hold); the lesson now states the sizes, which the code must match."""
    from autograder.harness import ENGINE_TRAIN

    text = lesson("ch10_capstone")
    assert "fifty times faster" not in text
    assert "(16 hidden units, not 6) on more data (200 points, not 24) for more steps (400, not 15)" in text
    assert (ENGINE_TRAIN["n"], ENGINE_TRAIN["h"], ENGINE_TRAIN["steps"]) == (24, 6, 15)
    assert "nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)" in text
    assert "for step in range(400):" in text and "moons(200, seed=0)" in text


class _Cube2(torch.autograd.Function):
    """Chapter 9's Cube2: a separate forward and setup_context, a backward, nothing more."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x**2


class _Cube2Batched(_Cube2):
    generate_vmap_rule = True


class _Cube2Forward(_Cube2Batched):
    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_t


def test_setup_context_is_enough_for_grad_but_not_for_vmap_jacfwd_or_hessian():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    cube_sum = lambda f: lambda t: f.apply(t).sum()
    assert torch.func.grad(cube_sum(_Cube2))(x).tolist() == [0.75, 3.0, 12.0]
    for transform in (lambda: torch.func.vmap(_Cube2.apply)(x), lambda: torch.func.jacfwd(_Cube2.apply)(x),
                      lambda: torch.func.hessian(cube_sum(_Cube2))(x)):
        with pytest.raises(RuntimeError, match="does not have vmap support"):
            transform()
    assert torch.equal(torch.func.vmap(_Cube2Batched.apply)(x), x**3)
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):
        torch.func.jacfwd(_Cube2Batched.apply)(x)  # forward mode needs its own staticmethod
    assert torch.equal(torch.func.jacfwd(_Cube2Forward.apply)(x), torch.diag(3 * x**2))
    assert torch.equal(torch.func.hessian(cube_sum(_Cube2Forward))(x), torch.diag(6 * x))


def test_chapter_9_quotes_what_each_transform_needs():
    text = lesson("ch09_extending")
    assert "which `torch.func` transforms (`vmap`, `grad`) require" not in text
    for quote in ("to support torch.vmap(), the torch.autograd.Function needs a vmap() staticmethod",
                  "ask us to autogenerate it by setting generate_vmap_rule=True",
                  "to support torch.func.jvp(), the torch.autograd.Function needs a jvp() staticmethod"):
        assert quote in text
    assert "generate_vmap_rule = True" in text


def test_hessian_is_jacfwd_outside_jacrev():
    """Chapter 9 called jacfwd "the inner Jacobian of a Hessian"; hessian(f) passes jacrev(f)
    to jacfwd, so jacfwd is the outer transform."""
    import torch._functorch.eager_transforms as transforms

    made: dict[str, object] = {}
    real_jacrev, real_jacfwd = transforms.jacrev, transforms.jacfwd

    def jacrev(*args, **kwargs):
        made["jacrev"] = real_jacrev(*args, **kwargs)
        return made["jacrev"]

    def jacfwd(func, *args, **kwargs):
        made["jacfwd_of"] = func
        return real_jacfwd(func, *args, **kwargs)

    with mock.patch.object(transforms, "jacrev", jacrev), mock.patch.object(transforms, "jacfwd", jacfwd):
        h = torch.func.hessian(lambda t: (t**3).sum())(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert made["jacfwd_of"] is made["jacrev"]
    assert torch.equal(h, torch.diag(torch.tensor([6.0, 12.0], dtype=torch.float64)))
    text = lesson("ch09_extending")
    assert "inner Jacobian of a Hessian" not in text
    assert "`jacrev` is the **inner** transform" in text and "`jacfwd` the **outer** one" in text


def test_a_failing_gradcheck_is_not_a_bug_at_kinks_in_float32_and_for_a_straight_through_backward():
    """Chapter 9 called the straight-through estimator "the one case" of an intended failing
    gradcheck; chapters 2 and 7 show two more that are not bugs."""

    class ClampSTE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(-1, 1)

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out

    smooth = torch.tensor([0.3, -0.4], dtype=torch.float64, requires_grad=True)
    clamped = torch.tensor([0.3, 1.7], dtype=torch.float64, requires_grad=True)
    assert gradcheck_passes(ClampSTE.apply, smooth)
    assert not gradcheck_passes(ClampSTE.apply, clamped)
    assert not gradcheck_passes(torch.relu, torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True))
    with pytest.warns(UserWarning):  # gradcheck warns about float32 inputs
        assert not gradcheck_passes(torch.sin, torch.tensor([0.3, 1.1], requires_grad=True))
    text = lesson("ch09_extending")
    assert "That is the one case in which a failing `gradcheck` is the intended result" not in text
    assert "Like the kinks of chapters 2 and 7" in text


def gradcheck_passes(fn, x: torch.Tensor) -> bool:
    return torch.autograd.gradcheck(fn, (x,), raise_exception=False)


def test_autograd_sums_a_broadcast_gradient_to_the_inputs_shape_and_rejects_other_shapes():
    """Chapter 9's AddBias: a custom backward that returns the bias's gradient with the batch
    dimension still in is summed down to the bias's shape; a shape that does not broadcast
    raises, naming the Function and the shape it expected."""

    class AddBias(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    class AddBiasTransposed(AddBias):
        @staticmethod
        def backward(ctx, g):
            return g, g.t()

    g = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)
    x = torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    AddBias.apply(x, b).backward(g)
    assert b.grad.tolist() == [9.0, 12.0]
    with pytest.raises(RuntimeError, match=r"AddBiasTransposedBackward returned an invalid gradient at index 1 "
                                           r"- got \[2, 3\] but expected shape compatible with \[2\]"):
        AddBiasTransposed.apply(x, b).backward(g)
    text = lesson("ch09_extending")
    assert "autograd sums the gradient down to the input's shape before it goes on" in text
    assert "Below you can find code for a `Linear` function, with additional comments" in text


def test_a_function_without_jvp_refuses_forward_mode_and_save_for_forward_feeds_jvp():
    """Chapter 9 §5: Cube (backward only) raises under forward mode; CubeFwd's jvp reads what
    save_for_forward saved; what save_for_backward saved is not there for jvp."""
    import torch.autograd.forward_ad as fwAD

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    class CubeFwd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * x_t

    class CubeSavedForBackward(Cube):
        jvp = CubeFwd.jvp

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    ones = torch.ones(3, dtype=torch.float64)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            Cube.apply(fwAD.make_dual(x, ones))
        assert fwAD.unpack_dual(CubeFwd.apply(fwAD.make_dual(x, ones))).tangent.tolist() == [0.75, 3.0, 12.0]
        with pytest.raises(ValueError, match="not enough values to unpack"):
            CubeSavedForBackward.apply(fwAD.make_dual(x, ones))
    text = lesson("ch09_extending")
    assert ("It will be given as many Tensor arguments as there were inputs, with each of them "
            "representing gradient w.r.t. that input.") in text
    assert "Save given tensors for a future call to jvp()" in text
    docstring = torch.autograd.function.FunctionCtx.save_for_forward.__doc__
    assert "Save given tensors for a future call to :func:`~Function.jvp`." in docstring


@pytest.mark.parametrize("mark", [True, False])
def test_mark_dirty_makes_the_changed_input_the_output_without_it_the_input_keeps_its_history(mark):
    """Chapter 9's Double_: with ctx.mark_dirty the returned tensor is the input itself, its
    grad_fn the Function's node; without it the input holds the new values but keeps its clone
    history, and a gradient through it skips the doubling."""

    class Double_(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            if mark:
                ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_out):
            return 2 * grad_out

    w = torch.tensor([1.0, -3.0], dtype=torch.float64, requires_grad=True)
    c = w.clone()
    out = Double_.apply(c)
    (through_c,) = torch.autograd.grad(c.sum(), w)
    assert c.tolist() == [2.0, -6.0]
    assert (out is c) is mark
    assert type(c.grad_fn).__name__ == ("Double_Backward" if mark else "CloneBackward0")
    assert through_c.tolist() == ([2.0, 2.0] if mark else [1.0, 1.0])
    text = lesson("ch09_extending")
    assert "mark_dirty() must be used to mark any input that is modified inplace by the forward function." \
        in text
    docstring = " ".join(torch.autograd.function.FunctionCtx.mark_dirty.__doc__.split())
    assert "to ensure correctness of our checks" in docstring


@pytest.mark.parametrize("materialize", [True, False])
def test_an_unused_outputs_gradient_arrives_as_zeros_or_with_materializing_off_as_none(materialize):
    """Chapter 9's Pair: with only the first of two outputs used, backward gets zeros for the
    second by default; after ctx.set_materialize_grads(False) it gets None, and a backward that
    multiplies by it raises TypeError."""
    arrived = []

    class Pair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return 2 * x, 3 * x

        @staticmethod
        def backward(ctx, g_first, g_second):
            arrived.append(g_second)
            return 2 * g_first + 3 * g_second

    x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    first, _ = Pair.apply(x)
    if materialize:
        assert torch.autograd.grad(first.sum(), x)[0].tolist() == [2.0, 2.0]
        assert torch.equal(arrived[0], torch.zeros(2, dtype=torch.float64))
    else:
        with pytest.raises(TypeError, match="NoneType"):
            torch.autograd.grad(first.sum(), x)
        assert arrived == [None]
    text = lesson("ch09_extending")
    assert ("That is, if set to False, None object in Python or “undefined tensor” (tensor x for "
            "which x.defined() is False) in C++ will not be converted to a tensor filled with zeros "
            "prior to calling backward, and so your code will need to handle such objects as if they "
            "were tensors filled with zeros.") in text
    docstring = " ".join(torch.autograd.function.FunctionCtx.set_materialize_grads.__doc__.split())
    assert "This should be called only from either the :func:`setup_context` or :func:`forward` methods." \
        in docstring
    assert "This should be called only from either the setup_context() or forward() methods." in text


def _cube_sum(function):
    return lambda t: function.apply(t).sum()


def test_vmap_of_grad_needs_a_vmap_rule_jacrev_of_jacrev_does_not_hessian_needs_a_jvp_too():
    """Chapter 9 §5, 'Your Function under torch.func': which compositions run on Cube2 (no vmap
    rule) and Cube2Batched (generate_vmap_rule=True, no jvp)."""
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    batch = torch.stack([x, 2 * x])
    func = torch.func
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        func.vmap(func.grad(_cube_sum(_Cube2)))(batch)
    for function in (_Cube2, _Cube2Batched):
        assert torch.equal(func.jacrev(func.jacrev(_cube_sum(function)))(x), torch.diag(6 * x))
    assert torch.equal(func.vmap(func.grad(_cube_sum(_Cube2Batched)))(batch), 3 * batch**2)
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        func.hessian(_cube_sum(_Cube2))(x)
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):
        func.hessian(_cube_sum(_Cube2Batched))(x)
    text = lesson("ch09_extending")
    for quote in ("torch.func.jacrev() performs vmap() over the backward pass. So if you're only "
                  "interested in using torch.func.jacrev(), only the backward() staticmethod needs to "
                  "be vmappable.",
                  "to support compositions of transforms (like torch.func.jacrev(), "
                  "torch.func.jacfwd(), torch.func.hessian()) -- you may need multiple of the above",
                  "If you wish to save a non-input intermediate activation from Function.forward() for "
                  "backward, then you'll need to return it as an output from forward() so that it gets "
                  "passed to setup_context()."):
        assert quote in text


def test_torch_func_refuses_a_forward_that_takes_ctx_where_backward_works():
    """logsumexp_vmap's diagnosis: forward(ctx, x) serves plain backward but no torch.func
    transform, not even grad."""

    class CtxCube(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.grad(CtxCube.apply(x).sum(), x)[0].tolist() == [0.75, 3.0]
    for transform in (lambda f: torch.func.grad(_cube_sum(f)), lambda f: torch.func.vmap(f.apply)):
        with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
            transform(CtxCube)(x.detach())


def test_a_tensor_computed_in_setup_context_is_a_constant_to_reverse_over_reverse():
    """logsumexp_vmap's diagnosis: softmax computed in setup_context and used by backward gives
    the right gradient and a second derivative of zero; from the saved input and output, the
    true one (diag(p) - p pᵀ)."""

    class Lse(torch.autograd.Function):
        generate_vmap_rule = True

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

    class LseSavedSoftmax(Lse):
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(torch.softmax(inputs[0], 0))

        @staticmethod
        def backward(ctx, g):
            (p,) = ctx.saved_tensors
            return g * p

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    p = torch.softmax(x, 0)

    def twice(f):
        return torch.func.jacrev(torch.func.jacrev(f.apply))(x)

    assert torch.allclose(torch.func.grad(LseSavedSoftmax.apply)(x), p)
    assert torch.equal(twice(LseSavedSoftmax), torch.zeros(3, 3, dtype=torch.float64))
    assert torch.allclose(twice(Lse), torch.diag(p) - torch.outer(p, p))


# --- chapter 11, part 2: backprop by hand through a network --------------------------------------

def test_batchnorm_in_training_normalises_with_the_biased_variance_and_keeps_the_unbiased_running():
    x = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 4 + 2
    bn = torch.nn.BatchNorm1d(3).double()
    assert bn.training
    out = bn(x).detach()
    assert torch.allclose(out.mean(0), torch.zeros(3, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(out.var(0, correction=0), torch.ones(3, dtype=torch.float64), rtol=1e-5)
    assert torch.allclose(out.var(0), torch.full((3,), 6 / 5, dtype=torch.float64), rtol=1e-5)
    # the running estimate (eval mode's) moves towards the unbiased variance
    assert torch.allclose(bn.running_var, 0.9 + 0.1 * x.var(0))
    assert "biased* variance" in lesson("ch11_tensors") and "running estimate" in lesson("ch11_tensors")


def test_the_networks_forward_is_batch_norm_in_training_and_cross_entropy():
    from autograder.backprop_harness import BN_EPS, net_forward, net_problem

    X, y, P = net_problem(2, 7, 6, 3, 2, 4, 3)
    f = net_forward(X, y, P)
    bn = F.batch_norm(f["hpre"], None, None, P["gamma"], P["beta"], training=True, eps=BN_EPS)
    assert torch.allclose(f["hbn"], bn) and torch.allclose(f["loss"], F.cross_entropy(f["logits"], y))
    assert torch.equal(f["emb"], F.embedding(X, P["E"]))


def test_an_indexed_add_at_repeated_indices_writes_once_index_add_and_accumulate_add_all():
    ids = torch.tensor([0, 2, 0, 0])
    counts = torch.zeros(3)
    counts[ids] += 1
    assert counts.tolist() == [1.0, 0.0, 1.0]
    # what the lesson says it does: read the rows (a copy), add, write them back
    rows = torch.zeros(3)[ids]
    rows += 1
    again = torch.zeros(3)
    again[ids] = rows
    assert torch.equal(again, counts)
    assert torch.zeros(3).index_add_(0, ids, torch.ones(4)).tolist() == [3.0, 0.0, 1.0]
    assert torch.zeros(3).index_put_((ids,), torch.ones(4), accumulate=True).tolist() == [3.0, 0.0, 1.0]


@pytest.mark.parametrize("seed", [0, 3, 8])
def test_a_bias_before_batch_norm_gets_a_zero_gradient(seed):
    from autograder.backprop_harness import net_forward, net_problem

    X, y, P = net_problem(seed, 10, 6, 3, 2, 4, 3)
    leaves = {k: p.clone().requires_grad_(True) for k, p in P.items()}
    net_forward(X, y, leaves)["loss"].backward()
    assert leaves["b1"].grad.abs().max() < 1e-12
    assert leaves["beta"].grad.abs().max() > 1e-3 and leaves["b2"].grad.abs().max() > 1e-3


def test_hpre_fans_out_three_times_in_the_networks_graph_and_non_leaves_keep_no_grad():
    import warnings

    from autograder.backprop_harness import net_forward, net_problem

    X, y, P = net_problem(0, 4, 5, 2, 2, 3, 3)
    leaves = {k: p.clone().requires_grad_(True) for k, p in P.items()}
    f = net_forward(X, y, leaves)
    seen, stack, uses = set(), [f["loss"].grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        uses += sum(nxt is f["hpre"].grad_fn for nxt, _ in node.next_functions)
        stack.extend(nxt for nxt, _ in node.next_functions)
    assert uses == 3
    f["h"].retain_grad()
    f["loss"].backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert f["logits"].grad is None
    assert str(caught[0].message).startswith("The .grad attribute of a Tensor that is not a leaf")
    assert f["h"].grad.shape == f["h"].shape and leaves["W2"].grad.shape == P["W2"].shape


def test_tanh_passes_all_of_the_gradient_at_0_and_less_than_one_percent_at_3():
    u = torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64, requires_grad=True)
    torch.tanh(u).sum().backward()
    assert u.grad[0] == 1.0 and 0.4 < u.grad[1] < 0.45 and u.grad[2] < 0.01
    assert "At 3 less than 1% gets through" in lesson("ch11_tensors")
