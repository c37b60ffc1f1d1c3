"""Novice answers, chapter 11, Parts 1 and 3 (format: see ch01.py). Part 2's answers are in
ch11_backprop.py. The answers to the exercises built on the engine (cross-entropy, the gradient
check, the training) carry the engine cell they run after, as a notebook's kernel holds it."""

R = "right"

# A novice's engine, written in another style than the unit's solution: a helper that makes the
# node, gradients as None until backward, unbroadcast with sum_to_size. Slots: @UB@ (unbroadcast's
# body), @ACC@ (how a gradient is added), @SUMBACK@ (sum's backward), @MMA@/@MMB@ (matmul's),
# @GETITEM@ (indexing's backward), @ZERO@ (backward's zeroing), @TANH@ (tanh's derivative).
_ENGINE = '''import torch

def unbroadcast(g, shape):
@UB@

class Tensor:
    def __init__(self, data, parents=(), back=None):
        self.data = torch.as_tensor(data, dtype=torch.float64)
        self.grad = torch.zeros_like(self.data)
        self.parents = parents
        self.back = back

    def _acc(self, g):
        @ACC@

    def _wrap(self, o):
        return o if isinstance(o, Tensor) else Tensor(o)

    def __add__(self, o):
        o = self._wrap(o)
        out = Tensor(self.data + o.data, (self, o))
        def back():
            self._acc(unbroadcast(out.grad, self.data.shape))
            o._acc(unbroadcast(out.grad, o.data.shape))
        out.back = back
        return out

    def __mul__(self, o):
        o = self._wrap(o)
        out = Tensor(self.data * o.data, (self, o))
        def back():
            self._acc(unbroadcast(out.grad * o.data, self.data.shape))
            o._acc(unbroadcast(out.grad * self.data, o.data.shape))
        out.back = back
        return out

    def __sub__(self, o):
        return self + self._wrap(o) * -1.0

    def __neg__(self):
        return self * -1.0

    def __truediv__(self, o):
        return self * self._wrap(o) ** -1

    def __pow__(self, k):
        out = Tensor(self.data ** k, (self,))
        out.back = lambda: self._acc(out.grad * k * self.data ** (k - 1))
        return out

    def exp(self):
        out = Tensor(torch.exp(self.data), (self,))
        out.back = lambda: self._acc(out.grad * out.data)
        return out

    def log(self):
        out = Tensor(torch.log(self.data), (self,))
        out.back = lambda: self._acc(out.grad / self.data)
        return out

    def tanh(self):
        out = Tensor(torch.tanh(self.data), (self,))
        out.back = lambda: self._acc(out.grad * (@TANH@))
        return out

    def relu(self):
        out = Tensor(torch.relu(self.data), (self,))
        out.back = lambda: self._acc(out.grad * (self.data > 0).double())
        return out

    def sum(self, axis=None, keepdim=False):
        out = Tensor(self.data.sum() if axis is None else self.data.sum(axis, keepdim=keepdim), (self,))
        def back():
@SUMBACK@
        out.back = back
        return out

    def mean(self, axis=None, keepdim=False):
        n = self.data.numel() if axis is None else self.data.shape[axis]
        return self.sum(axis, keepdim) / n

    def __matmul__(self, o):
        out = Tensor(self.data @ o.data, (self, o))
        def back():
            self._acc(@MMA@)
            o._acc(@MMB@)
        out.back = back
        return out

    def reshape(self, *shape):
        out = Tensor(self.data.reshape(*shape), (self,))
        out.back = lambda: self._acc(out.grad.reshape(self.data.shape))
        return out

    def transpose(self, a, b):
        out = Tensor(self.data.transpose(a, b), (self,))
        out.back = lambda: self._acc(out.grad.transpose(a, b))
        return out

    def __getitem__(self, idx):
        out = Tensor(self.data[idx], (self,))
        def back():
@GETITEM@
        out.back = back
        return out

    def backward(self, grad=None):
        order, visited = [], set()
        def visit(t):
            if id(t) in visited:
                return
            visited.add(id(t))
            for p in t.parents:
                visit(p)
            order.append(t)
        visit(self)
        for t in order:
            @ZERO@
        self.grad = torch.ones_like(self.data) if grad is None else grad.double()
        for t in reversed(order):
            if t.back is not None:
                t.back()
'''

_SLOTS = {
    "@UB@": "    return g.sum_to_size(shape) if len(shape) else g.sum()",
    "@ACC@": "self.grad = self.grad + g",
    "@SUMBACK@": "            g = out.grad if axis is None or keepdim else out.grad.unsqueeze(axis)\n"
                 "            self._acc(g.expand(self.data.shape))",
    "@MMA@": "out.grad @ o.data.T",
    "@MMB@": "self.data.T @ out.grad",
    "@GETITEM@": "            g = torch.zeros_like(self.data)\n"
                 "            flat = torch.arange(self.data.numel()).reshape(self.data.shape)[idx]\n"
                 "            g.view(-1).index_add_(0, flat.reshape(-1), out.grad.reshape(-1))\n"
                 "            self._acc(g)",
    "@ZERO@": "t.grad = torch.zeros_like(t.data)",
    "@TANH@": "1 - out.data ** 2",
}


def engine(**changes: str) -> str:
    """The novice engine with some slots written otherwise (a mistake, or another right form)."""
    source = _ENGINE
    for slot, text in {**_SLOTS, **{f"@{k.upper()}@": v for k, v in changes.items()}}.items():
        source = source.replace(slot, text)
    return source


ENGINE = engine()

_UB_LOOP = ("    while g.dim() > len(shape):\n        g = g.sum(dim=0)\n"
            "    for i, n in enumerate(shape):\n        if n == 1:\n            g = g.sum(dim=i, keepdim=True)\n"
            "    return g")

_XENT = '''
def cross_entropy(logits, y):
    n = len(y)
@BODY@
'''

_XENT_RIGHT = ("    m = logits.data.max(dim=1, keepdim=True).values\n"
               "    z = logits - m\n"
               "    logsumexp = z.exp().sum(1, keepdim=True).log()\n"
               "    logp = z - logsumexp\n"
               "    return -(logp[torch.arange(n), y]).mean()")


def xent(body: str) -> str:
    return ENGINE + _XENT.replace("@BODY@", body)


_CHECK = '''
def grad_check(f, x, eps=1e-6):
    x = x.@DTYPE@()
    t = Tensor(x)
    f(t).backward()
    worst = 0.0
    for i in range(x.numel()):
        xp = x.clone().reshape(-1); xp[i] += eps
        xm = x.clone().reshape(-1); xm[i] -= eps
        fp = f(Tensor(xp.reshape(x.shape))).data.item()
        fm = f(Tensor(xm.reshape(x.shape))).data.item()
        fx = f(Tensor(x)).data.item()
        num = @NUM@
        a = t.grad.reshape(-1)[i].item()
        err = @ERR@
        worst = max(worst, err)
    return worst
'''


def check(dtype: str = "double", num: str = "(fp - fm) / (2 * eps)",
          err: str = "abs(a - num) / max(abs(a), abs(num))") -> str:
    return ENGINE + _CHECK.replace("@DTYPE@", dtype).replace("@NUM@", num).replace("@ERR@", err)


_TRAIN = '''
def train(X, y, params, steps, lr):
    W1, b1, W2, b2 = (Tensor(params[k]) for k in ("W1", "b1", "W2", "b2"))
    X = Tensor(X)
    losses = []
    for step in range(steps):
        h = (X @ W1 + b1).tanh()
        logits = h @ W2 + b2
        loss = cross_entropy(logits, y)@SCALE@
        losses.append(float(loss.data))
@BACKWARD@
        for p in (W1, b1, W2, b2):
            p.data = p.data @SIGN@ lr * p.grad
    return {"W1": W1.data, "b1": b1.data, "W2": W2.data, "b2": b2.data}, losses
'''


def train(scale: str = "", sign: str = "-", backward: str = "        loss.backward()") -> str:
    return (xent(_XENT_RIGHT) + _TRAIN.replace("@SCALE@", scale).replace("@SIGN@", sign)
            .replace("@BACKWARD@", backward))


ANSWERS = [
    # keepdim_shapes
    ("keepdim_shapes", "kept = [2, 1, 4]", ("wrong", "typed in the shown values' shape", ("typed_in",))),
    ("keepdim_shapes", "kept = list(shape)\nkept[axis] = 1", R),
    ("keepdim_shapes", "kept = list(torch.zeros(shape).sum(axis, keepdim=True).shape)", R),
    ("keepdim_shapes", "kept = (shape[0], 1, shape[2])", R),
    ("keepdim_shapes", "kept = [shape[0], shape[2]]",
     ("wrong", "the shape without keepdim", ("keepdim_lost",))),
    ("keepdim_shapes", "kept = [n for i, n in enumerate(shape) if i != axis]",
     ("wrong", "drops the summed axis", ("keepdim_lost",))),
    ("keepdim_shapes", "kept = [shape[0], shape[2], 1]",
     ("wrong", "thinks keepdim moves the size-1 axis to the end", ("keepdim_lost",))),
    ("keepdim_shapes", "kept = [1, shape[1], shape[2]]",
     ("wrong", "counts axes from 1", ("sum_wrong_axis",))),
    ("keepdim_shapes", "kept = list(shape)",
     ("wrong", "thinks keepdim keeps the whole shape", ("keepdim_lost",))),
    # broadcast_add_grad
    ("broadcast_add_grad", "grad_a = W.sum(dim=1, keepdim=True)", R),
    ("broadcast_add_grad", "grad_a = W.sum(1).reshape(3, 1)", R),
    ("broadcast_add_grad", "grad_a = W.sum(axis=1)", R),
    ("broadcast_add_grad", "grad_a = W @ torch.ones(4, 1, dtype=torch.float64)", R),
    ("broadcast_add_grad", "grad_a = W",
     ("wrong", "forgot to sum back: the gradient of a + b", ("unbroadcast_missing",))),
    ("broadcast_add_grad", "grad_a = W.sum(0)",
     ("wrong", "summed over the rows", ("sum_wrong_axis",))),
    ("broadcast_add_grad", "grad_a = W.mean(1, keepdim=True)",
     ("wrong", "averaged the uses", ("broadcast_sums",))),
    ("broadcast_add_grad", "grad_a = torch.full((3, 1), 4.0)",
     ("wrong", "counted uses, forgot W", ("chain_rule_dropped",))),
    ("broadcast_add_grad", "grad_a = W.sum(1, keepdim=True) + b.sum()",
     ("wrong", "added b's values into the gradient", ())),
    # unbroadcast
    ("unbroadcast", "def unbroadcast(grad, shape):\n" + _UB_LOOP.replace("g", "grad").replace("grad.dim", "grad.dim"), R),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    extra = grad.dim() - len(shape)\n"
                    "    grad = grad.sum(dim=tuple(range(extra))) if extra else grad\n"
                    "    dims = [i for i, n in enumerate(shape) if n == 1 and grad.shape[i] > 1]\n"
                    "    if dims:\n        grad = grad.sum(dim=dims, keepdim=True)\n    return grad", R),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    for _ in range(grad.ndim - len(shape)):\n"
                    "        grad = grad.sum(0)\n    for i in range(len(shape)):\n"
                    "        if shape[i] == 1 and grad.shape[i] != 1:\n            grad = grad.sum(i, keepdim=True)\n"
                    "    return grad.reshape(shape)", R),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    return grad",
     ("wrong", "returns the gradient unchanged", ("unbroadcast_missing",))),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    while grad.dim() > len(shape):\n        grad = grad.sum(0)\n    return grad",
     ("wrong", "only the leading axes", ("unbroadcast_missing",))),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    while grad.dim() > len(shape):\n        grad = grad.sum(0)\n"
                    "    for i, n in enumerate(shape):\n        if n == 1:\n            grad = grad.sum(i)\n    return grad",
     ("wrong", "sums the size-1 axes without keepdim", ("keepdim_lost",))),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    while grad.dim() > len(shape):\n        grad = grad.sum(-1)\n"
                    "    for i, n in enumerate(shape):\n        if n == 1:\n            grad = grad.sum(i, keepdim=True)\n    return grad",
     ("wrong", "drops the trailing axes: aligns from the left", ("sum_wrong_axis",))),
    ("unbroadcast", "def unbroadcast(grad, shape):\n    for i, n in enumerate(shape):\n        if n == 1:\n"
                    "            grad = grad.sum(i, keepdim=True)\n    return grad",
     ("wrong", "never sums the added leading axes", ("unbroadcast_missing",))),
    # matmul_grad
    ("matmul_grad", "dA = G @ B.T", R),
    ("matmul_grad", "dA = torch.matmul(G, B.transpose(0, 1))", R),
    ("matmul_grad", "dA = (B @ G.T).T", R),
    ("matmul_grad", "dA = torch.einsum('ik,jk->ij', G, B)", R),
    ("matmul_grad", "dA = B @ G.T",
     ("wrong", "the transpose of the gradient", ("matmul_grad_transposed",))),
    ("matmul_grad", "dA = torch.ones(3, 2, dtype=torch.float64) @ B.T",
     ("wrong", "left out the upstream G", ("chain_rule_dropped",))),
    ("matmul_grad", "dA = G.sum() * B.sum(1).repeat(3, 1)",
     ("wrong", "summed G first", ())),
    # tensor_engine
    ("tensor_engine", ENGINE, R),
    ("tensor_engine", engine(ub=_UB_LOOP, acc="self.grad += g"), R),
    ("tensor_engine", engine(getitem="            g = torch.zeros_like(self.data)\n"
                             "            g.index_put_(tuple(ix[idx] for ix in torch.meshgrid(*[torch.arange(n) for n in self.data.shape], indexing='ij')), out.grad, accumulate=True)\n"
                             "            self._acc(g)"), R),
    ("tensor_engine", engine(ub="    return g"),
     ("wrong", "no unbroadcast: the output's gradient handed to every input", ("unbroadcast_missing",))),
    ("tensor_engine", engine(ub="    while g.dim() > len(shape):\n        g = g.sum(0)\n    return g"),
     ("wrong", "unbroadcast forgets the stretched size-1 axes", ("unbroadcast_missing", "keepdim_lost"))),
    ("tensor_engine", engine(ub="    while g.dim() > len(shape):\n        g = g.sum(0)\n"
                             "    for i, n in reversed(list(enumerate(shape))):\n        if n == 1 and g.shape[i] != 1:\n"
                             "            g = g.sum(i)\n    return g"),
     ("wrong", "unbroadcast sums the size-1 axes without keepdim", ("keepdim_lost",))),
    ("tensor_engine", engine(ub="    while g.dim() > len(shape):\n        g = g.sum(-1)\n"
                             "    for i, n in enumerate(shape):\n        if n == 1 and g.shape[i] != 1:\n"
                             "            g = g.sum(i, keepdim=True)\n    return g"),
     ("wrong", "unbroadcast drops the trailing axes", ("sum_wrong_axis",))),
    ("tensor_engine", engine(acc="self.grad = g"),
     ("wrong", "assigns instead of adding", ("fanout_assign",))),
    ("tensor_engine", engine(sumback="            self._acc(out.grad.expand(self.data.shape))"),
     ("wrong", "sum's backward does not put the axis back", ("keepdim_lost",))),
    ("tensor_engine", engine(sumback="            g = out.grad if axis is None or keepdim else out.grad.unsqueeze(-1)\n"
                             "            self._acc(g.expand(self.data.shape))"),
     ("wrong", "sum's backward unsqueezes the last axis, not the summed one", ("keepdim_lost", "sum_wrong_axis"))),
    ("tensor_engine", engine(mmb="out.grad.T @ self.data"),
     ("wrong", "dB as Gᵀ A: transposed", ("matmul_grad_transposed",))),
    ("tensor_engine", engine(mma="out.grad @ o.data", mmb="self.data.T @ out.grad"),
     ("wrong", "dA = G B without the transpose", ("matmul_grad_transposed",))),
    ("tensor_engine", engine(getitem="            g = torch.zeros_like(self.data)\n            g[idx] += out.grad\n"
                             "            self._acc(g)"),
     ("wrong", "g[idx] += keeps one use of a repeated index", ("index_repeats_add",))),
    ("tensor_engine", engine(zero="pass"),
     ("wrong", "backward never zeroes", ("engine_not_zeroed",))),
    ("tensor_engine", engine(tanh="1 - self.data ** 2"),
     ("wrong", "tanh' from the input", ("local_derivative",))),
    # stable_cross_entropy
    ("stable_cross_entropy", xent(_XENT_RIGHT), R),
    ("stable_cross_entropy", xent("    m = torch.max(logits.data, 1, keepdim=True)[0]\n"
                                  "    lse = (logits - m).exp().sum(1).log() + m.reshape(-1)\n"
                                  "    picked = logits[torch.arange(n), y]\n"
                                  "    return (lse - picked).sum() / n"), R),
    ("stable_cross_entropy", xent("    losses = []\n    m = logits.data.amax(1, keepdim=True)\n"
                                  "    s = logits - m\n"
                                  "    out = s.exp().sum(axis=1).log() - s[torch.arange(n), y]\n"
                                  "    return out.mean()"), R),
    ("stable_cross_entropy", xent("    lse = logits.exp().sum(1, keepdim=True).log()\n"
                                  "    return -((logits - lse)[torch.arange(n), y]).mean()"),
     ("wrong", "no max shift: exp overflows", ("logsumexp_overflow",))),
    ("stable_cross_entropy", xent("    e = logits.exp()\n    p = e / e.sum(1, keepdim=True)\n"
                                  "    return -(p[torch.arange(n), y].log()).mean()"),
     ("wrong", "softmax then log, no shift", ("logsumexp_overflow", "log_softmax_underflow"))),
    ("stable_cross_entropy", xent("    m = logits.data.max(1, keepdim=True).values\n    e = (logits - m).exp()\n"
                                  "    p = e / e.sum(1, keepdim=True)\n"
                                  "    return -(p[torch.arange(n), y].log()).mean()"),
     ("wrong", "shifted softmax, then log: underflows", ("log_softmax_underflow",))),
    ("stable_cross_entropy", xent("    m = logits.data.max(1, keepdim=True).values\n    z = logits - m\n"
                                  "    logp = z - z.exp().sum(1, keepdim=True).log()\n"
                                  "    return -(logp[torch.arange(n), y]).sum()"),
     ("wrong", "the sum, not the mean", ("xent_mean_dropped",))),
    # engine_gradcheck
    ("engine_gradcheck", check(), R),
    ("engine_gradcheck", check(err="abs(a - num) / max(abs(a), abs(num), 1e-12)"), R),
    ("engine_gradcheck", check(num="(fp - fx) / eps"),
     ("wrong", "forward difference", ("forward_difference",))),
    ("engine_gradcheck", check(err="abs(a - num)"),
     ("wrong", "absolute error", ("absolute_error",))),
    ("engine_gradcheck", check(dtype="float"),
     ("wrong", "float32", ("gradcheck_precision",))),
    ("engine_gradcheck", check(err="(a - num) / max(abs(a), abs(num))"),
     ("wrong", "signed error: no abs", ("signed_error",))),
    # train_digits
    ("train_digits", train(), R),
    ("train_digits", train(backward="        for p in (W1, b1, W2, b2):\n            p.grad = torch.zeros_like(p.data)\n"
                                    "        loss.backward()"), R),
    ("train_digits", train(sign="+"),
     ("wrong", "steps uphill", ("descent_direction",))),
    ("train_digits", train(scale=" * len(y)"),
     ("wrong", "sum of the losses", ("xent_mean_dropped",))),
    ("train_digits", train(backward="        saved = [p.grad.clone() for p in (W1, b1, W2, b2)]\n        loss.backward()\n"
                                    "        for p, s in zip((W1, b1, W2, b2), saved):\n            p.grad += s"),
     ("wrong", "keeps the previous steps' gradients", ("engine_not_zeroed", "accumulation"))),
]
