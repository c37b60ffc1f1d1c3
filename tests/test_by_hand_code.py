"""Code written by hand: the student's function or class runs with autograd (or torch) refused.

A unit declares ``refuse=AUTOGRAD`` (a backward derived on paper: chapter 9's Functions,
``mlp_backward``) or ``refuse=TORCH`` (an engine in plain Python: ``value_engine``,
``train_engine``). Wherever the grader calls that code (the self-check, grading at fresh inputs),
each way into autograd is refused, and the verdict is one line saying so; the honest solutions
still earn full marks; the banner above each prompt follows from the declared mode and agrees
with what the prompt says.
"""

from __future__ import annotations

import re

import pytest
import torch

from autograder.answers import read_all
from autograder.byhand import AUTOGRAD, TORCH, guarded, trips
from autograder.judge import judge
from gradtutor.authoring.cells import BANNERS, WITH_AUTOGRAD, exercise_cells
from gradtutor.key import answer_key, registry

REFUSING = sorted(ex.id for ex in registry.all_exercises() if ex.refuse)

# one use of autograd by each route, as lines of a function body; the answer's value is left as
# the solution computes it, so without the guard each of these would earn full marks
ROUTES = {
    "torch.func.grad": "_g = torch.func.grad(lambda v: v * v)(torch.tensor(2.0))",
    "enable_grad + autograd.grad": "with torch.enable_grad():\n"
                                   "    _x = torch.tensor(2.0, requires_grad=True)\n"
                                   "    _g = torch.autograd.grad(_x * _x, _x)",
    ".backward": "with torch.enable_grad():\n    _x = torch.tensor(2.0, requires_grad=True)\n"
                 "    (_x * _x).backward()",
    "forward_ad": "import torch.autograd.forward_ad as _fw\nwith _fw.dual_level():\n"
                  "    _g = _fw.unpack_dual(_fw.make_dual(torch.tensor(2.0), torch.tensor(1.0)) ** 2).tangent",
    "saved reference": "with torch.enable_grad():\n    _x = torch.tensor(2.0, requires_grad=True)\n"
                       "    _g = _SAVED_GRAD(_x * _x, _x)",
    "swallowed": "try:\n    with torch.enable_grad():\n        _x = torch.tensor(2.0, requires_grad=True)\n"
                 "        (_x * _x).backward()\nexcept Exception:\n    pass",
}
SAVED = "_SAVED_GRAD = torch.autograd.grad  # saved before the guard is on\n"

# where the route goes: the function the prompt asks to be written by hand
TARGETS = {
    "mlp_backward": "def mlp_backward(",
    "softplus_function": "def backward(",  # a Function's backward
    "square_function_fix": "def backward(",
    "gated_function": "def backward(",
    "value_engine": "def backward(",  # the Value engine's backward()
}
WHY = {AUTOGRAD: "by_hand_code", TORCH: "no_torch"}


def _inject(source: str, at: str, route: str) -> str:
    """``route`` as the first lines of the function that starts at ``at`` in ``source``."""
    lines = source.split("\n")
    i = next(i for i, line in enumerate(lines) if line.lstrip().startswith(at))
    indent = re.match(r"\s*", lines[i + 1]).group(0)
    body = [indent + line for line in route.split("\n")]
    return SAVED + "\n".join(lines[: i + 1] + body + lines[i + 1:])


def _judged(exercise_id: str, source: str):
    ex = registry.get(exercise_id)
    spec = answer_key.spec(ex)
    ns: dict = {"torch": torch, "__name__": "__main__"}
    exec(spec.setups[0], ns)
    exec(source, ns)
    answers = read_all(spec, ns, ["", source, "check()"])
    return answers, judge(answer_key.check_for(exercise_id), answers)


def test_the_prompts_that_ask_for_code_by_hand_declare_it():
    assert set(TARGETS) <= set(REFUSING)
    assert {"ste_clamp_function", "train_engine"} <= set(REFUSING)
    assert registry.get("value_engine").refuse == TORCH == registry.get("train_engine").refuse
    assert registry.get("mlp_backward").refuse == AUTOGRAD


@pytest.mark.parametrize("exercise_id", sorted(TARGETS))
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_into_autograd_is_refused_in_one_line(exercise_id, route):
    ex = registry.get(exercise_id)
    cheat = _inject(ex.solution, TARGETS[exercise_id], ROUTES[route])
    answers, fb = _judged(exercise_id, cheat)
    why = WHY[ex.refuse]
    assert all(a == {"t": "missing", "why": why} for a in answers), (route, answers)
    assert fb.verdict == "invalid" and fb.score == 0, fb
    assert "done by hand" in fb.message and "\n" not in fb.message and "Traceback" not in fb.message


# cheats that compute the whole answer with autograd (not a scratch use beside the solution)
MLP_FUNC_GRAD = """def mlp_backward(X, y, W1, b1, W2, b2):
    def loss(W1, b1, W2, b2):
        S = torch.relu(X @ W1 + b1) @ W2 + b2
        return torch.nn.functional.cross_entropy(S, y)
    return torch.func.grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2)"""
MLP_ENABLE_GRAD = """def mlp_backward(X, y, W1, b1, W2, b2):
    with torch.enable_grad():
        ps = [p.clone().requires_grad_() for p in (W1, b1, W2, b2)]
        S = torch.relu(X @ ps[0] + ps[1]) @ ps[2] + ps[3]
        return torch.autograd.grad(torch.nn.functional.cross_entropy(S, y), ps)"""
SOFTPLUS_AUTOGRAD = """class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x_ = x.detach().requires_grad_()
            return torch.autograd.grad(torch.nn.functional.softplus(x_), x_, g, create_graph=True)[0]"""
SOFTPLUS_FORWARD_STASH = """class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():   # the derivative taken by autograd in forward, saved for backward
            x_ = x.detach().requires_grad_()
            (d,) = torch.autograd.grad(torch.nn.functional.softplus(x_), x_)
        ctx.save_for_backward(d)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, g):
        (d,) = ctx.saved_tensors
        return g * d"""
TORCH_VALUE = """class Value:
    def __init__(self, data, _t=None):
        self.t = torch.tensor(float(data), dtype=torch.float64, requires_grad=True) if _t is None else _t
        self.data, self.grad, self._leaves = float(self.t), 0.0, []
    def _wrap(self, t, *others):
        out = Value(0.0, t)
        out._leaves = [self, *others]
        return out
    def __add__(self, o): return self._wrap(self.t + o.t, o)
    def __mul__(self, o): return self._wrap(self.t * o.t, o)
    def __pow__(self, k): return self._wrap(self.t ** k)
    def tanh(self): return self._wrap(torch.tanh(self.t))
    def relu(self): return self._wrap(torch.relu(self.t))
    def exp(self): return self._wrap(torch.exp(self.t))
    def log(self): return self._wrap(torch.log(self.t))
    def backward(self):
        self.t.backward()"""
WHOLE = {"mlp_backward": (MLP_FUNC_GRAD, MLP_ENABLE_GRAD),
         "softplus_function": (SOFTPLUS_AUTOGRAD, SOFTPLUS_FORWARD_STASH),
         "value_engine": (TORCH_VALUE,)}


@pytest.mark.parametrize(("exercise_id", "k"), [(i, k) for i, cs in WHOLE.items() for k in range(len(cs))])
def test_an_answer_computed_by_autograd_earns_nothing(exercise_id, k):
    answers, fb = _judged(exercise_id, WHOLE[exercise_id][k])
    assert fb.score == 0 and "done by hand" in fb.message, (answers, fb)


@pytest.mark.parametrize("exercise_id", REFUSING)
def test_the_solution_runs_under_the_guard_and_earns_full_marks(exercise_id):
    ex = registry.get(exercise_id)
    before = trips()
    _, fb = _judged(exercise_id, ex.solution)
    assert fb.score == 1.0 and fb.verdict == "correct", fb
    assert trips() == before


def test_the_student_class_is_restored_after_the_guard_and_autograd_works_outside():
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            with torch.enable_grad():
                y = torch.tensor(1.0, requires_grad=True)
                (y * y).backward()
            return 2 * g

    original = vars(Twice)["backward"]
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with guarded(Twice, AUTOGRAD) as cls, pytest.raises(RuntimeError, match="done by hand"):
        cls.apply(x).sum().backward()
    assert vars(Twice)["backward"] is original
    Twice.apply(x).sum().backward()  # unguarded, the same class may use autograd again
    assert x.grad.tolist() == [2.0, 2.0]


# --- the banner follows from the declared mode and agrees with the prompt -------------------------

# what a prompt says when it requires the work by hand (not "by hand, or with torch": several
# autograd prompts offer both ways, and "by hand" also names the hand-written one of two losses)
SAYS_BY_HAND = re.compile(r"\*\*by hand\*\*|no autograd|not call autograd|no torch inside|pure python",
                          re.IGNORECASE)


def test_every_prompt_carries_the_banner_of_its_mode_and_only_that_one():
    for ex in registry.all_exercises():
        prompt = exercise_cells(ex, "1")[0].source
        assert [m for m, banner in BANNERS.items() if banner in prompt] == [ex.mode], ex.id


def test_a_prompt_that_says_by_hand_never_gets_the_autograd_banner():
    said = []
    for ex in registry.all_exercises():
        if SAYS_BY_HAND.search(ex.prompt_text()):
            said.append(ex.id)
            assert WITH_AUTOGRAD not in exercise_cells(ex, "1")[0].source, ex.id
    # the prompts the issue names (9.1-9.3, 10.3, 10.6) are among them
    assert {"square_function_fix", "softplus_function", "gated_function", "value_engine",
            "mlp_backward"} <= set(said)


def test_a_refusal_is_declared_only_where_the_grader_calls_the_students_code():
    for ex in registry.all_exercises():
        if ex.refuse:
            assert ex.is_function and not ex.by_hand, ex.id


# --- the guard's own state: tampered with in an earlier cell, or from inside the answer -------------

# an earlier cell reaches the guard's objects (the student runtime is importable: setups use it)
GUARD_TAMPERING = {
    "depth": "import autograder.byhand as _b\n_b._GUARD.depth = 1",
    # both layers at once (each alone is caught by the other): the engine's stand-in, by name,
    # and the dispatch mode that watches the engine at its source
    "both layers": "import autograder.byhand as _b\n"
                   "_b._Engine.run_backward = lambda self, *a, **k: "
                   "_b._Engine._real(*a, **k)\n"
                   "import torch\n_b._Engine._real = torch.autograd.Variable._execution_engine.run_backward\n"
                   "_b.guard_classes()[0].__torch_dispatch__ = "
                   "lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))",
}


@pytest.mark.parametrize("tamper", sorted(GUARD_TAMPERING))
def test_the_grader_puts_the_guard_back_before_it_reads(tamper):
    """Without the grader's snapshot the tampered guard lets the autograd route through (the
    control: the read is not refused); with it, as the grading child restores it before each
    grade cell, the same answer is refused."""
    from autograder.sandbox.zygote import Snapshot

    ex = registry.get("mlp_backward")
    cheat = _inject(ex.solution, TARGETS["mlp_backward"], ROUTES[".backward"])
    snap = Snapshot()
    try:
        exec(GUARD_TAMPERING[tamper], {})
        tampered, _ = _judged("mlp_backward", cheat)
        snap.restore()
        restored, fb = _judged("mlp_backward", cheat)
    finally:
        snap.restore()
    assert not all(a == {"t": "missing", "why": "by_hand_code"} for a in tampered), tampered
    assert all(a == {"t": "missing", "why": "by_hand_code"} for a in restored), restored
    assert fb.verdict == "invalid" and fb.score == 0


def test_code_that_takes_the_guard_off_from_inside_is_refused():
    """The function closes the guard's own switch (its dispatch mode popped) before it asks
    autograd: the guard finds its mode gone when the call ends, and that counts as a trip."""
    ex = registry.get("mlp_backward")
    route = ("import autograder.byhand as _b\n_b._GUARD.source.__exit__(None, None, None)\n"
             + ROUTES[".backward"])
    answers, fb = _judged("mlp_backward", _inject(ex.solution, TARGETS["mlp_backward"], route))
    assert all(a == {"t": "missing", "why": "by_hand_code"} for a in answers), answers
    assert fb.verdict == "invalid" and fb.score == 0
