"""
The argument checks of the perception modules (scan, detection, tracking): one definition each.

Each returns the checked value in the type the kernels take, or raises ValueError naming the
argument.
"""

import math

import numpy as np


def finite_scalar(value, name):
    """Return value as float, or raise ValueError if it is not a finite number."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError('%s must be a finite number, got %r' % (name, value)) from None
    if not math.isfinite(out):
        raise ValueError('%s must be a finite number, got %r' % (name, value))
    return out


def positive(value, name):
    """Return value as a finite positive float, or raise ValueError."""
    out = finite_scalar(value, name)
    if out <= 0.0:
        raise ValueError('%s must be positive, got %r' % (name, value))
    return out


def non_negative(value, name):
    """Return value as a finite float >= 0, or raise ValueError."""
    out = finite_scalar(value, name)
    if out < 0.0:
        raise ValueError('%s must be >= 0, got %r' % (name, value))
    return out


def int_at_least(value, name, lowest):
    """Return value as an int >= lowest (integral floats accepted), or raise ValueError."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError('%s must be an integer >= %d, got %r' % (name, lowest, value))
    try:
        out = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError('%s must be an integer >= %d, got %r'
                         % (name, lowest, value)) from None
    if out != value or out < lowest:
        raise ValueError('%s must be an integer >= %d, got %r' % (name, lowest, value))
    return out


def as_xy(values, name):
    """Validate a finite (N, 2) array (N may be 0); return it as float64."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return np.empty((0, 2))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError('%s must have shape (N, 2), got %s' % (name, arr.shape))
    if not (math.isfinite(arr.sum()) or np.all(np.isfinite(arr))):  # the sum may overflow
        raise ValueError('%s must be finite' % (name,))
    return arr
