"""The shared level/suggestion rules: their doctests, and the round trip the review loop relies on."""

import doctest

from speechannotator.agents import levels
from speechannotator.agents.levels import SUGGEST, suggestion_of


def test_doctests():
    assert doctest.testmod(levels).failed == 0


def test_a_suggestion_written_in_either_language_reads_back():
    for lang in ("en", "zh"):
        assert suggestion_of("Rejected." + SUGGEST[lang].format(s="低音调 / low pitch")) == "低音调 / low pitch"
