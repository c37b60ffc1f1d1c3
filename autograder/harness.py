"""Student side: what the grader runs on a student's function or class to read it.

A function or ``torch.autograd.Function`` answer is graded by calling it on fresh inputs; the
``call=`` of its exercise unit reaches one of these through this module (``call``), so an
answer cell that redefines a name cannot stand in for it. Nothing here knows an answer: each
helper only runs the student's code and reports plain values. The student runtime and the
grading sandbox ship it; setup cells import it so students can run it on their own code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import gradcheck, gradgradcheck

from autograder.byhand import ByHand

F64 = torch.float64
MODULE = "autograder.harness"


def call(expression: str) -> str:
    """A ``call=`` expression that reaches this module without trusting the answer's names."""
    name = expression.split("(", 1)[0]
    return f"__import__({MODULE!r}, fromlist=[{name!r}]).{expression}"


def _fresh(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.as_tensor(t, dtype=F64).detach().clone().requires_grad_(True) for t in inputs]


def _passes(check: Callable[..., bool], apply: Callable[..., Any], inputs: list[torch.Tensor]) -> bool:
    try:
        return bool(check(apply, tuple(inputs), raise_exception=False))
    except RuntimeError:  # e.g. a first derivative with no graph: the check did not pass
        return False


def function_report(apply: Callable[..., Any], inputs: Sequence[torch.Tensor], seed: torch.Tensor,
                    *, second: bool = True) -> Any:
    """Run ``apply`` (a Function's ``.apply``) on fresh float64 copies of ``inputs``.

    Returns one table row: the forward value, the gradient of ``(seed * out).sum()`` with
    respect to each input (``grad`` for one input; ``grad_x``, ``grad_y`` ... otherwise), and
    whether ``gradcheck`` and (with ``second``) ``gradgradcheck`` pass.
    """
    xs = _fresh(inputs)
    out = apply(*xs)
    if out is Ellipsis:  # the starter function, unchanged: "not answered", not an error
        return Ellipsis
    grads = torch.autograd.grad(out, xs, grad_outputs=torch.as_tensor(seed, dtype=F64),
                                allow_unused=True)
    row: dict[str, Any] = {"value": out.detach()}
    if len(xs) == 1:
        row["grad"] = grads[0]
    else:
        row.update({f"grad_{name}": g for name, g in zip("xyzw", grads, strict=False)})
    row["gradcheck"] = _passes(gradcheck, apply, _fresh(inputs))
    if second:
        row["gradgradcheck"] = _passes(gradgradcheck, apply, _fresh(inputs))
    return {"report": row}


def _forward_mode_check(apply: Callable[..., Any], inputs: tuple, *, raise_exception: bool) -> bool:
    # forward mode only: the exercise asks for forward and jvp, not for a backward
    return gradcheck(apply, inputs, raise_exception=raise_exception, check_forward_ad=True,
                     check_backward_ad=False, check_undefined_grad=False, check_batched_grad=False)


def jvp_report(apply: Callable[..., Any], inputs: Sequence[torch.Tensor],
               tangents: Sequence[torch.Tensor]) -> Any:
    """Run ``apply`` (a Function's ``.apply``) in forward mode: each fresh float64 input is a dual
    tensor carrying its tangent. Returns one table row: the value, the output's tangent (the
    Jacobian-vector product J·v) and whether ``gradcheck``'s forward-mode check passes."""
    xs = [torch.as_tensor(t, dtype=F64).detach().clone() for t in inputs]
    vs = [torch.as_tensor(t, dtype=F64).detach().clone() for t in tangents]
    with fwAD.dual_level():
        out = apply(*(fwAD.make_dual(x, v) for x, v in zip(xs, vs, strict=True)))
        if out is Ellipsis:  # the starter function, unchanged: "not answered"
            return Ellipsis
        primal, tangent = fwAD.unpack_dual(out)
    row = {"value": primal.detach(), "tangent": tangent,
           "gradcheck": _passes(_forward_mode_check, apply, _fresh(inputs))}
    return {"report": row}


def inplace_report(apply: Callable[..., Any], inputs: Sequence[torch.Tensor], seed: torch.Tensor) -> Any:
    """Run ``apply`` (a Function's ``.apply`` that should change its first input in place) on
    non-leaf copies of fresh float64 leaves (torch refuses in-place changes of a leaf that
    requires grad). Returns one table row: the value; the gradient of ``(seed * out).sum()``
    reached through the returned tensor and through the changed input tensor itself; whether
    the input's values changed and whether the output is that very tensor; and whether
    ``gradcheck`` passes (run on copies, so each call starts from the same values)."""
    leaves = _fresh(inputs)
    work = [t.clone() for t in leaves]
    before = work[0].detach().clone()
    out = apply(*work)
    if out is Ellipsis:  # the starter function, unchanged: "not answered"
        return Ellipsis
    seed = torch.as_tensor(seed, dtype=F64)
    (through_out,) = torch.autograd.grad(out, leaves[0], seed, retain_graph=True, allow_unused=True)
    (through_input,) = torch.autograd.grad(work[0], leaves[0], seed, allow_unused=True)
    row = {"value": out.detach(), "grad": through_out, "grad_via_input": through_input,
           "input_changed": not torch.equal(work[0].detach(), before), "same_tensor": out is work[0],
           "gradcheck": _passes(gradcheck, lambda *ts: apply(*(u.clone() for u in ts)), _fresh(inputs))}
    return {"report": row}


def _reported(error: BaseException) -> bool:
    """Is this error of the student's code a value a report may hold? Not a refusal of the
    by-hand guard, and not a limit (memory, recursion, the sandbox's timers): those must reach
    the grader as they are."""
    return not isinstance(error, ByHand | MemoryError | RecursionError) and not hasattr(error, "why")


def unused_output_report(function: type, inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> Any:
    """Run ``function`` (a Function class with two outputs) on fresh float64 copies of
    ``inputs`` three times: only its first output used (the gradient ``seeds[0]`` arriving at
    it), only its second, and both. One table row per run: the gradient of the first input,
    whether a gradient arrived at ``backward`` as None (``ctx.set_materialize_grads(False)``
    lets an unused output's gradient arrive as None; by default it is a tensor of zeros), and
    whether ``backward`` raised (then no gradient comes back, and the row still reads)."""
    if function is Ellipsis:  # the starter, unchanged: "not answered"
        return Ellipsis
    log = {"none_arrived": False, "raised": False}

    class Observed(function):  # the student's class, with what reaches its backward noted
        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            log["none_arrived"] = log["none_arrived"] or any(g is None for g in grads)
            try:
                return function.backward(ctx, *grads)
            except Exception as e:
                if not _reported(e):
                    raise
                log["raised"] = True
                return (None,) * len(inputs)

    seeds = [torch.as_tensor(s, dtype=F64) for s in seeds]
    rows = {}
    for name, used in (("first_only", (0,)), ("second_only", (1,)), ("both", (0, 1))):
        log.update(none_arrived=False, raised=False)
        xs = _fresh(inputs)
        outs = Observed.apply(*xs)
        (grad,) = torch.autograd.grad([outs[k] for k in used], xs[0], [seeds[k] for k in used],
                                      allow_unused=True)
        rows[name] = {"grad": grad, **log}
    return rows


def _attempt(transform: Callable[[], Any]) -> Any:
    try:
        return transform()
    except Exception as e:  # this transform does not work on the student's Function: None
        if not _reported(e):
            raise
        return None


def transforms_report(apply: Callable[..., Any], x: torch.Tensor, batch: torch.Tensor, seed: Any) -> Any:
    """Run ``apply`` (a Function's ``.apply``: one tensor in, one number out) under the
    ``torch.func`` transforms, on fresh float64 copies. One table row: the value at ``x``; the
    vector-Jacobian product with the gradient ``seed`` arriving at the output
    (``torch.func.vjp``); the values at the rows of ``batch`` (``torch.func.vmap``); one
    gradient per row (``vmap(grad(apply))``); and the matrix of second derivatives at ``x``,
    reverse over reverse (``jacrev(jacrev(apply))``). A transform that raises gives None in
    its entry, so the row shows which transforms work."""
    x = torch.as_tensor(x, dtype=F64).detach().clone()
    batch = torch.as_tensor(batch, dtype=F64).detach().clone()
    seed = torch.as_tensor(seed, dtype=F64)
    value = apply(x.clone())
    if value is Ellipsis:  # the starter function, unchanged: "not answered"
        return Ellipsis
    func = torch.func
    row = {"value": value.detach(),
           "vjp": _attempt(lambda: func.vjp(apply, x.clone())[1](seed)[0]),
           "batched": _attempt(lambda: func.vmap(apply)(batch.clone())),
           "per_sample_grad": _attempt(lambda: func.vmap(func.grad(apply))(batch.clone())),
           "hessian": _attempt(lambda: func.jacrev(func.jacrev(apply))(x.clone()))}
    return {"report": row}


def clip_run(attach: Callable[..., Any], w_values: list, x_values: list, c: float) -> Any:
    """Loss Σ (w·x)², backward with the student's hook, remove it by its handle, backward again."""
    w = torch.tensor(w_values, dtype=F64, requires_grad=True)
    x = torch.tensor(x_values, dtype=F64)
    handle = attach(w, c)
    if handle is Ellipsis:  # the starter function, unchanged: "not answered"
        return Ellipsis
    ((w * x) ** 2).sum().backward()
    clipped = w.grad.clone()
    # anything but register_hook's handle (None, w itself) cannot remove the hook: it stays, and
    # the second pass shows it (the listed mistake), rather than an AttributeError on None
    if isinstance(handle, torch.utils.hooks.RemovableHandle):
        handle.remove()
    w.grad = None
    ((w * x) ** 2).sum().backward()
    return {"with_hook": {"grad": clipped}, "after_remove": {"grad": w.grad}}


def saved_table(count: Callable[..., Any], functions: dict[str, Callable[..., Any]], x: torch.Tensor) -> Any:
    """The student's counter of saved tensors run on each of the setup's functions."""
    table = {}
    for name, fn in functions.items():
        saved = count(fn, x)
        if saved is Ellipsis:  # the starter function, unchanged: "not answered"
            return Ellipsis
        table[name] = {"saved": saved}
    return table


# ---------------------------------------------------------------- chapter 10: the capstone
#
# A scalar engine (micrograd's shape) is read by behaviour: the same random expression graphs
# are built with the student's ``Value`` and with torch, and each probe reports whether the
# forward values and the leaves' gradients agree. Each probe isolates one mechanism (one local
# derivative; a deep chain; a node reused in one operation; a node with several consumers; two
# outputs sharing a node; a second backward pass), so a bug shows as the set of probes it fails.

ENGINE_OPS = ("add", "mul", "pow", "tanh", "relu", "exp", "log")
ENGINE_GRAPHS = ("chain", "reuse", "fanout", "two_outputs", "second_pass")
ENGINE_ROWS = ENGINE_OPS + ENGINE_GRAPHS


def _close(a: float, b: float, rel: float = 1e-7, abs_: float = 1e-9) -> bool:
    return abs(a - b) <= abs_ + rel * abs(b)


def _number(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError(f"{what} should be a Python number (int or float), got {type(v).__name__}: "
                        "the engine works on plain numbers, not tensors")
    return float(v)


def _build(leaf: Callable[[float], Any], nodes: list[tuple]) -> list[Any]:
    """The graph ``nodes`` built with ``leaf`` and the operators; torch tensors and a Value
    engine both speak ``+``, ``*``, ``**`` and ``.tanh() .relu() .exp() .log()``."""
    built: list[Any] = []
    for op, *args in nodes:
        if op == "leaf":
            built.append(leaf(args[0]))
        elif op == "add":
            built.append(built[args[0]] + built[args[1]])
        elif op == "mul":
            built.append(built[args[0]] * built[args[1]])
        elif op == "pow":
            built.append(built[args[0]] ** args[1])
        else:
            built.append(getattr(built[args[0]], op)())
    return built


def _leaves(nodes: list[tuple]) -> list[int]:
    return [i for i, n in enumerate(nodes) if n[0] == "leaf"]


def _torch_run(nodes: list[tuple], outs: list[int]) -> tuple[list[float], list[list[float | None]]]:
    built = _build(lambda v: torch.tensor(v, dtype=F64, requires_grad=True), nodes)
    leaves = [built[i] for i in _leaves(nodes)]
    values, grads = [], []
    for o in outs:
        values.append(float(built[o].detach()))
        gs = torch.autograd.grad(built[o], leaves, allow_unused=True, retain_graph=True)
        grads.append([None if g is None else float(g) for g in gs])  # None: not in this output's graph
    return values, grads


def _engine_run(value_cls: Any, nodes: list[tuple], outs: list[int],
                passes: int) -> tuple[list[float], list[list[float]]]:
    """Forward, then ``backward()`` on each output in turn (``passes`` times each), reading every
    leaf's ``.grad`` after each output's passes."""
    built = _build(value_cls, nodes)
    leaves = [built[i] for i in _leaves(nodes)]
    values = [_number(built[o].data, "Value.data") for o in outs]
    grads = []
    for o in outs:
        for _ in range(passes):
            built[o].backward()
        grads.append([_number(leaf.grad, "Value.grad") for leaf in leaves])
    return values, grads


def _probe(value_cls: Any, graphs: list[tuple[list[tuple], list[int]]], passes: int = 1) -> dict[str, bool]:
    value_ok = grads_ok = True
    for nodes, outs in graphs:
        want_v, want_g = _torch_run(nodes, outs)
        got_v, got_g = _engine_run(value_cls, nodes, outs, passes)
        value_ok &= all(_close(a, b) for a, b in zip(got_v, want_v, strict=True))
        grads_ok &= all(_close(a, b) for ga, gb in zip(got_g, want_g, strict=True)
                        for a, b in zip(ga, gb, strict=True) if b is not None)
    return {"value": value_ok, "grads": grads_ok}


def _signed(rng: Any, low: float, high: float) -> float:
    return rng.choice((-1, 1)) * rng.uniform(low, high)


def _op_graphs(op: str, rng: Any) -> list[tuple[list[tuple], list[int]]]:
    graphs = []
    for k in range(3):
        if op in ("add", "mul"):
            nodes = [("leaf", _signed(rng, 0.3, 2)), ("leaf", _signed(rng, 0.3, 2)), (op, 0, 1)]
        elif op == "pow":
            nodes = [("leaf", rng.uniform(0.5, 2.5)), ("pow", 0, (2, 3, -1, 0.5)[rng.randrange(4) if k else 0])]
        elif op == "relu":  # one input of each sign, then either
            x = (rng.uniform(0.2, 2), -rng.uniform(0.2, 2), _signed(rng, 0.2, 2))[k]
            nodes = [("leaf", x), ("relu", 0)]
        elif op == "log":
            nodes = [("leaf", rng.uniform(0.2, 3)), ("log", 0)]
        else:  # tanh, exp
            nodes = [("leaf", _signed(rng, 0.1, 2)), (op, 0)]
        graphs.append((nodes, [len(nodes) - 1]))
    return graphs


def _chain(rng: Any, depth: int) -> list[tuple]:
    """v <- v * c + d, ``depth`` times: every node used once, so only the order matters."""
    nodes: list[tuple] = [("leaf", _signed(rng, 0.5, 1.5))]
    v = 0
    for _ in range(depth):
        nodes += [("leaf", _signed(rng, 0.8, 1.2)), ("leaf", rng.uniform(-1, 1))]
        c, d = len(nodes) - 2, len(nodes) - 1
        nodes.append(("mul", v, c))
        nodes.append(("add", len(nodes) - 1, d))
        v = len(nodes) - 1
    return nodes


def _reuse(rng: Any) -> list[list[tuple]]:
    """One node used twice by one operation (x + x, p * p) and again further on."""
    x = _signed(rng, 0.5, 1.2)
    return [[("leaf", x), ("add", 0, 0), ("mul", 1, 1), ("mul", 2, 0)],
            [("leaf", _signed(rng, 0.5, 1.2)), ("mul", 0, 0), ("add", 1, 0), ("mul", 2, 2)]]


def _fanout(rng: Any) -> list[tuple]:
    """An intermediate node s = x * y read by several consumers, whose results are added up."""
    nodes: list[tuple] = [("leaf", _signed(rng, 0.5, 1.5)), ("leaf", _signed(rng, 0.5, 1.5)), ("mul", 0, 1)]
    terms = []
    for _ in range(rng.randint(2, 4)):
        nodes.append(("leaf", _signed(rng, 0.5, 1.5)))
        nodes.append(("mul" if rng.random() < 0.5 else "add", 2, len(nodes) - 1))
        terms.append(len(nodes) - 1)
    total = terms[0]
    for t in terms[1:]:
        nodes.append(("mul", total, t) if rng.random() < 0.5 else ("add", total, t))
        total = len(nodes) - 1
    return nodes


def _two_outputs(rng: Any) -> tuple[list[tuple], list[int]]:
    """s = x * y, o1 = s * c1 and o2 = s + c2: backward from o1, then from o2."""
    nodes = [("leaf", _signed(rng, 0.5, 1.5)) for _ in range(4)]
    nodes += [("mul", 0, 1), ("mul", 4, 2), ("add", 4, 3)]
    return nodes, [5, 6]


def _counted(node: Any, counts: dict[int, int]) -> None:
    """Count the calls of ``node``'s own ``_backward`` closure (an instance attribute; a node
    without one is left as it is)."""
    closure = getattr(node, "__dict__", {}).get("_backward")
    if not callable(closure):
        return

    def counting(*args: Any, **kwargs: Any) -> Any:
        counts[id(node)] = counts.get(id(node), 0) + 1
        return closure(*args, **kwargs)

    try:
        node._backward = counting
    except AttributeError:  # slots or a property: this node is not counted
        return


def _each_once(value_cls: Any, graphs: list[tuple[list[tuple], list[int]]]) -> dict[str, bool]:
    """Does one ``backward()`` run every node's ``_backward`` at most once? (Forward values are
    compared too, so the row reads like the others.)"""
    value_ok = once = True
    for nodes, outs in graphs:
        want_v, _ = _torch_run(nodes, outs)
        built = _build(value_cls, nodes)
        got_v = [_number(built[o].data, "Value.data") for o in outs]
        value_ok &= all(_close(a, b) for a, b in zip(got_v, want_v, strict=True))
        counts: dict[int, int] = {}
        for node in built:
            _counted(node, counts)
        for o in outs:
            counts.clear()
            built[o].backward()
            once &= max(counts.values(), default=0) <= 1
    return {"value": value_ok, "grads": once}


def engine_report(value_cls: Any, seed: int, *, once: bool = False) -> Any:
    """Run a ``Value`` class on fresh random expression graphs drawn from ``seed``, beside torch.

    One row per probe (``ENGINE_ROWS``): ``value`` is True when the forward values agree with
    torch, ``grads`` when every leaf's ``.grad`` after ``backward()`` does. With ``once``, one
    row more, ``each_node_once``: its ``grads`` is True when every ``backward()`` on graphs with
    shared nodes ran each node's ``_backward`` closure at most once (an order without a visited
    set, or a recursion, runs a shared node's more often).
    """
    import random

    if value_cls is Ellipsis:
        return Ellipsis
    rng = random.Random(f"engine:{seed}")
    table = {op: _probe(value_cls, _op_graphs(op, rng)) for op in ENGINE_OPS}
    table["chain"] = _probe(value_cls, [(_chain(rng, rng.randint(30, 60)), [-1])])
    table["reuse"] = _probe(value_cls, [(g, [len(g) - 1]) for g in _reuse(rng)])
    fan = [_fanout(rng) for _ in range(2)]
    table["fanout"] = _probe(value_cls, [(g, [len(g) - 1]) for g in fan])
    table["two_outputs"] = _probe(value_cls, [_two_outputs(rng)])
    table["second_pass"] = _probe(value_cls, [(_chain(rng, 4), [-1])], passes=2)
    if once:
        table["each_node_once"] = _each_once(value_cls, [(g, [len(g) - 1]) for g in _reuse(rng) + fan])
    for row in table.values():
        row["value"], row["grads"] = bool(row["value"]), bool(row["grads"])
    return table


# --- the data set and the two-layer MLP: logits = relu(X @ W1 + b1) @ W2 + b2 ----------------

MLP_NAMES = ("W1", "b1", "W2", "b2")


def moons(n: int, seed: int, noise: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Two interleaved half-circles (n points, labels 0 and 1), made with torch from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    half = n // 2
    t = torch.rand(n, generator=g, dtype=F64) * math.pi
    upper = torch.stack([torch.cos(t[:half]), torch.sin(t[:half])], 1)
    lower = torch.stack([1 - torch.cos(t[half:]), 0.5 - torch.sin(t[half:])], 1)
    X = torch.cat([upper, lower]) + noise * torch.randn(n, 2, generator=g, dtype=F64)
    y = torch.cat([torch.zeros(half, dtype=torch.long), torch.ones(n - half, dtype=torch.long)])
    perm = torch.randperm(n, generator=g)
    return X[perm], y[perm]


def mlp_init(seed: int, d: int, h: int, c: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(10_000 + seed)
    return {"W1": torch.randn(d, h, generator=g, dtype=F64) / math.sqrt(d),
            "b1": 0.1 * torch.randn(h, generator=g, dtype=F64),
            "W2": torch.randn(h, c, generator=g, dtype=F64) / math.sqrt(h),
            "b2": 0.1 * torch.randn(c, generator=g, dtype=F64)}


def mlp_problem(seed: int, n: int, d: int, h: int, c: int) -> tuple[torch.Tensor, torch.Tensor, dict]:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=F64)
    y = torch.randint(0, c, (n,), generator=g)
    return X, y, mlp_init(seed, d, h, c)


def directions(seed: int, shapes: Sequence[tuple[int, ...]], k: int = 3) -> list[list[torch.Tensor]]:
    """``k`` fixed random directions per shape: a gradient is read as its k projections on them,
    so gradients of any shape compare as a few numbers."""
    g = torch.Generator().manual_seed(20_000 + seed)
    return [[torch.randn(s, generator=g, dtype=F64) for _ in range(k)] for s in shapes]


def mlp_backward_report(backward: Callable[..., Any], seed: int, n: int, d: int, h: int, c: int) -> Any:
    """Call ``backward(X, y, W1, b1, W2, b2)`` (returning dW1, db1, dW2, db2) on a fresh problem,
    with autograd switched off; read each gradient as its projections on fixed directions."""
    X, y, params = mlp_problem(seed, n, d, h, c)
    with torch.no_grad():
        grads = backward(X.clone(), y.clone(), *(p.clone() for p in params.values()))
    if grads is Ellipsis:
        return Ellipsis
    if isinstance(grads, dict):
        grads = [grads[k] for k in MLP_NAMES]
    grads = list(grads)
    if len(grads) != 4:
        raise ValueError(f"backward should return 4 gradients (dW1, db1, dW2, db2), got {len(grads)}")
    table = {}
    dirs = directions(seed, [tuple(p.shape) for p in params.values()])
    for name, p, grad, ds in zip(MLP_NAMES, params.values(), grads, dirs, strict=True):
        grad = torch.as_tensor(grad, dtype=F64)
        if tuple(grad.shape) != tuple(p.shape):
            raise ValueError(f"the gradient for {name} has shape {tuple(grad.shape)}, but {name} has "
                             f"shape {tuple(p.shape)}: a gradient has the shape of its tensor")
        table[name] = {"proj": torch.stack([(grad * r).sum() for r in ds])}
    return table


ENGINE_TRAIN = {"n": 24, "h": 6, "steps": 15, "lr": 0.5}


def engine_train_report(train: Callable[..., Any], seed: int, n: int, h: int, steps: int, lr: float) -> Any:
    """Call ``train(X, y, W1, b1, W2, b2, steps, lr)`` with plain lists (two moons from ``seed``,
    a fresh initialisation) and return the losses it reports, one per step."""
    X, y = moons(n, seed)
    init = mlp_init(seed, 2, h, 2)
    losses = train(X.tolist(), y.tolist(), *(p.tolist() for p in init.values()), steps, lr)
    if losses is Ellipsis:
        return Ellipsis
    return torch.tensor([_loss_number(v) for v in losses], dtype=F64)


def _loss_number(v: Any) -> float:
    """A logged loss as a number: a float, a one-element tensor, or a Value (its ``.data``)."""
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        return float(v)
    if not isinstance(v, int | float) and hasattr(v, "data"):
        v = v.data
    return _number(v, "each loss")


# --- the training loop to repair ---------------------------------------------------------------

LOOP = {"n": 32, "h": 6, "steps": 12, "lr": 0.5, "accum": 4, "lam": 0.05}
LOOP_CHECKS = ("zero_grad", "frozen_layer", "non_leaf", "where_nan", "accumulation", "logged_graph",
               "data_in_penalty")


def loop_init(seed: int, h: int, prune: int | None) -> dict[str, torch.Tensor]:
    """The loop's initial parameters, in float32 (the loop casts them to the data's float64);
    with ``prune``, hidden unit ``prune`` starts with all its incoming weights zero."""
    init = {k: v.float() for k, v in mlp_init(seed, 2, h, 2).items()}
    if prune is not None:
        init["W1"][:, prune] = 0.0
    return init


def loop_objective(X: torch.Tensor, y: torch.Tensor, params: dict[str, torch.Tensor],
                   lam: float) -> torch.Tensor:
    """The objective the loop minimises: mean cross-entropy + lam · Σ_j ‖W1[:, j]‖ (group lasso),
    with the norm's gradient taken as 0 at a zero column (its subgradient)."""
    W1, b1, W2, b2 = (params[k] for k in MLP_NAMES)
    logits = (X @ W1 + b1).relu() @ W2 + b2
    return torch.nn.functional.cross_entropy(logits, y) + lam * torch.linalg.vector_norm(W1, dim=0).sum()


def _params_of(result: Any) -> tuple[dict[str, torch.Tensor], list]:
    if not (isinstance(result, tuple | list) and len(result) == 2 and isinstance(result[0], dict)):
        raise TypeError("train should return (params, history): a dict of the final W1, b1, W2, b2 "
                        "and the list of logged losses")
    params, history = result
    return {k: torch.as_tensor(params[k]).detach().to(F64) for k in MLP_NAMES}, list(history)


def _same_params(a: dict, b: dict, rel: float = 1e-5) -> bool:
    return all(torch.allclose(a[k], b[k], rtol=rel, atol=1e-7, equal_nan=True) for k in MLP_NAMES)


def _moved(a: dict, b: dict, names: Sequence[str]) -> bool:
    return all(not torch.allclose(a[k], b[k].to(F64), rtol=0, atol=1e-9) for k in names)


def loop_report(train: Callable[..., Any], seed: int) -> Any:
    """Run ``train(X, y, init, steps, lr, accum, lam)`` on two moons from ``seed``.

    ``final``: the objective and its gradient (three projections) at the parameters a full run
    returns, measured with torch. Then one behaviour per planted bug, each True when the loop
    behaves as a right loop must (this docstring is on the student side: the checks are named
    in the feedback after an attempt, not here).
    """
    cfg = LOOP
    X, y = moons(cfg["n"], seed)

    def run(init: dict, steps: int, accum: int, lam: float) -> tuple[dict, list]:
        return _params_of(train(X.clone(), y.clone(), {k: v.clone() for k, v in init.items()},
                                steps, cfg["lr"], accum, lam))

    pruned, clean = loop_init(seed, cfg["h"], seed % cfg["h"]), loop_init(seed, cfg["h"], None)
    final, history = run(pruned, cfg["steps"], cfg["accum"], cfg["lam"])
    leaves = {k: v.clone().requires_grad_(True) for k, v in final.items()}
    with torch.enable_grad():
        objective = loop_objective(X, y, leaves, cfg["lam"])
        grads = torch.autograd.grad(objective, list(leaves.values()))
    dirs = directions(seed, [tuple(g.shape) for g in grads])
    proj = torch.stack([sum((g * ds[j]).sum() for g, ds in zip(grads, dirs, strict=True)) for j in range(3)])
    one, _ = run(clean, 1, 1, 0.0)
    two, _ = run(clean, 2, 1, 0.0)
    again, _ = run({k: v.float() for k, v in one.items()}, 1, 1, 0.0)
    accumulated, _ = run(clean, 1, cfg["accum"], 0.0)
    penalised, _ = run(clean, 1, 1, cfg["lam"])
    finite = all(bool(torch.isfinite(v).all()) for v in final.values())
    row = {"loss": objective.detach(), "grads": proj.detach(),
           "zero_grad": _same_params(two, again),
           "frozen_layer": _moved(one, clean, ("W2", "b2")),
           "non_leaf": _moved(one, clean, ("b1",)),
           "where_nan": finite,
           "accumulation": _same_params(accumulated, one),
           "logged_graph": not any(isinstance(v, torch.Tensor) and v.requires_grad for v in history),
           "data_in_penalty": not _same_params(penalised, one, rel=1e-9)}
    return {"loop": row}


# --- what the fix-it exercises of chapters 4-7 run on a student's function ---------------------

def value_and_grad(fn: Callable[..., Any], values: list[float]) -> Any:
    """``fn`` on fresh float64 points, and the gradient of the sum of its values, as two rows."""
    x = torch.tensor(values, dtype=F64, requires_grad=True)
    y = fn(x)
    if y is Ellipsis:  # the starter function, unchanged: "not answered"
        return Ellipsis
    (grad,) = torch.autograd.grad(y.sum(), x)
    return torch.stack([y.detach(), grad])


def grads_of(fn: Callable[..., Any], *values: Any) -> Any:
    """``fn`` on fresh leaves made from ``values``, one ``backward()``, and their gradients: the
    one ``.grad``, or all of them flattened and joined."""
    leaves = [torch.tensor(v, requires_grad=True) for v in values]
    out = fn(*leaves)
    if out is Ellipsis:
        return Ellipsis
    out.backward()
    grads = [t.grad for t in leaves]
    return grads[0] if len(grads) == 1 else torch.cat([g.flatten() for g in grads])


def without_cos(fn: Callable[..., Any], values: list[float]) -> Any:
    """``fn`` on fresh points with every cos switched off: autograd must find sin's derivative."""
    import numpy

    saved = (torch.cos, torch.Tensor.cos, math.cos, numpy.cos)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cos is switched off here: let autograd find the derivative of sin")

    torch.cos = torch.Tensor.cos = math.cos = numpy.cos = refuse
    try:
        return fn(torch.tensor(values))
    finally:
        torch.cos, torch.Tensor.cos, math.cos, numpy.cos = saved
