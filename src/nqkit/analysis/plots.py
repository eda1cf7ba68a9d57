"""Precision-recall curve pictures (matplotlib, headless)."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nqkit.io import PathLike, atomic_output
from nqkit.metrics.nq import Sweep

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["curve_points", "pr_curve_figure", "pr_curve_png", "write_pr_curve"]


@dataclass(frozen=True)
class _Look:
    """Size and type sizes of a picture."""

    size: tuple[float, float]  # inches
    dpi: int
    font: float  # axis labels, legend (points)
    label: float  # the best-F1 label
    ticks: tuple[float, ...] | None  # both axes; None: matplotlib's


_FILE = _Look((6.4, 4.8), 110, 10.0, 8.0, None)
# Shown 400 x 300 CSS pixels on the browser's index page, drawn at twice that for sharp
# text on high-density screens: type at 11-12 points reads as 15-17 pixels there.
_THUMBNAIL = _Look((4.0, 3.0), 200, 12.0, 11.0, (0.0, 0.25, 0.5, 0.75, 1.0))


def curve_points(s: Sweep) -> list[tuple[float, float]]:
    """The (recall, precision) points of a sweep's curve, from the highest threshold down.

    One point per finite threshold at which at least one answer is predicted: above the
    highest-scored answer nothing is predicted, precision is 0/0 (which the official
    sweep reports as 0, as it does recall), so such a threshold is no point of the curve
    — the curve starts at the first threshold that predicts something, not at an
    artificial (0, 0). A sweep made without its counts (``predicted`` empty) keeps every
    finite threshold.
    """
    counts = s.predicted or (1,) * len(s.thresholds)
    return [(r, p) for t, p, r, n in zip(s.thresholds, s.precision, s.recall, counts,
                                         strict=True)
            if math.isfinite(t) and n > 0]


def pr_curve_figure(curves: dict[str, Sweep], title: str = "Natural Questions", *,
                    thumbnail: bool = False) -> Figure:
    """One precision-recall curve per task (:func:`curve_points`), the best-F1 point
    marked above every curve and labelled with its F1 and threshold.

    ``thumbnail``: the smaller picture with larger type, fewer ticks and the best-F1
    labels in the legend that the browser's index page shows. A matplotlib ``Figure``
    made without pyplot (no global figure registry to close).
    """
    from matplotlib.figure import Figure

    look = _THUMBNAIL if thumbnail else _FILE
    fig = Figure(figsize=look.size, dpi=look.dpi)
    ax = fig.subplots()
    colors = {"long": "#1f6fb4", "short": "#d95f02"}
    drawn = 0
    for name, s in curves.items():
        pts = curve_points(s)
        if not pts:
            continue
        rs, ps = zip(*pts, strict=True)
        c = colors.get(name)
        best = f"F1 {s.best_f1:.3f} @ {s.best_threshold:g}"
        if thumbnail:  # the best-F1 label goes in the legend: labels at a point can collide
            ax.plot(rs, ps, marker=".", markersize=6, linewidth=2, color=c,
                    label=f"{name}: {best}")
            ax.scatter([s.best_recall], [s.best_precision], color=c, zorder=3, s=60)
        else:
            ax.plot(rs, ps, marker=".", markersize=3, linewidth=1.2, color=c,
                    label=f"{name} answer")
            ax.scatter([s.best_recall], [s.best_precision], color=c, zorder=3, s=40)
            # the second label below its point, so equal best points keep both readable
            ax.annotate(best, (s.best_recall, s.best_precision), textcoords="offset points",
                        xytext=(6, 6) if drawn == 0 else (6, -14), fontsize=look.label,
                        color=c)
        drawn += 1
    if thumbnail:
        ax.set_xlabel("recall", fontsize=look.font)
        ax.set_ylabel("precision", fontsize=look.font)
        ax.tick_params(labelsize=look.font - 1)
        ax.set_title(title, fontsize=look.font)
    else:
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_title(title)
    if look.ticks is not None:
        ax.set_xticks(look.ticks)
        ax.set_yticks(look.ticks)
        ax.set_xticklabels([f"{t:g}" for t in look.ticks])
        ax.set_yticklabels([f"{t:g}" for t in look.ticks])
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    if ax.get_lines():
        if thumbnail:  # where it hides the fewest points: the legend is large here
            ax.legend(loc="best", fontsize=look.font - 1)
        else:
            ax.legend(loc="lower left")
    fig.tight_layout()
    return fig


def pr_curve_png(curves: dict[str, Sweep], title: str = "Natural Questions", *,
                 thumbnail: bool = False) -> bytes:
    """:func:`pr_curve_figure` as a PNG (704 x 528 pixels; a thumbnail 800 x 600, to be
    shown at 400 x 300)."""
    buf = io.BytesIO()
    pr_curve_figure(curves, title, thumbnail=thumbnail).savefig(buf, format="png")
    return buf.getvalue()


def write_pr_curve(path: PathLike, curves: dict[str, Sweep], title: str = "Natural Questions"
                   ) -> None:
    png = pr_curve_png(curves, title)
    with atomic_output(path, "wb") as f:
        f.write(png)
