"""Novice answers, chapter 2 (format: see ch01.py)."""

R = "right"

_CENTRAL = ('def central_grad(f, x):\n    h = 1e-5\n    g = torch.zeros_like(x)\n'
            '    for i in range(x.numel()):\n        e = torch.zeros_like(x)\n        e[i] = h\n'
            '        g[i] = (f(x + e) - f(x - e)) / (2 * h)\n    return g\n')

ANSWERS = [
    # micrograd_grad
    ("micrograd_grad", 'grad_abc = [-3 * a0**2 - 0.5 * a0**-0.5, 3 * math.cos(3 * b0) + 2.5 * b0**1.5, 1 / c0**2]', R),
    ("micrograd_grad", 'a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)\n'
                       'b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)\n'
                       'c = torch.tensor(c0, dtype=torch.float64, requires_grad=True)\n'
                       'f = -a**3 + torch.sin(3 * b) - 1 / c + b**2.5 - a**0.5\nf.backward()\n'
                       'grad_abc = torch.stack([a.grad, b.grad, c.grad])', R),
    ("micrograd_grad", 'import numpy as np\n'
                       'grad_abc = np.array([-3 * a0**2 - 0.5 / np.sqrt(a0), 3 * np.cos(3 * b0) + 2.5 * b0**1.5, c0**-2])', R),
    ("micrograd_grad", 'grad_abc = [-3 * a0**2 - 0.5 * a0**-0.5, math.cos(3 * b0) + 2.5 * b0**1.5, 1 / c0**2]',
     ("wrong", "sin(3b): the inner factor 3 dropped", ("chain_rule_dropped",))),
    ("micrograd_grad", 'grad_abc = [-3 * a0**2 - 0.5 * a0**-0.5, 3 * math.cos(3 * b0) + 2.5 * b0**1.5, -1 / c0**2]',
     ("wrong", "d(-1/c)/dc given a minus", ("sign_error",))),
    ("micrograd_grad", 'grad_abc = [-3 * a0**2 + 0.5 * a0**-0.5, 3 * math.cos(3 * b0) + 2.5 * b0**1.5, 1 / c0**2]',
     ("wrong", "the minus in front of a^0.5 lost", ("sign_error",))),
    ("micrograd_grad", 'grad_abc = [-3 * a0**2 - 0.5 * a0**-0.5, 3 * math.cos(3 * b0) + 2.5 * b0**2.5 / b0, 1 / c0**2]', R),
    # difference_errors
    ("difference_errors", 'f = lambda t: t**3\nexact = 3 * x0**2\n'
                          'fd_errors = [(f(x0 + h) - f(x0)) / h - exact, (f(x0 + h) - f(x0 - h)) / (2 * h) - exact]', R),
    ("difference_errors", 'X = torch.tensor(x0, dtype=torch.float64)\nexact = 3 * X**2\n'
                          'fwd = ((X + h)**3 - X**3) / h\ncen = ((X + h)**3 - (X - h)**3) / (2 * h)\n'
                          'fd_errors = torch.stack([fwd - exact, cen - exact])', R),
    ("difference_errors", 'f = lambda t: t**3\nexact = 3 * x0**2\n'
                          'fd_errors = [exact - (f(x0 + h) - f(x0)) / h, exact - (f(x0 + h) - f(x0 - h)) / (2 * h)]',
     ("wrong", "exact minus estimate", ("sign_error",))),
    ("difference_errors", 'f = lambda t: t**3\nexact = 3 * x0**2\n'
                          'fd_errors = [(f(x0 + h) - f(x0)) / h - exact, (f(x0 + h) - f(x0 - h)) / h - exact]',
     ("wrong", "central difference divided by h, not 2h", ("difference_quotient",))),
    ("difference_errors", 'X = torch.tensor(x0)\nexact = 3 * X**2\n'
                          'fwd = ((X + h)**3 - X**3) / h\ncen = ((X + h)**3 - (X - h)**3) / (2 * h)\n'
                          'fd_errors = [fwd - exact, cen - exact]',
     ("wrong", "float32 tensors though the prompt says float64", ("prompt_requirement", "rounded"))),
    ("difference_errors", 'f = lambda t: t**3\nexact = 3 * x0**2\n'
                          'fd_errors = [(f(x0 + h) - f(x0 - h)) / (2 * h) - exact, (f(x0 + h) - f(x0)) / h - exact]',
     ("wrong", "the two estimates swapped", ("forward_difference",))),
    # step_size_best
    ("step_size_best", 'exact = 3 * math.cos(3 * b0) + 2.5 * b0**1.5\n'
                       'def fb(b):\n    return -a0**3 + math.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5\n'
                       'errs = [abs((fb(b0 + s) - fb(b0 - s)) / (2 * s) - exact) for s in steps]\n'
                       'best_h = steps[errs.index(min(errs))]', R),
    ("step_size_best", 'b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)\n'
                       'fb = lambda b: -a0**3 + torch.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5\n'
                       'fb(b).backward()\nexact = b.grad.item()\n'
                       'best_h = min(steps, key=lambda s: abs(((fb(torch.tensor(b0 + s, dtype=torch.float64)) '
                       '- fb(torch.tensor(b0 - s, dtype=torch.float64))) / (2 * s)).item() - exact))', R),
    ("step_size_best", 'best_h = min(steps)', ("wrong", "the smallest step assumed best", ("finite_diff_step",))),
    ("step_size_best", 'best_h = steps[-1]', ("wrong", "the smallest step assumed best", ("finite_diff_step",))),
    ("step_size_best", 'exact = 3 * math.cos(3 * b0) + 2.5 * b0**1.5\n'
                       'def fb(b):\n    return -a0**3 + math.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5\n'
                       'errs = [abs((fb(b0 + s) - fb(b0)) / s - exact) for s in steps]\n'
                       'best_h = steps[errs.index(min(errs))]',
     ("wrong", "forward difference instead of central", ("forward_difference",))),
    # relative_error_table
    ("relative_error_table", 'def verdict(r):\n    if r < 1e-7:\n        return "happy"\n    if r < 1e-4:\n'
                             '        return "kinks_only"\n    if r <= 1e-2:\n        return "uncomfortable"\n    return "wrong"\n'
                             'checks = {}\nfor k, a, n in zip("wbvu", grad_autograd, grad_numeric):\n'
                             '    r = abs(a - n) / max(abs(a), abs(n))\n    checks[k] = {"rel_error": r, "verdict": verdict(r)}', R),
    ("relative_error_table", 'import numpy as np\nA, N = np.array(grad_autograd), np.array(grad_numeric)\n'
                             'r = np.abs(A - N) / np.maximum(np.abs(A), np.abs(N))\n'
                             'names = ["happy" if x < 1e-7 else "kinks_only" if x < 1e-4 else "uncomfortable" if x <= 1e-2 else "wrong" for x in r]\n'
                             'checks = {k: {"rel_error": r[i], "verdict": names[i]} for i, k in enumerate("wbvu")}', R),
    ("relative_error_table", 'def verdict(r):\n    if r < 1e-7:\n        return "happy"\n    if r < 1e-4:\n'
                             '        return "kinks_only"\n    if r <= 1e-2:\n        return "uncomfortable"\n    return "wrong"\n'
                             'checks = {}\nfor k, a, n in zip("wbvu", grad_autograd, grad_numeric):\n'
                             '    r = abs(a - n)\n    checks[k] = {"rel_error": r, "verdict": verdict(r)}',
     ("wrong", "absolute error, not relative", ("absolute_error",))),
    ("relative_error_table", 'def verdict(r):\n    if r < 1e-7:\n        return "happy"\n    if r < 1e-4:\n'
                             '        return "kinks_only"\n    if r <= 1e-2:\n        return "uncomfortable"\n    return "wrong"\n'
                             'checks = {}\nfor k, a, n in zip("wbvu", grad_autograd, grad_numeric):\n'
                             '    r = (a - n) / max(abs(a), abs(n))\n    checks[k] = {"rel_error": r, "verdict": verdict(r)}',
     ("wrong", "forgot abs(): negative errors", ("signed_error",))),
    ("relative_error_table", 'def verdict(r):\n    if r < 1e-7:\n        return "happy"\n    if r < 1e-4:\n'
                             '        return "kinks_only"\n    if r <= 1e-2:\n        return "uncomfortable"\n    return "wrong"\n'
                             'checks = {}\nfor k, a, n in zip("wbvu", grad_autograd, grad_numeric):\n'
                             '    r = abs(a - n) / min(abs(a), abs(n))\n    checks[k] = {"rel_error": r, "verdict": verdict(r)}',
     ("wrong", "divided by the smaller magnitude", ())),
    # gradcheck_verdicts
    ("gradcheck_verdicts", 'verdicts = {"sin_float32": {"passes": False}, "sin_float64": {"passes": True},\n'
                           '            "relu_with_0": {"passes": False}, "abs_with_0": {"passes": True}}', R),
    ("gradcheck_verdicts", 'from torch.autograd import gradcheck\n'
                           'def gc(fn, vals, dt):\n    t = torch.tensor(vals, dtype=dt, requires_grad=True)\n'
                           '    return gradcheck(fn, (t,), raise_exception=False)\n'
                           'verdicts = {"sin_float32": {"passes": gc(torch.sin, x, torch.float32)},\n'
                           '            "sin_float64": {"passes": gc(torch.sin, x, torch.float64)},\n'
                           '            "relu_with_0": {"passes": gc(torch.relu, [0.0] + x, torch.float64)},\n'
                           '            "abs_with_0": {"passes": gc(torch.abs, [0.0] + x, torch.float64)}}', R),
    ("gradcheck_verdicts", 'verdicts = {"sin_float32": {"passes": 0}, "sin_float64": {"passes": 1},\n'
                           '            "relu_with_0": {"passes": 0}, "abs_with_0": {"passes": 1}}', R),
    ("gradcheck_verdicts", 'verdicts = {"sin_float32": {"passes": True}, "sin_float64": {"passes": True},\n'
                           '            "relu_with_0": {"passes": False}, "abs_with_0": {"passes": True}}',
     ("wrong", "sin is smooth, so float32 passes too", ("gradcheck_precision",))),
    ("gradcheck_verdicts", 'verdicts = {"sin_float32": {"passes": False}, "sin_float64": {"passes": True},\n'
                           '            "relu_with_0": {"passes": False}, "abs_with_0": {"passes": False}}',
     ("wrong", "every kink fails", ("finite_diff_at_kink",))),
    ("gradcheck_verdicts", 'verdicts = {"sin_float32": {"passes": False}, "sin_float64": {"passes": True},\n'
                           '            "relu_with_0": {"passes": True}, "abs_with_0": {"passes": True}}',
     ("wrong", "relu's kink passes", ("finite_diff_at_kink", "gradcheck_precision"))),
    # central_grad
    ("central_grad", _CENTRAL, R),
    ("central_grad", 'def central_grad(f, x):\n    h = 1e-6\n    E = torch.eye(x.numel(), dtype=x.dtype) * h\n'
                     '    return torch.stack([(f(x + e) - f(x - e)) / (2 * h) for e in E])\n', R),
    ("central_grad", 'def central_grad(f, x):\n    h = 1e-5\n    out = []\n    for i in range(len(x)):\n'
                     '        x[i] += h\n        up = f(x)\n        x[i] -= 2 * h\n        down = f(x)\n'
                     '        out.append(((up - down) / (2 * h)).item())\n    return out\n',
     ("wrong", "shifts the caller's x in place and never puts it back", ("prompt_requirement",))),
    ("central_grad", _CENTRAL.replace("(2 * h)", "h"), ("wrong", "divides by h, not 2h", ("difference_quotient", "factor_two"))),
    ("central_grad", 'def central_grad(f, x):\n    h = 1e-5\n'
                     '    return torch.stack([(f(x + h) - f(x - h)) / (2 * h) for i in range(x.numel())])\n',
     ("wrong", "nudges every coordinate together", ("perturb_one_coordinate",))),
    ("central_grad", _CENTRAL.replace("f(x + e) - f(x - e)", "f(x - e) - f(x + e)"), ("wrong", "difference taken backwards", ("sign_error",))),
]
