"""Build micrograd's scalar engine. Graded by running the student's class on fresh random
expression graphs beside torch (autograder.harness.engine_report): each classic bug fails its
own set of probes, so the diagnosis comes from the class's behaviour, not from its text."""


from autograder.byhand import TORCH
from autograder.kinds import Bool, Table
from gradtutor.key.exercise import Exercise, Wrong

from ._common import (
    ENGINE_OPS,
    ENGINE_ROWS,
    AssignEngine,
    Engine,
    FiniteDiffEngine,
    ForwardOrderEngine,
    NoVisitedEngine,
    NoZeroEngine,
    RecursiveEngine,
    TorchScalar,
    call,
    engine_report,
    wrong_local,
)

KIND = Table(rows=(*ENGINE_ROWS, "each_node_once"), columns=(("value", Bool()), ("grads", Bool())))

SOLUTION = '''import math

class Value:
    def __init__(self, data, _children=()):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._backward = lambda: None          # a leaf has nothing to pass on

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))
        def _backward():
            self.grad += out.grad              # += : a node used twice gets both contributions
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):                      # k is a plain number
        out = Value(self.data ** k, (self,))
        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))
        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(max(self.data, 0.0), (self,))
        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        e = math.exp(self.data)
        out = Value(e, (self,))
        def _backward():
            self.grad += e * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,))
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self):
        topo, seen = [], set()
        def build(v):                          # children first: a topological order
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        for v in topo:                         # start from zero: a second pass repeats the first
            v.grad = 0.0
        self.grad = 1.0
        for v in reversed(topo):               # from the output down: each node is complete
            v._backward()                      # before it passes its gradient on'''


def _run(engine):
    return lambda seed: engine_report(engine, seed, once=True)


OPS_TEXT = {
    "add": ("+", "both operands get out.grad (times 1)"),
    "mul": ("*", "each operand gets the other operand's data times out.grad"),
    "pow": ("**", "the power rule: k · x^(k-1), not k · x^k"),
    "tanh": ("tanh", "1 - tanh(x)², written with the output t = tanh(x), not with the input x"),
    "relu": ("relu", "1 where the input is positive and 0 elsewhere"),
    "exp": ("exp", "exp is its own derivative: e^x, not x"),
    "log": ("log", "1/x, the reciprocal of the input"),
}


def _local_wrong(op: str) -> Wrong:
    sym, rule = OPS_TEXT[op]
    more = (" Every graph probe uses it too, so they all fail with it: fix this one first."
            if op in ("add", "mul") else "")
    return Wrong("local_derivative", _run(wrong_local(op)),
                 f"Your engine's {sym} gives the right value but the wrong gradient: its local "
                 f"backward does not compute the derivative of {sym} (the {op} row fails while the "
                 f"other single-operation rows pass).{more}",
                 f"Differentiate {sym} by hand and compare with its _backward. The rule: {rule}.")


EXERCISE = Exercise(
    title="Build the engine: a scalar Value with backward()",
    points=4,
    prompt=r"""
Write a class `Value` (micrograd's shape) that holds one number and builds the graph as you
compute:

* `Value(data)` stores `data` (a Python float) in `.data` and starts `.grad` at `0.0`;
* `a + b` and `a * b` for two `Value`s, `a ** k` for a plain number `k`, and the methods
  `a.tanh()`, `a.relu()`, `a.exp()`, `a.log()`, each returning a new `Value` that remembers its
  inputs and a `_backward` closure adding its **local derivative** times `out.grad` into each
  input's `.grad`;
* `backward()` on an output: order the graph topologically, set every node's `.grad` to 0, set
  the output's to 1, then call each node's `_backward` from the output down.

Pure Python and `math` only: no torch inside the class (`.data` and `.grad` must be numbers).

The grader runs `engine_report(Value, seed, once=True)` with `seed = {{seed}}` and other seeds:
it builds random expression graphs with your class and with torch and says, row by row, whether
the forward values (`value`) and every leaf's gradient (`grads`) agree. The rows: each operation
alone, a deep chain, a node reused inside one operation ($x + x$, $p \cdot p$), a node feeding
several others (fan-out), two outputs sharing a node (backward from one, then from the other),
and a second `backward()` on the same output; with `once=True`, one row more,
`each_node_once`, whose `grads` says whether every `backward()` ran each node's `_backward` at
most once. Run it yourself: it is your test suite.
""",
    setup="""seed = {{seed}}
from autograder.harness import engine_report   # what the grader runs""",
    answer="Value",
    call=call("engine_report(Value, seed, once=True)"),
    placeholder="Value = ...  # replace with your class Value",
    solution=SOLUTION,
    refuse=TORCH,
    kind=KIND,
    params={"seed": 0},
    hidden=({"seed": 101}, {"seed": 202}),
    draw=lambda rng: {"seed": rng.randrange(1000, 10**6)},
    reference=_run(TorchScalar),
    analytic=_run(Engine),
    finite_diff=_run(FiniteDiffEngine),
    wrong=(
        Wrong("fanout_assign", _run(AssignEngine),
              "The reuse and fan-out rows fail and nothing else does, while backward() runs each "
              "node's _backward once: a node used more than once ends with the wrong total "
              "gradient because the _backward closures assign (self.grad = ...) where they must "
              "add (self.grad += ...), so only the last use's contribution stays.",
              "In each _backward, what happens to a gradient already in self.grad?"),
        Wrong("topo_order", _run(NoVisitedEngine),
              "The local derivatives are right, but backward() runs the _backward of a shared "
              "node more than once (the each_node_once row): the order is built without a visited "
              "set, so a node reached by two paths is listed twice, and every time its _backward "
              "runs it passes its gradient on again. A topological order lists each node once.",
              "Print the length of your order for x + x: how many times does x appear?"),
        Wrong("topo_order", _run(ForwardOrderEngine),
              "Every single-operation row passes, and every graph with more than one operation "
              "fails: the local derivatives are right but backward() calls the nodes' _backward "
              "from the leaves up. A node may pass its gradient on only when it is complete, after "
              "every node that uses it has run: walk the topological order in reverse.",
              "In which order must the nodes' _backward run: inputs first, or the output first?"),
        Wrong("topo_order", _run(RecursiveEngine),
              "The fan-out and each_node_once rows fail: backward() recurses into each node's "
              "children without a topological order, so a node with several consumers passes its "
              "gradient on once per consumer, the first times before it is complete. Chains and single uses hide the "
              "bug; a shared intermediate node shows it.",
              "How many times does the shared node's _backward run, and with what .grad each time?"),
        Wrong("engine_not_zeroed", _run(NoZeroEngine),
              "The second-pass and two-outputs rows fail: backward() does not start from zero, so "
              "a second pass adds onto the gradients the first one left, and after backward from "
              "one output, backward from another adds the first output's gradients into the second's.",
              "What should every .grad in the graph be before backward() seeds the output with 1?"),
        *(_local_wrong(op) for op in ENGINE_OPS),
    ),
)
