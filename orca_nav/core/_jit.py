"""
The JIT used by the hot loops: numba (a hard dependency, see requirements.txt).

numba turns the per-agent geometry and the incremental linear programs into machine code.
"""

import numba


def njit(*args, **kwargs):
    """
    numba.njit with IEEE float semantics: x / 0 gives inf or NaN, never an exception.

    A controller must not die on a degenerate input; the solver turns any non-finite result
    into a stop (``solver._enforce_limits``).
    """
    kwargs.setdefault('error_model', 'numpy')
    return numba.njit(*args, **kwargs)


__all__ = ['njit']
