"""lesshash filters as Polars expressions: ``pl.col(k).lesshash.contains(f)``.

Importing this module registers the ``lesshash`` expression namespace::

    import lesshash.polars

    df.filter(pl.col("user").lesshash.contains("users.lhbf"))
    pl.scan_parquet(src).filter(pl.col("user").lesshash.contains(users)).sink_parquet(out)
    filt = lesshash.polars.build(df, "user", expected_items=1_000_000, fpr=0.01)

Both expressions are a compiled Polars plugin (the ``lesshash-polars``
package: ``pip install ./polars`` beside ``./python``): they run on Polars'
threads without the GIL, so they stay in lazy plans and run batch by batch
in the streaming engine. Keys are encoded as ``BloomFilter.contains_many``
encodes the same column (integers and temporal types by their integer,
strings, binary, categoricals and enums by their string), so either
answers as the other. docs/python.md, "Polars".
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import polars as pl
from polars.plugins import register_plugin_function

from lesshash._lesshash import BloomFilter

if TYPE_CHECKING:
    from pathlib import Path

try:
    from lesshash_polars import LIBRARY as _LIBRARY
except ImportError as e:  # pragma: no cover - exercised where the plugin is missing
    raise ImportError(
        "lesshash.polars needs the compiled plugin, the lesshash-polars package: "
        "pip install ./polars (from the lesshash repository)"
    ) from e

__all__ = ["build", "build_expr", "contains"]

_NULLS = ("null", "false")


def contains(
    keys: pl.Expr | str,
    filter: BloomFilter | str | os.PathLike[str],
    *,
    nulls: str = "null",
) -> pl.Expr:
    """Whether each key may be in `filter` (a Boolean expression).

    `filter`: a filter file's path (mapped once per process and checked for
    replacement once per batch: the choice for large filters and for plans
    that run elsewhere on the same machine), a mapped ``BloomFilter``
    (``BloomFilter.open``: its path is used), or a ``BloomFilter`` in
    memory (its bytes travel in the expression; each process parses them
    once and finds them again by their digest, one pass over them per
    batch, so prefer a file beyond a few MB). `nulls`: a null key answers
    ``"null"`` (the default: Polars' unknown, so ``filter`` drops the row,
    and so does a filter on its negation) or ``"false"``.
    """
    if nulls not in _NULLS:
        raise ValueError(f'nulls must be "null" or "false", got {nulls!r}')
    kwargs: dict[str, Any] = {"nulls": nulls}
    if isinstance(filter, BloomFilter):
        path = filter.path
        if path is not None:
            kwargs["path"] = os.path.abspath(os.fsdecode(path))
        else:
            kwargs["filter"] = filter.to_bytes()
    elif isinstance(filter, (str, os.PathLike)):
        kwargs["path"] = os.path.abspath(os.fsdecode(filter))
    else:
        raise TypeError(
            "filter must be a lesshash.BloomFilter or a filter file's path, "
            f"got {type(filter).__name__}"
        )
    return register_plugin_function(
        plugin_path=_LIBRARY,
        function_name="contains",
        args=_expr(keys),
        kwargs=kwargs,
        is_elementwise=True,
    )


def build_expr(
    keys: pl.Expr | str,
    expected_items: int,
    fpr: float,
    *,
    layout: str | None = None,
    scheme: str | None = None,
    seed: int | None = None,
) -> pl.Expr:
    """An aggregation whose value is a filter of the keys (nulls skipped),
    as its bytes (``BloomFilter.from_bytes`` reads them), one per group in
    a ``group_by``. The arguments are ``BloomFilter``'s constructor's, and
    the filter is bit for bit the one ``BloomFilter(...).add_many(keys)``
    makes (``seed="random"`` is not taken: each group would draw its own).
    """
    if not isinstance(expected_items, int) or expected_items < 0:
        raise ValueError(f"expected_items must be a non-negative int, got {expected_items!r}")
    if seed is not None and (not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise ValueError(f"seed must be an int from 0 to 2**64 - 1, got {seed!r}")
    # `fpr`, `layout`, `scheme` and `seed` checked here, so that a bad one
    # fails where it was written: by a filter for one key, not a filter of
    # `expected_items` (which the plugin allocates where the keys are).
    BloomFilter(1, fpr, layout=layout, scheme=scheme, seed=seed)
    return register_plugin_function(
        plugin_path=_LIBRARY,
        function_name="build",
        args=_expr(keys),
        kwargs={
            "expected_items": expected_items,
            "fpr": float(fpr),
            "layout": layout,
            "scheme": scheme,
            "seed": seed,
        },
        returns_scalar=True,
    )


def build(
    frame: pl.DataFrame | pl.LazyFrame,
    column: str,
    expected_items: int,
    fpr: float,
    *,
    layout: str | None = None,
    scheme: str | None = None,
    seed: int | None = None,
) -> BloomFilter:
    """A ``BloomFilter`` of `column`'s keys in `frame` (collected with the
    streaming engine for a ``LazyFrame``): ``build_expr``'s filter."""
    expr = build_expr(
        column, expected_items, fpr, layout=layout, scheme=scheme, seed=seed
    )
    if isinstance(frame, pl.LazyFrame):
        out = frame.select(expr).collect(engine="streaming")
    else:
        out = frame.select(expr)
    return BloomFilter.from_bytes(out.item())


def _expr(keys: pl.Expr | str) -> pl.Expr:
    return pl.col(keys) if isinstance(keys, str) else keys


@pl.api.register_expr_namespace("lesshash")
class LesshashNamespace:
    """``pl.col(k).lesshash``: ``contains(filter, nulls=...)`` and
    ``build(expected_items, fpr, ...)`` (``lesshash.polars.contains`` and
    ``lesshash.polars.build_expr`` on this column)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def contains(
        self, filter: BloomFilter | str | Path, *, nulls: str = "null"
    ) -> pl.Expr:
        return contains(self._expr, filter, nulls=nulls)

    def build(
        self,
        expected_items: int,
        fpr: float,
        *,
        layout: str | None = None,
        scheme: str | None = None,
        seed: int | None = None,
    ) -> pl.Expr:
        return build_expr(
            self._expr, expected_items, fpr, layout=layout, scheme=scheme, seed=seed
        )


LesshashNamespace.contains.__doc__ = contains.__doc__
LesshashNamespace.build.__doc__ = build_expr.__doc__
