"""Fix-it exercises are graded by running the student's code (issue #14, must-show 4).

Each fix-it gives the student a broken snippet. Here the snippet itself, and the half-repairs
students make, are run as answers through the grader's own path (the answer cell executed after
the setup at the shown and the hidden values): each is diagnosed as its own bug, and the
repaired code scores full marks on values it has never seen.
"""

from __future__ import annotations

import pytest
from answer_runs import run_answer

from gradtutor.key import registry

BROKEN = {  # (exercise, the code as the student runs it, the diagnosis it must get)
    "inner_step_fix, the post's code": ("inner_step_fix", """
def meta_grad(X, Y, step, a, loss_fn):
    p_y1 = a * X
    l1 = loss_fn(p_y1, Y)
    grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
    nX = X + grad.data * step
    p_y2 = a * nX
    final_y = (p_y1 + p_y2) / 2
    l2 = loss_fn(final_y, Y)
    return torch.autograd.grad(l2, [X])[0]""", "meta_create_graph"),
    "inner_step_fix, create_graph=True but still .data": ("inner_step_fix", """
def meta_grad(X, Y, step, a, loss_fn):
    p_y1 = a * X
    grad = torch.autograd.grad(loss_fn(p_y1, Y), [X], create_graph=True)[0]
    nX = X + grad.data * step
    final_y = (p_y1 + a * nX) / 2
    return torch.autograd.grad(loss_fn(final_y, Y), [X])[0]""", "meta_create_graph"),
    "inner_step_fix, .data dropped but no create_graph": ("inner_step_fix", """
def meta_grad(X, Y, step, a, loss_fn):
    p_y1 = a * X
    grad = torch.autograd.grad(loss_fn(p_y1, Y), [X], retain_graph=True)[0]
    nX = X + grad * step
    final_y = (p_y1 + a * nX) / 2
    return torch.autograd.grad(loss_fn(final_y, Y), [X])[0]""", "meta_create_graph"),
    "zero_grad_fix, the loop as written": ("zero_grad_fix", """
def train(w, lr, target, steps):
    for _ in range(steps):
        loss = (w - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w""", "accumulation"),
    "zero_grad_fix, zeroed before the update": ("zero_grad_fix", """
def train(w, lr, target, steps):
    for _ in range(steps):
        ((w - target) ** 2).backward()
        w.grad.zero_()
        with torch.no_grad():
            w -= lr * w.grad
    return w""", "zero_grad_order"),
    "where_nan_fix, the snippet as written": ("where_nan_fix", """
def sinc(x):
    return torch.where(x != 0, torch.sin(x) / x, 1.0)""", "where_nan"),
    "where_nan_fix, an epsilon instead of the where": ("where_nan_fix", """
def sinc(x):
    return torch.sin(x) / (x + 1e-8)""", "where_nan"),
    "version_counter_fix, hidden with .data": ("version_counter_fix", """
def scaled_sigmoid_sum(x):
    y = x.sigmoid()
    y.data.mul_(k)
    return y.sum()""", "data_silent"),
    "td_detach_fix, the snippet as written": ("td_detach_fix", """
def td_loss(w, s, r, s_next, gamma):
    q = w * s
    target = r + gamma * w * s_next
    return (q.detach() - target) ** 2""", "target_not_detached"),
    "backward_twice_fix, the failing call caught": ("backward_twice_fix", """
def two_losses_grad(x):
    y = x ** 3
    y.backward()
    try:
        (2 * y).backward()
    except RuntimeError:
        pass
    return x.grad""", "first_backward_kept"),
    "xent_overflow_fix, the loss as written": ("xent_overflow_fix", """
def xent(z, target):
    p = z.exp() / z.exp().sum()
    return -p[target].log()""", "unstable_loss"),
    "second_step_fix, in place under no_grad but never zeroed": ("second_step_fix", """
def descend(w, lr, steps):
    for _ in range(steps):
        ((w - 3) ** 2).backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w""", "accumulation"),
    "second_step_fix, the step skipped when .grad is None": ("second_step_fix", """
def descend(w, lr, steps):
    for _ in range(steps):
        ((w - 3) ** 2).backward()
        if w.grad is not None:
            w = w - lr * w.grad
    return w""", "out_of_place_update"),
    "xor_fix, dtype fixed but the post's loss": ("xor_fix", """
def xor_loss(inputs, outputs, weights, bias):
    preds = F.linear(inputs.float(), weights, bias)
    return (outputs - preds).mean()""", "not_a_loss"),
    "xor_fix, summed squares": ("xor_fix", """
def xor_loss(inputs, outputs, weights, bias):
    preds = F.linear(inputs.float(), weights, bias).squeeze(1)
    return ((preds - outputs.float()) ** 2).sum()""", "mean_scales"),
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_a_broken_snippet_is_diagnosed_as_its_bug(case):
    eid, source, misconception = BROKEN[case]
    fb = run_answer(eid, source)
    assert fb.score == 0.0, str(fb)
    assert fb.misconception == misconception, str(fb)


CRASHING = {  # snippets that cannot run: the student is told the error, nothing is scored
    "xor_fix, the post's code": ("xor_fix", """
def xor_loss(inputs, outputs, weights, bias):
    preds = F.linear(inputs, weights, bias)
    return (outputs - preds).mean()""", "RuntimeError"),
    "sin_autograd, cos written down": ("sin_autograd", """
def dsin(x):
    return torch.cos(x)""", "cos is switched off"),
    "backward_twice_fix, the snippet as written": ("backward_twice_fix", """
def two_losses_grad(x):
    y = x ** 3
    y.backward()
    (2 * y).backward()
    return x.grad""", "Trying to backward through the graph a second time"),
    "second_step_fix, the snippet as written": ("second_step_fix", """
def descend(w, lr, steps):
    for _ in range(steps):
        L = (w - 3) ** 2
        L.backward()
        w = w - lr * w.grad
    return w""", "TypeError"),
    "second_step_fix, out of place under no_grad": ("second_step_fix", """
def descend(w, lr, steps):
    for _ in range(steps):
        ((w - 3) ** 2).backward()
        with torch.no_grad():
            w = w - lr * w.grad
    return w""", "RuntimeError"),
    "version_counter_fix, the snippet as written": ("version_counter_fix", """
def scaled_sigmoid_sum(x):
    y = x.sigmoid()
    y.mul_(k)
    return y.sum()""", "RuntimeError"),
}


@pytest.mark.parametrize("case", list(CRASHING), ids=list(CRASHING))
def test_a_snippet_that_crashes_scores_nothing_and_names_its_error(case):
    eid, source, error = CRASHING[case]
    fb = run_answer(eid, source)
    assert fb.score == 0.0 and fb.verdict != "correct", str(fb)
    assert error in str(fb), str(fb)


def test_the_posts_hand_formula_is_right_only_for_its_own_loss():
    """Seed 000's hand formula, 2(final - y)(a + s a³) for MSE, earns the shown variant only."""
    fb = run_answer("inner_step_fix", """
def meta_grad(X, Y, step, a, loss_fn):
    x, y = X.item(), Y.item()
    final = (a + step * a**3) * x - step * a**2 * y
    return 2 * (final - y) * (a + step * a**3)""")
    assert 0.0 < fb.score < 1.0, str(fb)
    assert fb.variants[0].score == 1.0
    hidden = registry.get("inner_step_fix").hidden
    for status, params in zip(fb.variants[1:], hidden, strict=True):
        assert (status.score == 1.0) == (params["loss"] == "mse"), (params, status)


@pytest.mark.parametrize("eid", ["inner_step_fix", "zero_grad_fix", "where_nan_fix",
                                 "version_counter_fix", "td_detach_fix", "xor_fix", "sin_autograd",
                                 "backward_twice_fix", "xent_overflow_fix", "second_step_fix"])
def test_the_repair_scores_full_marks_on_fresh_values(eid):
    fb = run_answer(eid, registry.get(eid).solution)
    assert fb.score == 1.0 and fb.verdict == "correct", str(fb)
