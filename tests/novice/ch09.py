"""Novice answers, chapter 9 (format: see ch01.py)."""

R = "right"

_SQ = ('class Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n'
       '        ctx.save_for_backward({save})\n        return x * x\n\n    @staticmethod\n'
       '    def backward(ctx, grad_out):\n        (s,) = ctx.saved_tensors\n        return {ret}\n')
_SP = ('class Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n'
       '        ctx.save_for_backward(x)\n        return {fwd}\n\n    @staticmethod\n'
       '    def backward(ctx, grad_out):\n        (x,) = ctx.saved_tensors\n        return {bwd}\n')
_SP_OK = 'torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))'
_GATE = ('class Gate(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n'
         '        ctx.save_for_backward(x, y)\n        return x * torch.sigmoid(y)\n\n    @staticmethod\n'
         '    def backward(ctx, g):\n        x, y = ctx.saved_tensors\n        s = torch.sigmoid(y)\n'
         '        gx = g * s if ctx.needs_input_grad[0] else None\n'
         '        gy = {gy} if ctx.needs_input_grad[1] else None\n        return {ret}\n')
_LIN = ('class Linear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, W, b):\n'
        '        ctx.save_for_backward(x, W)\n        return x @ W.T + b\n\n    @staticmethod\n'
        '    def backward(ctx, g):\n        x, W = ctx.saved_tensors\n{body}        return {ret}\n')
_GJVP = ('class GateFwd(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n'
         '        ctx.{save}(x, y)\n        return x * torch.sigmoid(y)\n\n    @staticmethod\n'
         '    def jvp(ctx, x_t, y_t):\n        x, y = ctx.saved_tensors\n        s = torch.sigmoid(y)\n'
         '        return {ret}\n')
_LEAKY = ('class LeakyReLUInplace(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, a):\n'
          '{fwd}        ctx.a = a\n        return {out}\n\n    @staticmethod\n'
          '    def backward(ctx, g):\n        (y,) = ctx.saved_tensors\n        return {ret}, None\n')
_STE = ('class ClampSTE(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, lo, hi):\n'
        '        ctx.save_for_backward(x)\n        ctx.lo, ctx.hi = lo, hi\n        return x.clamp(lo, hi)\n\n'
        '    @staticmethod\n    def backward(ctx, grad):\n        (x,) = ctx.saved_tensors\n        return {ret}\n')
_ACC = ('def accumulated_grad(w, X, Y, k):\n    for Xm, Ym in zip(X.chunk(k), Y.chunk(k)):\n'
        '        loss = torch.nn.functional.mse_loss(Xm @ w, Ym){scale}\n{extra}        loss.backward()\n    return w.grad\n')
_COUNT = ('def count_saved(fn, x):\n    count = [0]\n    seen = set()\n    def pack(t):\n{pack}        return t\n'
          '    def unpack(t):\n{unpack}        return t\n    with saved_tensors_hooks(pack, unpack):\n        fn(x)\n'
          '    return count[0]\n')
_DUAL = ('def jvp_dual(f, x, v):\n    with fwAD.dual_level():\n        dual = fwAD.make_dual(x, {tangent})\n'
         '        out = f(dual)\n        return {ret}\n')

_SC = ('class SinCos(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n'
       '{fwd}        ctx.save_for_backward(x)\n        return torch.sin(x), torch.cos(x)\n\n    @staticmethod\n'
       '    def backward(ctx, g_sin, g_cos):\n        (x,) = ctx.saved_tensors\n{bwd}')
_SC_OFF = '        ctx.set_materialize_grads(False)\n'
_SC_CHECKED = ('        grad = torch.zeros_like(x)\n        if g_sin is not None:\n            grad = grad + g_sin * torch.cos(x)\n'
               '        if g_cos is not None:\n            grad = grad - g_cos * torch.sin(x)\n        return grad\n')
_LSE = ('class LogSumExp(torch.autograd.Function):\n{rule}    @staticmethod\n    def forward(x):\n        return {fwd}\n\n'
        '    @staticmethod\n    def setup_context(ctx, inputs, output):\n{setup}\n'
        '    @staticmethod\n    def backward(ctx, g):\n{bwd}')
_LSE_RULE = '    generate_vmap_rule = True\n\n'
_LSE_SAVE = '        x, = inputs\n        ctx.save_for_backward(x, output)\n'
_LSE_BWD = '        x, out = ctx.saved_tensors\n        return g * torch.exp(x - out)\n'

ANSWERS = [
    # square_function_fix
    ("square_function_fix", _SQ.format(save="x", ret="2 * grad_out * s"), R),
    ("square_function_fix", _SQ.format(save="x", ret="grad_out * (s + s)"), R),
    ("square_function_fix", _SQ.format(save="x", ret="grad_out * s"), ("wrong", "the chapter's bug kept: the 2 of x^2", ("power_rule",))),
    ("square_function_fix", _SQ.format(save="x * x", ret="2 * grad_out * s"), ("wrong", "saved the output and used it as x", ("custom_saved_output",))),
    ("square_function_fix", _SQ.format(save="x", ret="2 * grad_out * s.detach()"), ("wrong", "backward detached: not differentiable", ("backward_not_differentiable",))),
    # softplus_function
    ("softplus_function", _SP.format(fwd=_SP_OK, bwd="grad_out * torch.sigmoid(x)"), R),
    ("softplus_function", _SP.format(fwd='torch.where(x > 0, x + torch.log1p(torch.exp(-x.abs())), torch.log1p(torch.exp(-x.abs())))',
                                     bwd="grad_out / (1 + torch.exp(-x))"), R),
    ("softplus_function", _SP.format(fwd="torch.log(1 + torch.exp(x))", bwd="grad_out * torch.sigmoid(x)"),
     ("wrong", "the forward as it reads: inf at 800", ("softplus_overflow",))),
    ("softplus_function", _SP.format(fwd=_SP_OK, bwd="grad_out * torch.exp(x) / (1 + torch.exp(x))"),
     ("wrong", "e^x / (1 + e^x): inf / inf", ("softplus_overflow",))),
    ("softplus_function", _SP.format(fwd=_SP_OK, bwd="grad_out * torch.sigmoid(x.detach())"),
     ("wrong", "backward from a detached x: no double backward", ("backward_not_differentiable",))),
    # gated_function
    ("gated_function", _GATE.format(gy="g * x * s * (1 - s)", ret="gx, gy"), R),
    ("gated_function", _GATE.format(gy="g * x * torch.sigmoid(y) * torch.sigmoid(-y)", ret="gx, gy"), R),
    ("gated_function", _GATE.format(gy="g * x * s * (1 - s)", ret="gy, gx"), ("wrong", "gradients in the wrong order", ("custom_grad_order",))),
    ("gated_function", _GATE.format(gy="g * x * s", ret="gx, gy"), ("wrong", "sigmoid' taken as sigmoid", ("sigmoid_derivative",))),
    ("gated_function", _GATE.format(gy="g * x * (1 - s)", ret="gx, gy"), ("wrong", "sigmoid' taken as 1 - sigmoid", ("sigmoid_derivative",))),
    # linear_function (issue #26; labels written before the first replay)
    ("linear_function", _LIN.format(body="", ret="g.mm(W), g.t().mm(x), g.sum(0)"), R),
    ("linear_function", _LIN.format(body="        gb = g.sum(dim=0) if ctx.needs_input_grad[2] else None\n",
                                    ret="g @ W, g.T @ x, gb"), R),
    ("linear_function", _LIN.format(body="", ret="g @ W, g.T @ x, g"), R),  # autograd sums the bias's rows
    ("linear_function", _LIN.format(body="", ret="g @ W, g.T @ x, g.mean(0)"),
     ("wrong", "the bias's gradient averaged over the batch", ("broadcast_sums",))),
    ("linear_function", _LIN.format(body="        n = x.shape[0]\n", ret="g @ W, g.T @ x / n, g.sum(0) / n"),
     ("wrong", "the weight's and bias's gradients divided by the batch size", ("mean_scales",))),
    ("linear_function", _LIN.format(body="        x, W = x.detach(), W.detach()\n", ret="g @ W, g.T @ x, g.sum(0)"),
     ("wrong", "backward from detached tensors: not differentiable", ("backward_not_differentiable",))),
    ("linear_function", _LIN.format(body="", ret="g @ W, x.T @ g, g.sum(0)"),
     ("wrong", "the weight's gradient transposed: shape (I, O), not (O, I)", ("matmul_transpose",))),
    ("linear_function", _LIN.format(body="        grad_x = g.matmul(W)\n        grad_W = g.transpose(0, 1).matmul(x)\n"
                                         "        grad_b = g.sum(0)\n", ret="grad_x, grad_W, grad_b"), R),
    ("linear_function", _LIN.format(body="", ret="g @ W, g.T @ x, g.sum(0, keepdim=True)"), R),
    ("linear_function", _LIN.format(body="", ret="g @ W.T, g.T @ x, g.sum(0)"),
     ("wrong", "x's gradient with W transposed: the shapes do not match", ("matmul_transpose",))),
    ("linear_function", _LIN.format(body="", ret="g @ W, g.T @ x, g.sum(1)"),
     ("wrong", "the bias's gradient summed over the outputs, not the batch", ("broadcast_sums",))),
    ("linear_function", _LIN.format(body="", ret="g @ W, g.T @ x"),
     ("wrong", "no gradient returned for b", ("custom_grad_order",))),
    # gate_jvp (issue #26; labels written before the first replay)
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x_t * s + x * s * (1 - s) * y_t"), R),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="s * x_t + x * torch.sigmoid(y) * torch.sigmoid(-y) * y_t"), R),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x_t * s"),
     ("wrong", "only x's tangent: y's contribution left out", ("jvp_sums_inputs",))),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x * s * (1 - s) * y_t"),
     ("wrong", "only y's tangent: x's contribution left out", ("jvp_sums_inputs",))),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x_t * s + x * s * y_t"),
     ("wrong", "sigmoid' taken as sigmoid", ("sigmoid_derivative",))),
    ("gate_jvp", _GJVP.format(save="save_for_backward", ret="x_t * s + x * s * (1 - s) * y_t"),
     ("wrong", "saved with save_for_backward: jvp finds nothing in saved_tensors", ())),
    ("gate_jvp", 'class GateFwd(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n'
                 '        ctx.save_for_forward(x, y)\n        return x * torch.sigmoid(y)\n\n    @staticmethod\n'
                 '    def jvp(ctx, x_t, y_t):\n        x, y = ctx.saved_tensors\n'
                 '        dsig = torch.sigmoid(y) * (1 - torch.sigmoid(y))\n'
                 '        return torch.sigmoid(y) * x_t + x * dsig * y_t\n', R),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x_t * s, x * s * (1 - s) * y_t"),
     ("wrong", "one tangent per input returned, not their sum", ("jvp_sums_inputs",))),
    ("gate_jvp", _GJVP.format(save="save_for_forward", ret="x_t * s * (1 - s) + x * s * y_t"),
     ("wrong", "the two partial derivatives swapped between the tangents", ())),
    # leaky_relu_inplace (issue #26; labels written before the first replay)
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.mul_(torch.where(x > 0, 1.0, a))\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x",
                                         ret="g * torch.where(y > 0, 1.0, ctx.a)"), R),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        ctx.mark_dirty(x)\n        x[x < 0] *= a\n"
                                         "        ctx.save_for_backward(x)\n", out="x",
                                         ret="torch.where(y > 0, g, g * ctx.a)"), R),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.mul_(torch.where(x > 0, 1.0, a))\n        ctx.save_for_backward(x)\n",
                                         out="x", ret="g * torch.where(y > 0, 1.0, ctx.a)"),
     ("wrong", "changed in place without mark_dirty", ("mark_dirty",))),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        y = torch.where(x > 0, x, a * x)\n        ctx.save_for_backward(y)\n",
                                         out="y", ret="g * torch.where(y > 0, 1.0, ctx.a)"),
     ("wrong", "out of place: x is not overwritten", ("prompt_requirement",))),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.mul_(torch.where(x > 0, 1.0, a))\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x", ret="g * (y > 0)"),
     ("wrong", "relu's slope 0 where x <= 0, not a", ("local_derivative",))),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.mul_(torch.where(x > 0, 1.0, a))\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x", ret="g * y"),
     ("wrong", "backward multiplies by the output, not the slope", ("local_derivative",))),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.copy_(torch.where(x > 0, x, a * x))\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x",
                                         ret="g * torch.where(y > 0, torch.ones_like(y), torch.full_like(y, ctx.a))"), R),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        neg = x < 0\n        x[neg] = x[neg] * a\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x",
                                         ret="g * torch.where(y < 0, ctx.a, 1.0)"), R),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x.mul_(torch.where(x > 0, 1.0, a))\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x", ret="g * torch.where(y > 0, 1.0, y)"),
     ("wrong", "slope taken as the negative output, not a", ("local_derivative",))),
    ("leaky_relu_inplace", _LEAKY.format(fwd="        x = torch.where(x > 0, x, a * x)\n        ctx.mark_dirty(x)\n"
                                         "        ctx.save_for_backward(x)\n", out="x",
                                         ret="g * torch.where(y > 0, 1.0, ctx.a)"),
     ("wrong", "x rebound to a new tensor, not changed in place; then mark_dirty of a non-input", ("prompt_requirement",))),
    # sincos_none_grads (issue #26; labels written before the first replay)
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd=_SC_CHECKED), R),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        if g_sin is None:\n            g_sin = torch.zeros_like(x)\n'
                                     '        if g_cos is None:\n            g_cos = torch.zeros_like(x)\n'
                                     '        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n'), R),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        if g_cos is None:\n            return g_sin * torch.cos(x)\n'
                                     '        if g_sin is None:\n            return -g_cos * torch.sin(x)\n'
                                     '        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n'), R),
    ("sincos_none_grads", 'class SinCos(torch.autograd.Function):\n    @staticmethod\n    def forward(x):\n'
                          '        return torch.sin(x), torch.cos(x)\n\n    @staticmethod\n'
                          '    def setup_context(ctx, inputs, output):\n        ctx.set_materialize_grads(False)\n'
                          '        ctx.save_for_backward(*output)\n\n    @staticmethod\n'
                          '    def backward(ctx, g_sin, g_cos):\n        s, c = ctx.saved_tensors\n        result = 0\n'
                          '        if g_sin is not None:\n            result = result + g_sin * c\n'
                          '        if g_cos is not None:\n            result = result - g_cos * s\n        return result\n', R),
    ("sincos_none_grads", _SC.format(fwd="", bwd=_SC_CHECKED),
     ("wrong", "never switched materializing off: zeros arrive", ("materialize_grads",))),
    ("sincos_none_grads", _SC.format(fwd="", bwd="        ctx.set_materialize_grads(False)\n" + _SC_CHECKED),
     ("wrong", "set_materialize_grads called in backward, too late", ("materialize_grads",))),
    ("sincos_none_grads", _SC.format(fwd="        ctx.set_materialize_grads = False\n", bwd=_SC_CHECKED),
     ("wrong", "assigned False to the method instead of calling it: still materialized", ("materialize_grads",))),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n'),
     ("wrong", "materializing off but None not handled: TypeError", ("materialize_grads",))),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        if g_sin is None or g_cos is None:\n            return None\n'
                                     '        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n'),
     ("wrong", "returns None when one output is unused", ("backward_none_is_zero",))),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd=_SC_CHECKED.replace("grad - g_cos", "grad + g_cos")),
     ("wrong", "d cos/dx taken as +sin", ("sign_error",))),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        if g_sin is not None:\n            return g_sin * torch.cos(x)\n'
                                     '        return -g_cos * torch.sin(x)\n'),
     ("wrong", "if/else: with both used, only sin's term", ("fanout_adds",))),
    ("sincos_none_grads", _SC.format(fwd=_SC_OFF, bwd='        g_sin = g_sin or torch.zeros_like(x)\n        g_cos = g_cos or torch.zeros_like(x)\n'
                                     '        return g_sin * torch.cos(x) - g_cos * torch.sin(x)\n'),
     ("wrong", "`g or zeros` on a tensor: the truth value of a tensor is ambiguous", ())),
    # logsumexp_vmap (issue #26; labels written before the first replay)
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, dim=0)\n", setup=_LSE_SAVE, bwd=_LSE_BWD), R),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.log(torch.exp(x).sum())\n",
                                   setup='        ctx.save_for_backward(inputs[0])\n',
                                   bwd='        (x,) = ctx.saved_tensors\n        return g * torch.softmax(x, dim=0)\n'), R),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, -1)\n",
                                   setup='        ctx.save_for_backward(inputs[0])\n',
                                   bwd='        (x,) = ctx.saved_tensors\n        e = torch.exp(x)\n        return g * e / e.sum()\n'), R),
    ("logsumexp_vmap", _LSE.format(rule="", fwd="torch.logsumexp(x, dim=-1)\n", setup=_LSE_SAVE,
                                   bwd='        x, out = ctx.saved_tensors\n'
                                       '        return g.unsqueeze(-1) * torch.exp(x - out.unsqueeze(-1))\n\n'
                                       '    @staticmethod\n    def vmap(info, in_dims, x):\n'
                                       '        x = x.movedim(in_dims[0], 0)\n        return LogSumExp.apply(x), 0\n'), R),
    ("logsumexp_vmap", 'class LogSumExp(torch.autograd.Function):\n    generate_vmap_rule = True\n\n    @staticmethod\n'
                       '    def forward(ctx, x):\n        out = torch.logsumexp(x, 0)\n        ctx.save_for_backward(x, out)\n'
                       '        return out\n\n    @staticmethod\n    def backward(ctx, g):\n' + _LSE_BWD,
     ("wrong", "forward(ctx, x), the old style: torch.func refuses it", ("func_setup_context",))),
    ("logsumexp_vmap", _LSE.format(rule="", fwd="torch.logsumexp(x, dim=0)\n", setup=_LSE_SAVE, bwd=_LSE_BWD),
     ("wrong", "no generate_vmap_rule and no vmap staticmethod", ("vmap_rule",))),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, dim=0)\n",
                                   setup='        ctx.save_for_backward(torch.softmax(inputs[0], dim=0))\n',
                                   bwd='        (p,) = ctx.saved_tensors\n        return g * p\n'),
     ("wrong", "softmax computed in setup_context: a constant to double backward", ("saved_intermediate",))),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, dim=0)\n", setup=_LSE_SAVE,
                                   bwd='        x, out = ctx.saved_tensors\n        return g * torch.exp(x)\n'),
     ("wrong", "d log(sum exp)/dx taken as exp(x): the log's 1/sum lost", ("chain_rule_dropped",))),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, dim=0)\n", setup=_LSE_SAVE,
                                   bwd='        x, out = ctx.saved_tensors\n        return torch.softmax(x, dim=0)\n'),
     ("wrong", "the incoming gradient g not multiplied in", ("local_gradient_only",))),
    ("logsumexp_vmap", _LSE.format(rule=_LSE_RULE, fwd="torch.logsumexp(x, dim=0)\n", setup=_LSE_SAVE,
                                   bwd='        x, out = ctx.saved_tensors\n        return g * torch.softmax(x.detach(), dim=0)\n'),
     ("wrong", "backward from a detached x: the second derivative is lost", ("backward_not_differentiable",),
      ("saved_intermediate",))),
    # ste_clamp_function
    ("ste_clamp_function", _STE.format(ret="grad, None, None"), R),
    ("ste_clamp_function", _STE.format(ret="grad.clone(), None, None"), R),
    ("ste_clamp_function", _STE.format(ret="grad * ((x >= ctx.lo) & (x <= ctx.hi)), None, None"),
     ("wrong", "the clamp's true derivative, not straight through", ("straight_through",))),
    ("ste_clamp_function", _STE.format(ret="grad"), ("wrong", "one gradient for three inputs", ("custom_grad_order",))),
    ("ste_clamp_function", _STE.format(ret="None, None, None"), ("wrong", "None thought to pass the gradient through", ("backward_none_is_zero",))),
    # hook_fanout (by hand)
    ("hook_fanout", 'seen = 2 * a * x0 + b\nhook_table = {"hook": {"calls": 1, "seen": seen, "x_grad": 2 * seen * a}}', R),
    ("hook_fanout", 'y = a * x0\nhook_table = {"hook": {"calls": 1.0, "seen": 2 * y + b, "x_grad": a * 2 * (2 * y + b)}}', R),
    ("hook_fanout", 'y = a * x0\nhook_table = {"hook": {"calls": 2, "seen": y, "x_grad": 2 * (2 * y + b) * a}}',
     ("wrong", "one call per use of y", ("hook_per_use",))),
    ("hook_fanout", 'seen = 2 * a * x0 + b\nhook_table = {"hook": {"calls": 1, "seen": seen, "x_grad": seen * a}}',
     ("wrong", "the hook's return value ignored", ("hook_return_ignored",))),
    ("hook_fanout", 'seen = 2 * a * x0 + b\nhook_table = {"hook": {"calls": 1, "seen": 2 * seen, "x_grad": 2 * seen * a}}',
     ("wrong", "seen after doubling", ("hook_return_ignored", "hook_per_use"))),
    # clip_hook
    ("clip_hook", 'def attach_clip(w, c):\n    return w.register_hook(lambda g: g.clamp(-c, c))\n', R),
    ("clip_hook", 'def attach_clip(w, c):\n    def hook(grad):\n        return torch.clamp(grad, min=-c, max=c)\n'
                  '    handle = w.register_hook(hook)\n    return handle\n', R),
    ("clip_hook", 'def attach_clip(w, c):\n    def hook(grad):\n        grad = grad.clamp(-c, c)\n    return w.register_hook(hook)\n',
     ("wrong", "the hook returns nothing", ("hook_return_ignored",))),
    ("clip_hook", 'def attach_clip(w, c):\n    def hook(grad):\n        n = grad.norm()\n        return grad * min(1.0, c / n.item())\n'
                  '    return w.register_hook(hook)\n', ("wrong", "clipped by norm, not by value", ("clip_value_vs_norm",))),
    ("clip_hook", 'def attach_clip(w, c):\n    w.register_hook(lambda g: g.clamp(-c, c))\n    return w\n',
     ("wrong", "returned w, not the handle", ("hook_handle_kept",))),
    # post_accumulate_hook (by hand)
    ("post_accumulate_hook", 'g1, g2 = a, 2 * b * w0\nhook_calls = {"register_hook": {"first": g1, "second": g2},\n'
                             '              "post_accumulate": {"first": g1, "second": g1 + g2}}', R),
    ("post_accumulate_hook", 'hook_calls = {"register_hook": {"first": a, "second": 2.0 * b * w0},\n'
                             '              "post_accumulate": {"first": a, "second": a + 2.0 * b * w0}}', R),
    ("post_accumulate_hook", 'g1, g2 = a, 2 * b * w0\nhook_calls = {"register_hook": {"first": g1, "second": g2},\n'
                             '              "post_accumulate": {"first": g1, "second": g2}}',
     ("wrong", "the post hook sees only this backward", ("post_accumulate_hook", "accumulation"))),
    ("post_accumulate_hook", 'g1, g2 = a, 2 * b * w0\nhook_calls = {"register_hook": {"first": g1, "second": g1 + g2},\n'
                             '              "post_accumulate": {"first": g1, "second": g1 + g2}}',
     ("wrong", "the tensor hook sees the accumulated .grad", ("post_accumulate_hook",))),
    ("post_accumulate_hook", 'g1, g2 = a, b * w0\nhook_calls = {"register_hook": {"first": g1, "second": g2},\n'
                             '              "post_accumulate": {"first": g1, "second": g1 + g2}}',
     ("wrong", "d(b w^2)/dw written b w", ("power_rule",))),
    # module_backward_hook (by hand)
    ("module_backward_hook", 'gi = [sum(W[i][j] * c_values[i] for i in range(2)) for j in range(2)]\n'
                             'module_grads = {"grad_input": {"value": gi}, "grad_output": {"value": c_values}}', R),
    ("module_backward_hook", 'Wt = torch.tensor(W)\ncv = torch.tensor(c_values)\n'
                             'module_grads = {"grad_input": {"value": Wt.T @ cv}, "grad_output": {"value": cv}}', R),
    ("module_backward_hook", 'Wt = torch.tensor(W)\ncv = torch.tensor(c_values)\n'
                             'module_grads = {"grad_input": {"value": Wt @ cv}, "grad_output": {"value": cv}}',
     ("wrong", "W c instead of W^T c", ("matmul_transpose",))),
    ("module_backward_hook", 'Wt = torch.tensor(W)\ncv = torch.tensor(c_values)\n'
                             'module_grads = {"grad_input": {"value": cv}, "grad_output": {"value": Wt.T @ cv}}',
     ("wrong", "input and output swapped", ("backward_hook_in_out",))),
    ("module_backward_hook", 'Wt = torch.tensor(W)\ncv = torch.tensor(c_values)\nout = Wt @ torch.tensor(x_values) + torch.tensor(bias)\n'
                             'module_grads = {"grad_input": {"value": Wt.T @ cv}, "grad_output": {"value": out}}',
     ("wrong", "the output's value as grad_output", ("value_not_derivative",))),
    # freeze_step (by hand)
    ("freeze_step", 'r = a0 * x + b0 + c0 - y\nga, gc = 2 * r * x, 2 * r\n'
                    'after_step = {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0, "grad": None},\n'
                    '              "c": {"value": c0 - lr2 * gc, "grad": gc}}', R),
    ("freeze_step", 'r = a0 * x + b0 + c0 - y\n'
                    'after_step = {"a": {"value": a0 - lr1 * 2 * r * x, "grad": 2 * r * x}, "b": {"value": b0, "grad": None},\n'
                    '              "c": {"value": c0 - lr2 * 2 * r, "grad": 2.0 * r}}', R),
    ("freeze_step", 'r = a0 * x + b0 + c0 - y\nga, gc = 2 * r * x, 2 * r\n'
                    'after_step = {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0 - lr2 * gc, "grad": gc},\n'
                    '              "c": {"value": c0 - lr2 * gc, "grad": gc}}', ("wrong", "the frozen b still updated", ("frozen_param",))),
    ("freeze_step", 'r = a0 * x + b0 + c0 - y\nga, gc = 2 * r * x, 2 * r\n'
                    'after_step = {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0, "grad": 0.0},\n'
                    '              "c": {"value": c0 - lr2 * gc, "grad": gc}}', ("wrong", "a frozen parameter's grad is 0", ("frozen_param",))),
    ("freeze_step", 'r = a0 * x + b0 + c0 - y\nga, gc = 2 * r * x, 2 * r\n'
                    'after_step = {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0, "grad": None},\n'
                    '              "c": {"value": c0 - lr1 * gc, "grad": gc}}', ("wrong", "c stepped with a's learning rate", ("param_group_lr",))),
    # none_vs_zero_step (by hand)
    ("none_vs_zero_step", 'g = 2 * w0\nw1 = w0 - lr * g\nw_after = {"none": {"w": w1}, "zeros": {"w": w1 - lr * mu * g}}', R),
    ("none_vs_zero_step", 'buf = 2 * w0\nw1 = w0 - lr * buf\nbuf = mu * buf + 0.0\n'
                          'w_after = {"none": {"w": w1}, "zeros": {"w": w1 - lr * buf}}', R),
    ("none_vs_zero_step", 'g = 2 * w0\nw1 = w0 - lr * g\nw_after = {"none": {"w": w1}, "zeros": {"w": w1}}',
     ("wrong", "a zero gradient thought not to move w", ("none_vs_zero_step",))),
    ("none_vs_zero_step", 'g = 2 * w0\nw1 = w0 - lr * g\nw_after = {"none": {"w": w1 - lr * mu * g}, "zeros": {"w": w1 - lr * mu * g}}',
     ("wrong", "None thought to step like zeros", ("none_vs_zero_step",))),
    ("none_vs_zero_step", 'g = 2 * w0\nw1 = w0 - lr * g\nw_after = {"none": {"w": w1}, "zeros": {"w": w1 - lr * g}}',
     ("wrong", "momentum buffer not decayed", ())),
    # grad_accumulation
    ("grad_accumulation", _ACC.format(scale=" / k", extra=""), R),
    ("grad_accumulation", 'def accumulated_grad(w, X, Y, k):\n    m = len(X) // k\n    for i in range(k):\n'
                          '        sl = slice(i * m, (i + 1) * m)\n        (torch.nn.functional.mse_loss(X[sl] @ w, Y[sl]) / k).backward()\n'
                          '    return w.grad\n', R),
    ("grad_accumulation", _ACC.format(scale="", extra=""), ("wrong", "micro-batch losses not divided by k", ("accumulation_not_averaged", "factor_k"))),
    ("grad_accumulation", _ACC.format(scale=" / k", extra="        w.grad = None\n"),
     ("wrong", "zeroed between micro-batches", (), ('accumulation',))),
    ("grad_accumulation", _ACC.format(scale=" / len(X)", extra=""), ("wrong", "divided by the batch size", ("accumulation_not_averaged",), ('factor_one_over_k',))),
    # clip_grad_norm (by hand)
    ("clip_grad_norm", 'import math\ntotal = math.sqrt(sum(v * v for v in g1 + g2))\ns = min(1.0, max_norm / (total + 1e-6))\n'
                       'clipped = {"clip": {"returned": total, "g1": [v * s for v in g1], "g2": [v * s for v in g2]}}', R),
    ("clip_grad_norm", 'total = torch.tensor(g1 + g2).norm()\ns = torch.clamp(max_norm / (total + 1e-6), max=1.0)\n'
                       'clipped = {"clip": {"returned": total, "g1": torch.tensor(g1) * s, "g2": torch.tensor(g2) * s}}', R),
    # relabelled (#26): it rescales below max_norm too, where clip_grad_norm_ leaves the gradients
    # as they are; right at every value it was tried at while every value had the norm above
    ("clip_grad_norm", 'total = torch.tensor(g1 + g2).norm()\ns = max_norm / (total + 1e-6)\n'
                       'clipped = {"clip": {"returned": total, "g1": torch.tensor(g1) * s, "g2": torch.tensor(g2) * s}}',
     ("wrong", "rescales also below max_norm", ("shown_values_only",))),
    ("clip_grad_norm", 'import math\ntotal = math.sqrt(sum(v * v for v in g1 + g2))\ns = min(1.0, max_norm / (total + 1e-6))\n'
                       'clipped = {"clip": {"returned": total * s, "g1": [v * s for v in g1], "g2": [v * s for v in g2]}}',
     ("wrong", "returns the norm after clipping", ("clip_returns_total_norm",))),
    ("clip_grad_norm", 'import math\ntotal = math.sqrt(sum(v * v for v in g1 + g2))\n'
                       'n1, n2 = math.hypot(*g1), math.hypot(*g2)\n'
                       'clipped = {"clip": {"returned": total, "g1": [v * min(1, max_norm / n1) for v in g1],\n'
                       '                    "g2": [v * min(1, max_norm / n2) for v in g2]}}',
     ("wrong", "each tensor clipped by its own norm", ("clip_norm_global",))),
    ("clip_grad_norm", 'import math\ntotal = math.sqrt(sum(v * v for v in g1 + g2))\n'
                       'clipped = {"clip": {"returned": total, "g1": [max(-max_norm, min(max_norm, v)) for v in g1],\n'
                       '                    "g2": [max(-max_norm, min(max_norm, v)) for v in g2]}}',
     ("wrong", "clipped by value", ("clip_value_vs_norm", "clip_norm_global"))),
    # logging_graph (by hand)
    ("logging_graph", 'kept_alive = {"loss": {"graphs": n}, "item": {"graphs": 0}, "detach": {"graphs": 0}}', R),
    ("logging_graph", 'kept_alive = {"loss": {"graphs": float(n)}, "item": {"graphs": 0.0}, "detach": {"graphs": 0.0}}', R),
    ("logging_graph", 'kept_alive = {"loss": {"graphs": 1}, "item": {"graphs": 0}, "detach": {"graphs": 0}}',
     ("wrong", "only the last iteration's graph", ("logging_keeps_graph",))),
    ("logging_graph", 'kept_alive = {"loss": {"graphs": n}, "item": {"graphs": 0}, "detach": {"graphs": n}}',
     ("wrong", "detach thought to keep the graphs", ("detach_cuts_path", "logging_keeps_graph"))),
    ("logging_graph", 'kept_alive = {"loss": {"graphs": 5}, "item": {"graphs": 0}, "detach": {"graphs": 0}}',
     ("wrong", "5 typed in", ("shown_values_only",))),
    # checkpoint_recompute (by hand)
    ("checkpoint_recompute", 'import math\ngrad = [2 * v * math.sin(v) + v * v * math.cos(v) for v in x_values]\n'
                             'ckpt = {"plain": {"runs": 1, "grad": grad}, "checkpoint": {"runs": 2, "grad": grad}}', R),
    ("checkpoint_recompute", 'xv = torch.tensor(x_values)\ngrad = 2 * xv * torch.sin(xv) + xv**2 * torch.cos(xv)\n'
                             'ckpt = {"plain": {"runs": 1, "grad": grad}, "checkpoint": {"runs": 2, "grad": grad}}', R),
    ("checkpoint_recompute", 'import math\ngrad = [2 * v * math.sin(v) + v * v * math.cos(v) for v in x_values]\n'
                             'ckpt = {"plain": {"runs": 1, "grad": grad}, "checkpoint": {"runs": 1, "grad": grad}}',
     ("wrong", "checkpoint runs the block once", ("checkpoint_recomputes",))),
    ("checkpoint_recompute", 'import math\ngrad = [2 * v * math.sin(v) + v * v * math.cos(v) for v in x_values]\n'
                             'ckpt = {"plain": {"runs": 1, "grad": grad}, "checkpoint": {"runs": 2, "grad": [0.0 for v in x_values]}}',
     ("wrong", "checkpointing thought to lose the gradient", ("checkpoint_changes_grads",))),
    ("checkpoint_recompute", 'import math\ngrad = [math.sin(v) + v * math.cos(v) for v in x_values]\n'
                             'ckpt = {"plain": {"runs": 1, "grad": grad}, "checkpoint": {"runs": 2, "grad": grad}}',
     ("wrong", "the block's derivative, not of (h * x).sum()", ("chain_rule_dropped", "inner_step_skipped"))),
    # saved_tensor_count
    ("saved_tensor_count", _COUNT.format(pack="        count[0] += 1\n", unpack=""), R),
    ("saved_tensor_count", 'def count_saved(fn, x):\n    saved = []\n'
                           '    with saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):\n        fn(x)\n'
                           '    return len(saved)\n', R),
    ("saved_tensor_count", _COUNT.format(pack="", unpack="        count[0] += 1\n"), ("wrong", "counted in unpack: no backward runs", ())),
    ("saved_tensor_count", _COUNT.format(pack="        if id(t) not in seen:\n            seen.add(id(t))\n            count[0] += 1\n", unpack=""),
     ("wrong", "a tensor saved twice counted once", ("saved_per_use",))),
    ("saved_tensor_count", _COUNT.format(pack="        if t.requires_grad:\n            count[0] += 1\n", unpack=""),
     R),  # relabelled after the replay: every tensor these functions save requires grad
    # dual_jvp
    ("dual_jvp", _DUAL.format(tangent="v", ret="fwAD.unpack_dual(out).tangent"), R),
    ("dual_jvp", _DUAL.format(tangent="v", ret="fwAD.unpack_dual(out)[1].clone()"), R),
    ("dual_jvp", _DUAL.format(tangent="v", ret="fwAD.unpack_dual(out).primal"), ("wrong", "the primal output", ("value_not_derivative",))),
    ("dual_jvp", _DUAL.format(tangent="torch.ones_like(x)", ret="fwAD.unpack_dual(out).tangent"), ("wrong", "tangent of ones, v ignored", ("onehot_seed",))),
    ("dual_jvp", _DUAL.format(tangent="v", ret="fwAD.unpack_dual(out).tangent.sum()"), ("wrong", "summed", ("summed",))),
    # jacfwd_jacrev (by hand)
    ("jacfwd_jacrev", 'passes = {k: {"jvps": n, "vjps": m, "cheaper": "jacfwd" if n < m else "jacrev"} for k, (n, m) in zip("ABC", shapes)}', R),
    ("jacfwd_jacrev", 'passes = {}\nfor name, (n, m) in zip(["A", "B", "C"], shapes):\n'
                      '    passes[name] = {"jvps": float(n), "vjps": float(m), "cheaper": "jacrev" if m <= n else "jacfwd"}', R),
    ("jacfwd_jacrev", 'passes = {k: {"jvps": m, "vjps": n, "cheaper": "jacfwd" if m < n else "jacrev"} for k, (n, m) in zip("ABC", shapes)}',
     ("wrong", "one JVP per output", ("jacfwd_columns",))),
    ("jacfwd_jacrev", 'passes = {k: {"jvps": n, "vjps": m, "cheaper": "jacrev" if n < m else "jacfwd"} for k, (n, m) in zip("ABC", shapes)}',
     ("wrong", "the cheaper one the wrong way round", ("jacfwd_columns",))),
    ("jacfwd_jacrev", 'passes = {k: {"jvps": n * m, "vjps": n * m, "cheaper": "jacfwd"} for k, (n, m) in zip("ABC", shapes)}',
     ("wrong", "one pass per Jacobian entry", ("jacfwd_columns",))),
    # unused_grads (by hand)
    ("unused_grads", 'missing = {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)}, "b": {"grad": None},\n'
                     '           "c": {"grad": 0.0}, "d": {"grad": None}}', R),
    ("unused_grads", 'import math\nmissing = {"a": {"grad": 2 * a0 + float(torch.round(torch.tensor(c0))) + float(d0 > 0)},\n'
                     '           "b": {"grad": None}, "c": {"grad": 0 * a0}, "d": {"grad": None}}', R),
    ("unused_grads", 'missing = {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)}, "b": {"grad": 0.0},\n'
                     '           "c": {"grad": 0.0}, "d": {"grad": None}}', ("wrong", "an unused input gets 0", ("unused_grad_none",))),
    ("unused_grads", 'missing = {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)}, "b": {"grad": None},\n'
                     '           "c": {"grad": a0}, "d": {"grad": None}}', ("wrong", "round's gradient taken as 1", ("round_zero_gradient",))),
    ("unused_grads", 'missing = {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)}, "b": {"grad": None},\n'
                     '           "c": {"grad": 0.0}, "d": {"grad": 0.0}}', ("wrong", "the comparison passes a zero gradient", ("comparison_no_graph",))),
    # round_ste
    ("round_ste", 'def round_ste(x):\n    return x + (torch.round(x) - x).detach()\n', R),
    ("round_ste", 'def round_ste(x):\n    return (torch.round(x) - x).detach() + x\n', R),
    ("round_ste", 'def round_ste(x):\n    return torch.round(x)\n', ("wrong", "plain round: zero gradient", ("round_zero_gradient",))),
    ("round_ste", 'def round_ste(x):\n    return torch.round(x) + x.detach() - x\n', ("wrong", "the detach on the wrong term: gradient -1", ("straight_through", "sign_error"), ("detach_cuts_path",))),
    ("round_ste", 'def round_ste(x):\n    return torch.round(x.detach()) * x / x.detach()\n', ("wrong", "a rescaled identity: gradient round(x)/x", ("straight_through",))),
]
