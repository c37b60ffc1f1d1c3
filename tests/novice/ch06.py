"""Novice answers, chapter 6 (format: see ch01.py)."""

R = "right"

_TD = 'def td_loss(w, s, r, s_next, gamma):\n    q = w * s\n    target = r + gamma * w * s_next\n    return {ret}\n'
_SGD = 'def sgd_step(w, lr):\n{body}    return w\n'
_TRY = ('def err(fn):\n    try:\n        fn()\n    except Exception as e:\n        return type(e).__name__\n    return None\n')
_INPLACE = (_TRY + 'def fresh():\n    return torch.tensor(x0, requires_grad=True)\n'
            'def A():\n    x = fresh(); y = x.sigmoid(); y.mul_(2); y.sum().backward()\n'
            'def B():\n    x = fresh(); a = x * 2; b = a ** 2; a.add_(1); b.sum().backward()\n'
            'def C():\n    x = fresh(); a = x * 2; b = a + 1; a.add_(1); b.sum().backward()\n'
            'def D():\n    x = fresh(); a = x * 2; b = a.exp(); a.add_(1); b.sum().backward()\n'
            'def E():\n    x = fresh(); x.add_(1)\n'
            'inplace = {k: {"error": err(fn)} for k, fn in dict(A=A, B=B, C=C, D=D, E=E).items()}\n')


def _ip(**changes: str) -> str:
    rows = {"A": "RuntimeError", "B": "RuntimeError", "C": None, "D": None, "E": "RuntimeError"}
    rows.update(changes)
    return "inplace = {" + ", ".join(f'"{k}": {{"error": {v!r}}}' for k, v in rows.items()) + "}"


ANSWERS = [
    # detach_cut (by hand)
    ("detach_cut", 'x_grad_cut = x0 ** 2', R),
    ("detach_cut", 'b = x0 * x0\nx_grad_cut = b', R),
    ("detach_cut", 'x_grad_cut = 3 * x0 ** 2', ("wrong", "differentiated x^3 through the detach", ("detach_cuts_path",))),
    ("detach_cut", 'x_grad_cut = 2 * x0', ("wrong", "da/dx; equal at x0 = 2", ("shown_values_only",))),
    ("detach_cut", 'x_grad_cut = x0 ** 3', ("wrong", "c's value", ("value_not_derivative",))),
    # td_detach_fix
    ("td_detach_fix", _TD.format(ret='(q - target.detach()) ** 2'), R),
    ("td_detach_fix", 'def td_loss(w, s, r, s_next, gamma):\n    with torch.no_grad():\n        target = r + gamma * w * s_next\n'
                      '    return (w * s - target) ** 2\n', R),
    ("td_detach_fix", _TD.format(ret='(q.detach() - target) ** 2'), ("wrong", "left as it was", ("target_not_detached",))),
    ("td_detach_fix", _TD.format(ret='(q - target) ** 2'), ("wrong", "no detach at all", ("target_not_detached",))),
    ("td_detach_fix", _TD.format(ret='(q.detach() - target.detach()) ** 2'), ("wrong", "both detached: no gradient at all", ("target_not_detached", "detach_cuts_path"))),
    # no_grad_vs_detach
    ("no_grad_vs_detach", 'modes = {"a": {"requires_grad": False, "grad_fn": None},\n'
                          '         "b": {"requires_grad": True, "grad_fn": "MulBackward0"},\n'
                          '         "c": {"requires_grad": True, "grad_fn": "MulBackward0"}}', R),
    ("no_grad_vs_detach", 'modes = {k: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn} for k, t in dict(a=a, b=b, c=c).items()}', R),
    ("no_grad_vs_detach", 'modes = {"a": {"requires_grad": True, "grad_fn": "MulBackward0"},\n'
                          '         "b": {"requires_grad": True, "grad_fn": "MulBackward0"},\n'
                          '         "c": {"requires_grad": True, "grad_fn": "MulBackward0"}}',
     ("wrong", "no_grad thought not to stop recording", ("grad_modes",), ('no_graph',))),
    ("no_grad_vs_detach", 'modes = {"a": {"requires_grad": False, "grad_fn": None},\n'
                          '         "b": {"requires_grad": False, "grad_fn": None},\n'
                          '         "c": {"requires_grad": True, "grad_fn": "MulBackward0"}}',
     ("wrong", "one detached input cuts the product", ("detach_cuts_path", "requires_grad_propagation"), ('grad_modes',))),
    ("no_grad_vs_detach", 'modes = {"a": {"requires_grad": False, "grad_fn": None},\n'
                          '         "b": {"requires_grad": True, "grad_fn": "MulBackward0"},\n'
                          '         "c": {"requires_grad": False, "grad_fn": None}}',
     ("wrong", "a product with an untracked a is untracked", ("requires_grad_propagation", "grad_modes"))),
    # no_grad_detach_grads
    ("no_grad_detach_grads", 'p = torch.tensor(p0, requires_grad=True)\nq = torch.tensor(q0, requires_grad=True)\n'
                             'with torch.no_grad():\n    a = p * q\nb = p.detach() * q\nc = p * q\nL = a * q + b + c\nL.backward()\n'
                             'pq_grads = [p.grad, q.grad]', R),
    ("no_grad_detach_grads", 'pq_grads = [q0, p0 * q0 + 2 * p0]', R),
    ("no_grad_detach_grads", 'pq_grads = [2 * q0, p0 * q0 + 2 * p0]', ("wrong", "the detached p still gets gradient", ("detach_cuts_path",))),
    ("no_grad_detach_grads", 'pq_grads = [q0 + q0 * q0, 2 * p0 * q0 + 2 * p0]', ("wrong", "a's product still tracked", ("grad_modes",), ('no_graph',))),
    ("no_grad_detach_grads", 'pq_grads = [q0, 2 * p0]', ("wrong", "a * q's derivative a forgotten", ())),
    # inference_mode_error
    ("inference_mode_error", 'inference_protects = "unversioned_save"', R),
    ("inference_mode_error", 'inference_protects = "stale_value"', ("wrong", "the stale-value reason", ("error_purpose",))),
    ("inference_mode_error", 'inference_protects = "freed_values"', ("wrong", "the freed-graph reason", ("error_purpose",))),
    # graph_cutters
    ("graph_cutters", 'cutters = {"s1": {"requires_grad": False, "grad_fn": None},\n'
                      '           "s2": {"requires_grad": True, "grad_fn": "StackBackward0"},\n'
                      '           "s3": {"requires_grad": True, "grad_fn": None}}', R),
    ("graph_cutters", 'a = torch.tensor(a0, requires_grad=True)\nb = torch.tensor(b0, requires_grad=True)\n'
                      'import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter("ignore")\n'
                      '    s1 = torch.tensor([a, b])\ns2 = torch.stack([a, b])\ns3 = torch.tensor((a * b).item(), requires_grad=True)\n'
                      'cutters = {k: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn} for k, t in dict(s1=s1, s2=s2, s3=s3).items()}', R),
    ("graph_cutters", 'cutters = {"s1": {"requires_grad": True, "grad_fn": "StackBackward0"},\n'
                      '           "s2": {"requires_grad": True, "grad_fn": "StackBackward0"},\n'
                      '           "s3": {"requires_grad": True, "grad_fn": None}}',
     ("wrong", "torch.tensor of tensors keeps the graph", ("tensor_constructor_cuts",))),
    ("graph_cutters", 'cutters = {"s1": {"requires_grad": False, "grad_fn": None},\n'
                      '           "s2": {"requires_grad": True, "grad_fn": "StackBackward0"},\n'
                      '           "s3": {"requires_grad": True, "grad_fn": "MulBackward0"}}',
     ("wrong", ".item() thought to keep the product", ("item_leaves_graph",))),
    ("graph_cutters", 'cutters = {"s1": {"requires_grad": False, "grad_fn": None},\n'
                      '           "s2": {"requires_grad": True, "grad_fn": "CatBackward0"},\n'
                      '           "s3": {"requires_grad": True, "grad_fn": None}}',
     ("wrong", "stack's node named Cat", ("grad_fn_name",))),
    # sgd_step
    ("sgd_step", _SGD.format(body='    with torch.no_grad():\n        w -= lr * w.grad\n    w.grad.zero_()\n'), R),
    ("sgd_step", _SGD.format(body='    with torch.no_grad():\n        w.sub_(lr * w.grad)\n    w.grad = None\n'), R),
    ("sgd_step", _SGD.format(body='    with torch.no_grad():\n        w -= lr * w.grad\n'), ("wrong", "w.grad never reset", ("prompt_requirement",))),
    ("sgd_step", _SGD.format(body='    with torch.no_grad():\n        w = w - lr * w.grad\n'),
     ("wrong", "a new tensor; the caller's w unchanged", ("out_of_place_update", "update_not_gradient"))),
    ("sgd_step", _SGD.format(body='    with torch.no_grad():\n        w += lr * w.grad\n    w.grad.zero_()\n'), ("wrong", "up the gradient", ("descent_direction",))),
    # out_of_place_update
    ("out_of_place_update", 'new_w = {"w": {"is_leaf": False, "requires_grad": True, "grad_fn": "SubBackward0", "grad": None}}', R),
    ("out_of_place_update", 'new_w = {"w": {"is_leaf": w.is_leaf, "requires_grad": w.requires_grad, "grad_fn": w.grad_fn, "grad": None}}', R),
    ("out_of_place_update", 'new_w = {"w": {"is_leaf": True, "requires_grad": True, "grad_fn": None, "grad": None}}',
     ("wrong", "still the parameter", ("out_of_place_update",))),
    ("out_of_place_update", 'new_w = {"w": {"is_leaf": False, "requires_grad": True, "grad_fn": "MulBackward0", "grad": None}}',
     ("wrong", "the node named after the product", ("grad_fn_name",))),
    ("out_of_place_update", 'new_w = {"w": {"is_leaf": False, "requires_grad": True, "grad_fn": "SubBackward0", "grad": -4.0}}',
     ("wrong", "a non-leaf keeps the old .grad", ("nonleaf_grad",), ("out_of_place_update",))),
    # second_step_fix (was the "which exception?" second_step_error; written from its new prompt)
    ("second_step_fix", 'def descend(w, lr, steps):\n    for _ in range(steps):\n        L = (w - 3) ** 2\n'
                        '        L.backward()\n        with torch.no_grad():\n            w -= lr * w.grad\n'
                        '        w.grad.zero_()\n    return w', R),
    ("second_step_fix", 'def descend(w, lr, steps):\n    opt = torch.optim.SGD([w], lr=lr)\n    for _ in range(steps):\n'
                        '        opt.zero_grad()\n        ((w - 3) ** 2).backward()\n        opt.step()\n    return w', R),
    ("second_step_fix", 'def descend(w, lr, steps):\n    for _ in range(steps):\n        L = (w - 3) ** 2\n'
                        '        L.backward()\n        with torch.no_grad():\n            w -= lr * w.grad\n    return w',
     ("wrong", "never resets w.grad between steps", ("accumulation",))),
    ("second_step_fix", 'def descend(w, lr, steps):\n    for _ in range(steps):\n        L = (w - 3) ** 2\n'
                        '        L.backward(retain_graph=True)\n        if w.grad is None:\n            break\n'
                        '        w = w - lr * w.grad\n    return w',
     ("wrong", "keeps the out-of-place update; only the first step moves w", ("out_of_place_update",))),
    # inplace_legal
    ("inplace_legal", _INPLACE, R),
    ("inplace_legal", _ip(), R),
    ("inplace_legal", _ip(C="RuntimeError"), ("wrong", "any in-place change in a graph fails", ("saved_tensor_modified",))),
    ("inplace_legal", _ip(D="RuntimeError"), ("wrong", "exp's input thought saved", ("saved_tensor_modified",))),
    ("inplace_legal", _ip(E=None), ("wrong", "a leaf may be changed in place", ("leaf_inplace",))),
    # version_counter_fix
    ("version_counter_fix", 'def scaled_sigmoid_sum(x):\n    y = x.sigmoid() * k\n    return y.sum()\n', R),
    ("version_counter_fix", 'def scaled_sigmoid_sum(x):\n    y = x.sigmoid().clone()\n    y.mul_(k)\n    return y.sum()\n', R),
    ("version_counter_fix", 'def scaled_sigmoid_sum(x):\n    y = x.sigmoid()\n    y.data.mul_(k)\n    return y.sum()\n',
     ("wrong", ".data hides the change: wrong gradient", ("data_silent",))),
    ("version_counter_fix", 'def scaled_sigmoid_sum(x):\n    return x.sigmoid().sum()\n', ("wrong", "dropped the scale k", (), ('chain_rule_dropped',))),
    ("version_counter_fix", 'def scaled_sigmoid_sum(x):\n    y = x.sigmoid()\n    y.detach().mul_(k)\n    return y.sum()\n',
     ("wrong", "detach thought to make a safe copy", ("detach_shares_version",))),
    # data_silent_grad
    ("data_silent_grad", 'x = torch.tensor(x0, requires_grad=True)\ny = x.sigmoid()\ny.data.mul_(k)\ny.sum().backward()\nx_grad_data = x.grad', R),
    ("data_silent_grad", 'import math\ns = [k / (1 + math.exp(-v)) for v in x0]\nx_grad_data = [t * (1 - t) for t in s]', R),
    ("data_silent_grad", 'import math\ns = [1 / (1 + math.exp(-v)) for v in x0]\nx_grad_data = [t * (1 - t) for t in s]',
     ("wrong", "the true derivative of sigmoid: thinks .data is harmless", ("data_silent",))),
    ("data_silent_grad", 'import math\ns = [1 / (1 + math.exp(-v)) for v in x0]\nx_grad_data = [k * t * (1 - t) for t in s]',
     ("wrong", "the derivative of k*sigmoid", ("data_silent",))),
    ("data_silent_grad", 'import math\nx_grad_data = [k / (1 + math.exp(-v)) for v in x0]', ("wrong", "y's new value", ("value_not_derivative",))),
    # detach_inplace_error
    ("detach_inplace_error", 'detach_error = RuntimeError', R),
    ("detach_inplace_error", 'detach_error = "RuntimeError"', R),
    ("detach_inplace_error", 'detach_error = None', ("wrong", "detach makes an independent copy", ("detach_shares_version",))),
    ("detach_inplace_error", 'detach_error = "TypeError"', ("wrong", "guessed TypeError", ("detach_shares_version",))),
]
