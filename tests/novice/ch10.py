"""Novice answers, chapter 10 (format: see ch01.py). Written for issue #26 from the student
notebook's prompts, before the units' lists of wrong answers were read; labels written before
the first replay."""

R = "right"

# --- the engine: one Value class, its parts swapped for the variants novices write -------------

_ENGINE_PARTS = {
    "init": "        self.data = float(data)\n        self.grad = 0.0\n        self._prev = tuple(children)\n"
            "        self._backward = lambda: None\n",
    "add": "            self.grad += out.grad\n            other.grad += out.grad\n",
    "mul": "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
    "pow": "            self.grad += k * self.data ** (k - 1) * out.grad\n",
    "tanh": "            self.grad += (1 - t ** 2) * out.grad\n",
    "relu": "            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad\n",
    "exp": "            self.grad += out.data * out.grad\n",
    "log": "            self.grad += out.grad / self.data\n",
    "backward": "        topo, visited = [], set()\n\n        def build(v):\n            if v not in visited:\n"
                "                visited.add(v)\n                for child in v._prev:\n                    build(child)\n"
                "                topo.append(v)\n\n        build(self)\n        for v in topo:\n            v.grad = 0.0\n"
                "        self.grad = 1.0\n        for v in reversed(topo):\n            v._backward()\n",
}

_ENGINE = """import math


class Value:
    def __init__(self, data, children=()):
{init}
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
{add}
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
{mul}
        out._backward = _backward
        return out

    def __pow__(self, k):
        out = Value(self.data ** k, (self,))

        def _backward():
{pow}
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other ** -1

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))

        def _backward():
{tanh}
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,))

        def _backward():
{relu}
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,))

        def _backward():
{exp}
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,))

        def _backward():
{log}
        out._backward = _backward
        return out

    def backward(self):
{backward}"""


def engine(**parts: str) -> str:
    return _ENGINE.format(**{**_ENGINE_PARTS, **parts})


# backward() as novices write it when they have not met a topological order
_RECURSIVE = ("        self._zero()\n        self.grad = 1.0\n        self._visit()\n\n    def _zero(self):\n"
              "        self.grad = 0.0\n        for child in self._prev:\n            child._zero()\n\n"
              "    def _visit(self):\n        self._backward()\n        for child in self._prev:\n"
              "            child._visit()\n")
_NO_VISITED = ("        topo = []\n\n        def build(v):\n            for child in v._prev:\n                build(child)\n"
               "            topo.append(v)\n\n        build(self)\n        for v in topo:\n            v.grad = 0.0\n"
               "        self.grad = 1.0\n        for v in reversed(topo):\n            v._backward()\n")
_NOT_ZEROED = ("        topo, visited = [], set()\n\n        def build(v):\n            if v not in visited:\n"
               "                visited.add(v)\n                for child in v._prev:\n                    build(child)\n"
               "                topo.append(v)\n\n        build(self)\n        self.grad = 1.0\n"
               "        for v in reversed(topo):\n            v._backward()\n")
_ITERATIVE = ("        order, seen, stack = [], set(), [(self, False)]\n        while stack:\n"
              "            v, done = stack.pop()\n            if done:\n                order.append(v)\n"
              "            elif v not in seen:\n                seen.add(v)\n                stack.append((v, True))\n"
              "                stack.extend((c, False) for c in v._prev)\n        for v in order:\n"
              "            v.grad = 0.0\n        self.grad = 1.0\n        for v in reversed(order):\n"
              "            v._backward()\n")

# --- training with the engine -----------------------------------------------------------------

_TRAIN = """

def train_engine(X, y, W1, b1, W2, b2, steps, lr):
    W1 = [[Value(w) for w in row] for row in W1]
    W2 = [[Value(w) for w in row] for row in W2]
    b1 = [Value(b) for b in b1]
    b2 = [Value(b) for b in b2]
    params = [p for row in W1 for p in row] + [p for row in W2 for p in row] + b1 + b2
    h = len(b1)
    losses = []
    for _ in range(steps):
        total = Value(0.0)
        for x, label in zip(X, y):
            hidden = [(W1[0][j] * x[0] + W1[1][j] * x[1] + b1[j]).relu() for j in range(h)]
            s = [sum((hidden[j] * W2[j][k] for j in range(h)), b2[k]) for k in range(2)]
            total = total + (s[0].exp() + s[1].exp()).log() - s[label]
        loss = total {scale}
        losses.append(loss.data)
{backward}        for p in params:
            p.data {update} lr * p.grad
    return losses
"""


def training(scale: str = "/ len(X)", update: str = "-=", step: str = "        loss.backward()\n",
             **parts: str) -> str:
    return engine(**parts) + _TRAIN.format(scale=scale, update=update, backward=step)


# --- the hand-written MLP backward --------------------------------------------------------------

_MLP = """def mlp_backward(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    Z = X @ W1 + b1
    H = torch.relu(Z)
    S = H @ W2 + b2
{dS}    dW2 = {dW2}
    db2 = {db2}
    dH = dS @ W2.T
    dZ = {dZ}
    dW1 = X.T @ dZ
    db1 = dZ.sum(0)
    return dW1, db1, dW2, db2
"""
_DS = ("    P = torch.softmax(S, dim=1)\n    Y = torch.nn.functional.one_hot(y, S.shape[1]).to(S.dtype)\n"
       "    dS = (P - Y) / N\n")


def mlp(dS: str = _DS, dW2: str = "H.T @ dS", db2: str = "dS.sum(0)", dZ: str = "dH * (Z > 0)") -> str:
    return _MLP.format(dS=dS, dW2=dW2, db2=db2, dZ=dZ)


# --- the loop to repair: the right loop, with one bug put back at a time --------------------------

_LOOP = """def train(X, y, init, steps, lr, accum, lam):
    W1 = init["W1"].double().requires_grad_()
    b1 = {b1}
    W2 = init["W2"].double().requires_grad_()
    b2 = init["b2"].double().requires_grad_()
{freeze}    params = [W1, b1, W2, b2]
    history = []
    for step in range(steps):
        total = 0.0
        for Xb, yb in zip(X.chunk(accum), y.chunk(accum)):
            loss = F.cross_entropy((Xb @ W1 + b1).relu() @ W2 + b2, yb)
            sq = ({w} ** 2).sum(0)
            penalty = {penalty}
            objective = (loss + lam * penalty){scale}
            objective.backward()
            total = {log}
        history.append(total)
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= lr * p.grad
{zero}    return {{"W1": W1, "b1": b1, "W2": W2, "b2": b2}}, history
"""
_LOOP_OK = {
    "b1": 'init["b1"].double().requires_grad_()',
    "freeze": "",
    "w": "W1",
    "penalty": "torch.where(sq > 0, torch.where(sq > 0, sq, 1.0).sqrt(), 0.0).sum()",
    "scale": " / accum",
    "log": "total + objective.item()",
    "zero": "        for p in params:\n            p.grad = None\n",
}


def loop(**bugs: str) -> str:
    return _LOOP.format(**{**_LOOP_OK, **bugs})


ANSWERS = [
    # neuron_by_hand (by hand)
    ("neuron_by_hand", "n = x1 * w1 + x2 * w2 + b\no = math.tanh(n)\ndn = 1 - o**2\n"
                       "grads = (w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn)", R),
    ("neuron_by_hand", "n = x1*w1 + x2*w2 + b\ndn = 1 / math.cosh(n) ** 2\n"
                       "grads = [dn * w1, dn * x1, dn * w2, dn * x2, dn * 1.0]", R),
    ("neuron_by_hand", "n = x1 * w1 + x2 * w2 + b\ndn = 1 - n**2\ngrads = (w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn)",
     ("wrong", "tanh' written 1 - n^2, with the input", ("tanh_derivative_input",))),
    ("neuron_by_hand", "n = x1 * w1 + x2 * w2 + b\no = math.tanh(n)\ndn = 1 - o**2\n"
                       "grads = (x1 * dn, w1 * dn, x2 * dn, w2 * dn, dn)",
     ("wrong", "d(x w)/dx taken as x: each input gets its own value", ("reordered",), ("local_derivative",))),
    ("neuron_by_hand", "grads = (w1, x1, w2, x2, 1.0)",
     ("wrong", "the local gradients of the + and x nodes only, tanh's factor left out", ("local_gradient_only",))),
    ("neuron_by_hand", "o = math.tanh(x1 * w1 + x2 * w2 + b)\ndn = 1 - o\ngrads = (w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn)",
     ("wrong", "tanh' taken as 1 - tanh, the square forgotten", ("local_derivative",))),
    ("neuron_by_hand", "grads = (-1.5, 1.0, 0.5, 0.0, 0.5)",
     ("wrong", "the numbers of the lecture typed in", ("typed_in",))),
    # fanout_by_hand (by hand)
    ("fanout_by_hand", "d, e = a * b, a + b\ngrads = (b * e + d, a * e + d)", R),
    ("fanout_by_hand", "grads = (2 * a * b + b**2, a**2 + 2 * a * b)", R),
    ("fanout_by_hand", "grads = (b * (a + b), a * (a + b))",
     ("wrong", "only the path through d: the e path of each input lost", ("fanout_adds",))),
    ("fanout_by_hand", "grads = (a * b, a * b)",
     ("wrong", "only the path through e", ("fanout_adds",))),
    ("fanout_by_hand", "grads = (b + 1, a + 1)",
     ("wrong", "the local derivatives of d and e added, not multiplied by df/dd and df/de", ("local_gradient_only",))),
    ("fanout_by_hand", "grads = (-3.0, -8.0)", ("wrong", "worked out at a = -2, b = 3 and typed in", ("typed_in",))),
    # value_engine (plain Python)
    ("value_engine", engine(), R),
    ("value_engine", engine(backward=_ITERATIVE), R),
    ("value_engine", engine(relu="            self.grad += (out.data > 0) * out.grad\n",
                            exp="            self.grad += math.exp(self.data) * out.grad\n"), R),
    ("value_engine", engine(add="            self.grad = out.grad\n            other.grad = out.grad\n",
                            mul="            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad\n"),
     ("wrong", "= instead of += in the closures: a node used twice keeps the last use only", ("fanout_assign",))),
    ("value_engine", engine(backward=_RECURSIVE),
     ("wrong", "backward recurses into children, no topological order", ("topo_order",))),
    ("value_engine", engine(backward=_NO_VISITED),
     ("wrong", "topological sort without a visited set: a shared node's _backward runs twice", ("topo_order",))),
    ("value_engine", engine(backward=_NOT_ZEROED),
     ("wrong", "gradients not reset at the start of backward", ("engine_not_zeroed",))),
    ("value_engine", engine(tanh="            self.grad += (1 - self.data ** 2) * out.grad\n"),
     ("wrong", "tanh' written with the input", ("tanh_derivative_input", "local_derivative"))),
    ("value_engine", engine(pow="            self.grad += k * self.data ** k * out.grad\n"),
     ("wrong", "power rule without lowering the exponent", ("power_rule", "local_derivative"))),
    ("value_engine", engine(log="            self.grad += self.data * out.grad\n"),
     ("wrong", "log's derivative taken as x", ("local_derivative",))),
    # torch_two_passes
    ("torch_two_passes", "x = torch.tensor(x0, requires_grad=True)\nfor _ in range(2):\n    f = torch.tanh(x) * x\n"
                         "    f.backward()\nx_grad = x.grad", R),
    ("torch_two_passes", "x = torch.tensor(x0, requires_grad=True)\nf1 = torch.tanh(x) * x\nf1.backward()\n"
                         "f2 = torch.tanh(x) * x\nf2.backward()\nx_grad = x.grad.item()", R),
    ("torch_two_passes", "x = torch.tensor(x0, requires_grad=True)\nf = torch.tanh(x) * x\nf.backward()\nx_grad = x.grad",
     ("wrong", "one pass: thinks torch zeroes .grad like the engine", ("accumulation",))),
    ("torch_two_passes", "x = torch.tensor(x0, requires_grad=True)\nfor _ in range(2):\n    x.grad = None\n"
                         "    f = torch.tanh(x) * x\n    f.backward()\nx_grad = x.grad",
     ("wrong", "cleared .grad before each pass: the engine's behaviour, not torch's", ("accumulation",))),
    ("torch_two_passes", "x = torch.tensor(x0, requires_grad=True)\nfor _ in range(2):\n    f = torch.tanh(x) * x\n"
                         "    f.backward()\nx_grad = f.item()",
     ("wrong", "gave f, the value", ("value_not_derivative",))),
    # xent_logits_grad (by hand)
    ("xent_logits_grad", "e = [math.exp(v) for v in z]\ns = sum(e)\ndz = [e[i] / s - (1 if i == t else 0) for i in range(4)]", R),
    ("xent_logits_grad", "m = max(z)\nexps = [math.exp(v - m) for v in z]\np = [v / sum(exps) for v in exps]\n"
                         "dz = p[:]\ndz[t] -= 1", R),
    ("xent_logits_grad", "e = [math.exp(v) for v in z]\ndz = [v / sum(e) for v in e]",
     ("wrong", "softmax only: the -1 at the true class forgotten", ("xent_softmax_only",))),
    ("xent_logits_grad", "e = [math.exp(v) for v in z]\ndz = [(1 if i == t else 0) - e[i] / sum(e) for i in range(4)]",
     ("wrong", "one-hot minus softmax: the sign flipped", ("sign_error",))),
    ("xent_logits_grad", "e = [math.exp(v) for v in z]\np = [v / sum(e) for v in e]\n"
                         "dz = [-1 / p[i] if i == t else 0.0 for i in range(4)]",
     ("wrong", "the gradient with respect to the probabilities, dL/dp", ("xent_wrt_probs",))),
    ("xent_logits_grad", "e = [math.exp(v) for v in z]\ns = sum(e)\ndz = [e[i] / s - 1 for i in range(4)]",
     ("wrong", "-1 subtracted at every class, not only the true one", ("xent_onehot", "xent_softmax_only"))),
    # mlp_backward (code, no autograd)
    ("mlp_backward", mlp(), R),
    ("mlp_backward", mlp(dS="    P = torch.softmax(S, dim=1)\n    dS = P.clone()\n    dS[torch.arange(N), y] -= 1\n"
                            "    dS = dS / N\n", dZ="torch.where(Z > 0, dH, torch.zeros_like(dH))"), R),
    ("mlp_backward", mlp(dS="    P = torch.exp(S) / torch.exp(S).sum(1, keepdim=True)\n    dS = P.clone()\n"
                            "    for n in range(N):\n        dS[n, y[n]] -= 1\n    dS /= N\n",
                         db2="dS.sum(dim=0)", dZ="dH * (Z > 0).float()"), R),
    ("mlp_backward", mlp(dS="    P = torch.softmax(S, dim=1)\n    dS = P.clone()\n    dS[torch.arange(N), y] -= 1\n"),
     ("wrong", "the 1/N of the mean forgotten", ("xent_mean_dropped",))),
    ("mlp_backward", mlp(dS="    dS = torch.softmax(S, dim=1) / N\n"),
     ("wrong", "dL/dS taken as softmax: the one-hot forgotten", ("xent_softmax_only",))),
    ("mlp_backward", mlp(dZ="dH"),
     ("wrong", "relu's mask forgotten", ("relu_mask_missing",))),
    ("mlp_backward", mlp(db2="dS.mean(0)"),
     ("wrong", "b2's gradient averaged over the batch, though dS already holds the 1/N", ("broadcast_sums", "mean_scales"))),
    ("mlp_backward", mlp(dW2="dS.T @ H"),
     ("wrong", "dW2 transposed: (C, h), not (h, C)", ("matmul_transpose",))),
    ("mlp_backward", mlp(dZ="dH * (H > 0) * H"),
     ("wrong", "relu's backward multiplied by its output", ("relu_mask_missing", "local_derivative"))),
    # train_engine (plain Python)
    ("train_engine", training(), R),
    ("train_engine", training(scale="* (1.0 / len(X))"), R),
    ("train_engine", training(step="        for p in params:\n            p.grad = 0.0\n        loss.backward()\n"), R),
    ("train_engine", training(update="+="),
     ("wrong", "steps along the gradient: the loss climbs", ("descent_direction",))),
    ("train_engine", training(scale=""),
     ("wrong", "the summed loss, not the mean", ("mean_scales",))),
    ("train_engine", training(backward=_NOT_ZEROED),
     ("wrong", "the engine never resets .grad: gradients of every step add up", ("engine_not_zeroed",))),
    ("train_engine", training().replace("log() - s[label]", "log() - s[1 - label]"),
     ("wrong", "the other class's logit subtracted: the label flipped", ())),
    # group_lasso_nan
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)\nsq = (W ** 2).sum(0)\n"
                        "penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()\npenalty.backward()\nW_grad = W.grad", R),
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64).requires_grad_()\nsq = (W ** 2).sum(0)\n"
                        "torch.where(sq > 0, sq.sqrt(), 0.0).sum().backward()\nW_grad = W.grad.tolist()", R),
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64)\nW_grad = W / torch.where(W.norm(dim=0) > 0, W.norm(dim=0), 1.0)",
     ("wrong", "predicted the where protects the zero column: 0 there", ("where_nan",))),
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)\nsq = (W ** 2).sum(0)\n"
                        "penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()\npenalty.backward()\n"
                        "W_grad = torch.nan_to_num(W.grad)",
     ("wrong", "the NaN replaced by 0 after the fact: not what backward gives", ("where_nan",))),
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)\nsq = (W ** 2).sum(0)\n"
                        "penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()\npenalty.backward()\nW_grad = W.grad.sum(0)",
     ("wrong", "one number per column: the column's gradient summed", ("summed",))),
    # safe_group_lasso
    ("safe_group_lasso", "def group_lasso(W):\n    sq = (W ** 2).sum(0)\n    safe = torch.where(sq > 0, sq, torch.ones_like(sq))\n"
                         "    return torch.where(sq > 0, safe.sqrt(), torch.zeros_like(sq)).sum()\n", R),
    ("safe_group_lasso", "def group_lasso(W):\n    return torch.linalg.vector_norm(W, dim=0).sum()\n", R),
    ("safe_group_lasso", "def group_lasso(W):\n    return W.norm(dim=0).sum()\n", R),
    ("safe_group_lasso", "def group_lasso(W):\n    sq = (W ** 2).sum(0)\n    return torch.where(sq > 0, sq.sqrt(), 0.0).sum()\n",
     ("wrong", "the guarded where of the prompt kept: NaN at the zero column", ("where_nan",))),
    ("safe_group_lasso", "def group_lasso(W):\n    return (W ** 2).sum(0).sqrt().sum()\n",
     ("wrong", "plain sqrt of the squared norm: NaN at a zero column", ("norm_at_zero", "sqrt_slope_at_zero"))),
    # relabelled: labelled wrong ("the where inside the sqrt only: sqrt still sees 0"), but where's
    # backward selects: the zero column's infinite slope never reaches W (as relu(x).sqrt() in ch07)
    ("safe_group_lasso", "def group_lasso(W):\n    sq = (W ** 2).sum(0)\n    return torch.where(sq > 0, sq, 0.0).sqrt().sum()\n", R),
    ("safe_group_lasso", "def group_lasso(W):\n    sq = (W ** 2).sum(0)\n    return torch.where(sq > 0, sq.sqrt(), 0.0).sum().detach()\n",
     ("wrong", "detached to stop the NaN: no gradient at all", ("detach_cuts_path",))),
    # fix_training_loop
    ("fix_training_loop", loop(), R),
    ("fix_training_loop", loop(log="total + objective.detach()",
                               zero="        for p in params:\n            p.grad.zero_()\n"), R),
    ("fix_training_loop", loop(penalty="torch.linalg.vector_norm(W1, dim=0).sum()"), R),
    ("fix_training_loop", loop(scale=""),
     ("wrong", "micro-batch losses not divided by accum", ("accumulation_not_averaged",))),
    ("fix_training_loop", loop(zero=""),
     ("wrong", "gradients never zeroed between steps", ("accumulation",))),
    ("fix_training_loop", loop(w="W1.data"),
     ("wrong", "the penalty still on W1.data: it never reaches W1's gradient", ("data_silent",))),
    ("fix_training_loop", loop(penalty="torch.where(sq > 0, sq.sqrt(), 0.0).sum()"),
     ("wrong", "the where guard kept: NaN at a pruned unit", ("where_nan",))),
    ("fix_training_loop", loop(freeze="    for p in (W2, b2):\n        p.requires_grad_(False)\n"),
     ("wrong", "the head still frozen", ("frozen_param",))),
    ("fix_training_loop", loop(b1='init["b1"].requires_grad_().double()'),
     ("wrong", "b1 cast after requires_grad_: a non-leaf that never gets .grad", ("accidental_nonleaf",))),
    ("fix_training_loop", loop(log="total + objective"),
     ("wrong", "history holds tensors with their graphs", ("logging_keeps_graph",))),
    ("fix_training_loop", loop(scale="", zero=""),
     ("wrong", "two bugs left: no zeroing, no division by accum", ("several_mistakes", "loop_several_bugs"))),
]
