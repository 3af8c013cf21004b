"""
The examples in orca_nav's docstrings run and print what they show (doctest).

Every module of the package whose source holds a ``>>>`` example is imported and run with
doctest.testmod: plain pytest and ``colcon test`` collect this file the same way, without
--doctest-modules (which would import every module, the ROS ones included, at collection).
"""

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / 'orca_nav'


def modules_with_examples():
    """Dotted names of the orca_nav modules whose source contains a doctest example."""
    names = []
    for path in sorted(PACKAGE.rglob('*.py')):
        if '__pycache__' in path.parts or '>>>' not in path.read_text():
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        names.append('.'.join(parts))
    return names


def test_some_modules_have_examples():
    assert 'orca_nav.sim.maps' in modules_with_examples()


@pytest.mark.parametrize('name', modules_with_examples())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False)
    assert result.attempted > 0, f'{name}: no example found by doctest'
    assert result.failed == 0, f'{name}: {result.failed} of {result.attempted} examples failed'
