"""Student side: the broadcasting explorer; pick two shapes, see how they line up, which axes of
the result each input was stretched along, and so which axes its gradient is summed over.

Every shape and count on display is computed with torch when a control moves: the result's
shape by ``torch.broadcast_shapes``, and each input's gradient by autograd (the gradient of the
sum of ``a + b``, whose entries count the positions each input entry was used at), beside the
rule worked by hand (the axes broadcasting added in front, then the size-1 axes it stretched).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from autograder.visual.headless import skipped_when_headless
from autograder.visual.widgets import ACCENT, BAD, F64, INK, MUTED, described, figure, note, panel, rows

SHAPES = ("()", "(4,)", "(3, 1)", "(1, 4)", "(3, 4)", "(2, 3)", "(5, 4, 1)", "(4, 3)", "(5, 1, 3)")


def parse(text: str) -> tuple[int, ...]:
    """'(3, 1)' -> (3, 1); '()' -> ()."""
    inner = text.strip().strip("()").strip()
    return tuple(int(v) for v in inner.split(",") if v.strip())


def summed_axes(shape: tuple[int, ...], out: tuple[int, ...]) -> dict[str, list[int]]:
    """The rule by hand: axes of ``out`` broadcasting added in front of ``shape`` (summed away)
    and axes where ``shape`` has a 1 that ``out`` stretched (summed with keepdim)."""
    lead = len(out) - len(shape)
    added = list(range(lead))
    stretched = [lead + i for i, n in enumerate(shape) if n == 1 and out[lead + i] != 1]
    return {"added": added, "stretched": stretched}


def uses(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """Autograd's count of the uses of each entry: the gradients of (a + b).sum()."""
    a = torch.zeros(shape_a, dtype=F64, requires_grad=True)
    b = torch.zeros(shape_b, dtype=F64, requires_grad=True)
    (a + b).sum().backward()
    return a.grad, b.grad


def _draw(ax: Any, y: float, label: str, shape: tuple[int, ...], out: tuple[int, ...]) -> None:
    axes = summed_axes(shape, out)
    lead = len(out) - len(shape)
    ax.text(-0.2, y + 0.35, label, ha="right", va="center", fontsize=10, color=INK)
    for j in range(len(out)):
        if j in axes["added"]:
            colour, text = BAD, "+"          # not in the input: added in front, summed away
        elif j in axes["stretched"]:
            colour, text = ACCENT, "1"       # size 1 in the input, stretched: summed, kept
        else:
            colour, text = MUTED, str(shape[j - lead])
        ax.add_patch(Rectangle((j, y), 0.9, 0.7, facecolor="white", edgecolor=colour, linewidth=2))
        ax.text(j + 0.45, y + 0.35, text, ha="center", va="center", fontsize=11, color=colour)


def _figure(sa: tuple[int, ...], sb: tuple[int, ...], out: tuple[int, ...]) -> Figure:
    fig, ax = figure(5.0, 2.6)
    ax.grid(False)
    width = max(len(out), 1)
    _draw(ax, 2.0, "a", sa, out)
    _draw(ax, 1.0, "b", sb, out)
    for j, size in enumerate(out):
        ax.add_patch(Rectangle((j, 0.0), 0.9, 0.7, facecolor="#eef2ff", edgecolor=INK))
        ax.text(j + 0.45, 0.35, str(size), ha="center", va="center", fontsize=11, color=INK)
    ax.text(-0.2, 0.35, "a + b", ha="right", va="center", fontsize=10, color=INK)
    ax.set_xlim(-1.4, width + 0.2)
    ax.set_ylim(-0.2, 2.9)
    ax.axis("off")
    ax.set_title("shapes lined up from the right", fontsize=10)
    return fig


def _axes_text(axes: dict[str, list[int]]) -> str:
    parts = []
    if axes["added"]:
        parts.append(f"sum over axes {axes['added']} (added in front, dropped)")
    if axes["stretched"]:
        parts.append(f"sum over axes {axes['stretched']} with keepdim=True (stretched from 1)")
    return "; then ".join(parts) if parts else "nothing to sum: the gradient already has its shape"


def _words(sa, sb, out, ax_a, ax_b) -> str:
    return (f"Drawing of the shapes a {sa}, b {sb} and a + b {out}, lined up from the right, one "
            f"box per axis of the result. For a: {_axes_text(ax_a)}. For b: {_axes_text(ax_b)}.")


def _uses_text(grad: torch.Tensor) -> str:
    return f"{grad.flatten()[0].item():g}, in a gradient of shape {tuple(grad.shape)}"


@skipped_when_headless
def broadcast_explorer(a: str = "(5, 4, 1)", b: str = "(4, 3)") -> W.VBox:
    """Pick the shapes of a and b: the result's shape, and the axes each gradient is summed over."""
    pick_a = W.Dropdown(options=SHAPES, value=a, description="shape of a",
                        style={"description_width": "initial"})
    pick_b = W.Dropdown(options=SHAPES, value=b, description="shape of b",
                        style={"description_width": "initial"})

    def render() -> tuple[str, Figure | None, dict[str, float]]:
        sa, sb = parse(pick_a.value), parse(pick_b.value)
        try:
            out = tuple(torch.broadcast_shapes(sa, sb))
        except RuntimeError:
            text = note(f"{html.escape(str(sa))} and {html.escape(str(sb))} do not broadcast: lined "
                        "up from the right, some axis has two different sizes, neither of them 1.", BAD)
            return text, None, {"broadcasts": 0.0}
        ax_a, ax_b = summed_axes(sa, out), summed_axes(sb, out)
        ga, gb = uses(sa, sb)
        fig = described(_figure(sa, sb, out), _words(sa, sb, out, ax_a, ax_b))
        text = rows([("a + b", str(out)),
                     ("a's gradient", _axes_text(ax_a)),
                     ("b's gradient", _axes_text(ax_b)),
                     ("uses of each a entry (autograd)", _uses_text(ga)),
                     ("uses of each b entry (autograd)", _uses_text(gb))])
        text += note("Each entry of an input is used once per position of the axes it was stretched "
                     "along; its gradient adds those uses up, so it is summed over exactly those axes "
                     "and keeps the input's shape.", MUTED)
        return text, fig, {"broadcasts": 1.0, "uses_a": ga.flatten()[0].item(),
                           "uses_b": gb.flatten()[0].item()}

    return panel("Broadcasting, backwards",
                 "Pick two shapes. Red boxes: axes broadcasting added in front; blue: axes stretched "
                 "from size 1. A gradient is summed over both.",
                 {"a": pick_a, "b": pick_b}, render)
