"""The shared level rules (their doctests)."""

import doctest

from speechannotator.agents import levels


def test_doctests():
    assert doctest.testmod(levels).failed == 0
