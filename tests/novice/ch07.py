"""Novice answers, chapter 7 (format: see ch01.py)."""

R = "right"

_KINK = ('kink_grads = {}\nfor name, fn in spellings.items():\n    x = torch.tensor(0.0, requires_grad=True)\n'
         '    fn(x - a).backward()\n    kink_grads[name] = {"grad": x.grad}\n')
_KINK_RIGHT = {"relu": 0.0, "abs": 0.0, "clamp": 1.0, "maximum": 0.5, "where_gt": 0.0, "where_ge": 1.0}


def _kinks(**changes: float) -> str:
    rows = dict(_KINK_RIGHT, **changes)
    inner = ", ".join(f'"{k}": {{"grad": {v!r}}}' for k, v in rows.items())
    return "kink_grads = {" + inner + ', "leaky_relu": {"grad": slope}}'


_TIES = ('x = torch.tensor(x_values, requires_grad=True)\nx.max().backward()\ng1 = x.grad\n'
         'x = torch.tensor(x_values, requires_grad=True)\nx.max(dim=0).values.backward()\n'
         'tie_grads = torch.stack([g1, x.grad])\n')
_NORMS = ('norm_grads = {}\nlosses = {"vector_norm": lambda X: torch.linalg.vector_norm(X, dim=1).sum(),\n'
          '          "sqrt_sum_squares": lambda X: (X**2).sum(dim=1).sqrt().sum(),\n'
          '          "normalize": lambda X: F.normalize(X, dim=1).sum()}\n'
          'for name, loss in losses.items():\n    X = torch.tensor(X_values, requires_grad=True)\n'
          '    loss(X).backward()\n    norm_grads[name] = {"grad": X.grad}\n')
_LS = ('x = torch.tensor(logits, requires_grad=True)\ntorch.log(1 - torch.sigmoid(x)).sum().backward()\ng1 = x.grad\n'
       'x = torch.tensor(logits, requires_grad=True)\nF.logsigmoid(-x).sum().backward()\n')
_SO = ('z = torch.tensor(z_values, requires_grad=True)\np = z.exp() / z.exp().sum()\n(-p[target].log()).backward()\ng1 = z.grad\n'
       'z = torch.tensor(z_values, requires_grad=True)\nF.cross_entropy(z[None], torch.tensor([target])).backward()\n')

ANSWERS = [
    # relu_corner_chain
    ("relu_corner_chain", 'corner_grad = 0.0', R),
    # relabelled after the replay: 1.0 is the shown x0 typed into z = x0 - x
    ("relu_corner_chain", 'x = torch.tensor(x0, requires_grad=True)\ny = torch.relu(1.0 - x)\ny.backward()\ncorner_grad = x.grad',
     ("wrong", "the shown x0 typed into z", ("shown_values_only",))),
    ("relu_corner_chain", 'x = torch.tensor(x0, requires_grad=True)\ny = torch.relu(x0 - x)\ny.backward()\ncorner_grad = x.grad', R),
    ("relu_corner_chain", 'corner_grad = -1.0', ("wrong", "ReLU'(0) taken as 1", ("kink_convention", "relu_chain"))),
    ("relu_corner_chain", 'corner_grad = -0.5', ("wrong", "ReLU'(0) taken as the average 1/2", ("kink_convention", "finite_diff_at_kink"))),
    ("relu_corner_chain", 'corner_grad = 1.0', ("wrong", "ReLU'(0) = 1 and dz/dx's minus lost", ("kink_convention", "sign_error", "relu_chain"))),
    # kink_conventions
    # relabelled after the replay: x = torch.tensor(0.0) is the shown a typed in
    ("kink_conventions", _KINK, ("wrong", "the shown a typed in as x = 0.0", ("shown_values_only",))),
    ("kink_conventions", _KINK.replace('{"grad": x.grad}', '{"grad": x.grad.item()}'),
     ("wrong", "the shown a typed in as x = 0.0", ("shown_values_only",))),
    ("kink_conventions", _KINK.replace("torch.tensor(0.0,", "torch.tensor(a,"), R),
    ("kink_conventions", _KINK.replace("torch.tensor(0.0,", "torch.tensor(float(a),").replace('{"grad": x.grad}', '{"grad": x.grad.item()}'), R),
    ("kink_conventions", _kinks(clamp=0.0, maximum=0.0, where_ge=0.0).replace('"grad": slope', '"grad": 0.0'),
     ("wrong", "every kink gives 0", ("kink_convention",))),
    ("kink_conventions", _kinks(maximum=0.0), ("wrong", "maximum's tie not split", ("max_ties", "kink_convention"))),
    ("kink_conventions", _kinks(abs=1.0), ("wrong", "abs'(0) taken as 1", ("kink_convention", "left_derivative_rule"))),
    # tie_gradients
    ("tie_gradients", _TIES, R),
    ("tie_gradients", _TIES.replace("torch.stack([g1, x.grad])", "[g1.tolist(), x.grad.tolist()]"), R),
    ("tie_gradients", 'tie_grads = [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]', ("wrong", "the first maximum gets all, both times", ("max_ties",))),
    ("tie_gradients", 'tie_grads = [[0.0, 0.5, 0.5], [0.0, 0.5, 0.5]]', ("wrong", "split both times", ("max_ties",))),
    ("tie_gradients", 'tie_grads = [[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]]', ("wrong", "every tied entry gets 1", ("max_ties",))),
    # where_nan_trap
    ("where_nan_trap", 'x = torch.tensor(x_values, requires_grad=True)\ny = torch.where(x > 0, x.sqrt(), 0.0)\n'
                       'y.sum().backward()\nwhere_grad = x.grad', R),
    ("where_nan_trap", 'where_grad = [0.5 / v**0.5 if v > 0 else float("nan") for v in x_values]', R),
    ("where_nan_trap", 'where_grad = [0.5 / v**0.5 if v > 0 else 0.0 for v in x_values]', ("wrong", "where thought to guard backward", ("where_nan",))),
    ("where_nan_trap", 'where_grad = [0.5 / v**0.5 if v > 0 else (float("inf") if v == 0 else float("nan")) for v in x_values]',
     ("wrong", "sqrt's infinite slope at 0 kept as inf", ("where_nan", "sqrt_slope_at_zero"), ('norm_at_zero',))),
    ("where_nan_trap", 'where_grad = [0.5 / v**0.5 if v > 0 else (float("nan") if v == 0 else 0.0) for v in x_values]',
     ("wrong", "only the zero is NaN", ("where_nan",))),
    # anomaly_culprit
    # relabelled after the replay: the setup's op changes with the values; these use the shown one
    ("anomaly_culprit", 'culprit = "SqrtBackward0"', ("wrong", "the shown op's node typed in", ("shown_values_only",))),
    ("anomaly_culprit", 'x = torch.tensor(x_values, requires_grad=True)\nculprit = type(torch.sqrt(x).grad_fn)',
     ("wrong", "the shown op used instead of op", ("shown_values_only",))),
    ("anomaly_culprit", 'x = torch.tensor(x_values, requires_grad=True)\nculprit = torch.sqrt(x).grad_fn.name()',
     ("wrong", "the shown op used instead of op", ("shown_values_only",))),
    ("anomaly_culprit", 'x = torch.tensor(x_values, requires_grad=True)\nculprit = type(getattr(torch, op)(x).grad_fn)', R),
    ("anomaly_culprit", 'x = torch.tensor(x_values, requires_grad=True)\nculprit = None\ntry:\n'
                        '    with torch.autograd.detect_anomaly():\n'
                        '        torch.where(x > 0, getattr(torch, op)(x), 0.0).sum().backward()\n'
                        'except RuntimeError as e:\n    culprit = str(e).split("\'")[1]', R),
    ("anomaly_culprit", 'culprit = "WhereBackward0"', ("wrong", "blames where, the last node", ("anomaly_first_nan",), ('where_nan',))),
    ("anomaly_culprit", 'culprit = None', ("wrong", "thinks no NaN", ("where_nan", "anomaly_first_nan"))),
    ("anomaly_culprit", 'culprit = "SumBackward0"', ("wrong", "blames the first node walked", ("anomaly_first_nan",))),
    # safe_sqrt
    ("safe_sqrt", 'def safe_sqrt(x):\n    inside = torch.where(x > 0, x, torch.ones_like(x))\n'
                  '    return torch.where(x > 0, inside.sqrt(), torch.zeros_like(x))\n', R),
    ("safe_sqrt", 'def safe_sqrt(x):\n    pos = x > 0\n    out = torch.zeros_like(x)\n    out[pos] = x[pos].sqrt()\n    return out\n', R),
    ("safe_sqrt", 'def safe_sqrt(x):\n    return torch.where(x > 0, x.sqrt(), 0.0)\n', ("wrong", "where alone", ("where_nan",))),
    ("safe_sqrt", 'def safe_sqrt(x):\n    return x.clamp(min=0).sqrt()\n', ("wrong", "clamp then sqrt: inf at 0", ("sqrt_slope_at_zero",))),
    # relabelled after the replay: relu's backward selects (threshold_backward), it does not
    # multiply, so sqrt's inf at 0 never reaches x.grad; this answer is right
    ("safe_sqrt", 'def safe_sqrt(x):\n    return torch.relu(x).sqrt()\n', R),
    # where_nan_fix
    ("where_nan_fix", 'def sinc(x):\n    safe = torch.where(x != 0, x, torch.ones_like(x))\n'
                      '    return torch.where(x != 0, torch.sin(safe) / safe, 1.0)\n', R),
    ("where_nan_fix", 'def sinc(x):\n    return torch.sinc(x / math.pi)\n', R),
    ("where_nan_fix", 'def sinc(x):\n    return torch.where(x != 0, torch.sin(x) / x, 1.0)\n', ("wrong", "left as it was", ("where_nan",))),
    ("where_nan_fix", 'def sinc(x):\n    safe = torch.where(x != 0, x, torch.ones_like(x))\n    return torch.sin(safe) / safe\n',
     ("wrong", "safe input but no outer where: the value at 0 is sin(1)", ())),
    ("where_nan_fix", 'def sinc(x):\n    y = torch.where(x != 0, torch.sin(x) / x, 1.0)\n    return torch.nan_to_num(y)\n',
     ("wrong", "nan_to_num on the forward values", ("where_nan",))),
    # zero_norms
    ("zero_norms", _NORMS, R),
    ("zero_norms", _NORMS.replace('{"grad": X.grad}', '{"grad": X.grad.tolist()}'), R),
    ("zero_norms", _NORMS + 'norm_grads["vector_norm"]["grad"][0] = float("nan")',
     ("wrong", "vector_norm thought NaN at zero too", ("norm_at_zero",))),
    ("zero_norms", _NORMS + 'norm_grads["sqrt_sum_squares"]["grad"][0] = 0.0',
     ("wrong", "sqrt of a sum of squares thought safe", ("norm_at_zero", "sqrt_slope_at_zero"))),
    ("zero_norms", _NORMS + 'norm_grads["normalize"]["grad"][0] = 0.0',
     ("wrong", "normalize's zero row thought to get 0", ("norm_at_zero",))),
    # stable_log_sigmoid
    ("stable_log_sigmoid", _LS + 'loss_grads = torch.stack([g1, x.grad])', R),
    ("stable_log_sigmoid", _LS + 'loss_grads = [g1.tolist(), x.grad.tolist()]', R),
    ("stable_log_sigmoid", 's = torch.sigmoid(torch.tensor(logits))\nloss_grads = [(-s).tolist(), (-s).tolist()]',
     ("wrong", "the two spellings give the same numbers", ("unstable_loss",))),
    ("stable_log_sigmoid", _LS + 'loss_grads = torch.stack([g1, -x.grad])', ("wrong", "sign of the fused row flipped", ("sign_error",))),
    ("stable_log_sigmoid", 's = torch.sigmoid(torch.tensor(logits))\nloss_grads = [[float("nan")] * 3, (-s).tolist()]',
     ("wrong", "every entry of the hand-written one NaN", ("unstable_loss",))),
    # softmax_overflow
    ("softmax_overflow", _SO + 'xent_grads = torch.stack([g1, z.grad])', R),
    ("softmax_overflow", _SO + 'xent_grads = [g1.tolist(), z.grad.tolist()]', R),
    ("softmax_overflow", 'xent_grads = [[1.0, -1.0], [1.0, -1.0]]', ("wrong", "the same numbers both ways", ("unstable_loss",))),
    ("softmax_overflow", 'xent_grads = [[float("nan"), float("nan")], [1.0, 0.0]]', ("wrong", "softmax without the one-hot", ("xent_onehot",))),
    ("softmax_overflow", 'xent_grads = [[float("nan"), float("nan")], [-1.0, 1.0]]', ("wrong", "one-hot minus softmax", ("sign_error",))),
    # xent_overflow_fix
    ("xent_overflow_fix", 'def xent(z, target):\n    return -torch.log_softmax(z, dim=0)[target]\n', R),
    ("xent_overflow_fix", 'def xent(z, target):\n    return torch.logsumexp(z, 0) - z[target]\n', R),
    ("xent_overflow_fix", 'def xent(z, target):\n    return F.cross_entropy(z[None], torch.tensor([target]))\n', R),
    ("xent_overflow_fix", 'def xent(z, target):\n    p = z.exp() / z.exp().sum()\n    return -p[target].log()\n', ("wrong", "left as it was", ("unstable_loss",))),
    ("xent_overflow_fix", 'def xent(z, target):\n    return z.exp().sum().log() - z[target]\n', ("wrong", "log of a sum of exps, unshifted", ("unstable_loss",))),
    ("xent_overflow_fix", 'def xent(z, target):\n    e = (z - z.max()).exp()\n    p = e / e.sum()\n    return -p[target].log()\n',
     ("wrong", "shifted, but the log of an underflowed probability", ("unstable_loss",))),
]
