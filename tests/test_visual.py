"""Graph drawings and widgets, on the Agg backend: what is drawn and said matches torch."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from matplotlib.figure import Figure

from autograder import describe_graph, draw_graph
from autograder.visual.graph import build_graph


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
    assert "2 boxes hold data: x = 2.0 and y = 3.0" in words
    assert "3 boxes are operations" in words
    assert "x into MulBackward0" in words and "x into PowBackward0" in words
    assert "gradients flow right to left" in words


def test_small_tensors_show_their_values_and_shape():
    x = torch.tensor([3.0, -1.0], requires_grad=True)
    w = torch.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
    big = torch.ones(3, 4, requires_grad=True)
    out = (x @ w).sum() + big.sum()
    words = describe_graph(out, names={"x": x, "W": w, "big": big, "out": out})
    assert "x = [3.0, -1.0], W = [[1.0, 2.0], [0.5, -1.0]] and big = float32[3, 4]" in words
    assert "MmBackward0" in words and "which makes out" in words


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
    n = 2_500  # 10 001 nodes
    w = torch.tensor(1.0, requires_grad=True)
    for _ in range(n):
        w = w * 1.0001 + 0.0  # two operations and two constants per step
    fig = draw_graph(w)
    g = build_graph(w)
    assert g.total == 4 * n + 1 and not g.capped
    assert len(g.nodes) == 61 and "more" in g.nodes  # 60 drawn + one box for the rest
    assert f"{4 * n + 1 - 60:,} more nodes" in "\n".join(texts(fig))
    assert fig.description.startswith(f"This graph is large: {4 * n + 1:,} nodes.")


def test_counting_stops_at_the_cap_of_a_giant_graph():
    from autograder.visual.graph import COUNT_CAP

    w = torch.tensor(1.0, requires_grad=True)
    for _ in range(COUNT_CAP // 4 + 10):  # four nodes per step: past the cap
        w = w * 1.0001 + 0.0
    g = build_graph(w)
    assert g.capped and g.total >= COUNT_CAP
    assert describe_graph(w).startswith(f"This graph is large: more than {COUNT_CAP:,} nodes.")


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


# ---------------------------------------------------------------- widgets
# Each test drives the widget's own controls, then checks the numbers on display against a
# torch computation made here and a closed form (or finite difference) worked independently.

import re  # noqa: E402

import ipywidgets  # noqa: E402

from autograder import (  # noqa: E402
    accumulation_stepper,
    chain_rule_stepper,
    descent_stepper,
    kink_explorer,
    meta_gradient_explorer,
    tangent_explorer,
    vjp_explorer,
)
from autograder.visual.widgets import num  # noqa: E402


def shown(box) -> str:
    return box.readout.value


def moved(box, control: str, value) -> bytes:
    """Set a control; return the plot before, so the caller can see that it changed."""
    before = bytes(box.plot.value)
    box.controls[control].value = value
    return before


def test_every_widget_is_a_displayable_widget_with_a_plot():
    for make in (tangent_explorer, chain_rule_stepper, kink_explorer, accumulation_stepper,
                 vjp_explorer, descent_stepper, meta_gradient_explorer):
        box = make()
        assert isinstance(box, ipywidgets.VBox) and "gradtutor-widget" in box._dom_classes
        assert bytes(box.plot.value).startswith(b"\x89PNG")
        assert box.numbers and "Could not compute" not in shown(box)


def test_tangent_explorer_matches_the_analytic_derivative_as_x_moves():
    box = tangent_explorer()
    for x in (-2.5, 0.0, 1.75):
        before = moved(box, "x", x)
        x_ = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (x_**3 - 2 * x_).backward()
        assert box.numbers["grad"] == pytest.approx(x_.grad.item())
        assert box.numbers["witness"] == pytest.approx(3 * x**2 - 2)
        assert f"<b>{num(x_.grad.item())}</b>" in shown(box)
        assert bytes(box.plot.value) != before


def test_tangent_explorer_with_a_student_function_uses_finite_differences():
    box = tangent_explorer(torch.sin, x0=0.5)
    assert box.numbers["grad"] == pytest.approx(torch.cos(torch.tensor(0.5)).item(), abs=1e-6)
    assert "finite difference" in shown(box)
    broken = tangent_explorer(lambda t: torch.stack([t, t]))
    assert "Could not compute this" in shown(broken) and "single number" in shown(broken)


def test_chain_rule_stepper_walks_forward_then_backward():
    box = chain_rule_stepper(x0=2.0, y0=3.0)
    assert box.numbers["step"] == 0 and "Forward" in shown(box)
    first = bytes(box.plot.value)
    for _ in range(10):  # clicking past the end (8 steps) stays at the end
        box.controls["Next ▶"].click()
    assert box.numbers["step"] == 8 and bytes(box.plot.value) != first
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    (x * y + x**2).backward()
    assert box.numbers["x_grad"] == x.grad.item() == 3.0 + 2 * 2.0  # y + 2x
    assert box.numbers["x_from_a"] + box.numbers["x_from_b"] == box.numbers["x_grad"]
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown(box)))
    assert f"x.grad (autograd) {num(x.grad.item())} by hand: y + 2x {num(3.0 + 4.0)}" in words
    box.controls["x"].value = -1.5
    assert box.numbers["x_grad"] == 3.0 + 2 * -1.5
    box.controls["Restart"].click()
    assert box.numbers["step"] == 0


def test_kink_explorer_shows_each_convention_at_zero():
    box = kink_explorer()
    assert box.controls["x"].value == 0.0
    # the mechanism each explanation names, applied by hand at x = 0
    expected = {"torch.relu(x)": 0.0,  # mask out > 0 is False
                "x.abs()": 0.0,  # sign(0)
                "x.clamp(min=0)": 1.0,  # boundary inside the range
                "torch.maximum(x, 0)": 0.5,  # a tie splits the gradient in two
                "torch.where(x > 0, x, 0)": 0.0}  # condition False: constant branch
    for name, grad in expected.items():
        box.controls["function"].value = name
        assert box.numbers["grad"] == grad, name
        assert box.numbers["left"] != box.numbers["right"]  # it really is a corner
        assert "corner" in shown(box)
    before = moved(box, "x", 0.5)
    assert box.numbers["grad"] == pytest.approx(box.numbers["right"]) and "smooth" in shown(box)
    assert bytes(box.plot.value) != before


def test_accumulation_stepper_adds_on_each_backward_and_zeroes():
    box = accumulation_stepper()
    assert "None" in shown(box)
    for calls in (1, 2, 3):
        box.controls["y.backward()"].click()
        assert box.numbers["grad"] == calls * 2 * 2.0  # n times dy/dx = 2x at x = 2
    assert "<b>12.0</b>" in shown(box)
    box.controls["x.grad.zero_()"].click()
    assert box.numbers["grad"] == 0.0
    box.controls["x"].value = 3.0  # a new leaf starts empty
    assert box.numbers["calls"] == 0 and box.numbers["per_call"] == 6.0


def test_vjp_explorer_reproduces_both_seed_cases():
    box = vjp_explorer()
    grads = [box.numbers[f"grad{i}"] for i in range(3)]
    assert grads == [2.0, 4.0, 6.0] == [2 * v for v in (1.0, 2.0, 3.0)]
    before = bytes(box.plot.value)
    box.controls["v = [1.0, 0.0, 2.0]"].click()
    assert [box.numbers[f"grad{i}"] for i in range(3)] == [2.0, 0.0, 12.0]
    assert "<b>[2.0, 0.0, 12.0]</b>" in shown(box) and bytes(box.plot.value) != before
    box.controls["v2"].value = -0.5
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x**2).backward(torch.tensor([1.0, -0.5, 2.0]))
    assert [box.numbers[f"grad{i}"] for i in range(3)] == x.grad.tolist()


def test_descent_stepper_takes_the_seed_step_and_follows_the_learning_rate():
    box = descent_stepper()
    box.controls["Step"].click()
    w = torch.tensor(1.0, requires_grad=True)
    ((w - 3) ** 2).backward()
    assert box.numbers["w"] == pytest.approx((w - 0.1 * w.grad).item())
    assert "<b>1.4</b>" in shown(box)
    box.controls["Reset"].click()
    box.controls["lr"].value = 0.5  # half the curvature's inverse: lands on the minimum
    box.controls["Step"].click()
    assert box.numbers["w"] == pytest.approx(3.0)
    assert "one step lands exactly on the minimum" in shown(box)
    box.controls["Reset"].click()
    box.controls["lr"].value = 1.0  # the factor 1 - lr * L'' is -1: w bounces
    box.controls["Step"].click()
    assert box.numbers["w"] == pytest.approx(5.0) and "bounces" in shown(box)
    box.controls["Step"].click()
    assert box.numbers["w"] == pytest.approx(1.0)
    box.controls["Reset"].click()
    box.controls["lr"].value = 1.1
    box.controls["5 steps"].click()
    assert abs(box.numbers["w"] - 3) > 2 and "diverges" in shown(box)


def test_meta_gradient_explorer_matches_the_reference_problem():
    box = meta_gradient_explorer()
    m = box.numbers
    assert m["full"] == pytest.approx(m["full_by_hand"], abs=1e-12)
    assert m["cut"] == pytest.approx(m["cut_by_hand"], abs=1e-12)
    assert num(m["full"], 7) == "-6.108486" and num(m["cut"], 7) == "-6.054"  # the seed's values
    assert "<b>-6.108486</b>" in shown(box) and "<b>-6.054</b>" in shown(box)
    before = moved(box, "alpha", 0.1)
    gap = box.numbers["full"] - box.numbers["cut"]
    assert abs(gap) > 0.1 and bytes(box.plot.value) != before


# ---------------------------------------------------------------- export-html (no browser here)

from gradtutor.authoring import export_html as export  # noqa: E402


def test_export_says_what_to_do_when_something_is_missing(tmp_path, capsys):
    assert export.export_cli(notebook=tmp_path / "nope.ipynb", out=None, execute=False) == 1
    assert "nope.ipynb does not exist" in capsys.readouterr().err
    with pytest.raises(export.ExportError, match="make node_modules"):
        export.Assets.find(tmp_path)


def test_export_of_an_unrun_notebook_uses_local_scripts_and_warns(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = tmp_path / "lesson.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1 + 1")]), nb)
    page, warnings = export.export_html(nb)
    assert page == tmp_path / "lesson.html"
    assert warnings == ["the notebook has no outputs: pass --execute to run it first"]
    text = page.read_text()
    assert 'src="lesson_files/require.js"' in text and "lesson_files/mathjax.js" in text
    assert "cdn." not in text and "cdnjs" not in text
    files = tmp_path / "lesson_files"
    assert (files / "html-manager" / "embed-amd.js").stat().st_size > 1_000_000


# ---------------------------------------------------------------- feedback in lab and terminal

def test_feedback_reads_well_in_a_terminal_and_in_lab():
    from autograder import check

    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    (x + y).backward()
    wrong = {"x": {"is_leaf": True, "grad": 1.0}, "y": {"is_leaf": True, "grad": 1.0},
             "z": {"is_leaf": True, "grad": 1.0}}
    fb = check("leaves_xy", wrong)
    text = str(fb)
    assert text.startswith("✘ Not yet right: ")
    assert all(len(line) <= 88 for line in text.splitlines())
    for part in ("Likely misconception:", "Why:", "Hint:"):
        assert part in text and part in fb._repr_html_()
    empty = check("leaves_xy", ...)
    assert str(empty).count("Not answered yet") == 1  # the label is not repeated in the body
    assert 'class="gradtutor-feedback gradtutor-not_answered"' in empty._repr_html_()


def test_headless_mode_skips_drawing_and_is_off_by_default():
    """The grading worker turns headless mode on: drawings and widgets return None at once."""
    from autograder import draw_graph, tangent_explorer
    from autograder.visual import headless

    x = torch.tensor(2.0, requires_grad=True)
    assert headless.ENABLED is False
    assert draw_graph(x * 3) is not None
    headless.ENABLED = True
    try:
        assert draw_graph(x * 3) is None
        assert tangent_explorer() is None
    finally:
        headless.ENABLED = False
