"""Batches of keys in the shapes the extension module reads.

``normalize(keys)`` returns one of:

* a contiguous 1-d ``uint64`` NumPy array: every NumPy integer (and bool)
  dtype, pandas integer columns, NumPy ``datetime64`` / ``timedelta64``
  and pandas datetime columns (as their key, as Arrow's temporal types
  are: microseconds, floored from finer units, saturating from coarser
  ones; ``NaT`` is a missing value: a ``Masked``). Keys hash as the 64-bit integer they are, exactly as a Python
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

# The temporal key (the crate's ``lesshash::temporal``): microseconds per
# tick of the coarser NumPy units, ticks per microsecond of the finer ones.
_MICROS_PER = {"W": 604_800_000_000, "D": 86_400_000_000, "h": 3_600_000_000,
               "m": 60_000_000, "s": 1_000_000, "ms": 1_000, "us": 1}
_PER_MICRO = {"ns": 1_000, "ps": 1_000_000, "fs": 1_000_000_000,
              "as": 1_000_000_000_000}
_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min


def _temporal_keys(arr: np.ndarray) -> np.ndarray:
    """The ``int64`` keys of a ``datetime64`` / ``timedelta64`` array (NaT's
    slots hold something; the caller masks them): microseconds (since 1970
    UTC, or in all; a ``datetime64[D]`` date's of its midnight, as Arrow's
    ``date32`` that pyarrow makes of it), floored from finer units,
    saturating beyond ±292,000 years."""
    unit, count = np.datetime_data(arr.dtype)
    if count != 1 or unit not in _MICROS_PER and unit not in _PER_MICRO:
        raise TypeError(
            f"unsupported key dtype {arr.dtype}: a temporal key needs a fixed unit "
            "(D, h, m, s, ms, us, ns, ...); convert with .astype('datetime64[us]') first"
        )
    values = np.ascontiguousarray(arr).view(np.int64)
    if unit in _PER_MICRO:
        return values // _PER_MICRO[unit]  # floor division, as the crate's
    factor = _MICROS_PER[unit]
    if factor == 1:
        return values
    hi = _I64_MAX // factor
    lo = -((-int(_I64_MIN)) // factor)
    out = np.clip(values, lo, hi) * factor
    out[values > hi] = _I64_MAX
    out[values < lo] = _I64_MIN
    return out


def temporal_scalar_key(value) -> int | None:
    """The key of a NumPy ``datetime64`` / ``timedelta64`` scalar (None
    for ``NaT``), by the arrays' rule."""
    arr = np.asarray(value).reshape(1)
    if np.isnat(arr)[0]:
        return None
    return int(_temporal_keys(arr)[0])


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
        values = _temporal_keys(arr).view(np.uint64)
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
        # Time-zone-aware datetimes: the UTC instant (the zone is not part
        # of the key, as for Arrow's timestamps).
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
