"""Novice answers, chapter 11, part 2 (backprop by hand through a network), written from the
student notebook's prompts only (format: see ch01.py). The replay runs only the notebook's first
code cell and each exercise's setup, so answers that use torch.nn.functional import it, as a
learner copying a cell on its own would."""

R = "right"

_LIN = 'def linear_backward(x, W, b, dout):\n{body}    return dx, dW, db\n'
_LIN_OK = '    dx = dout @ W.T\n    dW = x.T @ dout\n    db = dout.sum(0)\n'

_BN = ('def batchnorm_backward(x, gamma, beta, dout, eps):\n    N = x.shape[0]\n'
       '    mean = x.mean(dim=0, keepdim=True)\n    var = {var}\n    std = torch.sqrt(var + eps)\n'
       '    xhat = (x - mean) / std\n    dbeta = dout.sum(dim=0)\n    dgamma = {dgamma}\n'
       '    dxhat = {dxhat}\n    dx = {dx}\n    return dx, dgamma, dbeta\n')
_BN_OK = dict(var="((x - mean) ** 2).mean(dim=0, keepdim=True)", dgamma="(dout * xhat).sum(dim=0)",
              dxhat="dout * gamma",
              dx="(dxhat - dxhat.mean(0, keepdim=True) - xhat * (dxhat * xhat).mean(0, keepdim=True)) / std")


def _bn(**change):
    return _BN.format(**{**_BN_OK, **change})


_BN_STEPS = '''def batchnorm_backward(x, gamma, beta, dout, eps):
    n = x.shape[0]
    mu = x.sum(0) / n
    diff = x - mu
    sq = diff ** 2
    var = sq.sum(0) / n
    inv = (var + eps) ** -0.5
    raw = diff * inv
    dgamma = (raw * dout).sum(0)
    dbeta = dout.sum(0)
    draw_ = gamma * dout
    dinv = (diff * draw_).sum(0)
    ddiff = inv * draw_
    dvar = -0.5 * (var + eps) ** -1.5 * dinv
    dsq = torch.ones_like(sq) / n * dvar
    ddiff = ddiff + 2 * diff * dsq
    dmu = -ddiff.sum(0)
    dx = ddiff + torch.ones_like(x) / n * dmu
    return dx, dgamma, dbeta
'''

_EMB = 'def embedding_backward(E, X, dout):\n{body}'

_NET = '''def network_backward(X, y, P):
    f = net_forward(X, y, P)
    N = X.shape[0]
    probs = torch.softmax(f["logits"], dim={axis})
    onehot = torch.zeros_like(probs)
    onehot[torch.arange(N), y] = 1.0
    dlogits = {dlogits}
    dh = dlogits @ P["W2"].T
    dW2 = f["h"].T @ dlogits
    db2 = {db2}
    dhbn = dh * ({tanh})
    xc = f["hpre"] - f["hpre"].mean(0)
    var = {var}
    std = (var + BN_EPS).sqrt()
    xhat = xc / std
    dgamma = (dhbn * xhat).sum(0)
    dbeta = dhbn.sum(0)
    dxhat = dhbn * P["gamma"]
    dhpre = {dhpre}
    flat = f["emb"].view(N, -1)
    dW1 = flat.T @ dhpre
    db1 = dhpre.sum(0)
    demb = (dhpre @ P["W1"].T).view(f["emb"].shape)
    dE = torch.zeros_like(P["E"])
{scatter}
    return {{"logits": dlogits, "h": dh, "hbn": dhbn, "hpre": dhpre, "emb": demb, "W2": dW2, "b2": db2,
            "gamma": dgamma, "beta": dbeta, "W1": dW1, "b1": db1, "E": dE}}
'''
_NET_OK = dict(axis="1", dlogits="(probs - onehot) / N", db2="dlogits.sum(0)", tanh="1 - f['h'] ** 2",
               var="(xc ** 2).mean(0)",
               dhpre="(dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0)) / std",
               scatter="    dE.index_add_(0, X.flatten(), demb.reshape(-1, dE.shape[1]))")


def _net(**change):
    return _NET.format(**{**_NET_OK, **change})


_NET_LAYERS = '''import torch.nn.functional as F

def lin_back(x, W, dout):
    return dout @ W.T, x.T @ dout, dout.sum(0)

def bn_back(x, gamma, dout, eps):
    mu = x.mean(0)
    var = x.var(0, unbiased=False)
    xhat = (x - mu) / torch.sqrt(var + eps)
    dxhat = dout * gamma
    n = x.shape[0]
    dx = (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / (n * torch.sqrt(var + eps))
    return dx, (dout * xhat).sum(0), dout.sum(0)

def network_backward(X, y, P):
    f = net_forward(X, y, P)
    g = {}
    g["logits"] = (F.softmax(f["logits"], dim=-1) - F.one_hot(y, f["logits"].shape[-1])) / len(y)
    g["h"], g["W2"], g["b2"] = lin_back(f["h"], P["W2"], g["logits"])
    g["hbn"] = g["h"] * (1 - torch.tanh(f["hbn"]) ** 2)
    g["hpre"], g["gamma"], g["beta"] = bn_back(f["hpre"], P["gamma"], g["hbn"], BN_EPS)
    d_flat, g["W1"], g["b1"] = lin_back(f["emb"].reshape(len(X), -1), P["W1"], g["hpre"])
    g["emb"] = d_flat.reshape(f["emb"].shape)
    g["E"] = torch.zeros_like(P["E"]).index_put_((X,), g["emb"], accumulate=True)
    return g
'''

ANSWERS = [
    # linear_backward
    ("linear_backward", _LIN.format(body=_LIN_OK), R),
    ("linear_backward", _LIN.format(body='    dx = torch.matmul(dout, W.t())\n    dW = torch.matmul(x.t(), dout)\n'
                                         '    db = torch.sum(dout, axis=0)\n'), R),
    ("linear_backward", _LIN.format(body='    dx = torch.einsum("no,io->ni", dout, W)\n'
                                         '    dW = torch.einsum("ni,no->io", x, dout)\n    db = dout.sum(0, keepdim=True)\n'), R),
    ("linear_backward", _LIN.format(body='    dx = dout @ W.T\n    dW = sum(torch.outer(x[k], dout[k]) for k in range(len(x)))\n'
                                         '    db = sum(dout[k] for k in range(len(x)))\n'), R),
    ("linear_backward", _LIN.format(body='    dx = dout @ W.T\n    dW = dout.T @ x\n    db = dout.sum(0)\n'),
     ("wrong", "dW as dout^T x: the transpose of W's shape", ("matmul_transpose",))),
    ("linear_backward", _LIN.format(body='    dx = W @ dout.T\n    dW = x.T @ dout\n    db = dout.sum(0)\n'),
     ("wrong", "dx as W dout^T: x's shape transposed", ("matmul_transpose",))),
    ("linear_backward", _LIN.format(body='    dx = dout @ W.T\n    dW = x.T @ dout\n    db = dout\n'),
     ("wrong", "db not summed over the batch", ("broadcast_sums",))),
    ("linear_backward", _LIN.format(body='    dx = dout @ W.T\n    dW = x.T @ dout\n    db = dout.mean(0)\n'),
     ("wrong", "db averaged over the batch", ("broadcast_sums", "mean_scales"))),
    ("linear_backward", _LIN.format(body='    N = x.shape[0]\n    dx = dout @ W.T\n    dW = x.T @ dout / N\n    db = dout.sum(0)\n'),
     ("wrong", "dW divided by the batch size", ("mean_scales",))),
    ("linear_backward", _LIN.format(body='    dx = dout @ W\n    dW = x.T @ dout\n    db = dout.sum(0)\n'),
     ("wrong", "dx without the transpose: the shapes do not multiply", ("matmul_transpose",))),
    # tanh_by_hand
    ("tanh_by_hand", 'du = [g[i] * (1 - math.tanh(u[i]) ** 2) for i in range(4)]', R),
    ("tanh_by_hand", 'du = [gi / math.cosh(ui) ** 2 for ui, gi in zip(u, g)]', R),
    ("tanh_by_hand", 'h = [math.tanh(v) for v in u]\ndu = []\nfor k in range(len(u)):\n    du.append((1 - h[k] * h[k]) * g[k])', R),
    ("tanh_by_hand", 'du = [gi * (1 - ui ** 2) for ui, gi in zip(u, g)]',
     ("wrong", "1 - u^2: squared the input, not the output", ("tanh_derivative_input",))),
    ("tanh_by_hand", 'du = [1 - math.tanh(ui) ** 2 for ui in u]',
     ("wrong", "local derivative only, the upstream gradient not multiplied in", ("chain_rule_dropped",))),
    ("tanh_by_hand", 'du = [gi * (1 - math.tanh(ui)) for ui, gi in zip(u, g)]',
     ("wrong", "1 - tanh instead of 1 - tanh^2", ("local_derivative",))),
    ("tanh_by_hand", 'du = [gi * math.tanh(ui) * (1 - math.tanh(ui)) for ui, gi in zip(u, g)]',
     ("wrong", "sigmoid's derivative pattern used for tanh", ("local_derivative",))),
    # batchnorm_backward
    ("batchnorm_backward", _bn(), R),
    ("batchnorm_backward", _BN_STEPS, R),
    ("batchnorm_backward", _bn(var="x.var(dim=0, unbiased=False, keepdim=True)",
                               dx="(N * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / (N * std)"), R),
    ("batchnorm_backward", _bn(dxhat="dout", dx="gamma / std * (dout - dout.mean(0) - xhat * (dout * xhat).mean(0))"), R),
    ("batchnorm_backward", _bn(var="x.var(dim=0, keepdim=True)"),
     ("wrong", "torch.var's unbiased variance (N - 1)", ("bn_bessel",))),
    ("batchnorm_backward", _bn(dx="dxhat / std"),
     ("wrong", "mean and variance treated as constants", ("bn_stats_constant",))),
    ("batchnorm_backward", _bn(dx="(dxhat - dxhat.mean(0)) / std"),
     ("wrong", "only the path through the mean kept", ("bn_term_dropped",))),
    ("batchnorm_backward", _bn(dx="(dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / std"),
     ("wrong", "sums where the derivative gives means: 1/N forgotten", ("bn_mean_factor",))),
    ("batchnorm_backward", _bn(dgamma="(dout * x).sum(dim=0)"),
     ("wrong", "dgamma from x instead of x-hat", ("bn_dgamma_xhat",))),
    ("batchnorm_backward", _bn(dxhat="dout"),
     ("wrong", "gamma left out of dx", ("chain_rule_dropped",))),
    # embedding_backward
    ("embedding_backward", _EMB.format(body='    dE = torch.zeros_like(E)\n    dE.index_add_(0, X.view(-1), dout.view(-1, E.shape[1]))\n    return dE\n'), R),
    ("embedding_backward", _EMB.format(body='    dE = torch.zeros_like(E)\n    for i in range(X.shape[0]):\n'
                                            '        for j in range(X.shape[1]):\n            dE[X[i, j]] += dout[i, j]\n    return dE\n'), R),
    ("embedding_backward", 'import torch.nn.functional as F\n\n' + _EMB.format(
        body='    oh = F.one_hot(X, num_classes=E.shape[0]).double()\n    return torch.einsum("ntv,ntd->vd", oh, dout)\n'), R),
    ("embedding_backward", _EMB.format(body='    return torch.zeros_like(E).index_put_((X,), dout, accumulate=True)\n'), R),
    ("embedding_backward", _EMB.format(body='    dE = torch.zeros_like(E)\n    dE[X] = dout\n    return dE\n'),
     ("wrong", "assignment at the indices: repeated tokens keep one gradient", ("repeated_index",))),
    ("embedding_backward", _EMB.format(body='    dE = torch.zeros_like(E)\n    dE[X] += dout\n    return dE\n'),
     ("wrong", "+= at an index tensor: repeated tokens keep one gradient", ("repeated_index",))),
    ("embedding_backward", _EMB.format(body='    dE = torch.zeros_like(E)\n    for i in range(len(X)):\n        dE[X[i]] += dout[i]\n    return dE\n'),
     ("wrong", "one example at a time with an index tensor: repeats within a row lost", ("repeated_index",))),
    # network_backward
    ("network_backward", _net(), R),
    ("network_backward", _NET_LAYERS, R),
    ("network_backward", _net(tanh="1 - torch.tanh(f['hbn']) ** 2",
                              scatter="    for i in range(N):\n        for j in range(X.shape[1]):\n"
                                      "            dE[X[i, j]] += demb[i, j]"), R),
    ("network_backward", _net(dlogits="probs - onehot"),
     ("wrong", "the 1/N of the mean loss left out", ("xent_mean_dropped",))),
    ("network_backward", _net(dlogits="probs / N"),
     ("wrong", "softmax without the one-hot", ("xent_softmax_only",))),
    ("network_backward", _net(axis="0"),
     ("wrong", "softmax over the batch axis", ("softmax_axis",))),
    ("network_backward", _net(tanh="1 - f['hbn'] ** 2"),
     ("wrong", "tanh' from the input", ("tanh_derivative_input",))),
    ("network_backward", _net(dhpre="dxhat / std"),
     ("wrong", "batch norm's statistics treated as constants", ("bn_stats_constant",))),
    ("network_backward", _net(var="f['hpre'].var(0)"),
     ("wrong", "unbiased variance in batch norm's backward", ("bn_bessel",))),
    ("network_backward", _net(db2="dlogits.mean(0)"),
     ("wrong", "db2 averaged over the batch", ("broadcast_sums",))),
    ("network_backward", _net(scatter="    dE[X] = demb"),
     ("wrong", "embedding gradient assigned: repeated tokens lose gradient", ("repeated_index",))),
    ("network_backward", _net(scatter="    dE[X] += demb"),
     ("wrong", "embedding gradient with += at an index tensor", ("repeated_index",))),
]
