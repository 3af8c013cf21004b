"""
The JIT used by the hot loops: numba (a hard dependency, see requirements.txt).

numba turns the per-agent geometry and the incremental linear programs into machine code.
"""

import numba


def njit(*args, **kwargs):
    """
    numba.njit with IEEE float semantics: x / 0 gives inf or NaN, never an exception.

    A controller must not die on a degenerate input; the solver turns any non-finite result
    into a stop (``solver._enforce_limits``). With ``cache=True`` and no folder numba may
    write its cache in, the kernel is compiled in every process instead.
    """
    kwargs.setdefault('error_model', 'numpy')
    if args or not kwargs.get('cache'):
        return numba.njit(*args, **kwargs)

    def decorate(func):
        try:
            return numba.njit(**kwargs)(func)
        except RuntimeError:
            # numba finds no folder it may write its cache in (NUMBA_CACHE_DIR, __pycache__
            # beside the module, the user's cache folder): compile at every start instead of
            # failing at import (the node says so: orca_nav.ros.startup).
            return numba.njit(**dict(kwargs, cache=False))(func)
    return decorate


__all__ = ['njit']
