"""Batches of keys in the shapes the extension module reads.

``normalize(keys)`` returns one of:

* a contiguous 1-d ``uint64`` NumPy array: every NumPy integer (and bool)
  dtype, pandas integer columns, NumPy ``datetime64`` / ``timedelta64``
  and pandas datetime columns (as their integer count of the unit, as
  Arrow's timestamps, dates and durations are; ``NaT`` is a missing value:
  a ``Masked``). Keys hash as the 64-bit integer they are, exactly as a Python
  ``int`` does (``int64`` is reinterpreted, not copied: a negative key
  hashes as its two's-complement bytes, as in Rust);
* a ``Masked``: such integers with missing values (pandas' nullable
  integer columns with ``NA``, ``NaT``), as the values (0 where missing)
  and a mask of the missing ones;
* a ``FixedWidth``: NumPy fixed-width bytes (``S``, a ``uint8`` buffer) and
  unicode (``U``, a ``uint32`` buffer) arrays as their raw buffers and item
  width (the extension strips NumPy's trailing NUL padding, as NumPy does
  on item access);
* an object with ``__arrow_c_array__`` or ``__arrow_c_stream__`` (PyArrow
  arrays and chunked arrays, Polars series, pandas Arrow-backed columns),
  read zero copy through the Arrow PyCapsule interface;
* anything else as given: an iterable of Python keys (list, tuple, set,
  generator, NumPy object arrays, pandas object columns).

Errors name the problem: floats, None in a list, more than one dimension,
dtypes that are not keys. Missing values are the caller's to skip, answer
or refuse (``add_many`` and ``contains_many``'s ``nulls``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["normalize", "counts", "Masked"]

_INT_KINDS = "iub"


class Masked:
    """64-bit integer keys (a contiguous ``uint64`` array) and a ``bool``
    mask of the missing ones, for the extension module."""

    __slots__ = ("values", "lesshash_missing")

    def __init__(self, values: np.ndarray, missing: np.ndarray):
        self.values = np.ascontiguousarray(values)
        self.lesshash_missing = np.ascontiguousarray(missing, dtype=np.bool_)


class FixedWidth:
    """A NumPy ``S`` or ``U`` array's buffer, for the extension module."""

    __slots__ = ("lesshash_fixed_kind", "data", "width")

    def __init__(self, kind: str, data: np.ndarray, width: int):
        self.lesshash_fixed_kind = kind
        self.data = data
        self.width = width


def _from_numpy(arr: np.ndarray):
    if arr.ndim != 1:
        raise ValueError(f"keys must be one-dimensional, got an array of shape {arr.shape}")
    kind = arr.dtype.kind
    if kind in _INT_KINDS:
        if arr.dtype == np.uint64:
            return np.ascontiguousarray(arr)
        if arr.dtype == np.int64:
            return np.ascontiguousarray(arr).view(np.uint64)
        if kind == "u" or kind == "b":
            return arr.astype(np.uint64)
        # Narrower signed ints: widen as int64 (sign kept), then reinterpret.
        return arr.astype(np.int64).view(np.uint64)
    if kind in "mM":
        # Their int64 count of the unit (what Arrow's temporal types hold).
        values = np.ascontiguousarray(arr).view(np.int64).view(np.uint64)
        missing = np.isnat(arr)
        if missing.any():
            return Masked(np.where(missing, np.uint64(0), values), missing)
        return values
    if kind == "S":
        arr = np.ascontiguousarray(arr)
        return FixedWidth("S", arr.view(np.uint8).reshape(-1), arr.dtype.itemsize)
    if kind == "U":
        arr = np.ascontiguousarray(arr)
        width = arr.dtype.itemsize // 4
        if width == 0:  # dtype '<U0': every key is ""
            return [""] * len(arr)
        return FixedWidth("U", arr.view(np.uint32).reshape(-1), width)
    if kind == "O":
        return arr
    if kind in "fc":
        raise TypeError(
            f"float keys are not supported (dtype {arr.dtype}): a float would not answer "
            "as the int it prints as; convert with .astype('int64') or to str first"
        )
    raise TypeError(
        f"unsupported key dtype {arr.dtype}: keys are integers, str or bytes"
    )


def _from_pandas(obj):
    """A pandas Series or Index: Arrow-backed columns go through Arrow,
    nullable integer columns must not hold NA, the rest through NumPy."""
    dtype = obj.dtype
    if isinstance(dtype, np.dtype):
        # NumPy-backed: its array, without a detour through Arrow.
        return _from_numpy(obj.to_numpy())
    array = obj.array
    if hasattr(array, "__arrow_c_array__") or hasattr(array, "__arrow_c_stream__"):
        return array
    pa_array = getattr(array, "_pa_array", None)  # ArrowExtensionArray, ArrowStringArray
    if pa_array is not None:
        return pa_array
    if getattr(dtype, "kind", None) == "M" and getattr(dtype, "tz", None) is not None:
        # Time-zone-aware datetimes: the UTC instant in the column's unit
        # (the zone is not part of the key, as for Arrow's timestamps).
        return _from_numpy(obj.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy())
    if getattr(dtype, "kind", None) in _INT_KINDS and not isinstance(dtype, np.dtype):
        # pandas' nullable Int64/UInt8/boolean...: NA is a missing key.
        target = np.uint64 if dtype.kind in "ub" else np.int64
        missing = obj.isna().to_numpy()
        values = _from_numpy(obj.to_numpy(dtype=target, na_value=0))
        return Masked(values, missing) if missing.any() else values
    # Other extension dtypes (categorical, string[python], ...): their
    # values as Python objects.
    return _from_numpy(np.asarray(obj.to_numpy(dtype=object)))


def normalize(keys):
    if isinstance(keys, np.ndarray):
        return _from_numpy(keys)
    if hasattr(keys, "__arrow_c_array__") or hasattr(keys, "__arrow_c_stream__"):
        return keys
    module = type(keys).__module__ or ""
    if module.startswith("pandas") and hasattr(keys, "array") and hasattr(keys, "dtype"):
        return _from_pandas(keys)
    if isinstance(keys, dict):
        raise TypeError("a dict is not a batch of keys: pass list(d) or d.keys()")
    return keys


def counts(obj):
    """Per-key counts as a contiguous uint64 array."""
    if isinstance(obj, np.ndarray):
        if obj.ndim != 1:
            raise ValueError(f"counts must be one-dimensional, got shape {obj.shape}")
        if obj.dtype.kind not in "iu":
            raise TypeError(f"counts must be integers, got dtype {obj.dtype}")
        if obj.dtype.kind == "i" and len(obj) and obj.min() < 0:
            raise ValueError(f"counts must be at least 0, got {int(obj.min())}")
        return np.ascontiguousarray(obj.astype(np.uint64, copy=False))
    items = list(obj)
    for i, c in enumerate(items):
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
            raise TypeError(f"count {i}: counts must be integers, got {type(c).__name__}")
        if c < 0:
            raise ValueError(f"count {i}: counts must be at least 0, got {c}")
        if c >= 2**64:
            raise OverflowError(f"count {i}: counts must be below 2**64, got {c}")
    return np.array(items, dtype=np.uint64)
