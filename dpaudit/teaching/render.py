"""Small rendering helpers of the teaching views: figures as ``data:`` URIs, and LaTeX text
(:func:`dpaudit.latex.latex_escape`, the one escaper, re-exported)."""

from __future__ import annotations

import base64
import io
from typing import Any

from dpaudit.latex import latex_escape

__all__ = ["latex_escape", "png_data_uri"]


def png_data_uri(fig: Any) -> str:
    """A matplotlib figure as a PNG ``data:`` URI (for HTML shown inline in a notebook).

    Args:
        fig: a matplotlib figure.

    Returns:
        ``data:image/png;base64,...``.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
