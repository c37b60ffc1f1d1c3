"""Novice answers, chapter 5 (format: see ch01.py)."""

R = "right"

_Z = 'x = torch.tensor(x0)\nW = torch.tensor(W0)\nb = torch.tensor(b0)\nz = x @ W + b\nmask = (z > 0).float()\n'
_XOR = 'def xor_loss(inputs, outputs, weights, bias):\n{body}'

ANSWERS = [
    # linear_layer_wgrad (by hand)
    ("linear_layer_wgrad", _Z + 'W_grad = torch.outer(x, mask)', R),
    ("linear_layer_wgrad", 'z = [sum(x0[i] * W0[i][j] for i in range(2)) + b0[j] for j in range(2)]\n'
                           'W_grad = [[x0[i] * (1.0 if z[j] > 0 else 0.0) for j in range(2)] for i in range(2)]', R),
    ("linear_layer_wgrad", _Z + 'W_grad = torch.outer(mask, x)', ("wrong", "the outer product the wrong way round", ("matmul_transpose", "transposed"))),
    ("linear_layer_wgrad", 'W_grad = [[x0[0], x0[0]], [x0[1], x0[1]]]', ("wrong", "ReLU's factor left out (1 at the shown values)", ("relu_chain", "shown_values_only"))),
    ("linear_layer_wgrad", _Z + 'W_grad = torch.outer(x, z)', ("wrong", "z instead of ReLU'(z)", ("value_not_derivative",))),
    # linear_layer_xgrad
    ("linear_layer_xgrad", 'x = torch.tensor(x0, requires_grad=True)\nW = torch.tensor(W0, requires_grad=True)\n'
                           'b = torch.tensor(b0, requires_grad=True)\nL = torch.relu(x @ W + b).sum()\nL.backward()\nx_grad = x.grad', R),
    ("linear_layer_xgrad", _Z + 'x_grad = (W @ mask).tolist()', R),
    ("linear_layer_xgrad", _Z + 'x_grad = W.T @ mask', ("wrong", "W transposed", ("matmul_transpose",))),
    ("linear_layer_xgrad", _Z + 'x_grad = W.sum(1)', ("wrong", "ReLU's factor left out", ("relu_chain", "shown_values_only"))),
    ("linear_layer_xgrad", _Z + 'x_grad = z', ("wrong", "the layer's output", ("value_not_derivative",))),
    # outer_product_vwx (by hand)
    ("outer_product_vwx", 'W_grad_vwx = torch.outer(torch.tensor(v0), torch.tensor(x0))', R),
    ("outer_product_vwx", 'W_grad_vwx = [[vi * xj for xj in x0] for vi in v0]', R),
    ("outer_product_vwx", 'W_grad_vwx = torch.outer(torch.tensor(x0), torch.tensor(v0))', ("wrong", "x v^T, shape (3, 2)", ("matmul_transpose",), ("transposed",))),
    ("outer_product_vwx", 'W_grad_vwx = [[vi * xj * wij for xj, wij in zip(x0, row)] for vi, row in zip(v0, W0)]',
     ("wrong", "multiplied by W itself", (), ('value_not_derivative',))),
    ("outer_product_vwx", 'W_grad_vwx = [[xj for xj in x0] for vi in v0]', ("wrong", "v left out", ("chain_rule_dropped",), ('local_gradient_only',))),
    # matmul_grad_fn (by hand)
    ("matmul_grad_fn", 'def matmul_grad_B(A, G):\n    return A.T @ G\n', R),
    ("matmul_grad_fn", 'def matmul_grad_B(A, G):\n    return torch.einsum("ik,ij->kj", A, G)\n', R),
    ("matmul_grad_fn", 'def matmul_grad_B(A, G):\n    return G.T @ A\n', ("wrong", "the transpose", ("matmul_transpose", "transposed"))),
    ("matmul_grad_fn", 'def matmul_grad_B(A, G):\n    return A @ G.T\n', ("wrong", "G A^T style, wrong shape", ("matmul_transpose",))),
    ("matmul_grad_fn", 'def matmul_grad_B(A, G):\n    return A.T @ G / A.shape[0]\n', ("wrong", "divided by the batch", ("factor_half", "mean_scales"))),
    # bias_batch_grad
    ("bias_batch_grad", 'rows = []\nfor red in ("sum", "mean"):\n    X = torch.tensor(X0)\n    W = torch.tensor(W0)\n'
                        '    b = torch.zeros(3, requires_grad=True)\n    Y = X @ W + b\n    getattr(Y, red)().backward()\n'
                        '    rows.append(b.grad)\nb_grads = torch.stack(rows)', R),
    ("bias_batch_grad", 'N = len(X0)\nb_grads = [[float(N)] * 3, [N / (3 * N)] * 3]', R),
    ("bias_batch_grad", 'b_grads = [[1.0] * 3, [1 / 3] * 3]', ("wrong", "b gets one, the broadcast sum forgotten", ("broadcast_sums",))),
    ("bias_batch_grad", 'N = len(X0)\nb_grads = [[float(N)] * 3, [1 / (3 * N)] * 3]', ("wrong", "mean row not summed over the batch", ("broadcast_sums", "mean_scales"))),
    ("bias_batch_grad", 'b_grads = [[4.0] * 3, [1 / 3] * 3]', ("wrong", "N = 4 typed in", ("shown_values_only",))),
    ("bias_batch_grad", 'N = len(X0)\nb_grads = [[float(N)] * 3, [1.0] * 3]', ("wrong", "the mean divides by N only", ("mean_scales",))),
    # mse_mean_grad (by hand)
    ("mse_mean_grad", 'N = len(pred0)\npred_grad = [2 * (p - t) / N for p, t in zip(pred0, target0)]', R),
    ("mse_mean_grad", 'pred_grad = 2 * (torch.tensor(pred0) - torch.tensor(target0)) / len(pred0)', R),
    ("mse_mean_grad", 'pred_grad = [2 * (p - t) for p, t in zip(pred0, target0)]', ("wrong", "forgot the 1/N of the mean", ("mean_scales", "factor_k"))),
    ("mse_mean_grad", 'N = len(pred0)\npred_grad = [(p - t) / N for p, t in zip(pred0, target0)]', ("wrong", "the 2 of the square dropped", ("power_rule", "factor_half"))),
    ("mse_mean_grad", 'N = len(pred0)\npred_grad = [2 * (t - p) / N for p, t in zip(pred0, target0)]', ("wrong", "t - p", ("sign_error",))),
    ("mse_mean_grad", 'N = len(pred0)\npred_grad = sum(2 * (p - t) / N for p, t in zip(pred0, target0))', ("wrong", "summed", ("summed",))),
    # xor_fix
    ("xor_fix", _XOR.format(body='    preds = F.linear(inputs.float(), weights, bias).squeeze(1)\n'
                                 '    return ((preds - outputs.float()) ** 2).mean()\n'), R),
    ("xor_fix", _XOR.format(body='    p = inputs.to(torch.float32) @ weights.T + bias\n'
                                 '    return ((p.flatten() - outputs) ** 2).sum() / 4\n'), R),
    ("xor_fix", _XOR.format(body='    preds = F.linear(inputs.float(), weights, bias)\n'
                                 '    return ((preds - outputs.float()) ** 2).mean()\n'),
     ("wrong", "(4, 1) minus (4,) broadcasts to a 4x4 table", (), ("shown_values_only",))),
    ("xor_fix", _XOR.format(body='    preds = F.linear(inputs.float(), weights, bias).squeeze(1)\n'
                                 '    return (outputs.float() - preds).mean()\n'),
     ("wrong", "kept the mean of signed errors", ("not_a_loss",))),
    ("xor_fix", _XOR.format(body='    preds = F.linear(inputs.float(), weights, bias).squeeze(1)\n'
                                 '    return ((preds - outputs.float()) ** 2).sum()\n'),
     ("wrong", "sum, not mean", ("mean_scales", "factor_k"))),
    # repeated_index_grad
    ("repeated_index_grad", 'x = torch.tensor(x0, requires_grad=True)\nc = torch.tensor(c0)\nL = (c * x[idx]).sum()\n'
                            'L.backward()\nx_grad_idx = x.grad', R),
    ("repeated_index_grad", 'x_grad_idx = [0.0] * len(x0)\nfor k, i in enumerate(idx):\n    x_grad_idx[i] += c0[k]', R),
    ("repeated_index_grad", 'x_grad_idx = [0.0] * len(x0)\nfor k, i in enumerate(idx):\n    x_grad_idx[i] = c0[k]',
     ("wrong", "the last use overwrites", ("repeated_index",))),
    ("repeated_index_grad", 'x_grad_idx = c0', ("wrong", "indexing treated as the identity", ())),
    ("repeated_index_grad", 'x_grad_idx = [0.0] * len(x0)\nfor k, i in enumerate(idx):\n    if x_grad_idx[i] == 0:\n        x_grad_idx[i] = c0[k]',
     ("wrong", "the first use only", ("repeated_index",))),
    # embedding_grad
    ("embedding_grad", 'emb = torch.nn.Embedding(4, 2)\ntokens = torch.tensor(tokens0)\nu = torch.tensor(u0)\n'
                       'L = (emb(tokens) @ u).sum()\nL.backward()\nemb_grad = emb.weight.grad', R),
    ("embedding_grad", 'emb_grad = [[0.0, 0.0] for _ in range(4)]\nfor t in tokens0:\n'
                       '    emb_grad[t] = [emb_grad[t][0] + u0[0], emb_grad[t][1] + u0[1]]', R),
    ("embedding_grad", 'emb_grad = [[0.0, 0.0] for _ in range(4)]\nfor t in tokens0:\n    emb_grad[t] = list(u0)',
     ("wrong", "a repeated token's row counted once", ("repeated_index",))),
    ("embedding_grad", 'emb_grad = [list(u0) for _ in range(4)]', ("wrong", "every row gets u", ())),
    ("embedding_grad", 'emb_grad = [[float(tokens0.count(t))] * 2 for t in range(4)]', ("wrong", "counts without u", (), ('chain_rule_dropped',))),
    # xent_grad_single
    ("xent_grad_single", 'logits = torch.tensor(logits0, requires_grad=True)\n'
                         'loss = F.cross_entropy(logits[None], torch.tensor([target]))\nloss.backward()\nlogits_grad = logits.grad', R),
    ("xent_grad_single", 'p = torch.softmax(torch.tensor(logits0, dtype=torch.float64), 0)\n'
                         'logits_grad = p - F.one_hot(torch.tensor(target), len(logits0))', R),
    ("xent_grad_single", 'logits_grad = torch.softmax(torch.tensor(logits0), 0)', ("wrong", "softmax without the one-hot", ("xent_onehot",))),
    ("xent_grad_single", 'p = torch.softmax(torch.tensor(logits0), 0)\nlogits_grad = F.one_hot(torch.tensor(target), 3) - p',
     ("wrong", "one-hot minus softmax", ("sign_error",))),
    ("xent_grad_single", 'p = torch.softmax(torch.tensor(logits0), 0)\nlogits_grad = -torch.log(p)',
     ("wrong", "the per-class losses", ("value_not_derivative",))),
    # xent_batch_fn
    ("xent_batch_fn", 'def xent_grad(logits, targets):\n    p = torch.softmax(logits, dim=1)\n'
                      '    p[torch.arange(len(targets)), targets] -= 1\n    return p / len(targets)\n', R),
    ("xent_batch_fn", 'def xent_grad(logits, targets):\n    onehot = F.one_hot(targets, logits.shape[1]).to(logits.dtype)\n'
                      '    return (logits.softmax(-1) - onehot) / logits.shape[0]\n', R),
    ("xent_batch_fn", 'def xent_grad(logits, targets):\n    onehot = F.one_hot(targets, logits.shape[1]).to(logits.dtype)\n'
                      '    return logits.softmax(-1) - onehot\n', ("wrong", "the mean's 1/N dropped", ("mean_scales", "factor_k", "factor_two"))),
    ("xent_batch_fn", 'def xent_grad(logits, targets):\n    onehot = F.one_hot(targets, logits.shape[1]).to(logits.dtype)\n'
                      '    return (onehot - logits.softmax(-1)) / logits.shape[0]\n', ("wrong", "one-hot minus softmax", ("sign_error",))),
    ("xent_batch_fn", 'def xent_grad(logits, targets):\n    return logits.softmax(-1) / logits.shape[0]\n',
     ("wrong", "softmax without the one-hot", ("xent_onehot",))),
]
