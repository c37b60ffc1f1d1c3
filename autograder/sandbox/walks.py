"""Student side: torch's lazily loaded paths, each walked once in the zygote when the chapters
being graded take it, so that its children find it loaded.

A child that takes a path the zygote has not walked loads it itself, every time (a child's
work is thrown away with it): the first optimizer step or ``torch.func`` transform imports
``torch._dynamo`` and sympy (1.2 s of CPU), a backward pass given a gradient sympy (0.45 s),
forward-mode AD ``torch._decomp`` (0.2-0.4 s). A
walk the chapters never take costs the zygote that much for nothing, once per run (a chapter 1
class used none of them). ``COVERS`` names the torch modules each walk warms: the trusted parent
reads the chapters' code for them (``gradtutor.grading.torch_uses``) and sends the walks' names.
Importing this module imports nothing heavy; torch loads inside the walks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _sample() -> Any:
    import torch

    return torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)


def walk_optim() -> None:
    """An optimizer's first step (it loads torch._dynamo, sympy), with a layer, a loss and
    gradient clipping as a training loop has them."""
    import torch

    layer = torch.nn.Linear(2, 2)
    for opt in (torch.optim.SGD(layer.parameters(), lr=0.1), torch.optim.Adam(layer.parameters())):
        loss = torch.nn.functional.cross_entropy(layer(torch.ones(1, 2)), torch.tensor([1]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


def walk_forward_ad() -> None:
    import torch

    x = _sample()
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(x.detach(), torch.ones(2, dtype=torch.float64))
        torch.autograd.forward_ad.unpack_dual(torch.sin(dual))


def walk_checkpoint() -> None:
    import torch
    import torch.utils.checkpoint

    torch.utils.checkpoint.checkpoint(torch.sin, _sample(), use_reentrant=False).sum().backward()


def walk_gradcheck() -> None:
    import torch

    torch.autograd.gradcheck(lambda t: t.sin() * t, (_sample(),))
    torch.autograd.gradgradcheck(lambda t: t.sin() * t, (_sample(),))


def walk_grad_outputs() -> None:
    """A backward pass given its output's gradient (``y.backward(v)``, ``autograd.grad(y, x, v)``):
    torch checks the gradient's shape with its symbolic shapes, whose first import loads sympy
    (0.45 s of CPU in each child that passes one)."""
    import torch

    x = _sample()
    (x * 2).backward(torch.ones(2, dtype=torch.float64))


def walk_functional() -> None:
    import torch

    x = _sample()
    torch.autograd.functional.jacobian(lambda t: t**2, x)
    torch.autograd.functional.hessian(lambda t: (t.sin() * t).sum(), x.detach())


def walk_func() -> None:
    import torch
    from torch.func import grad, hessian, jacfwd, jacrev, vjp, vmap

    x = _sample().detach()
    f = lambda t: (t.sin() * t).sum()  # as a student writes it
    grad(f)(x), jacrev(torch.sin)(x), jacfwd(torch.sin)(x)
    hessian(f)(x), vmap(torch.sin)(x), vjp(torch.sin, x)


GRAD_OUTPUTS = "torch.autograd.grad_outputs"  # not a module: a backward pass given a gradient

# name -> (the walk, the torch modules (or functions) whose first use it does ahead), in the
# order the zygote walks them: the costliest paths first
WALKS: dict[str, tuple[Callable[[], None], tuple[str, ...]]] = {
    "optim": (walk_optim, ("torch.optim",)),
    "func": (walk_func, ("torch.func", "torch.vmap", "torch._functorch", "functorch")),
    "forward_ad": (walk_forward_ad, ("torch.autograd.forward_ad",)),
    "gradcheck": (walk_gradcheck, ("torch.autograd.gradcheck", "torch.autograd.gradgradcheck")),
    # GRAD_OUTPUTS: what ``gradtutor.grading.torch_uses`` names a call that passes a gradient
    "grad_outputs": (walk_grad_outputs, ("torch.fx.experimental.symbolic_shapes", GRAD_OUTPUTS)),
    "functional": (walk_functional, ("torch.autograd.functional",)),
    "checkpoint": (walk_checkpoint, ("torch.utils.checkpoint",)),
}
COVERS = {name: covers for name, (_, covers) in WALKS.items()}


def chosen(names: list[str] | None) -> list[Callable[[], None]]:
    """The walks named (every one for None: a zygote told nothing of the chapters), in
    ``WALKS``' order; unknown names are ignored."""
    return [walk for name, (walk, _) in WALKS.items() if names is None or name in names]
