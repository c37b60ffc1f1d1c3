"""Novice answers, chapter 1, written from the student notebook's prompts only.

Each entry: (exercise id, answer cell source, label). A label is "right", or
("wrong", what the student got wrong, the misconception ids that would be a true diagnosis;
an empty tuple when none in the catalogue fits). All labels were written before the answers
were replayed. A 4th element, where present, lists ids added after the first replay, when the
diagnosis's explanation described the label's mistake exactly under another catalogue id;
entries whose label itself changed after the replay say so in a comment ("relabelled").
Generic slips (autograder.judge.GENERIC) count as ids too.
"""

R = "right"

ANSWERS = [
    # leaves_xy
    ("leaves_xy", 'leaves = {"x": {"is_leaf": True, "grad": 1.0}, "y": {"is_leaf": True, "grad": 1.0},\n'
                  '          "z": {"is_leaf": False, "grad": None}}', R),
    ("leaves_xy", 'leaves = {n: {"is_leaf": t.is_leaf, "grad": t.grad} for n, t in {"x": x, "y": y, "z": z}.items()}', R),
    ("leaves_xy", 'leaves = {"x": {"is_leaf": 1, "grad": x.grad.item()}, "y": {"is_leaf": 1, "grad": y.grad.item()},\n'
                  '          "z": {"is_leaf": 0, "grad": None}}', R),
    ("leaves_xy", 'leaves = {"x": {"is_leaf": True, "grad": 1}, "y": {"is_leaf": True, "grad": 1},\n'
                  '          "z": {"is_leaf": False, "grad": 1}}',
     ("wrong", "z.grad is dz/dz = 1, forgetting a non-leaf keeps no .grad", ("nonleaf_grad",))),
    ("leaves_xy", 'leaves = {"x": {"is_leaf": True, "grad": 1}, "y": {"is_leaf": True, "grad": 1},\n'
                  '          "z": {"is_leaf": True, "grad": 1}}',
     ("wrong", "every tensor counted as a leaf", ("leaf_definition",))),
    ("leaves_xy", 'leaves = {"x": {"is_leaf": True, "grad": None}, "y": {"is_leaf": True, "grad": None},\n'
                  '          "z": {"is_leaf": False, "grad": None}}',
     ("wrong", "thinks backward() does not fill the leaves' .grad", ("leaf_grad_filled",))),
    # grad_fn_z
    ("grad_fn_z", 'z_grad_fn = "AddBackward0"', R),
    ("grad_fn_z", 'z_grad_fn = z.grad_fn', R),
    ("grad_fn_z", 'z_grad_fn = type(z.grad_fn)', R),
    ("grad_fn_z", 'z_grad_fn = z.grad_fn.name()', R),
    ("grad_fn_z", 'z_grad_fn = "SumBackward0"',
     ("wrong", "calls the node of an addition 'Sum'", ("grad_fn_name",))),
    ("grad_fn_z", 'z_grad_fn = "AccumulateGrad"',
     ("wrong", "names the leaf's accumulator instead of the op that made z", ("grad_fn_name",))),
    ("grad_fn_z", 'z_grad_fn = None',
     ("wrong", "thinks z has no grad_fn", ("grad_fn_of_leaf", "leaf_definition"))),
    # grad_fn_x
    ("grad_fn_x", 'x_grad_fn = None', R),
    ("grad_fn_x", 'x_grad_fn = x.grad_fn', R),
    ("grad_fn_x", 'x_grad_fn = "AccumulateGrad"',
     ("wrong", "gives the accumulator node as the leaf's grad_fn", ("grad_fn_of_leaf",))),
    ("grad_fn_x", 'x_grad_fn = "AddBackward0"',
     ("wrong", "gives the op x feeds into", ("grad_fn_of_leaf",))),
    # control_flow_scalar
    ("control_flow_scalar", 'def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n'
                            '    if b.sum() > 0:\n        c = b\n    else:\n        c = 100 * b\n    return c\n\n'
                            'a = torch.tensor(a0, requires_grad=True)\nd = f(a)\nd.backward()\ngrad_branch = a.grad', R),
    ("control_flow_scalar", 'def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n'
                            '    if b.sum() > 0:\n        c = b\n    else:\n        c = 100 * b\n    return c\n\n'
                            'a = torch.tensor(a0, requires_grad=True)\nf(a).backward()\ngrad_branch = a.grad.item()', R),
    ("control_flow_scalar", 'grad_branch = 4096.0',
     ("wrong", "ran it once and typed the number in", ("shown_values_only",))),
    ("control_flow_scalar", 'def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n'
                            '    if b.sum() > 0:\n        c = b\n    else:\n        c = 100 * b\n    return c\n\n'
                            'a = torch.tensor(a0, requires_grad=True)\nd = f(a)\nd.backward()\ngrad_branch = d.item()',
     ("wrong", "gave d, the function's value", ("value_not_derivative",))),
    ("control_flow_scalar", 'grad_branch = 2.0  # b = a * 2, the loop only multiplies numbers',
     ("wrong", "thinks the loop passes are not recorded", ("control_flow_recorded",))),
    # tracked_abcd
    ("tracked_abcd", 'tracked = {"a": {"requires_grad": False, "grad_fn": None},\n'
                     '           "b": {"requires_grad": True, "grad_fn": None},\n'
                     '           "c": {"requires_grad": False, "grad_fn": None},\n'
                     '           "d": {"requires_grad": True, "grad_fn": "MulBackward0"}}', R),
    ("tracked_abcd", 'tracked = {k: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn}\n'
                     '           for k, t in dict(a=a, b=b, c=c, d=d).items()}', R),
    ("tracked_abcd", 'tracked = {k: {"requires_grad": t.requires_grad,\n'
                     '               "grad_fn": None if t.grad_fn is None else type(t.grad_fn)}\n'
                     '           for k, t in dict(a=a, b=b, c=c, d=d).items()}', R),
    ("tracked_abcd", 'tracked = {"a": {"requires_grad": False, "grad_fn": None},\n'
                     '           "b": {"requires_grad": True, "grad_fn": None},\n'
                     '           "c": {"requires_grad": True, "grad_fn": None},\n'
                     '           "d": {"requires_grad": True, "grad_fn": "MulBackward0"}}',
     ("wrong", "thinks a detached copy still requires grad", ("detach_cuts_path",))),
    ("tracked_abcd", 'tracked = {"a": {"requires_grad": False, "grad_fn": None},\n'
                     '           "b": {"requires_grad": True, "grad_fn": None},\n'
                     '           "c": {"requires_grad": False, "grad_fn": None},\n'
                     '           "d": {"requires_grad": False, "grad_fn": None}}',
     ("wrong", "thinks a product needs both inputs tracked", ("requires_grad_propagation",))),
    ("tracked_abcd", 'tracked = {"a": {"requires_grad": False, "grad_fn": None},\n'
                     '           "b": {"requires_grad": True, "grad_fn": "AccumulateGrad"},\n'
                     '           "c": {"requires_grad": False, "grad_fn": None},\n'
                     '           "d": {"requires_grad": True, "grad_fn": "MulBackward0"}}',
     ("wrong", "gives the leaf b the accumulator as grad_fn", ("grad_fn_of_leaf",))),
    # sum_rule (by hand)
    ("sum_rule", 'dz_dx = 2 * x0 + 5', R),
    ("sum_rule", 'dz_dx = 2.0*x0 + 5.0', R),
    ("sum_rule", 'dz_dx = 11', ("wrong", "typed the number for x0 = 3", ("shown_values_only",))),
    ("sum_rule", 'dz_dx = x0**2 + 5*x0', ("wrong", "the value of z", ("value_not_derivative",))),
    ("sum_rule", 'dz_dx = x0 + 5', ("wrong", "d/dx x^2 written x", ("power_rule",))),
    ("sum_rule", 'dz_dx = 3 * x0 + 2  # 11 at x0 = 3', ("wrong", "a formula that is right only at x0 = 3", ("shown_values_only",))),
    # chain_xyz (by hand)
    ("chain_xyz", 'grads_xyz = [z0, z0, x0 + y0]', R),
    ("chain_xyz", 'q = x0 + y0\ngrads_xyz = (z0, z0, q)', R),
    ("chain_xyz", 'grads_xyz = [1, 1, x0 + y0]', ("wrong", "local gradients of the + box only", ("local_gradient_only",))),
    ("chain_xyz", 'grads_xyz = [z0, z0, (x0 + y0) * z0]', ("wrong", "df/dz given as f itself", ("value_not_derivative",))),
    ("chain_xyz", 'grads_xyz = [-4, -4, 3]', ("wrong", "typed in", ("shown_values_only",))),
    # chain_abcf (by hand)
    ("chain_abcf", 'grads_abcf = [f0 * b0, f0 * a0, f0, a0 * b0 + c0]', R),
    ("chain_abcf", 'e = a0 * b0\nd = e + c0\ngrads_abcf = [f0 * b0, f0 * a0, f0 * 1.0, d]', R),
    ("chain_abcf", 'grads_abcf = [b0, a0, 1, a0 * b0 + c0]', ("wrong", "local gradients, not multiplied by dL/dd", ("local_gradient_only",))),
    ("chain_abcf", 'grads_abcf = [6, -4, -2, 4]', ("wrong", "typed in", ("shown_values_only",))),
    ("chain_abcf", 'grads_abcf = [f0 * b0, f0 * a0, f0, c0]', ("wrong", "dL/df = d, but d written c (forgot the e term)", ())),
    ("chain_abcf", 'grads_abcf = [f0 * a0, f0 * b0, f0, a0 * b0 + c0]', ("wrong", "d(ab)/da taken as a", (), ("reordered",))),
    # fanout_xy (by hand)
    ("fanout_xy", 'grads = (y0 + 2 * x0, x0)', R),
    ("fanout_xy", 'grads = [y0 + 2.0 * x0, x0]', R),
    ("fanout_xy", 'grads = (y0, x0)', ("wrong", "only the xy use of x", ("fanout_adds",))),
    ("fanout_xy", 'grads = (2 * x0, x0)', ("wrong", "only the x^2 use of x", ("fanout_adds",))),
    ("fanout_xy", 'grads = (y0 + x0, x0)', ("wrong", "d/dx x^2 written x", ("power_rule",))),
    ("fanout_xy", 'grads = (7.0, 2.0)', ("wrong", "typed in", ("shown_values_only",))),
    # log_sin_reverse (by hand)
    ("log_sin_reverse", 'a, c = x0**2, math.sin(x0)\nb = math.log(a)\n'
                        'arrivals = {"a": {"grad": c / a}, "b": {"grad": c}, "c": {"grad": b},\n'
                        '            "d": {"grad": 1.0}, "e": {"grad": 1.0},\n'
                        '            "x": {"grad": c / a * 2 * x0 + b * math.cos(x0) - 1 / x0**2}}', R),
    ("log_sin_reverse", 'arrivals = {"a": {"grad": math.sin(x0) / x0**2}, "b": {"grad": math.sin(x0)},\n'
                        '            "c": {"grad": math.log(x0**2)}, "d": {"grad": 1}, "e": {"grad": 1},\n'
                        '            "x": {"grad": 2 * math.sin(x0) / x0 + 2 * math.log(abs(x0)) * math.cos(x0) - x0**-2}}', R),
    ("log_sin_reverse", 'a, c = x0**2, math.sin(x0)\nb = math.log(a)\n'
                        'arrivals = {"a": {"grad": c / a}, "b": {"grad": c}, "c": {"grad": b},\n'
                        '            "d": {"grad": 1.0}, "e": {"grad": 1.0},\n'
                        '            "x": {"grad": c / a * 2 * x0 + b * math.cos(x0)}}',
     ("wrong", "x feeds three boxes; the 1/x branch left out", ("fanout_adds",))),
    ("log_sin_reverse", 'a, c = x0**2, math.sin(x0)\nb = math.log(a)\n'
                        'arrivals = {"a": {"grad": 1 / a}, "b": {"grad": c}, "c": {"grad": b},\n'
                        '            "d": {"grad": 1.0}, "e": {"grad": 1.0},\n'
                        '            "x": {"grad": 1 / a * 2 * x0 + b * math.cos(x0) - 1 / x0**2}}',
     ("wrong", "df/da is the local d log a / da, not times df/db", ("local_gradient_only",))),
    ("log_sin_reverse", 'a, c = x0**2, math.sin(x0)\nb = math.log(a)\n'
                        'arrivals = {"a": {"grad": c / a}, "b": {"grad": c}, "c": {"grad": b},\n'
                        '            "d": {"grad": 1.0}, "e": {"grad": 1.0},\n'
                        '            "x": {"grad": c / a * 2 * x0 + b * math.cos(x0) + 1 / x0**2}}',
     ("wrong", "d(1/x)/dx taken as +1/x^2", ("sign_error",))),
]
