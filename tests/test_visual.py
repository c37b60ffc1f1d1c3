"""Graph drawings and widgets, on the Agg backend: what is drawn and said matches torch."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from autograder import describe_graph, draw_graph  # noqa: E402
from autograder.visual.graph import build_graph  # noqa: E402


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def fan_out(x0: float = 2.0, y0: float = 3.0):
    x = torch.tensor(x0, requires_grad=True)
    y = torch.tensor(y0, requires_grad=True)
    z = x * y + x**2
    return x, y, z


# ---------------------------------------------------------------- draw_graph / describe_graph

def test_fan_out_shows_each_share_and_their_sum():
    x, y, z = fan_out()
    # each branch's share, computed by torch on the branch alone
    share_xy = torch.autograd.grad(x * y, x)[0]
    share_sq = torch.autograd.grad(x**2, x)[0]
    fig = draw_graph(z, names={"x": x, "y": y, "z": z}, title="fan-out")
    assert isinstance(fig, Figure)
    shown = "\n".join(texts(fig))
    for cls in ("AddBackward0", "MulBackward0", "PowBackward0"):
        assert cls in shown
    assert f"share {share_xy.item():.1f}" in shown and f"share {share_sq.item():.1f}" in shown
    total = share_xy + share_sq
    assert f"= {total.item():.1f}" in fig.description
    z.backward()
    assert x.grad == total  # the drawing's sum is what backward() stores
    after = draw_graph(z, names={"x": x, "y": y, "z": z})
    label = f"x = {x.item():.1f} (grad {x.grad.item():.1f})"
    assert any(t.startswith(label) for t in texts(after))
    assert label in after.description and "Fan-out: x feeds 2 operations" in after.description


def test_description_reads_as_the_seed_prose():
    x, y, z = fan_out()
    words = describe_graph(z, names={"x": x, "y": y, "z": z})
    assert words.startswith("In words: the graph has 5 boxes.")
    assert "2 boxes on the left hold data: x = 2.0 and y = 3.0" in words
    assert "3 boxes are operations" in words
    assert "x into MulBackward0" in words and "x into PowBackward0" in words
    assert "gradients flow right to left" in words


def test_detach_is_drawn_and_described_as_a_cut():
    x = torch.tensor(2.0, requires_grad=True)
    a = x * 2
    b = a.detach()
    c = b * x
    fig = draw_graph(c, names={"x": x, "a": a, "b": b, "c": c})
    assert "✂ cut" in texts(fig)
    assert "The arrow from b = 4.0 is cut: it was cut off with .detach()" in fig.description
    with torch.no_grad():
        d = x * 3
    e = d * x
    words = describe_graph(e, names={"x": x, "d": d})
    assert "The arrow from d = 6.0 is cut" in words and "torch.no_grad()" in words


def test_alt_text_is_the_description():
    x, y, z = fan_out()
    fig = draw_graph(z)
    bundle = fig._repr_mimebundle_()
    assert bundle["text/plain"] == fig.description
    assert bundle["image/png"] and 'class="gradtutor-graph"' in bundle["text/html"]
    assert 'alt="In words: the graph has 5 boxes.' in bundle["text/html"]


def test_a_leaf_and_a_tensor_without_graph_get_a_clear_message():
    x = torch.tensor(2.0, requires_grad=True)
    leaf = draw_graph(x, names={"x": x})
    assert "x is a leaf" in leaf.description and len(texts(leaf)) >= 1
    plain = draw_graph(torch.ones(3))
    assert "has no graph: requires_grad is False" in plain.description


@pytest.mark.parametrize("bad", [(torch.ones(1, requires_grad=True) * 2,) * 2, [1.0], 3.0, "z"])
def test_not_a_tensor_is_refused_with_a_reason(bad):
    with pytest.raises(TypeError, match="draw_graph"):
        draw_graph(bad)


def test_a_huge_graph_is_summarised():
    n = 10_000
    w = torch.tensor(1.0, requires_grad=True)
    for _ in range(n):
        w = w * 1.0001 + 0.0  # two operations and two constants per step
    fig = draw_graph(w)
    g = build_graph(w)
    assert g.total == 4 * n + 1
    assert len(g.nodes) == 61 and "more" in g.nodes  # 60 drawn + one box for the rest
    assert f"{4 * n + 1 - 60:,} more nodes" in "\n".join(texts(fig))
    assert fig.description.startswith(f"This graph is large: {4 * n + 1:,} nodes.")


def test_sixty_nodes_stay_readable():
    """No two boxes overlap, and the page is no wider than a notebook."""
    xs = [torch.tensor(float(i), requires_grad=True) for i in range(12)]
    h = xs[0]
    for i, x in enumerate(xs[1:]):
        h = torch.tanh(h * x + xs[i] ** 2)  # fan-out, wide and deep
    fig = draw_graph(h, max_nodes=60)
    g = build_graph(h, max_nodes=60)
    assert len(g.nodes) <= 61
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in fig.axes[0].texts
             if t.get_bbox_patch() is not None and t.get_bbox_patch().get_edgecolor()[3] > 0]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), "two boxes of the drawing overlap"
    assert fig.get_figwidth() <= 15
