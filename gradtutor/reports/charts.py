"""Trusted side: the reports' charts, drawn by matplotlib off screen into base64 text for a page.

One place for the backend and the settings that make a chart a pure function of its data
(``svg.hashsalt``, no ``Software`` stamp), so the same class gives the same file.
"""

from __future__ import annotations

import base64
import io
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib  # imported when a chart is drawn: a second of start-up the CLI need not pay

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "gradtutor"  # same data, same file
    return plt


def svg(fig: Any) -> str:
    """The figure as SVG, base64; the figure is closed."""
    return _saved(fig, format="svg", bbox_inches="tight")


def png(fig: Any, dpi: int = 110) -> str:
    """The figure as PNG, base64; the figure is closed."""
    return _saved(fig, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})


def _saved(fig: Any, **options: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, **options)
    pyplot().close(fig)
    return base64.b64encode(buf.getvalue()).decode()
