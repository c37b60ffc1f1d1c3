"""Student side: draw a tensor's autograd graph, and say the same graph in plain words.

``draw_graph(z)`` walks ``z.grad_fn`` back to the leaves and draws it with matplotlib, left to
right, the way data flows forward: blue boxes hold data (leaves, with their value and
``.grad``), orange boxes are operations (the ``grad_fn`` nodes, by class name), grey dashed
boxes are values autograd treats as constants (a ``.detach()`` copy, a ``torch.no_grad()``
result, a plain number), and their arrows are drawn cut. Where one value feeds several
operations (fan-out) its arrows are purple: in the backward pass each carries its own share, and
the shares add up.

The same walk feeds ``describe_graph``, which writes the graph as prose; it is the figure's
alt text and prints on its own.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import math
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.visual.headless import skipped_when_headless

COUNT_CAP = 20_000  # stop walking a giant graph here: the drawing is summarised anyway, and
# (torch 2.13) freeing a graph after Python walked much deeper than this can crash the process
WRAP = 5  # most columns per band: wider graphs wrap like lines of text, so a notebook shows
COL_W, ROW_H = 2.05, 0.85  # the figure near its natural size (inches between columns / rows)

STYLE = {  # kind -> face colour, edge colour, line style
    "leaf": ("#dbeafe", "#1d4ed8", "solid"),
    "op": ("#fde68a", "#b45309", "solid"),
    "const": ("#f3f4f6", "#6b7280", "dashed"),
    "more": ("#ffffff", "#6b7280", "dotted"),
}
FAN_COLOUR, EDGE_COLOUR, CUT_COLOUR = "#8250df", "#444c56", "#cf222e"

# what the Backward class computes, in words a student knows ("MulBackward0" -> "*")
OP_WORDS = {
    "Add": "+", "Sub": "-", "Rsub": "-", "Mul": "*", "Div": "/", "Pow": "**", "Neg": "negate",
    "Sum": "sum", "Mean": "mean", "Exp": "exp", "Log": "log", "Sin": "sin", "Cos": "cos",
    "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "relu", "Abs": "abs", "Clamp": "clamp",
    "ClampMin": "clamp", "Maximum": "maximum", "Minimum": "minimum", "Where": "where",
    "Mm": "matmul", "Mv": "matmul", "Dot": "dot", "Bmm": "matmul", "Addmm": "x @ W + b",
    "MseLoss": "MSE loss", "Sqrt": "sqrt", "T": "transpose", "View": "view",
    "Reshape": "reshape", "Unsqueeze": "unsqueeze", "Squeeze": "squeeze", "Expand": "expand",
    "Select": "index", "Index": "index", "Slice": "slice", "Cat": "cat", "Stack": "stack",
    "Clone": "clone", "Max": "max", "Min": "min", "Prod": "prod", "Norm": "norm",
    "LinalgVectorNorm": "norm", "Softmax": "softmax", "LogSoftmax": "log softmax",
}


@dataclass
class Node:
    key: str
    kind: str  # "leaf" | "op" | "const" | "more"
    title: str  # first line: class name, or the variable's name and value
    detail: str = ""  # second line: what it computes / its .grad
    words: str = ""  # how the description introduces it
    ref: str = ""  # how the description refers to it afterwards
    tensor: torch.Tensor | None = None
    detached: bool = False
    rank: int = 1 << 30  # position in the caller's ``names``: the description lists in that order


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)  # forward: input -> consumer
    root: str = ""
    total: int = 0  # nodes in the whole graph (up to COUNT_CAP)
    capped: bool = False  # counting stopped at COUNT_CAP
    note: str = ""  # why there is (almost) nothing to draw
    shares: dict[int, torch.Tensor] = field(default_factory=dict)  # edge index -> gradient share

    def consumers(self, key: str) -> list[str]:
        return [d for s, d in self.edges if s == key]

    def inputs(self, key: str) -> list[str]:
        return [s for s, d in self.edges if d == key]


# ---------------------------------------------------------------- numbers in words

def _num(v: float) -> str:
    if v != v or abs(v) == float("inf"):  # NaN and inf gradients are exactly what ch. 7 shows
        return str(v)
    if v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    return f"{v:.4g}"


def fmt_tensor(t: torch.Tensor | None) -> str:
    """2.0, [1.0, 2.0, 3.0], or float32[3, 4] for anything bigger than four numbers."""
    if t is None:
        return "None"
    t = t.detach()
    if t.numel() == 1:
        return _num(t.item()) if not t.is_complex() else str(t.item())
    if t.numel() <= 4 and not t.is_complex():
        return _nested(t.tolist())
    return f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"


def _nested(v: Any) -> str:
    return "[" + ", ".join(_nested(x) for x in v) + "]" if isinstance(v, list) else _num(v)


def op_words(node: Any) -> str:
    """'MulBackward0' -> '*'; PowBackward0 with a saved exponent -> '** 2'."""
    name = type(node).__name__
    base = re.sub(r"Backward\d*$", "", name)
    word = OP_WORDS.get(base, base.lower() if base != name else name)
    if base == "Pow":
        with contextlib.suppress(AttributeError, RuntimeError, TypeError, ValueError):
            word = f"** {_num(float(node._saved_exponent))}"
    return word


def _saved_tensors(node: Any) -> list[torch.Tensor]:
    found = []
    for attr in dir(node):
        if attr.startswith("_saved_"):
            try:
                v = getattr(node, attr)
            except Exception:  # freed by backward(): nothing to match against
                continue
            if isinstance(v, torch.Tensor):
                found.append(v)
    return found


# ---------------------------------------------------------------- the walk

def _check_input(tensor: Any) -> None:
    if isinstance(tensor, (tuple, list)):
        kinds = ", ".join(type(t).__name__ for t in tensor[:4])
        raise TypeError(
            f"draw_graph draws the graph of one tensor, but got a {type(tensor).__name__} of "
            f"{len(tensor)} ({kinds}). Pick one, e.g. draw_graph(out[0]), or add them up first: "
            "draw_graph(sum(out)).")
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"draw_graph needs a torch.Tensor, but got {type(tensor).__name__}. "
                        "Pass the result of a computation, e.g. draw_graph(z).")


def build_graph(tensor: torch.Tensor, *, names: dict[str, torch.Tensor] | None = None,
                max_nodes: int = 60) -> Graph:
    """Walk ``tensor.grad_fn`` breadth-first; keep the ``max_nodes`` nearest the output."""
    _check_input(tensor)
    max_nodes = max(2, int(max_nodes))
    names = {k: v for k, v in (names or {}).items() if isinstance(v, torch.Tensor)}
    by_id = {id(t): n for n, t in names.items()}
    by_fn = {id(t.grad_fn): n for n, t in names.items() if t.grad_fn is not None}
    g = Graph()
    root_name = by_id.get(id(tensor))

    if tensor.grad_fn is None:
        if tensor.requires_grad:
            label = root_name or "leaf"
            g.nodes["r"] = _leaf_node("r", tensor, label)
            g.note = (f"{label} is a leaf: you created it yourself with requires_grad=True, "
                      "so no operation made it and its graph is this single box. Compute "
                      "something from it (e.g. z = x * x) and draw the result.")
        else:
            label = root_name or "This tensor"
            g.nodes["r"] = Node("r", "const", f"{label} = {fmt_tensor(tensor)}",
                                "requires_grad=False", words=label, tensor=tensor)
            g.note = (f"{label} has no graph: requires_grad is False and grad_fn is None, so "
                      "autograd recorded nothing. Create the inputs with requires_grad=True "
                      "(outside torch.no_grad(), without .detach()) and compute again.")
        g.root, g.total = "r", 1
        return g

    # breadth-first from the output; keep the first max_nodes, count the rest
    consts = {n: t for n, t in names.items() if not t.requires_grad}
    live_ptrs = {t.data_ptr() for t in names.values() if t.requires_grad}
    seen: dict[int, str] = {}
    kept_fns: dict[str, Any] = {}
    queue: deque[Any] = deque([tensor.grad_fn])
    seen[id(tensor.grad_fn)] = "n0"
    hidden_inputs: dict[str, int] = {}
    n_const = 0
    multi_output = False  # an op with several outputs (unbind, split): no share numbers
    while queue:
        fn = queue.popleft()
        key = seen[id(fn)]
        keep = key in kept_fns or len(g.nodes) < max_nodes
        if keep and key not in g.nodes:
            kept_fns[key] = fn
            g.nodes[key] = _fn_node(key, fn, by_fn, tensor if key == "n0" else None,
                                    root_name, by_id)
            live_ptrs.update(_leaf_ptr(fn))
        nexts = getattr(fn, "next_functions", ())
        for i, (nxt, output_nr) in enumerate(nexts):
            multi_output = multi_output or output_nr != 0
            if nxt is None:
                g.total += 1
                if keep and len(g.nodes) < max_nodes:
                    n_const += 1
                    ck = f"c{n_const}"
                    g.nodes[ck] = _const_node(ck, fn, i, consts, live_ptrs)
                    g.edges.append((ck, key))
                elif keep:
                    hidden_inputs[key] = hidden_inputs.get(key, 0) + 1
                continue
            if id(nxt) not in seen:
                if len(seen) + g.total >= COUNT_CAP:  # g.total holds the constants so far
                    g.capped = True
                    continue
                seen[id(nxt)] = f"n{len(seen)}"
                queue.append(nxt)
            nk = seen[id(nxt)]
            if keep and (nk in g.nodes or len(g.nodes) < max_nodes):
                if nk not in g.nodes:
                    kept_fns[nk] = nxt
                    g.nodes[nk] = _fn_node(nk, nxt, by_fn, None, root_name, by_id)
                g.edges.append((nk, key))
            elif keep:
                hidden_inputs[key] = hidden_inputs.get(key, 0) + 1
    g.total += len(seen)
    g.root = "n0"
    order = {id(t): i for i, t in enumerate(names.values())}
    for n in g.nodes.values():
        n.rank = order.get(id(n.tensor), n.rank)
    _number_twins(g)
    if hidden_inputs:
        hidden = g.total - len(g.nodes)
        plus = "+" if g.capped else ""
        g.nodes["more"] = Node("more", "more", f"⋯ {hidden:,}{plus} more nodes",
                               "not drawn", words=f"{hidden:,}{plus} more nodes")
        g.edges.extend(("more", k) for k in hidden_inputs)
    elif not multi_output:
        g.shares = _gradient_shares(g, tensor, kept_fns)
    return g


def _number_twins(g: Graph) -> None:
    """Two MulBackward0 boxes become 'MulBackward0 #1' and '#2', in the picture and in words."""
    seen: dict[str, list[Node]] = {}
    for n in g.nodes.values():
        if n.kind == "op":
            seen.setdefault(n.title, []).append(n)
    for twins in seen.values():
        if 1 < len(twins) <= 9:
            for i, n in enumerate(twins, 1):
                cls = n.title
                n.title = f"{cls} #{i}"
                n.ref, n.words = (n.ref.replace(cls, n.title, 1), n.words.replace(cls, n.title, 1))


def _leaf_ptr(fn: Any) -> set[int]:
    var = getattr(fn, "variable", None)
    return {var.data_ptr()} if isinstance(var, torch.Tensor) else set()


def _leaf_node(key: str, t: torch.Tensor, label: str) -> Node:
    text = f"{label} = {fmt_tensor(t)}"
    if t.grad is not None:
        text += f" (grad {fmt_tensor(t.grad)})"
    return Node(key, "leaf", text, "leaf" if t.grad is not None else "leaf, .grad None",
                words=text, ref=label, tensor=t)


def _fn_node(key: str, fn: Any, by_fn: dict[int, str], root: torch.Tensor | None,
             root_name: str | None, by_id: dict[int, str]) -> Node:
    var = getattr(fn, "variable", None)
    if isinstance(var, torch.Tensor):  # AccumulateGrad: the leaf whose .grad receives the sum
        return _leaf_node(key, var, by_id.get(id(var), "leaf"))
    cls = type(fn).__name__
    name = by_fn.get(id(fn)) or (root_name if root is not None else None)
    what = op_words(fn)
    detail = f"({what})" + (f" → {name}" if name else "")
    if root is not None:
        detail += f" = {fmt_tensor(root)}"
    words = f"{cls} ({what})" + (f", which makes {name}" if name else "")
    return Node(key, "op", cls, detail, words=words, ref=cls + (f" ({name})" if name else ""),
                tensor=root)


def _const_node(key: str, consumer: Any, index: int, consts: dict[str, torch.Tensor],
                live_ptrs: set[int]) -> Node:
    ptrs = {t.data_ptr() for t in _saved_tensors(consumer)}
    for name, t in consts.items():
        if t.data_ptr() in ptrs:
            detached = t.data_ptr() in live_ptrs
            why = "detached: no grad" if detached else "requires_grad=False"
            return Node(key, "const", f"{name} = {fmt_tensor(t)}", why,
                        words=f"{name} = {fmt_tensor(t)}", ref=name, tensor=t,
                        detached=detached)
    return Node(key, "const", "const", words="a constant", ref="a constant")


def _gradient_shares(g: Graph, root: torch.Tensor, fns: dict[str, Any]) -> dict[int, torch.Tensor]:
    """The gradient each arrow carries backward, by calling the nodes ourselves.

    Only possible while the graph still holds its saved tensors (before backward(), or after
    backward(retain_graph=True)) and for a small output; otherwise the drawing shows no numbers.
    """
    if root.numel() > 4 or not root.dtype.is_floating_point:
        return {}
    order = _topological(g)
    incoming: dict[str, torch.Tensor] = {g.root: torch.ones_like(root)}
    shares: dict[int, torch.Tensor] = {}
    edge_ids = {}
    for i, (s, d) in enumerate(g.edges):
        edge_ids.setdefault(d, []).append((i, s))
    try:
        with torch.no_grad():
            for key in order:
                fn = fns.get(key)
                if fn is None or g.nodes[key].kind != "op" or key not in incoming:
                    continue
                outs = fn(incoming[key])
                outs = outs if isinstance(outs, tuple) else (outs,)
                # edges into a node were recorded in next_functions order, one per input
                for (nxt, _), out, (i, src) in zip(fn.next_functions, outs,
                                                   edge_ids.get(key, []), strict=False):
                    if nxt is None or out is None:
                        continue
                    shares[i] = out
                    incoming[src] = incoming[src] + out if src in incoming else out
    except Exception:  # freed buffers, multi-output nodes, custom Functions: draw without numbers
        return {}
    return shares


def _topological(g: Graph) -> list[str]:
    """Nodes from the output back to the inputs, each after all its consumers."""
    waiting = {k: len(g.consumers(k)) for k in g.nodes}
    ready = deque(k for k, n in waiting.items() if n == 0)
    order = []
    while ready:
        k = ready.popleft()
        order.append(k)
        for s in g.inputs(k):
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    return order


# ---------------------------------------------------------------- layout

def layout(g: Graph) -> tuple[dict[str, tuple[float, float]], dict[str, int], float]:
    """Columns by longest distance from the output (inputs left); rows by barycentre sweeps.

    Returns each node's position, its band (wide graphs wrap into bands of at most WRAP
    columns, balanced) and the height of one band.
    """
    depth = {k: 0 for k in g.nodes}
    for k in _topological(g):
        for s in g.inputs(k):
            depth[s] = max(depth[s], depth[k] + 1)
    last = max(depth.values())
    col = {k: last - d for k, d in depth.items()}
    columns: list[list[str]] = [[] for _ in range(last + 1)]
    for k in g.nodes:  # discovery order is breadth-first: a decent first guess
        columns[col[k]].append(k)
    row = {k: float(i) for c in columns for i, k in enumerate(c)}
    for sweep in range(4):  # sort each column by the mean row of its neighbours
        seq = reversed(columns) if sweep % 2 == 0 else columns
        neighbours = g.consumers if sweep % 2 == 0 else g.inputs
        for c in seq:
            def centre(k: str, near: Any = neighbours) -> float:
                ns = near(k)
                return sum(row[n] for n in ns) / len(ns) if ns else row[k]
            c.sort(key=centre)
            for i, k in enumerate(c):
                row[k] = i - (len(c) - 1) / 2
    tallest = max(len(c) for c in columns)
    per = math.ceil(len(columns) / math.ceil(len(columns) / WRAP))
    height = (tallest + 1.0) * ROW_H
    pos, bands = {}, {}
    for k in g.nodes:
        bands[k], x = divmod(col[k], per)
        pos[k] = (x * COL_W, -row[k] * ROW_H - bands[k] * height)
    return pos, bands, height


# ---------------------------------------------------------------- the figure

def figure_html(fig: Figure, description: str, css_class: str, summary: str) -> dict[str, str]:
    """The figure as PNG with its description as alt text and in a fold below it (and as plain
    text: a terminal, a screen reader's text view)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=100)
    png = base64.b64encode(buf.getvalue()).decode()
    alt = html.escape(description, quote=True)
    page = (f'<figure class="{css_class}" style="margin:0">'
            f'<img src="data:image/png;base64,{png}" alt="{alt}" style="max-width:100%">'
            f'<details><summary>{summary}</summary>'
            f'<p style="white-space:pre-wrap;max-width:60em">{html.escape(description)}'
            f"</p></details></figure>")
    return {"text/html": page, "image/png": png, "text/plain": description}


class GraphFigure(Figure):
    """A Figure that shows itself in Jupyter with its description as alt text.

    As plain text (a terminal, a screen reader's text view) it is the description itself.
    """

    description: str = ""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return figure_html(self, self.description, "gradtutor-graph", "The graph in words")


@dataclass
class DescribedPlot:
    """A lesson's matplotlib figure and what it shows in words; Jupyter shows the picture with
    the words as its alt text (the practice of draw_graph, for every plot)."""

    figure: Figure
    description: str

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return figure_html(self.figure, self.description, "gradtutor-plot", "The plot in words")

    def __repr__(self) -> str:
        return self.description


@skipped_when_headless
def describe_plot(fig: Figure, words: str) -> DescribedPlot:
    """Show ``fig`` with ``words`` (what it shows: its axes, curves and the numbers that matter)
    as its text alternative. Use it instead of ``plt.show()`` as a cell's last line."""
    import matplotlib.pyplot as plt  # pyplot starts a backend: only when a lesson plots

    plt.close(fig)  # the inline backend would show it a second time, without the words
    return DescribedPlot(fig, words)


@skipped_when_headless
def draw_graph(tensor: Any, *, title: str | None = None,
               names: dict[str, torch.Tensor] | None = None, max_nodes: int = 60) -> Figure:
    """Draw the autograd graph that produced ``tensor``; returns the matplotlib Figure.

    ``names`` maps your variable names to tensors, so boxes read "x = 2.0 (grad 7.0)" instead
    of "leaf". Draw before ``backward()`` (or after ``backward(retain_graph=True)``) to also
    see the gradient each fan-out arrow carries. ``fig.description`` holds the graph in words.
    """
    g = build_graph(tensor, names=names, max_nodes=max_nodes)
    pos, bands, band_height = layout(g)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    pad_x, pad_top, pad_bottom = 1.2, 0.55 + (0.3 if title else 0), 0.75
    width = max(xs) - min(xs) + 2 * pad_x
    height = max(ys) - min(ys) + pad_top + pad_bottom
    fig = GraphFigure(figsize=(max(width, 4.0), height))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    cx = (max(xs) + min(xs)) / 2
    half = max(width, 4.0) / 2
    ax.set_xlim(cx - half, cx + half)
    ax.set_ylim(min(ys) - pad_bottom, max(ys) + pad_top)
    boxes = {k: _draw_box(ax, n, pos[k], k == g.root) for k, n in g.nodes.items()}
    _draw_edges(ax, g, pos, boxes, bands, band_height)
    if title:
        ax.text(cx, max(ys) + pad_top - 0.2, title, ha="center", va="top", fontsize=12,
                fontweight="bold")
    ax.text(cx, min(ys) - pad_bottom + 0.12, _legend(g), ha="center", va="bottom", fontsize=7.5,
            color="#57606a")
    fig.description = describe(g)
    return fig


def _draw_box(ax: Any, n: Node, xy: tuple[float, float], is_root: bool) -> Any:
    face, edge, ls = STYLE[n.kind]
    text = n.title + (f"\n{n.detail}" if n.detail else "")
    t = ax.text(*xy, text, ha="center", va="center", fontsize=8.5, zorder=3,
                fontweight="bold" if is_root else "normal",
                bbox=dict(boxstyle="round,pad=0.4", fc=face, ec=edge, ls=ls,
                          lw=2.2 if is_root else 1.2))
    return t.get_bbox_patch()


def _draw_edges(ax: Any, g: Graph, pos: dict, boxes: dict, bands: dict[str, int],
                band_height: float) -> None:
    fan = {s for s in g.nodes if len(g.consumers(s)) > 1 and g.nodes[s].kind != "more"}
    right = max(p[0] for p in pos.values()) + COL_W * 0.5
    left = -COL_W * 0.5
    twins: dict[tuple[str, str], int] = {}
    for i, (s, d) in enumerate(g.edges):
        nth = twins[(s, d)] = twins.get((s, d), -1) + 1
        rad = 0.25 * (nth if nth % 2 else -nth) if g.edges.count((s, d)) > 1 else 0.0
        kind = g.nodes[s].kind
        colour = CUT_COLOUR if kind == "const" else FAN_COLOUR if s in fan else EDGE_COLOUR
        style = dict(color=colour, lw=1.6 if s in fan else 1.1,
                     ls="--" if kind in ("const", "more") else "-")
        start = pos[s]
        if bands[s] != bands[d]:
            # wrap like a line of text: out to the right margin, back along the gap above the
            # target's band, then into the target; the start hides under the source box
            gap = -(bands[d] - 0.5) * band_height
            ax.plot([start[0], right, right, left], [start[1], start[1], gap, gap], zorder=2,
                    solid_capstyle="round", **style)
            start = (left, gap)
        # above the boxes, so each box's outline is already placed when the arrow is clipped
        ax.annotate("", xy=pos[d], xytext=start, zorder=4, arrowprops=dict(
            arrowstyle="-|>", shrinkA=1, shrinkB=1, mutation_scale=12,
            patchA=boxes[s] if start == pos[s] else None, patchB=boxes[d],
            connectionstyle=f"arc3,rad={rad}", **style))
        mx = (start[0] + pos[d][0]) / 2
        my = (start[1] + pos[d][1]) / 2 + rad * 0.35 * (pos[d][0] - start[0])
        label = ""
        if kind == "const" and g.nodes[s].tensor is not None:
            label = "✂ cut" if g.nodes[s].detached else "✂ no grad"
        elif s in fan:
            label = f"share {fmt_tensor(g.shares[i])}" if i in g.shares else "share"
        if label:
            ax.text(mx, my, label, ha="center", va="center", fontsize=7, color=colour, zorder=5,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))


def _legend(g: Graph) -> str:
    kinds = {n.kind for n in g.nodes.values()}
    parts = ["blue: data (leaf)" if "leaf" in kinds else "",
             "orange: operation (grad_fn)" if "op" in kinds else "",
             "grey dashed: constant, no gradient flows" if "const" in kinds else "",
             "purple: fan-out, gradient shares add up" if any(
                 len(g.consumers(k)) > 1 for k in g.nodes) else ""]
    line = " · ".join(p for p in parts if p)
    return line + ("\nforward: left to right · backward: right to left" if "op" in kinds else "")


# ---------------------------------------------------------------- the same graph in words

@skipped_when_headless
def describe_graph(tensor: Any, *, names: dict[str, torch.Tensor] | None = None) -> str:
    """The graph of ``tensor`` in plain words: boxes, arrows, where gradients add up."""
    return describe(build_graph(tensor, names=names))


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _listing(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _grouped(items: list[str], limit: int = 6) -> str:
    """List a few items by name; summarise many as 'AddBackward0 (+) 16 times, ...'."""
    if len(items) <= limit:
        return _listing(items)
    counts: dict[str, int] = {}
    for it in items:
        counts[it] = counts.get(it, 0) + 1
    return _listing([f"{k} {_count(n, 'time', 'times')}" for k, n in counts.items()])


def _short(n: Node) -> str:
    return n.ref or n.words


def describe(g: Graph) -> str:
    """The prose twin of the drawing (same nodes, same arrows)."""
    if g.note:
        return "In words: there is one box. " + g.note
    nodes = g.nodes
    leaves = sorted((n for n in nodes.values() if n.kind == "leaf"), key=lambda n: n.rank)
    ops = [n for n in nodes.values() if n.kind == "op"]
    named_consts = [n for n in nodes.values() if n.kind == "const" and n.tensor is not None]
    plain_consts = [n for n in nodes.values() if n.kind == "const" and n.tensor is None]
    drawn = len(nodes) - ("more" in nodes)
    out = []
    if "more" in nodes:
        size = f"more than {COUNT_CAP:,}" if g.capped else f"{g.total:,}"
        out.append(f"This graph is large: {size} nodes. The drawing shows the "
                   f"{drawn} nearest the output and one box standing for the rest; the words "
                   "below describe that part.")
    out.append(f"In words: the graph has {_count(drawn, 'box', 'boxes')}.")
    if leaves:
        verb = "holds" if len(leaves) == 1 else "hold"
        out.append(f"{_count(len(leaves), 'box', 'boxes')} {verb} data: "
                   + _grouped([n.words for n in leaves])
                   + ". These are leaves: tensors created with requires_grad=True, with no "
                     "arrow pointing into them; backward() stores their gradient in .grad.")
    if ops:
        verb = "is an operation" if len(ops) == 1 else "are operations"
        out.append(f"{_count(len(ops), 'box', 'boxes')} {verb}, named by the grad_fn "
                   "autograd attached: " + _grouped([n.words for n in ops]) + ".")
        root = nodes[g.root]
        value = f", holding {fmt_tensor(root.tensor)}" if root.tensor is not None else ""
        out.append(f"The output is {root.words}{value}.")
    arrows = [f"{_short(nodes[s])} into {_short(nodes[d])}" for s, d in reversed(g.edges)
              if nodes[s].kind != "more"]  # inputs first, the way data flows
    if arrows:
        listed = ": " + _listing(arrows) if len(arrows) <= 10 else ""
        out.append(f"{_count(len(arrows), 'arrow runs', 'arrows run')} from an input into the "
                   f"operation that uses it{listed}.")
    for n in named_consts:
        how = ("it was cut off with .detach()" if n.detached else
               "it does not require grad (a plain constant, a .detach() copy and a value made "
               "under torch.no_grad() all look like this)")
        out.append(f"The arrow from {n.words} is cut: {how}, so autograd treats it as a frozen "
                   "number and no gradient flows back through it.")
    if plain_consts:
        one = len(plain_consts) == 1
        out.append(f"{_count(len(plain_consts), 'grey box holds', 'grey boxes hold')} a "
                   "constant (a plain number, or a tensor that does not require grad); "
                   + ("its arrow is" if one else "their arrows are")
                   + " dashed because no gradient flows back through "
                   + ("it." if one else "them."))
    for k, n in nodes.items():
        users = g.consumers(k)
        if len(users) < 2 or n.kind not in ("leaf", "op"):
            continue
        shares = [g.shares[i] for i, (s, _) in enumerate(g.edges) if s == k and i in g.shares]
        where = _listing(sorted({nodes[u].title for u in users}))
        sentence = (f"Fan-out: {_short(n)} feeds {len(users)} operations ({where}). In the "
                    "backward pass each arrow carries its own share of the gradient and the "
                    "shares add up")
        if len(shares) == len(users):
            total = sum(shares[1:], shares[0])
            sentence += ": " + " + ".join(fmt_tensor(v) for v in shares) + f" = {fmt_tensor(total)}"
        if n.kind == "leaf" and n.tensor is not None and n.tensor.grad is not None:
            sentence += f", which is the {fmt_tensor(n.tensor.grad)} in its .grad"
        out.append(sentence + ".")
    if ops:
        out.append("Data flows left to right in the forward pass; gradients flow right to left "
                   "in the backward pass.")
    return " ".join(out)
