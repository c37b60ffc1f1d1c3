"""Novice answers, chapter 8 (format: see ch01.py)."""

R = "right"

_SECOND = ('x = torch.tensor(x0, requires_grad=True)\ny = x ** 3\n(g,) = torch.autograd.grad(y, x, create_graph=True)\n'
           '(h,) = torch.autograd.grad(g, x)\n')
_HESS = ('x = torch.tensor(x_values, requires_grad=True)\nf = (x ** 3).sum()\n(g,) = torch.autograd.grad(f, x, create_graph=True)\n')
_MAML = 'w = torch.tensor(w0, requires_grad=True)\n(g,) = torch.autograd.grad(w ** 2, w, create_graph={cg})\nw1 = w - alpha * g\nL = w1 ** 2\nL.backward()\n'
_POST = ('X = torch.tensor([x0], requires_grad=True)\nY = torch.tensor([y])\np_y1 = a * X\nl1 = F.mse_loss(p_y1, Y)\n'
         'grad = torch.autograd.grad(l1, [X], retain_graph=True{cg})[0]\nnX = X + grad{data} * step\np_y2 = a * nX\n'
         'final_y = (p_y1 + p_y2) / 2\nl2 = F.mse_loss(final_y, Y)\n')
_FIX = ('def meta_grad(X, Y, step, a, loss_fn):\n    p_y1 = a * X\n    l1 = loss_fn(p_y1, Y)\n'
        '    grad = torch.autograd.grad(l1, [X], {kw})[0]\n    nX = X + grad{data} * step\n    p_y2 = a * nX\n'
        '    final_y = (p_y1 + p_y2) / 2\n    l2 = loss_fn(final_y, Y)\n    return torch.autograd.grad(l2, [X])[0]\n')
_EDGES = ('edges = {"grad_scalar": outcome(lambda: torch.func.grad(lambda t: t**3)(torch.tensor(x0))),\n'
          '         "grad_vector": outcome(lambda: torch.func.grad(lambda t: t**3)(torch.tensor(xs))),\n'
          '         "func_second_linear": outcome(lambda: torch.func.grad(torch.func.grad(lambda t: c * t))(torch.tensor(x0)))}\n'
          't = torch.tensor(x0, requires_grad=True)\n'
          'def second():\n    first = torch.autograd.grad(c * t, t, create_graph=True)[0]\n    return torch.autograd.grad(first, t)\n'
          'edges["autograd_second_linear"] = outcome(second)\n')


def _edges(**changes: dict) -> str:
    rows = {"grad_scalar": {"raises": None, "value": "3 * x0**2"},
            "grad_vector": {"raises": "'RuntimeError'", "value": None},
            "func_second_linear": {"raises": None, "value": "0.0"},
            "autograd_second_linear": {"raises": "'RuntimeError'", "value": None}}
    rows.update(changes)
    inner = ", ".join(f'"{k}": {{"raises": {v["raises"]}, "value": {v["value"]}}}' for k, v in rows.items())
    return "edges = {" + inner + "}"


_PS = ('def loss(w, x, y):\n    return (w @ x - y) ** 2\n'
       'w, X, Y = torch.tensor(w_values), torch.tensor(X_values), torch.tensor(y_values)\n')

ANSWERS = [
    # second_derivative_cube
    ("second_derivative_cube", _SECOND + 'second = [g, h]', R),
    ("second_derivative_cube", _SECOND + 'second = [g.item(), h.item()]', R),
    ("second_derivative_cube", _SECOND + 'second = torch.stack([g, h])', R),
    ("second_derivative_cube", _SECOND + 'second = [h, g]', ("wrong", "f' and f'' swapped; equal at x0 = 2", ("shown_values_only",), ("reordered",))),
    ("second_derivative_cube", 'x = torch.tensor(x0, requires_grad=True)\ny = x ** 3\ny.backward(create_graph=True)\n'
                               'g = x.grad.clone()\nx.grad.backward()\nsecond = [g, x.grad]',
     ("wrong", "the second backward adds into .grad", ("second_derivative_accumulates",))),
    ("second_derivative_cube", _SECOND + 'second = [y, g]', ("wrong", "one order too low: f and f'", ("value_not_derivative",), ("derivative_order_off",))),
    # hessian_cubes
    ("hessian_cubes", _HESS + 'H = torch.stack([torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(2)])', R),
    ("hessian_cubes", 'H = torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), torch.tensor(x_values))', R),
    ("hessian_cubes", 'H = [[6 * x_values[0], 0.0], [0.0, 6 * x_values[1]]]', R),
    ("hessian_cubes", _HESS + 'row = torch.autograd.grad(g.sum(), x)[0]\nH = torch.stack([row, row])',
     ("wrong", "the gradient of the sum for every row", ("hessian_rows",))),
    ("hessian_cubes", 'H = [[3 * x_values[0] ** 2, 0.0], [0.0, 3 * x_values[1] ** 2]]', ("wrong", "the gradient on the diagonal", (), ('value_not_derivative', 'derivative_order_off'))),
    ("hessian_cubes", _HESS + 'H = torch.diag(g.detach())', ("wrong", "one derivative too few", (), ('value_not_derivative', 'derivative_order_off'))),
    # hessian_quadratic
    ("hessian_quadratic", 'M = torch.tensor(M_values)\nH_quad = torch.autograd.functional.hessian(lambda x: x @ M @ x, torch.tensor(x_values))', R),
    ("hessian_quadratic", 'M = torch.tensor(M_values)\nH_quad = M + M.T', R),
    ("hessian_quadratic", 'M = torch.tensor(M_values)\nH_quad = 2 * M', ("wrong", "2M, as for a symmetric M", ("quadratic_hessian",))),
    ("hessian_quadratic", 'M = torch.tensor(M_values)\nH_quad = M', ("wrong", "M itself", ("quadratic_hessian",))),
    ("hessian_quadratic", 'M = torch.tensor(M_values)\nH_quad = 2 * M.T', ("wrong", "2 M^T", ("quadratic_hessian",))),
    # hvp_function
    ("hvp_function", 'def hvp(f, x, v):\n    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n'
                     '    (hv,) = torch.autograd.grad(g @ v, x)\n    return hv\n', R),
    ("hvp_function", 'def hvp(f, x, v):\n    g = torch.autograd.grad(f(x), x, create_graph=True)[0]\n'
                     '    return torch.autograd.grad((g * v).sum(), x)[0]\n', R),
    ("hvp_function", 'def hvp(f, x, v):\n    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n'
                     '    return torch.autograd.grad(g @ v, x)\n', ("wrong", "returns the 1-tuple", ("prompt_requirement", "autograd_grad_tuple"))),
    ("hvp_function", 'def hvp(f, x, v):\n    (g,) = torch.autograd.grad(f(x), x)\n    return g * v\n',
     ("wrong", "v applied to g, not differentiated again", ("hvp_vector",))),
    ("hvp_function", 'def hvp(f, x, v):\n    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n'
                     '    (hv,) = torch.autograd.grad(g.sum(), x)\n    return hv * v\n',
     ("wrong", "the Hessian's row sums times v", ("hvp_vector", "hessian_rows"))),
    # maml_one_step
    ("maml_one_step", _MAML.format(cg=True) + 'meta_grad = w.grad', R),
    ("maml_one_step", _MAML.format(cg=True) + 'meta_grad = w.grad.item()', R),
    ("maml_one_step", 'meta_grad = 2 * (1 - 2 * alpha) ** 2 * w0', R),
    ("maml_one_step", _MAML.format(cg=False) + 'meta_grad = w.grad', ("wrong", "no create_graph: f'(w) a constant", ("meta_create_graph",))),
    ("maml_one_step", 'meta_grad = 1.28', ("wrong", "typed in", ("shown_values_only",))),
    ("maml_one_step", 'meta_grad = 2 * w0', ("wrong", "the inner loss's gradient", ("inner_gradient_reported",))),
    # seed000_forward
    ("seed000_forward", _POST.format(cg="", data=".data") + 'forward_values = (final_y.item(), l2.item())', R),
    ("seed000_forward", 'p1 = a * x0\ng = 2 * (p1 - y) * a\np2 = a * (x0 + g * step)\nfinal_y = (p1 + p2) / 2\n'
                        'forward_values = (final_y, (final_y - y) ** 2)', R),
    ("seed000_forward", 'p1 = a * x0\ng = 2 * (p1 - y) * a\np2 = a * (x0 - g * step)\nfinal_y = (p1 + p2) / 2\n'
                        'forward_values = (final_y, (final_y - y) ** 2)', ("wrong", "stepped against the gradient; the post adds", ("sign_error", "descent_direction"))),
    ("seed000_forward", 'p1 = a * x0\ng = 2 * (p1 - y) * a\np2 = a * (x0 + g * step)\nfinal_y = (p1 + p2) / 2\n'
                        'forward_values = (final_y, final_y - y)', ("wrong", "l2 without the square", ())),
    ("seed000_forward", 'p1 = a * x0\ng = 2 * (p1 - y) * a\np2 = a * (x0 + g * step)\n'
                        'forward_values = (p2, (p2 - y) ** 2)', ("wrong", "the new prediction alone, not the average", ("inner_step_skipped",))),
    # inner_step_meta
    ("inner_step_meta", _POST.format(cg=", create_graph=True", data="") + 'meta_x_grad = torch.autograd.grad(l2, [X])[0]', R),
    ("inner_step_meta", 'p1 = a * x0\nfinal_y = p1 + a * step * a * (p1 - y)\n'
                        'meta_x_grad = 2 * (final_y - y) * a * (1 + a * a * step)', R),
    ("inner_step_meta", _POST.format(cg="", data=".data") + 'meta_x_grad = torch.autograd.grad(l2, [X])[0]',
     ("wrong", "the post's printed gradient: the step's dependence cut", ("meta_create_graph",))),
    ("inner_step_meta", _POST.format(cg="", data="") + 'meta_x_grad = torch.autograd.grad(l2, [X])[0]',
     ("wrong", ".data removed but no create_graph", ("meta_create_graph",))),
    ("inner_step_meta", _POST.format(cg="", data=".data") + 'meta_x_grad = torch.autograd.grad(l1, [X])[0]',
     ("wrong", "the inner loss's gradient", ("inner_gradient_reported",))),
    # inner_step_fix
    ("inner_step_fix", _FIX.format(kw="create_graph=True", data=""), R),
    ("inner_step_fix", _FIX.format(kw="retain_graph=True, create_graph=True", data=""), R),
    ("inner_step_fix", _FIX.format(kw="retain_graph=True", data=".data"), ("wrong", "left as it was", ("meta_create_graph",))),
    ("inner_step_fix", _FIX.format(kw="retain_graph=True", data=""), ("wrong", ".data removed, no create_graph", ("meta_create_graph",))),
    ("inner_step_fix", _FIX.format(kw="create_graph=True", data=".data"), ("wrong", "create_graph but .data still cuts", ("meta_create_graph",))),
    # func_errors
    ("func_errors", _EDGES, R),
    ("func_errors", _edges(), R),
    ("func_errors", _edges(autograd_second_linear={"raises": None, "value": "0.0"}),
     ("wrong", "autograd's second derivative of a linear function is 0", ("linear_second_derivative",))),
    ("func_errors", _edges(grad_vector={"raises": None, "value": "[3 * v**2 for v in xs]"}),
     ("wrong", "func.grad of a vector output", ("func_grad_scalar",))),
    ("func_errors", _edges(func_second_linear={"raises": "'RuntimeError'", "value": None}),
     ("wrong", "torch.func's second derivative of a linear function raises", ("linear_second_derivative",))),
    # per_sample_grads
    ("per_sample_grads", _PS + 'per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(w, X, Y)', R),
    ("per_sample_grads", _PS + 'per_sample = torch.stack([2 * (w @ x - t) * x for x, t in zip(X, Y)])', R),
    ("per_sample_grads", _PS + 'per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(w, X, Y).sum(0)',
     ("wrong", "summed over the batch", ("per_sample_summed", "summed"))),
    ("per_sample_grads", _PS + 'per_sample = torch.stack([2 * (t - w @ x) * x for x, t in zip(X, Y)])', ("wrong", "y - wx", ("sign_error",))),
    ("per_sample_grads", _PS + 'per_sample = torch.func.vmap(torch.func.grad(loss, argnums=1), in_dims=(None, 0, 0))(w, X, Y)',
     ("wrong", "with respect to x", ("func_grad_argnums",))),
]
