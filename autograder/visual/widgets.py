"""Student side: lesson widgets; move a slider or click a step, watch torch compute a gradient.

Every function returns an ipywidgets ``VBox`` to display. Every number a widget shows is computed
with torch when the control moves (in float64, so the digits are the maths, not rounding), and
beside it an independent witness: the closed-form derivative or a finite difference.

Each returned box also carries, for tests and curious students, ``box.controls`` (name ->
control widget), ``box.entries`` (slider name -> its named number box), ``box.numbers`` (the
numbers on display, as floats) and ``box.readout`` / ``box.plot`` (the HTML and Image widgets
that show them).
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from traitlets import Unicode

from autograder.visual.headless import skipped_when_headless

F64 = torch.float64
INK, ACCENT, GOOD, BAD, MUTED = "#1f2328", "#1d4ed8", "#1a7f37", "#cf222e", "#57606a"  # plots
# The same colours as text in the page: ink and muted from the theme's variables (JupyterLab's
# light and dark themes both read at >= 4.5:1; ours where no theme is loaded); a verdict's
# colour comes with its own pale background, so it reads the same on any theme (WCAG 1.4.3).
TONES = {INK: "color:var(--jp-content-font-color1,#1f2328)",
         MUTED: "color:var(--jp-content-font-color2,#57606a)",
         GOOD: "color:#0f5323;background:#dafbe1;padding:1px 4px;border-radius:3px",
         BAD: "color:#a40e26;background:#ffebe9;padding:1px 4px;border-radius:3px"}


class DescribedImage(W.Image):
    """An Image whose ``tooltip`` is the plot in words: ipywidgets puts it on the <img> as
    ``title`` (its accessible name) only when the model has an empty ``description``, which
    Image lacks, so one is synced here."""

    description = Unicode("").tag(sync=True)


# ---------------------------------------------------------------- shared parts

def num(v: float, digits: int = 4) -> str:
    """1.4, 2.0, -6.108: whole numbers keep one decimal, as torch prints them."""
    v = float(v) + 0.0  # -0.0 + 0.0 is 0.0: a signed zero reads 0
    if v != v:
        return "nan"
    if v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    return f"{v:.{digits}g}"


def vec(t: torch.Tensor | Sequence[float], digits: int = 4) -> str:
    values = t.detach().flatten().tolist() if isinstance(t, torch.Tensor) else list(t)
    return "[" + ", ".join(num(v, digits) for v in values) + "]"


def figure(width: float = 5.0, height: float = 3.3) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(alpha=0.3)
    return fig, ax


def png(fig: Figure) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def rows(pairs: Sequence[tuple[str, str]]) -> str:
    """A two-column table of label -> value, the readout's usual shape."""
    body = "".join(f'<tr style="vertical-align:top"><td style="padding:2px 10px 2px 0;{TONES[MUTED]}">{k}</td>'
                   f'<td style="padding:2px 0;font-family:var(--jp-code-font-family,monospace)">'
                   f"{v}</td></tr>" for k, v in pairs)
    return f"<table style='border-collapse:collapse'>{body}</table>"


def note(text: str, colour: str = INK) -> str:
    return f'<p style="margin:6px 0;{TONES[colour]};max-width:34em">{text}</p>'


# A live region is announced when its content changes, not when it is inserted with its content.
# ipywidgets sets no attribute on a widget's element, and its HTML view replaces its content at
# every update (a live region inside included). The one hook the view offers is the markup it
# renders: this image fails to load at once (an empty data: URL), and its handler makes the
# view's content element, which stays from the first render on, the live region; from then on
# every update's own role/aria-live (the fallback where no script runs) is dropped before the
# browser reads it, so the region is never nested nor re-created. Shown nowhere (hidden, alt="").
_STABLE_LIVE_JS = (
    "var c=this.closest('.widget-html-content');this.remove();if(!c)return;"
    "var drop=function(){c.querySelectorAll('[aria-live],img[data-live]').forEach(function(e){"
    "if(e.tagName==='IMG'){e.remove();}else{e.removeAttribute('role');e.removeAttribute('aria-live');}});};"
    "if(!c.hasAttribute('aria-live')){c.setAttribute('role','status');c.setAttribute('aria-live','polite');"
    "new MutationObserver(drop).observe(c,{childList:true});}drop();")
STABLE_LIVE_HOOK = f'<img hidden alt="" data-live src="data:," onerror="{_STABLE_LIVE_JS}">'


def live(text: str) -> str:
    """The readout as a polite live region: a screen reader says the new result after a move.

    In a browser the region is the HTML widget's content element, made live once and updated
    in place (STABLE_LIVE_HOOK); where no script runs, the role on this div stands in.
    """
    return f'<div role="status" aria-live="polite">{text}{STABLE_LIVE_HOOK}</div>'


def named_entry(control: W.Widget) -> W.Widget | None:
    """A number box for a slider, named by the slider's label, kept equal to it in the browser.

    ipywidgets associates a text box with its label (<label for=...>) but gives a slider's
    handle (role="slider") no name (jupyter-widgets/ipywidgets#2650); the box is the control a
    screen reader names and a keyboard types into. Its label is hidden visually: the slider's
    label beside it is the visible one. None for a control that is not a slider.
    """
    if isinstance(control, W.FloatLogSlider):
        entry: W.Widget = W.BoundedFloatText(value=control.value, min=control.base**control.min,
                                             max=control.base**control.max, step=None)
    elif isinstance(control, W.FloatSlider):
        entry = W.BoundedFloatText(value=control.value, min=control.min, max=control.max,
                                   step=control.step)
    elif isinstance(control, W.IntSlider):
        entry = W.BoundedIntText(value=control.value, min=control.min, max=control.max,
                                 step=control.step)
    else:
        return None
    entry.description = control.description
    entry.style.description_width = "0px"
    entry.layout = W.Layout(width="6.5em", margin="0 12px 0 0")
    entry.add_class("gradtutor-entry")
    entry.link = W.jslink((control, "value"), (entry, "value"))
    return entry


def labelled(control: W.Widget) -> W.Widget:
    """A slider with its named number box after it (they wrap together); others as they are."""
    entry = named_entry(control)
    return control if entry is None else W.HBox([control, entry])


def described(fig: Figure, words: str) -> Figure:
    """Attach the plot in words; the widget shows it as the image's text alternative."""
    fig.gradtutor_alt = words
    return fig


def panel(title: str, intro: str, controls: dict[str, W.Widget],
          render: Callable[[], tuple[str, Figure | None, dict[str, float]]],
          buttons: dict[str, Callable[[], None]] | None = None) -> W.VBox:
    """Title, controls, then the plot beside the numbers; re-rendered whenever a control moves."""
    readout = W.HTML(layout=W.Layout(min_width="300px", flex="1 1 320px"))
    plot = DescribedImage(format="png", layout=W.Layout(width="500px", max_width="100%"))
    box = W.VBox()
    box.add_class("gradtutor-widget")
    box.controls, box.readout, box.plot, box.numbers = dict(controls), readout, plot, {}

    def refresh(*_: Any) -> None:
        try:
            text, fig, numbers = render()
        except Exception as e:  # a student's function may fail: say so inside the widget
            readout.value = live(note(f"Could not compute this: {html.escape(type(e).__name__)}: "
                                 f"{html.escape(str(e))[:300]}", BAD))
            box.numbers = {}
            return
        readout.value = live(text)
        box.numbers = numbers
        if fig is not None:
            plot.value = png(fig)
            plot.tooltip = getattr(fig, "gradtutor_alt", "") or f"Plot: {title}"

    for control in controls.values():
        if hasattr(control, "value"):
            control.observe(refresh, names="value")
    for label, action in (buttons or {}).items():
        button = W.Button(description=label, layout=W.Layout(width="auto"))

        def clicked(_: Any, action: Callable[[], None] = action) -> None:
            action()
            refresh()

        button.on_click(clicked)
        box.controls[label] = button
    header = W.HTML(f'<div style="font-weight:600;font-size:1.05em">{html.escape(title)}</div>'
                    + note(intro, MUTED))
    shown = {name: labelled(c) for name, c in box.controls.items()}
    box.entries = {name: pair.children[1] for name, pair in shown.items()
                   if pair is not box.controls[name]}
    bar = W.HBox(list(shown.values()), layout=W.Layout(flex_flow="row wrap"))
    body = W.HBox([plot, readout], layout=W.Layout(flex_flow="row wrap", align_items="center"))
    box.children = (header, bar, body)
    box.refresh = refresh
    refresh()
    return box


def slider(label: str, value: float, lo: float, hi: float, step: float) -> W.FloatSlider:
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=label,
                         readout_format=".3g", continuous_update=False,
                         style={"description_width": "initial"},
                         layout=W.Layout(width="330px"))


def grad_at(f: Callable[[torch.Tensor], torch.Tensor], x: float) -> tuple[float, float]:
    """f(x) and df/dx by autograd, in float64."""
    t = torch.tensor(float(x), dtype=F64, requires_grad=True)
    y = f(t)
    if not isinstance(y, torch.Tensor) or y.numel() != 1:
        raise ValueError("f must return a single number (a one-element tensor) for a number x")
    (g,) = torch.autograd.grad(y.sum(), t, allow_unused=True)
    return y.item(), 0.0 if g is None else g.item()


def central_difference(f: Callable[[torch.Tensor], torch.Tensor], x: float,
                       h: float = 1e-6) -> float:
    with torch.no_grad():
        up = f(torch.tensor(x + h, dtype=F64)).item()
        down = f(torch.tensor(x - h, dtype=F64)).item()
    return (up - down) / (2 * h)


# ---------------------------------------------------------------- 1. tangent line

def _cubic(x: torch.Tensor) -> torch.Tensor:
    return x**3 - 2 * x


def _cubic_slope(x: float) -> float:  # the derivative worked by hand: d/dx (x^3 - 2x)
    return 3 * x**2 - 2


@skipped_when_headless
def tangent_explorer(f: Callable[[torch.Tensor], torch.Tensor] | None = None, x0: float = 1.0,
                     x_range: tuple[float, float] = (-3.0, 3.0), *,
                     df: Callable[[float], float] | None = None,
                     label: str | None = None) -> W.VBox:
    """Slide x along f; the tangent's slope is autograd's f'(x), beside the analytic one.

    ``f`` takes and returns tensors (default x**3 - 2x). ``df`` is your hand-worked derivative
    (a plain function of a float); without one, a central finite difference stands in.
    """
    if f is None:
        f, df, label = _cubic, _cubic_slope, label or "f(x) = x³ − 2x,  f′(x) = 3x² − 2"
    label = label or getattr(f, "__name__", "f")
    lo, hi = float(x_range[0]), float(x_range[1])
    x = slider("x", min(max(float(x0), lo), hi), lo, hi, (hi - lo) / 240)

    def render() -> tuple[str, Figure, dict[str, float]]:
        at = x.value
        y, g = grad_at(f, at)
        witness = df(at) if df is not None else central_difference(f, at)
        name = "analytic f′(x)" if df is not None else "finite difference"
        fig, ax = figure()
        xs = torch.linspace(lo, hi, 241, dtype=F64)
        with torch.no_grad():
            ys = torch.stack([f(v).reshape(()) for v in xs])
        ax.plot(xs, ys, color=INK, lw=1.8, label="f(x)")
        span = (hi - lo) / 5
        tx = torch.tensor([at - span, at + span], dtype=F64)
        ax.plot(tx, y + g * (tx - at), color=ACCENT, lw=2, label=f"tangent, slope {num(g)}")
        ax.plot([at], [y], "o", color=BAD)
        ax.set_xlabel("x")
        ax.legend(loc="best", fontsize=8)
        agree = abs(g - witness) <= 1e-6 * max(1.0, abs(g))
        text = rows([("function", html.escape(label)), ("x", num(at)), ("f(x)", num(y)),
                     ("autograd f′(x)", f"<b>{num(g)}</b>"), (name, num(witness))])
        text += note("They agree." if agree else "They differ: is the hand-worked "
                     "derivative right?", GOOD if agree else BAD)
        text += note("The slope of the tangent line is the derivative: nudge x by a tiny h and "
                     "f changes by about f′(x)·h.", MUTED)
        described(fig, f"Plot of {label} for x from {num(lo)} to {num(hi)}, with the tangent "
                       f"line at x = {num(at)}, where f(x) = {num(y)} (the red dot); the "
                       f"tangent's slope is {num(g)}.")
        return text, fig, {"x": at, "f": y, "grad": g, "witness": witness}

    return panel("Tangent line and derivative", "Move x: the blue line touches the curve, and "
                 "its slope is the gradient autograd computes.", {"x": x}, render)


# ---------------------------------------------------------------- 2. chain rule, step by step

CHAIN_STEPS = (
    "Forward: x and y are leaves you typed in.",
    "Forward: x·y (MulBackward0).",
    "Forward: x² (PowBackward0).",
    "Forward: z = x·y + x² (AddBackward0). The forward pass is done.",
    "Backward starts at the output: ∂z/∂z = 1.",
    "AddBackward0 passes the gradient on unchanged: ∂z/∂(x·y) = 1 · 1, ∂z/∂(x²) = 1 · 1.",
    "PowBackward0 multiplies by 2x: x receives ∂z/∂(x²) · 2x.",
    "MulBackward0 multiplies by the other factor: x receives ∂z/∂(x·y) · y, y receives "
    "∂z/∂(x·y) · x.",
    "x fed two operations: the engine adds its two shares first, then AccumulateGrad "
    "writes the sum into x.grad, once.",
)


def _chain_numbers(x0: float, y0: float) -> dict[str, float]:
    x = torch.tensor(x0, dtype=F64, requires_grad=True)
    y = torch.tensor(y0, dtype=F64, requires_grad=True)
    a = x * y
    b = x**2
    z = a + b
    dz_da, dz_db = torch.autograd.grad(z, (a, b), retain_graph=True)
    x_from_b = torch.autograd.grad(b, x, dz_db, retain_graph=True)[0]
    x_from_a, y_from_a = torch.autograd.grad(a, (x, y), dz_da, retain_graph=True)
    z.backward()
    return {"x": x0, "y": y0, "a": a.item(), "b": b.item(), "z": z.item(), "dz": 1.0,
            "dz_da": dz_da.item(), "dz_db": dz_db.item(), "x_from_b": x_from_b.item(),
            "x_from_a": x_from_a.item(), "y_grad": y.grad.item(), "x_grad": x.grad.item()}


# the nodes as the lesson writes them (the products have no names of their own there)
CHAIN_LABELS = {"x": "x", "y": "y", "a": "x·y", "b": "x²", "z": "z"}


# defaults where the values to predict differ and none is 0 or 1 (x·y -3.75, x² 6.25, z 2.5,
# the shares 1.5 and -5, x.grad -3.5, y.grad -2.5), at no exercise's values
@skipped_when_headless
def chain_rule_stepper(x0: float = -2.5, y0: float = 1.5) -> W.VBox:
    """z = x·y + x²: forward values one node per click, then gradients flowing back."""
    x = slider("x", x0, -4.0, 4.0, 0.5)
    y = slider("y", y0, -4.0, 4.0, 0.5)
    step = W.IntSlider(value=0, min=0, max=len(CHAIN_STEPS) - 1, description="step",
                       layout=W.Layout(width="330px"))

    def move(by: int) -> Callable[[], None]:
        def go() -> None:
            step.value = min(max(step.value + by, step.min), step.max)
        return go

    def render() -> tuple[str, Figure, dict[str, float]]:
        n = _chain_numbers(x.value, y.value)
        s = step.value
        fig, ax = figure(5.4, 3.2)
        ax.set_axis_off()
        ax.grid(False)
        where = {"x": (0, 1), "y": (0, -1), "a": (1.5, 0.2), "b": (1.5, 1.6), "z": (3, 0.9)}
        shown_at = {"x": 0, "y": 0, "a": 1, "b": 2, "z": 3}
        grads = {"z": (4, f"∂z/∂z = {num(n['dz'])}"), "a": (5, f"∂z/∂(x·y) = {num(n['dz_da'])}"),
                 "b": (5, f"∂z/∂(x²) = {num(n['dz_db'])}"),
                 "y": (7, f"y.grad = {num(n['y_grad'])}"),
                 "x": (8, f"x.grad = {num(n['x_from_a'])} + {num(n['x_from_b'])}"
                          f" = {num(n['x_grad'])}")}
        for a_, b_ in (("x", "a"), ("y", "a"), ("x", "b"), ("a", "z"), ("b", "z")):
            ax.annotate("", xy=where[b_], xytext=where[a_], arrowprops=dict(
                arrowstyle="-|>", color=MUTED, shrinkA=18, shrinkB=18))
        for k, (px, py) in where.items():
            lit = s >= shown_at[k]
            text = f"{CHAIN_LABELS[k]} = {num(n[k])}" if lit else f"{CHAIN_LABELS[k]} = ?"
            ax.text(px, py, text, ha="center", va="center", fontsize=10,
                    bbox=dict(boxstyle="round", fc="#dbeafe" if k in "xy" else "#fde68a",
                              ec=INK if lit else MUTED, alpha=1 if lit else 0.4))
            if s >= grads[k][0]:
                ax.text(px, py - 0.45, grads[k][1], ha="center", va="top", fontsize=8.5,
                        color=BAD)
        if s == 6:
            ax.text(0.75, 1.55, f"share {num(n['x_from_b'])}", color=BAD, fontsize=8)
        if s >= 7:
            ax.text(0.55, 0.75, f"share {num(n['x_from_a'])}", color=BAD, fontsize=8)
        ax.set_xlim(-0.8, 3.8)
        ax.set_ylim(-1.9, 2.2)
        shown = [f"{CHAIN_LABELS[k]} = {num(n[k])}" if s >= shown_at[k]
                 else f"{CHAIN_LABELS[k]} not computed yet"
                 for k in where] + [grads[k][1] for k in reversed(where) if s >= grads[k][0]]
        described(fig, f"Drawing of the graph of z = x·y + x², step {s} of {step.max}: x and y "
                       "feed x·y, x feeds x², x·y and x² feed z = x·y + x². Shown: "
                       + "; ".join(shown) + ".")
        text = note(f"<b>Step {s} of {step.max}.</b> {CHAIN_STEPS[s]}")
        text += rows([("z", "x · y + x²"), ("x.grad (autograd)", num(n["x_grad"])),
                      ("by hand: y + 2x", num(n["y"] + 2 * n["x"])),
                      ("y.grad (autograd)", num(n["y_grad"])), ("by hand: x", num(n["x"]))]
                     if s == step.max else [("z", "x · y + x²")])
        return text, fig, {**n, "step": s}

    return panel("The chain rule, one step at a time",
                 "Click Next: values flow forward through the graph, then gradients flow back.",
                 {"x": x, "y": y, "step": step}, render,
                 buttons={"◀ Back": move(-1), "Next ▶": move(1), "Restart": move(-99)})


# ---------------------------------------------------------------- 3. kinks at zero

KINKS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], str]] = {
    "torch.relu(x)": (torch.relu, "ReluBackward0 lets the gradient through only where the "
                      "output is positive (the mask out > 0); at x = 0 the output is 0, "
                      "so the mask is False."),
    "x.abs()": (torch.abs, "AbsBackward0 multiplies the gradient by sign(x), and sign(0) "
                "is 0."),
    "x.clamp(min=0)": (lambda t: t.clamp(min=0), "Clamp lets the gradient through wherever "
                       "x is inside the allowed range, and the boundary x = min belongs to "
                       "the range."),
    "torch.maximum(x, 0)": (lambda t: torch.maximum(t, torch.zeros_like(t)),
                            "When both inputs of maximum are equal there is no single "
                            "winner, so MaximumBackward0 splits the gradient equally "
                            "between them."),
    "torch.where(x > 0, x, 0)": (lambda t: torch.where(t > 0, t, torch.zeros_like(t)),
                                 "WhereBackward0 sends the gradient to the branch the "
                                 "condition picked; x > 0 is False at 0, so it goes to the "
                                 "constant branch."),
}


@skipped_when_headless
def kink_explorer() -> W.VBox:
    """Five spellings of max(x, 0): same values, different gradients at the corner x = 0."""
    pick = W.Dropdown(options=list(KINKS), value="torch.relu(x)", description="function",
                      layout=W.Layout(width="330px"))
    x = slider("x", 0.0, -1.0, 1.0, 0.125)

    def render() -> tuple[str, Figure, dict[str, float]]:
        f, why = KINKS[pick.value]
        at = x.value
        y, g = grad_at(f, at)
        h = 1e-6
        with torch.no_grad():
            here = f(torch.tensor(at, dtype=F64)).item()
            left = (here - f(torch.tensor(at - h, dtype=F64)).item()) / h
            right = (f(torch.tensor(at + h, dtype=F64)).item() - here) / h
        fig, ax = figure()
        xs = torch.linspace(-1, 1, 201, dtype=F64)
        with torch.no_grad():
            ax.plot(xs, f(xs), color=INK, lw=2, label=pick.value)
        tx = torch.tensor([at - 0.5, at + 0.5], dtype=F64)
        ax.plot(tx, y + g * (tx - at), color=ACCENT, lw=2, label=f"slope torch returns: {num(g)}")
        ax.plot([at], [y], "o", color=BAD)
        ax.set_ylim(-0.6, 1.1)
        ax.legend(loc="upper left", fontsize=8)
        corner = abs(at) < 1e-12
        text = rows([("function", pick.value), ("x", num(at)), ("value", num(y)),
                     ("slope from the left", num(left)), ("slope from the right", num(right)),
                     ("torch's gradient", f"<b>{num(g)}</b>")])
        if corner:
            text += note("At the corner the two one-sided slopes differ, so there is no "
                         "derivative in the usual sense; torch still has to return a number, "
                         "and each operation has its own convention. " + why)
        else:
            text += note("Away from 0 the function is smooth: both one-sided slopes agree and "
                         "torch returns that slope. Move x to 0 to see the corner.", MUTED)
        described(fig, f"Plot of {pick.value} for x from -1 to 1, a corner at x = 0, with the "
                       f"line of the slope torch returns at x = {num(at)}: {num(g)} (the red "
                       f"dot is the value {num(y)}).")
        return text, fig, {"x": at, "value": y, "grad": g, "left": left, "right": right}

    return panel("Kinks: what torch returns at the corner",
                 "Four of these spell max(x, 0) and one is |x|; all have a corner at 0. "
                 "Pick one and slide x to exactly 0.",
                 {"function": pick, "x": x}, render)


# ---------------------------------------------------------------- 4. accumulation

@skipped_when_headless
def accumulation_stepper(x0: float = 2.0) -> W.VBox:
    """y = x²: each backward() adds dy/dx to x.grad; zero_() empties it."""
    x = slider("x", x0, -3.0, 3.0, 0.5)
    state: dict[str, Any] = {"x": None, "history": []}

    def leaf() -> torch.Tensor:
        if state["x"] is None or state["x"].item() != x.value:
            state["x"] = torch.tensor(x.value, dtype=F64, requires_grad=True)
            state["history"] = []
        return state["x"]

    def backward() -> None:
        t = leaf()
        (t**2).backward()
        state["history"].append(("backward()", t.grad.item()))

    def zero() -> None:
        t = leaf()
        if t.grad is not None:
            t.grad.zero_()
        state["history"].append(("x.grad.zero_()", 0.0 if t.grad is not None else None))

    def reset() -> None:
        state["x"] = None

    def render() -> tuple[str, Figure, dict[str, float]]:
        t = leaf()
        _, per_call = grad_at(lambda v: v**2, t.item())
        grad = None if t.grad is None else t.grad.item()
        history = state["history"]
        fig, ax = figure(5.0, 3.0)
        values = [0.0 if v is None else v for _, v in history]
        ax.bar(range(1, len(values) + 1), values,
               color=[BAD if what != "backward()" else ACCENT for what, _ in history])
        ax.set_xlabel("call")
        ax.set_ylabel("x.grad after the call")
        ax.set_xlim(0.3, max(6, len(values)) + 0.7)
        calls = sum(what == "backward()" for what, _ in history)
        described(fig, "Bar chart of x.grad after each call: " + (", ".join(
            f"{i}. {what} gives {'None' if v is None else num(v)}"
            for i, (what, v) in enumerate(history, 1)) or "no calls yet") + ".")
        text = rows([("y", "x²"), ("x", num(t.item())), ("dy/dx per call (2x)", num(per_call)),
                     ("backward() calls", str(calls)),
                     ("x.grad now", "None" if grad is None else f"<b>{num(grad)}</b>")])
        text += note("backward() does not overwrite .grad, it adds to it: after n calls with "
                     "no zero_(), x.grad is n times dy/dx. Training loops call "
                     "optimizer.zero_grad() for exactly this reason.", MUTED)
        return text, fig, {"x": t.item(), "per_call": per_call, "calls": calls,
                           "grad": float("nan") if grad is None else grad}

    return panel("Gradients accumulate",
                 "Click backward() a few times and watch x.grad grow; zero_() empties it.",
                 {"x": x}, render,
                 buttons={"y.backward()": backward, "x.grad.zero_()": zero,
                          "new x (grad None)": reset})


# ---------------------------------------------------------------- 5. vector-Jacobian product

@skipped_when_headless
def vjp_explorer(x0: Sequence[float] = (1.0, 2.0, 3.0)) -> W.VBox:
    """y = x² elementwise; y.backward(v) puts vᵀJ into x.grad. Slide the seed v."""
    seeds = [slider(f"v{i + 1}", 1.0, -2.0, 2.0, 0.5) for i in range(len(x0))]
    point = torch.tensor(list(x0), dtype=F64)

    def preset(values: Sequence[float]) -> Callable[[], None]:
        def go() -> None:
            for s, v in zip(seeds, values, strict=True):
                s.value = v
        return go

    def render() -> tuple[str, Figure, dict[str, float]]:
        v = torch.tensor([s.value for s in seeds], dtype=F64)
        x = point.clone().requires_grad_(True)
        y = x**2
        y.backward(v)
        jac = torch.autograd.functional.jacobian(lambda t: t**2, point)
        by_matrix = v @ jac
        fig, ax = figure(5.0, 3.0)
        idx = list(range(1, len(x0) + 1))
        ax.bar([i - 0.2 for i in idx], v.tolist(), width=0.4, color=MUTED, label="seed v")
        ax.bar([i + 0.2 for i in idx], x.grad.tolist(), width=0.4, color=ACCENT,
               label="x.grad = vᵀJ")
        ax.set_xticks(idx, [f"x{i}" for i in idx])
        ax.axhline(0, color=INK, lw=0.8)
        ax.legend(fontsize=8)
        matrix = "<br>".join(vec(r) for r in jac)
        text = rows([("x", vec(point)), ("y = x²", vec(y)),
                     ("Jacobian J = ∂y/∂x", matrix), ("seed v", vec(v)),
                     ("vᵀJ (matrix product)", vec(by_matrix)),
                     ("x.grad after y.backward(v)", f"<b>{vec(x.grad)}</b>")])
        text += note("y is a vector, so backward needs a seed: how much each output matters "
                     "to you. A zero in v silences that output; a 2 doubles it. v = ones gives "
                     "the same as y.sum().backward().", MUTED)
        described(fig, f"Bar chart per input x1 to x{len(idx)}: the seed v = {vec(v)} beside "
                       f"x.grad = vᵀJ = {vec(x.grad)}.")
        numbers = {f"grad{i}": g for i, g in enumerate(x.grad.tolist())}
        numbers.update({f"v{i}": s for i, s in enumerate(v.tolist())})
        return text, fig, numbers

    ones = [1.0] * len(x0)
    other = [1.0, 0.0, 2.0][: len(x0)] + [1.0] * max(0, len(x0) - 3)
    return panel("Seeds and the vector-Jacobian product",
                 "Slide the seed v and see x.grad = vᵀJ change.",
                 {s.description: s for s in seeds}, render,
                 buttons={f"v = {vec(ones)}": preset(ones), f"v = {vec(other)}": preset(other)})


# ---------------------------------------------------------------- 6. gradient descent

def _bowl(w: torch.Tensor) -> torch.Tensor:
    return (w - 3) ** 2


def _descent_regime(lr: float, curvature: float) -> str:
    """What steps of size lr do on a quadratic bowl: each step scales w − w* by 1 − lr·L″."""
    factor = 1 - lr * curvature
    scale = f"each step multiplies the distance to the minimum by 1 − lr·L″ = {num(factor)}"
    if abs(factor) < 1e-9:
        return f"Here {scale}: one step lands exactly on the minimum."
    if factor > 0:
        return (f"Here {scale}: w creeps toward the minimum from one side. The gradient "
                "points uphill, so we step against it. Try a larger learning rate.")
    if factor > -1:
        return f"Here {scale}: each step jumps over the minimum, but by less each time."
    if abs(factor + 1) < 1e-9:
        return f"Here {scale}: w bounces between two points forever."
    return (f"Here {scale}: each step overshoots further than the last, so descent diverges "
            f"(any lr above 2 / L″ = {num(2 / curvature)} does).")


@skipped_when_headless
def descent_stepper(w0: float = 1.0) -> W.VBox:
    """L(w) = (w − 3)²: step w ← w − lr · dL/dw with the learning rate you choose."""
    lr = W.FloatSlider(value=0.1, min=0.01, max=1.2, step=0.01, description="learning rate",
                       readout_format=".2f", continuous_update=False,
                       style={"description_width": "initial"}, layout=W.Layout(width="330px"))
    path: list[float] = [float(w0)]

    def step(n: int) -> Callable[[], None]:
        def go() -> None:
            for _ in range(n):
                w = torch.tensor(path[-1], dtype=F64, requires_grad=True)
                _bowl(w).backward()
                with torch.no_grad():  # the update itself must not be recorded
                    w -= lr.value * w.grad
                path.append(w.item())
        return go

    def reset() -> None:
        del path[1:]

    def render() -> tuple[str, Figure, dict[str, float]]:
        w = path[-1]
        loss, g = grad_at(_bowl, w)
        curvature = torch.autograd.functional.hessian(_bowl, torch.tensor(w, dtype=F64)).item()
        fig, ax = figure()
        lo, hi = min([*path, -1.0]) - 0.5, max([*path, 7.0]) + 0.5
        ws = torch.linspace(lo, hi, 200, dtype=F64)
        ax.plot(ws, _bowl(ws), color=INK, lw=1.8, label="L(w) = (w − 3)²")
        pts = torch.tensor(path, dtype=F64)
        ax.plot(pts, _bowl(pts), "o-", color=ACCENT, ms=5, lw=1, label="steps")
        ax.plot([w], [loss], "o", color=BAD, ms=8)
        ax.set_xlabel("w")
        ax.legend(fontsize=8)
        new = w - lr.value * g
        described(fig, f"Plot of the loss L(w) = (w − 3)², lowest at w = 3, with the "
                       f"{len(path) - 1} step(s) taken so far: w = {', '.join(num(p) for p in path[-12:])}"
                       f"; now w = {num(w)}, L(w) = {num(loss)} (the red dot).")
        text = rows([("steps taken", str(len(path) - 1)), ("w", f"<b>{num(w)}</b>"),
                     ("L(w)", num(loss)), ("dL/dw (autograd)", num(g)),
                     ("by hand: 2(w − 3)", num(2 * (w - 3))),
                     ("next step", f"w ← {num(w)} − {num(lr.value)} · ({num(g)}) = {num(new)}")])
        text += note(_descent_regime(lr.value, curvature), BAD if lr.value * curvature >= 2
                     else MUTED)
        return text, fig, {"w": w, "loss": loss, "grad": g, "next": new, "steps": len(path) - 1}

    return panel("Gradient descent, one step per click",
                 "w starts at 1; the minimum is where the slope is 0.", {"lr": lr}, render,
                 buttons={"Step": step(1), "5 steps": step(5), "Reset": reset})


# ---------------------------------------------------------------- 7. meta-gradient

def meta_gradients(x0: float, alpha: float, target: float = 4.0) -> dict[str, float]:
    """The reference problem: X' = X + α·dl1/dX, prediction (3X + 3X')/2, MSE against target.

    Returns the true gradient (create_graph=True), the one with the inner gradient cut, and
    both closed forms.
    """
    out: dict[str, float] = {}
    for mode in ("full", "cut"):
        x = torch.tensor([x0], dtype=F64, requires_grad=True)
        y = torch.tensor([target], dtype=F64)
        p1 = 3 * x
        l1 = torch.nn.functional.mse_loss(p1, y)
        (g1,) = torch.autograd.grad(l1, x, create_graph=(mode == "full"), retain_graph=True)
        x2 = x + alpha * (g1 if mode == "full" else g1.detach())
        final = (p1 + 3 * x2) / 2
        l2 = torch.nn.functional.mse_loss(final, y)
        (g,) = torch.autograd.grad(l2, x, retain_graph=True)
        out[mode] = g.item()
        if mode == "full":  # how fast the inner gradient itself moves with X
            out["inner_slope"] = torch.autograd.grad(g1.sum(), x)[0].item()
            out["dX2_dX"] = 1 + alpha * out["inner_slope"]
        out["inner"], out["prediction"], out["loss"] = g1.item(), final.item(), l2.item()
    # by hand: dl1/dX = 18X − 6y, so the prediction is 3X + 1.5α(18X − 6y)
    pred = 3 * x0 + 1.5 * alpha * (18 * x0 - 6 * target)
    out["full_by_hand"] = 2 * (pred - target) * (3 + 27 * alpha)
    out["cut_by_hand"] = 2 * (pred - target) * 3
    return out


def outer_loss(xs: torch.Tensor, alpha: float, target: float = 4.0) -> torch.Tensor:
    """The loss after the inner step at many X at once (each X its own problem), by autograd."""
    x = xs.detach().clone().requires_grad_(True)
    (g1,) = torch.autograd.grad(((3 * x - target) ** 2).sum(), x)
    with torch.no_grad():
        return ((3 * x + 3 * (x + alpha * g1)) / 2 - target) ** 2


@skipped_when_headless
def meta_gradient_explorer(x0: float = 1.0, alpha: float = 0.001) -> W.VBox:
    """The gradient through an inner update step, with and without create_graph=True."""
    x = slider("X", x0, -1.0, 3.0, 0.05)
    a = W.FloatLogSlider(value=alpha, base=10, min=-4, max=-0.5, step=0.25,
                         description="inner step α", readout_format=".2g",
                         continuous_update=False, style={"description_width": "initial"},
                         layout=W.Layout(width="330px"))

    def render() -> tuple[str, Figure, dict[str, float]]:
        m = meta_gradients(x.value, a.value)
        fig, ax = figure()

        xs = torch.linspace(x.value - 0.6, x.value + 0.6, 121, dtype=F64)
        ax.plot(xs, outer_loss(xs, a.value), color=INK, lw=1.8, label="loss after the inner step")
        tx = torch.tensor([x.value - 0.4, x.value + 0.4], dtype=F64)
        ax.plot(tx, m["loss"] + m["full"] * (tx - x.value), color=GOOD, lw=2,
                label=f"slope with create_graph=True: {num(m['full'], 7)}")
        ax.plot(tx, m["loss"] + m["cut"] * (tx - x.value), "--", color=BAD, lw=2,
                label=f"slope with the inner gradient cut: {num(m['cut'], 7)}")
        ax.set_xlabel("X")
        ax.legend(fontsize=7.5)
        described(fig, f"Plot of the loss after the inner step for X around {num(x.value)}, "
                       f"with two lines through X = {num(x.value)}: the slope with "
                       f"create_graph=True, {num(m['full'], 7)} (solid), and the slope with the "
                       f"inner gradient cut, {num(m['cut'], 7)} (dashed).")
        table = (
            "<table style='border-collapse:collapse'><tr><th></th>"
            f"<th style='padding:2px 10px'><span style='{TONES[GOOD]}'>create_graph=True</span></th>"
            f"<th style='padding:2px 10px'><span style='{TONES[BAD]}'>inner gradient cut</span></th></tr>"
            f"<tr><td style='{TONES[MUTED]}'>torch</td><td style='padding:2px 10px'>"
            f"<b>{num(m['full'], 7)}</b></td><td style='padding:2px 10px'><b>{num(m['cut'], 7)}"
            f"</b></td></tr><tr><td style='{TONES[MUTED]}'>by hand</td>"
            f"<td style='padding:2px 10px'>{num(m['full_by_hand'], 7)}</td>"
            f"<td style='padding:2px 10px'>{num(m['cut_by_hand'], 7)}</td></tr></table>")
        text = rows([("X", num(x.value)), ("inner gradient dl1/dX", num(m["inner"], 7)),
                     ("X′ = X + α·dl1/dX", num(x.value + a.value * m["inner"], 7)),
                     ("prediction (3X + 3X′)/2", num(m["prediction"], 7)),
                     ("loss (MSE against 4)", num(m["loss"], 7))]) + table
        text += note("Without create_graph=True the inner gradient comes back as a plain "
                     "number, so X′ = X + constant and dX′/dX = 1. With it, the inner gradient "
                     "stays a function of X: its own slope is "
                     f"{num(m['inner_slope'])}, so dX′/dX = 1 + α · {num(m['inner_slope'])} = "
                     f"{num(m['dX2_dX'], 7)}. That extra term is the meta-gradient.", MUTED)
        return text, fig, {"X": x.value, "alpha": a.value, **m}

    return panel("Differentiating through an update step",
                 "The gradient of the loss after one inner step, two ways. At a small α the "
                 "two slopes nearly agree; raise α and the cut slope visibly misses the "
                 "curve.",
                 {"X": x, "alpha": a}, render)


# ---------------------------------------------------------------- 8. gradient clipping

def clipped_gradients(grads: Sequence[Sequence[float]], max_norm: float) -> dict[str, Any]:
    """What torch's two clipping utilities do to these gradients, and the formulas by hand.

    ``clip_grad_norm_`` scales every gradient by one factor min(1, max_norm / (total + 1e-6))
    and returns the total 2-norm before clipping; ``clip_grad_value_`` clamps each entry.
    """
    params = [torch.zeros(len(g), dtype=F64, requires_grad=True) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = torch.tensor(list(g), dtype=F64)
    returned = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
    by_norm = [p.grad.clone() for p in params]
    for p, g in zip(params, grads, strict=True):
        p.grad = torch.tensor(list(g), dtype=F64)
    torch.nn.utils.clip_grad_value_(params, max_norm)
    by_value = [p.grad.clone() for p in params]
    flat = [float(v) for g in grads for v in g]
    total = sum(v * v for v in flat) ** 0.5  # by hand, no torch
    scale = min(1.0, max_norm / (total + 1e-6))
    return {"returned": returned, "total_by_hand": total, "scale": scale,
            "by_norm": torch.cat(by_norm), "by_value": torch.cat(by_value),
            "by_norm_by_hand": [v * scale for v in flat],
            "norm_after": torch.cat(by_norm).norm().item()}


@skipped_when_headless
def clip_explorer(grads: Sequence[Sequence[float]] = ((1.5, -2.0), (0.5, 1.0, -0.25)),
                  max_norm: float = 1.0) -> W.VBox:
    """Slide max_norm: compare clip_grad_norm_ (one scale for all) with clip_grad_value_."""
    limit = slider("max_norm (and clip value)", max_norm, 0.1, 4.0, 0.05)
    flat = [float(v) for g in grads for v in g]
    labels = [f"p{i}[{j}]" for i, g in enumerate(grads) for j in range(len(g))]

    def render() -> tuple[str, Figure, dict[str, float]]:
        c = clipped_gradients(grads, limit.value)
        fig, ax = figure(5.4, 3.2)
        xs = torch.arange(len(flat), dtype=F64)
        width = 0.27
        ax.bar(xs - width, flat, width, color=MUTED, label="gradient")
        ax.bar(xs, c["by_norm"], width, color=ACCENT, label="clip_grad_norm_")
        ax.bar(xs + width, c["by_value"], width, color=BAD, label="clip_grad_value_")
        ax.axhline(0, color=INK, lw=0.8)
        ax.set_xticks(xs.tolist(), labels, fontsize=8)
        ax.legend(fontsize=7.5)
        clipped = c["scale"] < 1.0
        described(fig, f"Bar chart of the {len(flat)} gradient entries ({', '.join(labels)}): "
                       f"the gradient {vec(flat)}, after clip_grad_norm_ {vec(c['by_norm'])}, "
                       f"after clip_grad_value_ {vec(c['by_value'])}.")
        text = rows([("total norm (returned)", f"<b>{num(c['returned'])}</b>"),
                     ("by hand: √Σ g²", num(c["total_by_hand"])),
                     ("scale min(1, max/(total+1e-6))", num(c["scale"])),
                     ("norm after clip_grad_norm_", num(c["norm_after"])),
                     ("clip_grad_norm_", vec(c["by_norm"])),
                     ("by hand: scale · g", vec(c["by_norm_by_hand"])),
                     ("clip_grad_value_", vec(c["by_value"]))])
        text += note("clip_grad_norm_ multiplies every gradient by the same factor, so the "
                     "update keeps its direction and only gets shorter; clip_grad_value_ cuts "
                     "each entry on its own, which can turn the direction."
                     if clipped else "The total norm is below max_norm: clip_grad_norm_ leaves "
                     "every gradient as it is.", MUTED)
        return text, fig, {"max_norm": limit.value, "returned": c["returned"],
                           "total_by_hand": c["total_by_hand"], "scale": c["scale"],
                           "norm_after": c["norm_after"]}

    return panel("Clipping gradients: by norm or by value",
                 "Two parameters' gradients, five numbers. Slide the limit and compare what "
                 "the two utilities do.", {"max_norm": limit}, render)
