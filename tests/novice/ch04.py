"""Novice answers, chapter 4 (format: see ch01.py)."""

R = "right"

_F = ('def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n'
      '    if b.sum() > 0:\n        c = b\n    else:\n        c = 100 * b\n    return c\n\n')
_JROWS = ('def jacobian_rows(f, x):\n    x = x.detach().requires_grad_()\n    y = f(x)\n    rows = []\n'
          '    for i in range(y.numel()):\n        seed = torch.zeros_like(y)\n        seed[i] = 1.0\n'
          '{zero}        y.backward(seed, retain_graph=True)\n        rows.append(x.grad.clone())\n'
          '    return torch.stack(rows{dim})\n')
_RUNS = ('def err(action):\n    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n'
         '    w = torch.tensor([2.0], requires_grad=True)\n    try:\n        action(x, w)\n    except Exception as e:\n'
         '        return type(e)\n    return None\n'
         'runs = {"a": {"error": err(lambda x, w: (3 * x).backward())},\n'
         '        "b": {"error": err(lambda x, w: (3 * x).backward(torch.ones(3)))},\n'
         '        "c": {"error": err(lambda x, w: (3 * x).sum().backward())},\n'
         '        "d": {"error": err(lambda x, w: (3 * w).backward())},\n'
         '        "e": {"error": err(lambda x, w: torch.func.grad(lambda t: 3 * t)(x))},\n'
         '        "f": {"error": err(lambda x, w: (3 * x).backward(torch.tensor(1.0)))}}\n')


def _runs(**changes: str) -> str:
    rows = {"a": "RuntimeError", "b": None, "c": None, "d": None, "e": "RuntimeError", "f": "RuntimeError"}
    rows.update(changes)
    inner = ", ".join(f'"{k}": {{"error": {v if v is None else repr(v)}}}' for k, v in rows.items())
    return "runs = {" + inner + "}"


ANSWERS = [
    # nonscalar_error
    ("nonscalar_error", 'nonscalar_protects = "guessed_seed"', R),
    ("nonscalar_error", 'nonscalar_protects = "freed_values"', ("wrong", "confuses it with the freed graph", ("error_purpose",))),
    ("nonscalar_error", 'nonscalar_protects = "never_updated"', ("wrong", "picked the optimizer reason", ("error_purpose",))),
    # seed_ones (by hand)
    ("seed_ones", 'grad_ones = [2 * a * b for a, b in zip(x0, v)]', R),
    ("seed_ones", 'grad_ones = 2 * torch.tensor(x0) * torch.tensor(v)', R),
    ("seed_ones", 'grad_ones = sum(2 * a * b for a, b in zip(x0, v))', ("wrong", "summed the entries, a dot product", ("vjp_summed", "summed"))),
    ("seed_ones", 'grad_ones = [a**2 * b for a, b in zip(x0, v)]', ("wrong", "the value of y, not its derivative", ("value_not_derivative",))),
    ("seed_ones", 'grad_ones = torch.diag(2 * torch.tensor(x0))', ("wrong", "gave the Jacobian itself", ("grad_is_jacobian",))),
    # seed_reweights (by hand)
    ("seed_reweights", 'grad_reweighted = [2 * a * b for a, b in zip(x0, v)]', R),
    ("seed_reweights", 'import numpy as np\ngrad_reweighted = 2 * np.array(x0) * np.array(v)', R),
    ("seed_reweights", 'grad_reweighted = [2 * a for a in x0]', ("wrong", "the seed ignored: just dy/dx", ("seed_is_vjp",))),
    ("seed_reweights", 'grad_reweighted = v', ("wrong", "x.grad is the seed", ("seed_returned",))),
    ("seed_reweights", 'grad_reweighted = sum(2 * a * b for a, b in zip(x0, v))', ("wrong", "a dot product", ("vjp_summed", "summed"))),
    ("seed_reweights", 'grad_reweighted = [a * a * b for a, b in zip(x0, v)]', ("wrong", "y times the seed", ("value_not_derivative",))),
    # control_flow_sum
    ("control_flow_sum", _F + 'a = torch.tensor(a0, requires_grad=True)\nd = f(a)\nd.sum().backward()\ngrad_loop = a.grad', R),
    ("control_flow_sum", _F + 'a = torch.tensor(a0, requires_grad=True)\nf(a).sum().backward()\ngrad_loop = a.grad.tolist()', R),
    ("control_flow_sum", 'grad_loop = [512.0, 512.0, 512.0]', ("wrong", "typed in", ("shown_values_only",))),
    ("control_flow_sum", _F + 'a = torch.tensor(a0, requires_grad=True)\nd = f(a)\ngrad_loop = d.detach()',
     ("wrong", "gave d, the value", ("value_not_derivative",))),
    ("control_flow_sum", 'grad_loop = [2.0, 2.0, 2.0]', ("wrong", "only b = a * 2 counted", ("control_flow_recorded",))),
    # identity_seed (by hand)
    ("identity_seed", 'grad_identity = torch.linspace(lo, hi, 5)', R),
    ("identity_seed", 'grad_identity = [lo + (hi - lo) * i / 4 for i in range(5)]', R),
    ("identity_seed", 'grad_identity = torch.ones(5)', ("wrong", "the seed ignored: derivative 1", ("seed_is_vjp",))),
    ("identity_seed", 'grad_identity = torch.linspace(lo, hi, 5).sum()', ("wrong", "summed over the points", ("vjp_summed", "summed"))),
    ("identity_seed", 'grad_identity = [-1.0, -0.5, 0.0, 0.5, 1.0]', ("wrong", "typed in", ("shown_values_only",))),
    # square_seed_z (by hand)
    ("square_seed_z", 'z = torch.linspace(lo, hi, 5)\ngrad_seed_z = 2 * z * z', R),
    ("square_seed_z", 'grad_seed_z = [2 * (lo + (hi - lo) * i / 4) ** 2 for i in range(5)]', R),
    ("square_seed_z", 'grad_seed_z = 2 * torch.linspace(lo, hi, 5)', ("wrong", "the student's 2z: the seed ignored", ("seed_is_vjp",), ('seed_selects_wrt',))),
    ("square_seed_z", 'grad_seed_z = torch.linspace(lo, hi, 5) ** 2', ("wrong", "y itself", ("value_not_derivative", "factor_half"))),
    ("square_seed_z", 'z = torch.linspace(lo, hi, 5)\ngrad_seed_z = (2 * z * z).sum()', ("wrong", "a dot product", ("vjp_summed", "summed"))),
    # seed_is_output (by hand)
    ("seed_is_output", 'grad_seed_y = [2 * a**3 for a in x0]', R),
    ("seed_is_output", 'x = torch.tensor(x0)\ngrad_seed_y = 2 * x * x**2', R),
    ("seed_is_output", 'grad_seed_y = [2 * a for a in x0]', ("wrong", "the seed ignored", ("seed_is_vjp",), ('seed_selects_wrt',))),
    ("seed_is_output", 'grad_seed_y = [a**2 for a in x0]', ("wrong", "x.grad is the seed y", ("seed_returned",))),
    ("seed_is_output", 'grad_seed_y = [2.0, 16.0, 54.0]', ("wrong", "typed in", ("shown_values_only",))),
    # scalar_outputs
    ("scalar_outputs", 'z = torch.linspace(lo, hi, steps=5, requires_grad=True)\ntorch.sum(z).backward()\ng1 = z.grad\n'
                       'z = torch.linspace(lo, hi, steps=5, requires_grad=True)\ntorch.sum(z ** 2).backward()\n'
                       'scalar_grads = {"sum": {"grad": g1}, "sum_of_squares": {"grad": z.grad}}', R),
    ("scalar_outputs", 'z = torch.linspace(lo, hi, 5)\nscalar_grads = {"sum": {"grad": [1.0] * 5}, "sum_of_squares": {"grad": (2 * z).tolist()}}', R),
    ("scalar_outputs", 'z = torch.linspace(lo, hi, 5)\nscalar_grads = {"sum": {"grad": [1.0] * 5}, "sum_of_squares": {"grad": z.tolist()}}',
     ("wrong", "d(z^2)/dz written z", ("power_rule",))),
    ("scalar_outputs", 'z = torch.linspace(lo, hi, 5)\nscalar_grads = {"sum": {"grad": [1.0] * 5}, "sum_of_squares": {"grad": (2 * z + 1).tolist()}}',
     ("wrong", "the first backward's ones kept in .grad", ("accumulation",))),
    ("scalar_outputs", 'z = torch.linspace(lo, hi, 5)\nscalar_grads = {"sum": {"grad": [1.0] * 5}, "sum_of_squares": {"grad": (z ** 2).tolist()}}',
     ("wrong", "the squares, not their derivative", ("value_not_derivative",))),
    # scalar_seed_one
    ("scalar_seed_one", 'rows = []\nfor s in (1.0, c):\n    z = torch.linspace(lo, hi, steps=5, requires_grad=True)\n'
                        '    torch.sum(torch.pow(z, 2)).backward(torch.tensor(s))\n    rows.append(z.grad)\n'
                        'seeded_scalar_grads = torch.stack(rows)', R),
    ("scalar_seed_one", 'z = torch.linspace(lo, hi, 5)\nseeded_scalar_grads = [(2 * z).tolist(), (2 * c * z).tolist()]', R),
    ("scalar_seed_one", 'z = torch.linspace(lo, hi, 5)\nseeded_scalar_grads = [(2 * z).tolist(), (2 * z).tolist()]',
     ("wrong", "a scalar's seed does not matter", ("seed_is_vjp",))),
    ("scalar_seed_one", 'z = torch.linspace(lo, hi, 5)\nseeded_scalar_grads = [(2 * z).tolist(), (2 * 3 * z).tolist()]',
     ("wrong", "the 3 typed in instead of c", ("shown_values_only",))),
    ("scalar_seed_one", 'z = torch.linspace(lo, hi, 5)\nseeded_scalar_grads = [(2 * z).tolist(), (2 * z + c).tolist()]',
     ("wrong", "the seed added, not multiplied", ())),
    # sin_autograd
    ("sin_autograd", 'def dsin(x):\n    x = x.clone().requires_grad_()\n    torch.sin(x).sum().backward()\n    return x.grad\n', R),
    ("sin_autograd", 'def dsin(x):\n    x = x.detach().requires_grad_(True)\n    y = torch.sin(x)\n'
                     '    y.backward(torch.ones_like(y))\n    return x.grad\n', R),
    ("sin_autograd", 'def dsin(x):\n    return torch.func.vmap(torch.func.grad(torch.sin))(x)\n', R),
    ("sin_autograd", 'def dsin(x):\n    return torch.sin(x)\n', ("wrong", "returns f, not f'", ("value_not_derivative",))),
    ("sin_autograd", 'def dsin(x):\n    x = x.clone().requires_grad_()\n    torch.sin(x).backward(x)\n    return x.grad\n',
     ("wrong", "seeds with x itself", ("seed_is_vjp",), ('seed_selects_wrt',))),
    ("sin_autograd", 'def dsin(x):\n    h = 1e-3\n    return (torch.sin(x + h) - torch.sin(x - h)) / (2 * h)\n',
     ("wrong", "a finite difference instead of autograd, in float32", ("rounded",))),
    # chain_2x_squared
    ("chain_2x_squared", 'x = torch.tensor([x0], requires_grad=True)\ny = 2 * x\nz = y ** 2\nz.backward()\ndz_dx = x.grad', R),
    ("chain_2x_squared", 'x = torch.tensor(x0, requires_grad=True)\nz = (2 * x) ** 2\nz.backward()\ndz_dx = x.grad.item()', R),
    ("chain_2x_squared", 'x = torch.tensor([x0], requires_grad=True)\ny = 2 * x\nz = y ** 2\ny.backward()\ndz_dx = x.grad',
     ("wrong", "backward on y gives dy/dx", ("backward_wrong_tensor", "inner_step_skipped"), ('chain_rule_dropped',))),
    ("chain_2x_squared", 'dz_dx = 8 * x0 ** 2', ("wrong", "a formula right only at x0 = 1", ("shown_values_only",))),
    ("chain_2x_squared", 'dz_dx = 4 * x0', ("wrong", "dz/dy only, the dy/dx = 2 dropped", ("chain_rule_dropped", "factor_half"), ('local_gradient_only',))),
    # backward_on_input
    ("backward_on_input", 'x = torch.tensor([x0], requires_grad=True)\ny = 2 * x\nz = y ** 2\nx.backward(z)\nx_grad_after = x.grad.item()', R),
    ("backward_on_input", 'x_grad_after = (2 * x0) ** 2', R),
    ("backward_on_input", 'x_grad_after = 8 * x0', ("wrong", "thinks x.backward(z) gives dz/dx", ("seed_selects_wrt",), ('backward_wrong_tensor',))),
    ("backward_on_input", 'x_grad_after = 1.0', ("wrong", "dx/dx = 1, the seed ignored", ("seed_is_vjp", "backward_wrong_tensor"))),
    ("backward_on_input", 'x_grad_after = 4', ("wrong", "typed in", ("shown_values_only",))),
    # jacobian_matmul
    ("jacobian_matmul", 'J = jacrev(f)(x)', R),
    ("jacobian_matmul", 'J = A.clone()', R),
    ("jacobian_matmul", 'J = A.tolist()', R),
    ("jacobian_matmul", 'J = A.T', ("wrong", "(inputs, outputs) orientation", ("jacobian_orientation", "matmul_transpose"))),
    ("jacobian_matmul", 'J = f(x)', ("wrong", "the value Ax", ("value_not_derivative",))),
    ("jacobian_matmul", 'J = A.sum(0)', ("wrong", "one backward with ones: the rows summed", ("onehot_seed", "grad_is_jacobian"))),
    # jacobian_rows
    ("jacobian_rows", _JROWS.format(zero='        x.grad = None\n', dim=''), R),
    ("jacobian_rows", 'def jacobian_rows(f, x):\n    x = x.detach().requires_grad_()\n    y = f(x)\n    rows = []\n'
                      '    for i in range(len(y)):\n        if x.grad is not None:\n            x.grad.zero_()\n'
                      '        y[i].backward(retain_graph=True)\n        rows.append(x.grad.clone())\n    return torch.stack(rows)\n', R),
    ("jacobian_rows", _JROWS.format(zero='', dim=''), ("wrong", "never clears x.grad: rows accumulate", ("accumulation",))),
    ("jacobian_rows", _JROWS.format(zero='        x.grad = None\n', dim=', dim=1'), ("wrong", "stacked as columns", ("jacobian_orientation",))),
    ("jacobian_rows", _JROWS.format(zero='        x.grad = None\n', dim='').replace(", retain_graph=True", ""),
     ("wrong", "no retain_graph: the second pass fails", ("graph_freed",))),
    # vjp_row
    ("vjp_row", 'out, pullback = torch.func.vjp(f, x)\nv = torch.zeros(A.shape[0])\nv[i] = 1.0\n(row,) = pullback(v)', R),
    ("vjp_row", 'row = A[i]', R),
    ("vjp_row", 'row = A[i].tolist()', R),
    ("vjp_row", 'row = A[:, i]', ("wrong", "a column, forward-mode thinking", ("jvp_vs_vjp", "jacobian_orientation"))),
    ("vjp_row", 'row = A.sum(0)', ("wrong", "all-ones seed", ("onehot_seed",))),
    ("vjp_row", 'out, pullback = torch.func.vjp(f, x)\nv = torch.zeros(A.shape[0])\nv[i] = 1.0\nrow = out',
     ("wrong", "the output, not the pullback", ("value_not_derivative",))),
    # jvp_column
    ("jvp_column", 'u = torch.zeros(A.shape[1])\nu[j] = 1.0\nout, column = torch.func.jvp(f, (x,), (u,))', R),
    ("jvp_column", 'column = A[:, j]', R),
    ("jvp_column", 'column = A[j, :2]', ("wrong", "a row cut to the output's length", ("jvp_vs_vjp", "jacobian_orientation"))),
    ("jvp_column", 'u = torch.zeros(A.shape[1])\nu[j] = 1.0\nout, column = torch.func.jvp(f, (x,), (u,))\ncolumn = out',
     ("wrong", "the output, not the tangent", ("value_not_derivative",))),
    ("jvp_column", 'column = A.sum(1)', ("wrong", "all-ones tangent", ("onehot_seed",))),
    # log_sin_forward (by hand)
    ("log_sin_forward", 'a, b, c = x0**2, math.log(x0**2), math.sin(x0)\nda = 2 * x0\ndb = da / a\ndc = math.cos(x0)\n'
                        'dd = db * c + b * dc\nde = -1 / x0**2\n'
                        'tangents = {"a": {"tangent": da}, "b": {"tangent": db}, "c": {"tangent": dc},\n'
                        '            "d": {"tangent": dd}, "e": {"tangent": de}, "f": {"tangent": dd + de}}', R),
    ("log_sin_forward", 'tangents = {"a": {"tangent": 2 * x0}, "b": {"tangent": 2 / x0}, "c": {"tangent": math.cos(x0)},\n'
                        '            "d": {"tangent": 2 / x0 * math.sin(x0) + math.log(x0**2) * math.cos(x0)},\n'
                        '            "e": {"tangent": -x0**-2},\n'
                        '            "f": {"tangent": 2 / x0 * math.sin(x0) + math.log(x0**2) * math.cos(x0) - x0**-2}}', R),
    ("log_sin_forward", 'a, b, c = x0**2, math.log(x0**2), math.sin(x0)\nda = 2 * x0\ndb = da / a\ndc = math.cos(x0)\n'
                        'dd = db * dc\nde = -1 / x0**2\n'
                        'tangents = {"a": {"tangent": da}, "b": {"tangent": db}, "c": {"tangent": dc},\n'
                        '            "d": {"tangent": dd}, "e": {"tangent": de}, "f": {"tangent": dd + de}}',
     ("wrong", "product rule as product of derivatives", (), ('chain_rule_dropped',))),
    ("log_sin_forward", 'a, b, c = x0**2, math.log(x0**2), math.sin(x0)\nda = 2 * x0\ndb = 1 / a\ndc = math.cos(x0)\n'
                        'dd = db * c + b * dc\nde = -1 / x0**2\n'
                        'tangents = {"a": {"tangent": da}, "b": {"tangent": db}, "c": {"tangent": dc},\n'
                        '            "d": {"tangent": dd}, "e": {"tangent": de}, "f": {"tangent": dd + de}}',
     ("wrong", "b's local derivative without the incoming tangent", ("local_gradient_only", "chain_rule_dropped"))),
    ("log_sin_forward", 'a, b, c = x0**2, math.log(x0**2), math.sin(x0)\nda = 2 * x0\ndb = da / a\ndc = math.cos(x0)\n'
                        'dd = db * c + b * dc\nde = 1 / x0**2\n'
                        'tangents = {"a": {"tangent": da}, "b": {"tangent": db}, "c": {"tangent": dc},\n'
                        '            "d": {"tangent": dd}, "e": {"tangent": de}, "f": {"tangent": dd + de}}',
     ("wrong", "d(1/x)/dx = +1/x^2", ("sign_error",))),
    # which_backward_runs
    ("which_backward_runs", _RUNS, R),
    ("which_backward_runs", _runs(), R),
    ("which_backward_runs", _runs(d="RuntimeError"), ("wrong", "a (1,) output needs a seed too", ("one_element_scalar",))),
    ("which_backward_runs", _runs(e=None), ("wrong", "func.grad on a vector output", ("func_grad_scalar",))),
    ("which_backward_runs", _runs(f=None), ("wrong", "a scalar seed broadcasts", ("seed_required",))),
]
