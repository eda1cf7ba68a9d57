"""nqkit's version, apart from the package face so that every layer can name it."""

__version__ = "0.1.0"
