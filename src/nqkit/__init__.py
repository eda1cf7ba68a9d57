"""nqkit: the Natural Questions family of QA benchmarks in one toolkit.

Data readers and writers (``nqkit.formats``), the official metrics (``nqkit.metrics``),
baselines (``nqkit.baselines``), retrievers (``nqkit.retrieval``) and a browser.
Heavy modules are imported lazily; ``import nqkit`` is cheap.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
