"""The Polars expression plugin of lesshash (a compiled library Polars loads).

Use it through ``lesshash.polars``, which registers the ``lesshash``
expression namespace: ``pl.col("user").lesshash.contains(filter)``.
"""

from pathlib import Path

from lesshash_polars._lesshash_polars import __version__

#: The directory holding the plugin library (Polars' ``plugin_path``).
LIBRARY = Path(__file__).parent

__all__ = ["LIBRARY", "__version__"]
