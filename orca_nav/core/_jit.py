"""
The JIT used by the hot loops: numba when importable, plain Python otherwise.

numba turns the per-agent geometry and the incremental linear programs into machine code.
Without numba the very same functions run as Python: correct, but
about two orders of magnitude slower, which is fine for a handful of robots and nothing more.
"""

try:  # pragma: no cover - exercised by whichever branch is installed
    from numba import njit
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        """Stand-in for numba.njit that returns the Python function unchanged."""
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]

        def wrap(func):
            return func
        return wrap

__all__ = ['HAVE_NUMBA', 'njit']
