"""Precision-recall curve pictures (matplotlib, headless)."""

from __future__ import annotations

import io
import math

from nqkit.io import PathLike, atomic_output
from nqkit.metrics.nq import Sweep


def pr_curve_png(curves: dict[str, Sweep], title: str = "Natural Questions") -> bytes:
    """A PNG with one precision-recall curve per task, the best-F1 point marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=110)
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
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def write_pr_curve(path: PathLike, curves: dict[str, Sweep], title: str = "Natural Questions"
                   ) -> None:
    png = pr_curve_png(curves, title)
    with atomic_output(path, "wb") as f:
        f.write(png)
