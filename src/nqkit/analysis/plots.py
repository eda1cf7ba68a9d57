"""Precision-recall curve pictures (matplotlib, headless)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from nqkit.io import PathLike, atomic_output
from nqkit.metrics.nq import Sweep

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["pr_curve_figure", "pr_curve_png", "write_pr_curve"]


def pr_curve_figure(curves: dict[str, Sweep], title: str = "Natural Questions") -> Figure:
    """One precision-recall curve per task (points at the finite thresholds), the best-F1
    point marked above every curve and labelled with its F1 and threshold.

    A matplotlib ``Figure`` made without pyplot (no global figure registry to close).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8), dpi=110)
    ax = fig.subplots()
    colors = {"long": "#1f6fb4", "short": "#d95f02"}
    for name, s in curves.items():
        pts = [(r, p) for t, p, r in zip(s.thresholds, s.precision, s.recall, strict=True)
               if math.isfinite(t)]
        if not pts:
            continue
        rs, ps = zip(*pts, strict=True)
        c = colors.get(name)
        ax.plot(rs, ps, marker=".", markersize=3, linewidth=1.2, color=c, label=f"{name} answer")
        ax.scatter([s.best_recall], [s.best_precision], color=c, zorder=3, s=40)
        ax.annotate(f"F1 {s.best_f1:.3f} @ {s.best_threshold:g}",
                    (s.best_recall, s.best_precision), textcoords="offset points",
                    xytext=(6, 6), fontsize=8, color=c)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend(loc="lower left")
    fig.tight_layout()
    return fig


def pr_curve_png(curves: dict[str, Sweep], title: str = "Natural Questions") -> bytes:
    """:func:`pr_curve_figure` as a PNG (704 x 528 pixels)."""
    buf = io.BytesIO()
    pr_curve_figure(curves, title).savefig(buf, format="png")
    return buf.getvalue()


def write_pr_curve(path: PathLike, curves: dict[str, Sweep], title: str = "Natural Questions"
                   ) -> None:
    png = pr_curve_png(curves, title)
    with atomic_output(path, "wb") as f:
        f.write(png)
