"""By-hand exercises (autograd off while the answer runs) and the prompt's requirements."""

from __future__ import annotations

import json
import queue

import pytest
import torch

from autograder.answers import read_all
from autograder.byhand import ByHand, autograd_off, tripped
from autograder.judge import judge
from gradtutor.authoring.cells import BY_HAND, WITH_AUTOGRAD, exercise_cells
from gradtutor.key import answer_key, registry

BY_HAND_IDS = sorted(ex.id for ex in registry.all_exercises() if ex.by_hand)
# the topics the issue names: chain rule, fan-out, accumulation, retain_graph count, the detach
# cut, both VJP seeds, the matrix-product gradient, an SGD step, the seed's "why" question
NAMED = ("sum_rule", "chain_xyz", "chain_abcf", "fanout_xy", "accumulate_three", "retain_graph_twice",
         "detach_cut", "seed_ones", "seed_reweights", "outer_product_vwx", "matmul_grad_fn",
         "none_vs_zero_step", "identity_seed")

# answer cells a student might write with autograd, for any answer name
CHEATS = {
    "backward": "import torch as _t\n_x = _t.tensor(2.0, requires_grad=True)\n(_x * _x).backward()\n"
                "{name} = _x.grad",
    "autograd.grad": "import torch as _t\n_x = _t.tensor(2.0, requires_grad=True)\n"
                     "{name} = _t.autograd.grad(_x * _x, _x)[0]",
    "func.grad": "import torch as _t\n{name} = _t.func.grad(lambda v: v * v)(_t.tensor(2.0))",
    "swallowed": "import torch as _t\n_x = _t.tensor(2.0, requires_grad=True)\ntry:\n"
                 "    (_x * _x).backward()\nexcept Exception:\n    pass\n{name} = 0.0",
}


def test_at_least_twenty_exercises_are_done_by_hand_among_them_the_named_topics():
    assert len(BY_HAND_IDS) >= 20, BY_HAND_IDS
    assert set(NAMED) <= set(BY_HAND_IDS)


@pytest.mark.parametrize("exercise_id", BY_HAND_IDS)
@pytest.mark.parametrize("route", sorted(CHEATS))
def test_a_by_hand_answer_that_asks_autograd_is_told_so(exercise_id, route):
    ex = registry.get(exercise_id)
    name = ex.answer
    source = CHEATS[route].format(name=name)
    if ex.is_function:  # the function itself asks autograd, when the grader calls it
        body = CHEATS[route].format(name="_r").replace("\n", "\n    ")
        source = f"def {name}(*args, **kwargs):\n    {body}\n    return _r"
    spec = answer_key.spec(ex)
    answers = read_all(spec, {"torch": torch}, ["", source, "check()"])
    assert all(a == {"t": "missing", "why": "by_hand"} for a in answers), answers
    fb = judge(answer_key.check_for(exercise_id), answers)
    assert fb.verdict == "invalid" and "done by hand" in fb.message and fb.score == 0


@pytest.mark.parametrize("exercise_id", BY_HAND_IDS)
def test_the_solution_runs_with_autograd_off_and_scores_full_marks(exercise_id):
    ex = registry.get(exercise_id)
    spec = answer_key.spec(ex)
    ns: dict = {"torch": torch}
    exec(spec.setups[0], ns)
    exec(ex.solution, ns)
    fb = judge(answer_key.check_for(exercise_id), read_all(spec, ns, ["", ex.solution, "check()"]))
    assert fb.score == 1.0, fb


def test_every_prompt_says_by_hand_or_with_autograd():
    for ex in registry.all_exercises():
        prompt = exercise_cells(ex, "1")[0].source
        # code written by hand (refuse=) has its own banner (tests/test_by_hand_code.py)
        assert (BY_HAND in prompt) == ex.by_hand and (WITH_AUTOGRAD in prompt) == (ex.mode == "autograd"), ex.id


def test_the_guard_restores_autograd_and_remembers_a_swallowed_gradient():
    x = torch.tensor(3.0, requires_grad=True)
    with autograd_off():
        with pytest.raises(ByHand):
            (x * x).backward()
        with pytest.raises(ByHand):
            torch.autograd.functional.jacobian(torch.sin, x)
        with pytest.raises(ByHand):
            torch.func.jacfwd(torch.sin)(x)
    assert tripped()
    (x * x).backward()  # on again outside the block
    assert x.grad.item() == 6.0
    with autograd_off(active=False):
        (x * x).backward()
    assert x.grad.item() == 12.0


def _kernel_run(kc, code: str, cell_id: str | None = None) -> list[dict]:
    """Run ``code`` as JupyterLab does (the cell's id in the request's metadata); iopub messages."""
    msg = kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                             "user_expressions": {}, "allow_stdin": False,
                                             "stop_on_error": True})
    if cell_id is not None:
        msg["metadata"]["cellId"] = cell_id
    kc.shell_channel.send(msg)
    out = []
    while True:
        try:
            m = kc.get_iopub_msg(timeout=60)
        except queue.Empty:
            raise AssertionError("the kernel did not answer") from None
        if m["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        out.append(m)
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out


def _text(messages: list[dict]) -> str:
    return json.dumps([m["content"] for m in messages if m["msg_type"] in ("stream", "error",
                                                                          "execute_result")])


def test_in_a_real_kernel_the_answer_cell_itself_raises_and_the_check_says_why():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        _kernel_run(kc, "import torch\nfrom autograder import check\nx0 = 3.0")
        cheat = "x = torch.tensor(x0, requires_grad=True)\n(x**2 + 5 * x).backward()\ndz_dx = x.grad"
        raised = _kernel_run(kc, cheat, cell_id="sum_rule-answer")
        assert any(m["msg_type"] == "error" and m["content"]["ename"] == "ByHand" for m in raised)
        # the same code in an ordinary cell runs: only answer cells of by-hand exercises are guarded
        ordinary = _kernel_run(kc, cheat, cell_id="sum_rule-demo")
        assert not any(m["msg_type"] == "error" for m in ordinary)
        assert "done by hand" in _text(_kernel_run(kc, 'print(check("sum_rule", dz_dx))'))
        _kernel_run(kc, "dz_dx = 2 * x0 + 5", cell_id="sum_rule-answer")
        assert "Right." in _text(_kernel_run(kc, 'print(check("sum_rule", dz_dx))'))
        # autograd works again after the answer cell
        after = _kernel_run(kc, "y = torch.tensor(2., requires_grad=True)\n(y * y).backward()\n"
                                "print(y.grad.item())")
        assert "4.0" in _text(after)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# --- what a prompt requires, beyond the value ------------------------------------------------------

def _check(exercise_id: str, source: str):
    ex = registry.get(exercise_id)
    spec = answer_key.spec(ex)
    ns: dict = {"torch": torch}
    exec(spec.setups[0], ns)
    exec(source, ns)
    return judge(answer_key.check_for(exercise_id), read_all(spec, ns, ["", source, "check()"]))


REQUIREMENTS = {
    "difference_errors": (
        "def f(x):\n    return x**3\nx = torch.tensor(x0)\n"
        "fd_errors = [(f(x + h) - f(x)) / h - 3 * x0**2, (f(x + h) - f(x - h)) / (2 * h) - 3 * x0**2]",
        "float64"),
    "sgd_step": ("def sgd_step(w, lr):\n    with torch.no_grad():\n        w -= lr * w.grad\n    return w",
                 "w.grad reset"),
    "central_grad": ("def central_grad(f, x, h=1e-5):\n    g = torch.zeros_like(x)\n"
                     "    for i in range(x.numel()):\n        x[i] += h\n        up = f(x)\n"
                     "        x[i] -= 2 * h\n        down = f(x)\n        x[i] += h\n"
                     "        g[i] = (up - down) / (2 * h)\n    return g",
                     "left unchanged"),
}


@pytest.mark.parametrize("exercise_id", sorted(REQUIREMENTS))
def test_a_requirement_the_prompt_states_is_checked_and_named(exercise_id):
    source, named = REQUIREMENTS[exercise_id]
    fb = _check(exercise_id, source)
    assert fb.score == 0 and fb.misconception == "prompt_requirement", fb
    assert named in fb.misconception_name and fb.hint
    solution = _check(exercise_id, registry.get(exercise_id).solution)
    assert solution.score == 1.0, solution


def test_the_tuple_autograd_grad_returns_is_named_not_accepted():
    boxed = ("def hvp(f, x, v):\n    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
             "    return torch.autograd.grad(g @ v, x)")
    fb = _check("hvp_function", boxed)
    assert fb.verdict == "invalid" and "tuple" in fb.message and "[0]" in fb.message
    # a 1-tuple around a number, too; but a list of numbers is still a vector
    assert _check("sum_rule", "dz_dx = (torch.tensor(2 * x0 + 5),)").verdict == "invalid"
    assert _check("chain_xyz", "grads_xyz = [z0, z0, x0 + y0]").score == 1.0


def test_float32_rounding_is_named_as_rounding():
    fb = _check("difference_errors", "def f(x):\n    return x**3\nx = torch.tensor(x0)\n"
                "fd_errors = [float((f(x + h) - f(x)) / h) - 3 * x0**2, "
                "float((f(x + h) - f(x - h)) / (2 * h)) - 3 * x0**2]")
    assert fb.score < 1 and fb.misconception == "rounded", fb
