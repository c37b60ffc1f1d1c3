"""Build a tensor engine: micrograd's Value grown to tensors, with broadcasting, reductions over
axes, the matrix product, reshape, transpose and indexing. Graded by running the student's class
on fresh random shapes and values beside torch (autograder.tensor_harness.tensor_engine_report):
each classic bug fails its own set of probes, so the diagnosis comes from behaviour."""

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table
from gradtutor.key.exercise import Exercise, Wrong

from ._common import (
    ENGINE_OPS,
    ENGINE_ROWS,
    AssignEngine,
    Engine,
    FiniteDiffEngine,
    ForwardOrderEngine,
    GetitemAssignEngine,
    MatmulTransposedEngine,
    NoZeroEngine,
    SumNoUnsqueezeEngine,
    TorchTensor,
    call,
    tensor_engine_report,
    unbroadcast_from_left,
    unbroadcast_identity,
    unbroadcast_leading_only,
    with_unbroadcast,
    wrong_local,
)

KIND = Table(rows=ENGINE_ROWS, columns=(("value", Bool()), ("grads", Bool()), ("shape", Bool())))

SOLUTION = '''def unbroadcast(grad, shape):
    while grad.dim() > len(shape):                 # axes broadcasting added in front
        grad = grad.sum(0)
    for axis, size in enumerate(shape):            # axes stretched from size 1
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis, keepdim=True)
    return grad


class Tensor:
    def __init__(self, data, _children=()):
        self.data = torch.as_tensor(data, dtype=torch.float64)
        self.grad = torch.zeros_like(self.data)
        self._prev = tuple(_children)
        self._backward = lambda: None

    @staticmethod
    def _lift(other):                              # a number or a plain tensor: a constant
        return other if isinstance(other, Tensor) else Tensor(other)

    def __add__(self, other):
        other = Tensor._lift(other)
        out = Tensor(self.data + other.data, (self, other))
        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Tensor._lift(other)
        out = Tensor(self.data * other.data, (self, other))
        def _backward():
            self.grad += unbroadcast(other.data * out.grad, self.data.shape)
            other.grad += unbroadcast(self.data * out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-Tensor._lift(other))

    def __pow__(self, k):                          # k is a plain number
        out = Tensor(self.data ** k, (self,))
        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        return self * Tensor._lift(other) ** -1

    def exp(self):
        out = Tensor(self.data.exp(), (self,))
        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Tensor(self.data.log(), (self,))
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def tanh(self):
        out = Tensor(self.data.tanh(), (self,))
        def _backward():
            self.grad += (1 - out.data ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(self.data.clamp(min=0), (self,))
        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def sum(self, axis=None, keepdim=False):
        if axis is None:
            out = Tensor(self.data.sum(), (self,))
        else:
            out = Tensor(self.data.sum(axis, keepdim=keepdim), (self,))
        def _backward():
            g = out.grad
            if axis is not None and not keepdim:
                g = g.unsqueeze(axis)              # put the summed axis back, as size 1 ...
            self.grad += g.expand(self.data.shape)  # ... then copy along it
        out._backward = _backward
        return out

    def mean(self, axis=None, keepdim=False):
        n = self.data.numel() if axis is None else self.data.shape[axis]
        return self.sum(axis, keepdim) * (1.0 / n)

    def __matmul__(self, other):
        other = Tensor._lift(other)
        out = Tensor(self.data @ other.data, (self, other))
        def _backward():
            self.grad += out.grad @ other.data.T     # (m, n) @ (n, k): the shape of A
            other.grad += self.data.T @ out.grad     # (k, m) @ (m, n): the shape of B
        out._backward = _backward
        return out

    def reshape(self, *shape):
        out = Tensor(self.data.reshape(*shape), (self,))
        def _backward():
            self.grad += out.grad.reshape(self.data.shape)
        out._backward = _backward
        return out

    def transpose(self, d0, d1):
        out = Tensor(self.data.transpose(d0, d1), (self,))
        def _backward():
            self.grad += out.grad.transpose(d0, d1)
        out._backward = _backward
        return out

    def __getitem__(self, idx):
        out = Tensor(self.data[idx], (self,))
        def _backward():
            g = torch.zeros_like(self.data)
            g.index_put_(_as_indices(idx, self.data), out.grad, accumulate=True)  # repeats add
            self.grad += g
        out._backward = _backward
        return out

    def backward(self, grad=None):
        topo, seen = [], set()
        def build(v):
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        for v in topo:                             # start from zero: a second pass repeats the first
            v.grad = torch.zeros_like(v.data)
        self.grad = torch.ones_like(self.data) if grad is None else torch.as_tensor(grad, dtype=torch.float64)
        for v in reversed(topo):
            v._backward()


def _as_indices(idx, data):
    """idx as one index tensor per axis (what index_put_ takes): the positions it selects."""
    grid = torch.meshgrid(*(torch.arange(n) for n in data.shape), indexing="ij")
    return tuple(axis[idx] for axis in grid)'''


def _run(engine):
    return lambda seed: tensor_engine_report(engine, seed)


OPS_TEXT = {
    "add": ("+", "both operands get out.grad (times 1), each summed back to its own shape"),
    "sub": ("-", "the first operand gets out.grad, the second -out.grad"),
    "mul": ("*", "each operand gets the other operand's data times out.grad"),
    "div": ("/", "a / b: 1/b for a, and -a/b² for b"),
    "pow": ("**", "the power rule: k · x^(k-1), not k · x^k"),
    "exp": ("exp", "exp is its own derivative: e^x, not x"),
    "log": ("log", "1/x, the reciprocal of the input"),
    "tanh": ("tanh", "1 - tanh(x)², written with the output, not the input"),
    "relu": ("relu", "1 where the input is positive and 0 elsewhere"),
}


def _local_wrong(op: str) -> Wrong:
    sym, rule = OPS_TEXT[op]
    more = (" Almost every probe uses it too, so they fail with it: fix this one first."
            if op in ("add", "mul") else "")
    return Wrong("local_derivative", _run(wrong_local(op)),
                 f"Your {sym} gives the right value but the wrong gradient: its backward does not "
                 f"compute the derivative of {sym} (the {op} row fails while the other "
                 f"single-operation rows pass).{more}",
                 f"Differentiate {sym} by hand, entry by entry, and compare with its _backward. "
                 f"The rule: {rule}.")


EXERCISE = Exercise(
    title="Build a tensor engine: Tensor with backward()",
    points=5,
    prompt=r"""
Write a class `Tensor`, chapter 10's `Value` grown to whole arrays. `Tensor(data)` keeps `data`
(a float64 torch tensor: `torch.as_tensor(data, dtype=torch.float64)`) in `.data`, and `.grad`
starts as zeros of the same shape. Each operation returns a new `Tensor` that remembers its
inputs and a `_backward` that **adds** its inputs' gradients (`+=`). The operations:

* `a + b`, `a - b`, `a * b`, `a / b` with **broadcasting**, where `b` may also be a plain
  number or torch tensor (treat it as a constant `Tensor`); `-a`; `a ** k` for a number `k`;
  `a.exp()`, `a.log()`, `a.tanh()`, `a.relu()`;
* `a.sum(axis=None, keepdim=False)` and `a.mean(axis=None, keepdim=False)` (one axis or all);
* `a @ b` for two matrices; `a.reshape(*shape)`; `a.transpose(d0, d1)`; `a[idx]` for any
  index torch accepts (slices, integers, integer tensors, with repeats);
* `backward(grad=None)`: order the graph topologically, set every `.grad` in it to zeros, set
  the output's to `grad` (ones when `None`), then run each `_backward` from the output down.

Use torch for the arithmetic on `.data`, never its autograd: the grader runs your class with
autograd refused. Every gradient has the shape of its tensor: where broadcasting stretched an
input, its gradient is **summed back** (`unbroadcast`, the exercise above).

The grader runs `tensor_engine_report(Tensor, seed)` with `seed = {{seed}}` and other seeds: it
draws fresh shapes and values, builds the same computation with your class and with torch,
calls `backward` with a random seed gradient, and says row by row whether the forward value
(`value`), the numbers of every leaf's gradient (`grads`) and their shapes (`shape`) agree. The
rows: each elementwise operation; `sum` over an axis, with `keepdim`, over everything, and
`mean`; `matmul`, `reshape`, `transpose`, `getitem`; four broadcasting patterns (`bcast_prefix`
like (5,4)+(4,), `bcast_ones` like (3,1)+(1,4), `bcast_scalar` like ()+(2,3), `bcast_both` like
(5,4,1)+(4,3)); a node used twice in one operation (`reuse`), a node feeding several others
(`fanout`), a deep `chain`, and a `second_pass` of `backward`. Run it: it is your test suite.
""",
    setup="""seed = {{seed}}
from autograder.tensor_harness import tensor_engine_report   # what the grader runs""",
    answer="Tensor",
    call=call("tensor_engine_report(Tensor, seed)"),
    placeholder="Tensor = ...  # replace with your class Tensor",
    solution=SOLUTION,
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0},
    hidden=({"seed": 101}, {"seed": 202}),
    draw=lambda rng: {"seed": rng.randrange(1000, 10**6)},
    reference=_run(TorchTensor),
    analytic=_run(Engine),
    finite_diff=_run(FiniteDiffEngine),
    wrong=(
        Wrong("unbroadcast_missing", _run(with_unbroadcast(unbroadcast_identity)),
              "Every broadcasting row fails and the rows without broadcasting pass: where an "
              "input was stretched to the output's shape, your backward hands it out.grad in the "
              "output's shape. An input used at many positions gets the sum of their gradients, "
              "so its gradient must be summed back to its own shape (the scalar, mean and "
              "constant rows broadcast too).",
              "After the forward of a + b, compare the shapes of a, b and out. What must happen to "
              "out.grad before it is added into a.grad?"),
        Wrong("keepdim_lost", _run(with_unbroadcast(unbroadcast_leading_only))
              , "The rows where an axis of size 1 was stretched (bcast_ones, bcast_both) fail; "
              "added leading axes (bcast_prefix, bcast_scalar) work. Your unbroadcast sums away "
              "the axes broadcasting put in front, but not the size-1 axes it stretched, or it "
              "sums them without keepdim=True, so the gradient loses the axis the input has.",
              "For an input of shape (3, 1) in a (3, 4) result: over which axis is its gradient "
              "summed, and what shape must the sum keep?"),
        Wrong("sum_wrong_axis", _run(with_unbroadcast(unbroadcast_from_left)),
              "The rows where broadcasting added leading axes fail (bcast_prefix, bcast_both), "
              "and size-1 axes alone work: your unbroadcast sums over the wrong axes. "
              "Broadcasting lines shapes up from the right, so (4,) against (5, 4) is (1, 4): "
              "the extra axes are at the front, axis 0, not at the end.",
              "Write the two shapes right-aligned, one under the other. Which axes does the "
              "smaller one lack?"),
        Wrong("keepdim_lost", _run(SumNoUnsqueezeEngine),
              "sum and mean over one axis fail without keepdim and pass with it: your backward "
              "broadcasts out.grad straight back onto the input. Without keepdim the summed axis "
              "is gone from out.grad, and broadcasting lines shapes up from the right, so it "
              "pairs the wrong axes (or raises). Put the axis back (unsqueeze) before you expand.",
              "For x of shape (2, 3, 4) summed over axis 1, what shape is out.grad, and what "
              "shape does it need to be before it can be copied along that axis?"),
        Wrong("matmul_grad_transposed", _run(MatmulTransposedEngine),
              "Only the matmul row fails: the gradient of a matrix product has the right "
              "factors with the transposes in the wrong places. For C = A @ B, dA = dC @ Bᵀ and "
              "dB = Aᵀ @ dC; any other arrangement gives a gradient of the wrong shape, or, for "
              "square matrices, the wrong numbers.",
              "Write the shapes: A is (m, n), B is (n, k), dC is (m, k). Which product of dC "
              "with A or B, transposed or not, is (n, k)?"),
        Wrong("fanout_assign", _run(AssignEngine),
              "The rows where a tensor is used more than once fail (reuse, fanout, chain, and "
              "the rows that use an input twice): your _backward closures assign "
              "(self.grad = ...) where they must add (self.grad += ...), so only the last "
              "use's contribution stays.",
              "In each _backward, what happens to a gradient already in self.grad?"),
        Wrong("engine_not_zeroed", _run(NoZeroEngine),
              "Only the second_pass row fails: backward() does not start from zero, so a second "
              "pass adds onto the gradients the first one left.",
              "What should every .grad in the graph be before backward() seeds the output?"),
        Wrong("topo_order", _run(ForwardOrderEngine),
              "Single operations pass, but graphs of several operations fail: backward() runs "
              "the nodes' _backward from the leaves up. A node may pass its gradient on only "
              "after every node that uses it has run: walk the topological order in reverse.",
              "In which order must the _backward closures run: inputs first, or the output first?"),
        Wrong("index_repeats_add", _run(GetitemAssignEngine),
              "Only the getitem row fails: at an index that appears twice in idx, your backward "
              "keeps one use's gradient. Writing g[idx] = out.grad (or g[idx] += out.grad, which "
              "reads every repeat before it writes) stores one value per position; the gradient "
              "of a repeated index is the sum of its uses. index_put_(..., accumulate=True) or "
              "index_add_ adds them.",
              "Index a vector with [0, 0] and sum the result. What is the gradient at position 0?"),
        *(_local_wrong(op) for op in ENGINE_OPS),
    ),
)
