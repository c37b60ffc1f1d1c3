"""Novice answers, chapter 3 (format: see ch01.py)."""

R = "right"

_TRAIN = ('def train(w, lr, target, steps):\n    for _ in range(steps):\n        loss = (w - target) ** 2\n'
          '        loss.backward()\n        with torch.no_grad():\n            w -= lr * w.grad\n{extra}    return w\n')
_WHICH = ('def run(fwd):\n    t = torch.tensor(x, requires_grad=True)\n    y = fwd(t)\n    y.backward()\n'
          '    err = None\n    try:\n        y.backward()\n    except RuntimeError as e:\n        err = type(e)\n'
          '    return {"error": err, "grad": t.grad}\n'
          'outcomes = {"exp": run(lambda t: t.exp().sum()), "square": run(lambda t: (t**2).sum()),\n'
          '            "add_one": run(lambda t: (t + 1).sum())}\n')

ANSWERS = [
    # accumulate_three (by hand)
    ("accumulate_three", 'grad_after_loop = n * 2 * x0', R),
    ("accumulate_three", 'grad_after_loop = 2.0 * x0 * n', R),
    ("accumulate_three", 'grad_after_loop = 2 * x0', ("wrong", "forgot that the passes add up", ("accumulation",))),
    ("accumulate_three", 'grad_after_loop = 12', ("wrong", "typed in", ("shown_values_only",))),
    ("accumulate_three", 'grad_after_loop = n * x0**2', ("wrong", "added the values of y", ("value_not_derivative", "shown_values_only"))),
    ("accumulate_three", 'grad_after_loop = 3 * 2 * x0', ("wrong", "the 3 passes typed in instead of n", ("shown_values_only",))),
    # zero_grad_fix
    ("zero_grad_fix", _TRAIN.format(extra='            w.grad.zero_()\n'), R),
    ("zero_grad_fix", _TRAIN.format(extra='        w.grad = None\n'), R),
    ("zero_grad_fix", _TRAIN.format(extra=''), ("wrong", "left the loop as it was", ("accumulation",))),
    ("zero_grad_fix", 'def train(w, lr, target, steps):\n    for _ in range(steps):\n        loss = (w - target) ** 2\n'
                      '        loss.backward()\n        w.grad.zero_()\n        with torch.no_grad():\n'
                      '            w -= lr * w.grad\n    return w\n',
     ("wrong", "zeroed right after backward, before the update", ("zero_grad_order",))),
    ("zero_grad_fix", _TRAIN.format(extra='            w.grad.zero_()\n').replace("w -= lr", "w += lr"),
     ("wrong", "steps up the gradient", ("descent_direction",))),
    # zero_grad_states
    ("zero_grad_states", 'g = [2 * v for v in w0]\n'
                         'states = {"A": {"grad": g}, "B": {"grad": [2 * v for v in g]}, "C": {"grad": [0.0] * len(g)},\n'
                         '          "D": {"grad": g}, "E": {"grad": None}}', R),
    ("zero_grad_states", 'w = torch.tensor(w0, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\nstates = {}\n'
                         '(w**2).sum().backward(); states["A"] = {"grad": w.grad.clone()}\n'
                         '(w**2).sum().backward(); states["B"] = {"grad": w.grad.clone()}\n'
                         'opt.zero_grad(set_to_none=False); states["C"] = {"grad": w.grad.clone()}\n'
                         '(w**2).sum().backward(); states["D"] = {"grad": w.grad.clone()}\n'
                         'opt.zero_grad(); states["E"] = {"grad": w.grad}', R),
    ("zero_grad_states", 'g = [2 * v for v in w0]\n'
                         'states = {"A": {"grad": g}, "B": {"grad": [2 * v for v in g]}, "C": {"grad": [0.0] * len(g)},\n'
                         '          "D": {"grad": g}, "E": {"grad": [0.0] * len(g)}}',
     ("wrong", "zero_grad() leaves zeros", ("zero_grad_none",))),
    ("zero_grad_states", 'g = [2 * v for v in w0]\n'
                         'states = {"A": {"grad": g}, "B": {"grad": g}, "C": {"grad": [0.0] * len(g)},\n'
                         '          "D": {"grad": g}, "E": {"grad": None}}',
     ("wrong", "a second backward overwrites", ("accumulation",))),
    ("zero_grad_states", 'w = torch.tensor(w0, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\nstates = {}\n'
                         '(w**2).sum().backward(); states["A"] = {"grad": w.grad}\n'
                         '(w**2).sum().backward(); states["B"] = {"grad": w.grad}\n'
                         'opt.zero_grad(set_to_none=False); states["C"] = {"grad": w.grad}\n'
                         '(w**2).sum().backward(); states["D"] = {"grad": w.grad}\n'
                         'opt.zero_grad(); states["E"] = {"grad": w.grad}',
     ("wrong", "stored w.grad itself, not a copy: every row is the same tensor, changed in place", ())),
    # backward_twice_error
    ("backward_twice_error", 'second_call_error = RuntimeError', R),
    ("backward_twice_error", 'second_call_error = "RuntimeError"', R),
    ("backward_twice_error", 'x = torch.tensor(x0, requires_grad=True)\ny = x**3\ny.backward()\n'
                             'try:\n    y.backward()\n    second_call_error = None\nexcept Exception as e:\n'
                             '    second_call_error = type(e)', R),
    ("backward_twice_error", 'second_call_error = None', ("wrong", "thinks a graph can be walked again", ("graph_freed",))),
    ("backward_twice_error", 'second_call_error = ValueError', ("wrong", "guessed a ValueError", ("graph_freed",))),
    # retain_graph_twice (by hand)
    ("retain_graph_twice", 'grad_after_two_walks = 2 * 3 * x0**2', R),
    ("retain_graph_twice", 'grad_after_two_walks = 6.0 * x0 ** 2', R),
    ("retain_graph_twice", 'grad_after_two_walks = 3 * x0**2', ("wrong", "the second walk overwrites", ("accumulation",))),
    ("retain_graph_twice", 'grad_after_two_walks = 6 * x0', ("wrong", "the second walk differentiates again", ("backward_twice_second_derivative",))),
    ("retain_graph_twice", 'grad_after_two_walks = 3 * x0**2 + 6 * x0',
     ("wrong", "first derivative then second derivative added", ("backward_twice_second_derivative",))),
    ("retain_graph_twice", 'grad_after_two_walks = 2 * x0**3', ("wrong", "twice y's value; equal only at x0 = 3", ("value_not_derivative", "shown_values_only"))),
    ("retain_graph_twice", 'grad_after_two_walks = 54', ("wrong", "typed in", ("shown_values_only",))),
    # backward_twice_fix
    ("backward_twice_fix", 'def two_losses_grad(x):\n    y = x ** 3\n    y.backward(retain_graph=True)\n'
                           '    (2 * y).backward()\n    return x.grad\n', R),
    ("backward_twice_fix", 'def two_losses_grad(x):\n    y = x ** 3\n    (y + 2 * y).backward()\n    return x.grad\n', R),
    ("backward_twice_fix", 'def two_losses_grad(x):\n    y = x ** 3\n    y.backward()\n    try:\n'
                           '        (2 * y).backward()\n    except RuntimeError:\n        pass\n    return x.grad\n',
     ("wrong", "swallowed the error: only the first loss", ("first_backward_kept",))),
    ("backward_twice_fix", 'def two_losses_grad(x):\n    y = x ** 3\n    y.backward(retain_graph=True)\n'
                           '    x.grad.zero_()\n    (2 * y).backward()\n    return x.grad\n',
     ("wrong", "zeroed between the two: only the second loss", (), ('accumulation',))),
    ("backward_twice_fix", 'def two_losses_grad(x):\n    y = x ** 3\n    y.backward(retain_graph=True)\n'
                           '    y.backward()\n    return x.grad\n',
     ("wrong", "walked y twice instead of 2y", (), ("accumulation",))),
    # backward_twice_which
    ("backward_twice_which", _WHICH, R),
    ("backward_twice_which", 'import math\n'
                             'outcomes = {"exp": {"error": "RuntimeError", "grad": [math.exp(v) for v in x]},\n'
                             '            "square": {"error": "RuntimeError", "grad": [2 * v for v in x]},\n'
                             '            "add_one": {"error": None, "grad": [2.0 for v in x]}}', R),
    ("backward_twice_which", 'import math\n'
                             'outcomes = {"exp": {"error": "RuntimeError", "grad": [math.exp(v) for v in x]},\n'
                             '            "square": {"error": "RuntimeError", "grad": [2 * v for v in x]},\n'
                             '            "add_one": {"error": "RuntimeError", "grad": [1.0 for v in x]}}',
     ("wrong", "every second walk fails", ("saved_tensors_freed",))),
    ("backward_twice_which", 'import math\n'
                             'outcomes = {"exp": {"error": "RuntimeError", "grad": [math.exp(v) for v in x]},\n'
                             '            "square": {"error": "RuntimeError", "grad": [2 * v for v in x]},\n'
                             '            "add_one": {"error": None, "grad": [1.0 for v in x]}}',
     ("wrong", "the second walk of add_one does not add", ("accumulation",))),
    ("backward_twice_which", 'import math\n'
                             'outcomes = {"exp": {"error": "RuntimeError", "grad": None},\n'
                             '            "square": {"error": "RuntimeError", "grad": None},\n'
                             '            "add_one": {"error": None, "grad": [2.0 for v in x]}}',
     ("wrong", "a failed walk wipes the gradient", ("first_backward_kept",))),
    # nonleaf_grad_table
    ("nonleaf_grad_table", 'grads = {"x": {"is_leaf": x.is_leaf, "grad": x.grad}, "y": {"is_leaf": y.is_leaf, "grad": y.grad}}', R),
    ("nonleaf_grad_table", 'grads = {"x": {"is_leaf": True, "grad": x.grad.tolist()}, "y": {"is_leaf": False, "grad": None}}', R),
    ("nonleaf_grad_table", 'grads = {"x": {"is_leaf": True, "grad": x.grad}, "y": {"is_leaf": False, "grad": (2 * y).tolist()}}',
     ("wrong", "y.grad is dz/dy", ("nonleaf_grad",))),
    ("nonleaf_grad_table", 'grads = {"x": {"is_leaf": True, "grad": (2 * y).tolist()}, "y": {"is_leaf": False, "grad": None}}',
     ("wrong", "dz/dx without the 3 of y = 3x", ("chain_rule_dropped",))),
    ("nonleaf_grad_table", 'grads = {"x": {"is_leaf": True, "grad": x.grad}, "y": {"is_leaf": True, "grad": None}}',
     ("wrong", "y counted as a leaf", ("leaf_definition",))),
    # retain_grad_values
    ("retain_grad_values", 'x = torch.tensor(x0, requires_grad=True)\ny = x * k\ny.retain_grad()\n'
                           'z = (y**2).sum()\nz.backward()\nboth_grads = [y.grad, x.grad]', R),
    ("retain_grad_values", 'both_grads = [[2 * k * v for v in x0], [2 * k * k * v for v in x0]]', R),
    ("retain_grad_values", 'x = torch.tensor(x0, requires_grad=True)\ny = x * k\ny.retain_grad()\n'
                           'z = (y**2).sum()\nz.backward()\nboth_grads = torch.stack([y.grad, x.grad])', R),
    ("retain_grad_values", 'both_grads = [[2 * k * v for v in x0], [2 * k * v for v in x0]]',
     ("wrong", "x.grad without the factor k", ("chain_rule_dropped",))),
    ("retain_grad_values", 'x = torch.tensor(x0, requires_grad=True)\ny = x * k\ny.retain_grad()\n'
                           'z = (y**2).sum()\nz.backward()\nboth_grads = [x.grad, y.grad]',
     ("wrong", "the two rows in the wrong order", (), ("reordered",))),
    ("retain_grad_values", 'both_grads = [[k * v for v in x0], [2 * k * k * v for v in x0]]',
     ("wrong", "y.grad given as y, its value", ("value_not_derivative",))),
    # accidental_nonleaf
    ("accidental_nonleaf", 'params_table = {"w": {"is_leaf": w.is_leaf, "grad": w.grad}, "v": {"is_leaf": v.is_leaf, "grad": v.grad}}', R),
    ("accidental_nonleaf", 'params_table = {"w": {"is_leaf": False, "grad": None}, "v": {"is_leaf": True, "grad": (2 * v).tolist()}}', R),
    ("accidental_nonleaf", 'params_table = {"w": {"is_leaf": True, "grad": (2 * w).tolist()}, "v": {"is_leaf": True, "grad": (2 * v).tolist()}}',
     ("wrong", "thinks w is a leaf parameter", ("accidental_nonleaf",))),
    ("accidental_nonleaf", 'params_table = {"w": {"is_leaf": False, "grad": (2 * w).tolist()}, "v": {"is_leaf": True, "grad": (2 * v).tolist()}}',
     ("wrong", "a non-leaf's .grad filled", ("nonleaf_grad",))),
    ("accidental_nonleaf", 'params_table = {"w": {"is_leaf": False, "grad": None}, "v": {"is_leaf": False, "grad": None}}',
     ("wrong", "thinks v is also a non-leaf: made by an operation", ("accidental_nonleaf", "leaf_definition"))),
    # nonleaf_optimizer_error
    ("nonleaf_optimizer_error", 'nonleaf_protects = "never_updated"', R),
    ("nonleaf_optimizer_error", 'nonleaf_protects = "freed_values"', ("wrong", "confuses it with the freed graph", ("error_purpose",))),
    ("nonleaf_optimizer_error", 'nonleaf_protects = "stale_value"', ("wrong", "confuses it with in-place changes", ("error_purpose",))),
    ("nonleaf_optimizer_error", 'nonleaf_protects = "unversioned_save"', ("wrong", "confuses it with version counters", ("error_purpose",))),
    # int_requires_grad_error
    ("int_requires_grad_error", 'int_protects = "no_nudge"', R),
    ("int_requires_grad_error", 'int_protects = "never_updated"', ("wrong", "thinks the optimizer could not move it", ("error_purpose",))),
    ("int_requires_grad_error", 'int_protects = "guessed_seed"', ("wrong", "picked the vector-output reason", ("error_purpose",))),
    ("int_requires_grad_error", 'int_protects = "unversioned_save"', ("wrong", "thinks integers have no version counter", ("error_purpose",))),
]
