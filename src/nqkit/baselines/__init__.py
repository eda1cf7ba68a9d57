"""Baseline systems: each turns examples into predictions in its task's format.

Every system is in one registry, :data:`nqkit.baselines.systems.SYSTEMS`. An NQ baseline
is a class registered with :func:`~nqkit.baselines.predict_files.nq_baseline`; it is
constructed without arguments (or with keyword options), optionally ``fit`` on training
examples, and ``predict``-s one example at a time (original or simplified examples).
:func:`get_baseline` builds one by name.
"""

from __future__ import annotations

from nqkit.baselines.predict_files import (
    BASELINES,
    AnyNqExample,
    NqBaseline,
    baseline_names,
    get_baseline,
    nq_baseline,
)

__all__ = ["BASELINES", "AnyNqExample", "NqBaseline", "baseline_names", "get_baseline",
           "nq_baseline"]
