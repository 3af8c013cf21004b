"""
The JIT used by the hot loops: numba when importable, plain Python otherwise.

numba turns the per-agent geometry and the incremental linear programs into machine code.
Without numba the very same functions run as Python: correct, but
about two orders of magnitude slower, which is fine for a handful of robots and nothing more.
"""

try:  # pragma: no cover - exercised by whichever branch is installed
    import numba

    def njit(*args, **kwargs):
        """
        numba.njit with IEEE float semantics: x / 0 gives inf or NaN, never an exception.

        A controller must not die on a degenerate input; the solver turns any non-finite result
        into a stop (``solver._enforce_limits``).
        """
        kwargs.setdefault('error_model', 'numpy')
        return numba.njit(*args, **kwargs)
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
