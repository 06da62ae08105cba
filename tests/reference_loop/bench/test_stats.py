"""Paired comparison of bench arms: exact McNemar p-value and Newcombe's paired interval."""

from __future__ import annotations

import math

import pytest

from reference_loop._bench.stats import mcnemar_exact_p, newcombe_paired_interval, paired_compare
from reference_loop.errors import LoopError


def test_mcnemar_exact_p_is_a_two_sided_binomial_tail() -> None:
    # b=1, c=7: 2 * (C(8,0) + C(8,1)) / 2^8 = 18/256
    assert mcnemar_exact_p(1, 7) == pytest.approx(18 / 256)
    assert mcnemar_exact_p(7, 1) == mcnemar_exact_p(1, 7)
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(3, 3) == 1.0  # capped at 1
    assert mcnemar_exact_p(0, 10) == pytest.approx(2 / 1024)


def test_newcombe_interval_matches_the_published_bentur_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8: airway
    # hyper-responsiveness before/after stem cell transplantation (Bentur et al. 2009), table
    # [[1, 1], [7, 12]]; Newcombe square-and-add interval -0.507 to -0.026.
    lo, hi = newcombe_paired_interval(1, 1, 7, 12)
    assert lo == pytest.approx(-0.507, abs=5e-4)
    assert hi == pytest.approx(-0.026, abs=5e-4)


def test_interval_contains_the_estimate_and_mirrors_when_arms_swap() -> None:
    for table in [(36, 12, 2, 0), (5, 0, 0, 5), (0, 3, 1, 6), (10, 0, 10, 0), (0, 0, 0, 1)]:
        both, b, c, neither = table
        n = sum(table)
        lo, hi = newcombe_paired_interval(*table)
        assert -1 <= lo <= (b - c) / n <= hi <= 1
        lo2, hi2 = newcombe_paired_interval(both, c, b, neither)
        assert (lo2, hi2) == pytest.approx((-hi, -lo))


def test_no_discordant_pairs_is_not_a_significant_difference() -> None:
    result = paired_compare(
        [True, False] * 10, [True, False] * 10, arm="accumulate", baseline="last"
    )
    assert (result.b, result.c, result.diff) == (0, 0, 0.0)
    assert result.p_value == 1.0
    assert result.ci_low < 0 < result.ci_high  # not a zero-width interval
    assert not result.significant


def test_a_large_one_sided_difference_is_significant() -> None:
    arm = [True] * 25
    base = [False] * 20 + [True] * 5
    result = paired_compare(arm, base, arm="accumulate", baseline="last")
    assert (result.both, result.b, result.c, result.neither) == (5, 20, 0, 0)
    assert result.diff == pytest.approx(0.8)
    assert result.p_value == pytest.approx(2 / 2**20)
    assert result.significant and result.ci_low > 0
    d = result.to_dict()
    assert d["significant"] is True and d["arm"] == "accumulate" and math.isfinite(d["ci_high"])


def test_small_difference_at_small_n_is_reported_as_noise() -> None:
    arm = [True, True, True, False, False]
    base = [True, True, False, False, False]
    result = paired_compare(arm, base)
    assert result.b == 1 and result.c == 0
    assert result.p_value == 1.0
    assert not result.significant


def test_interval_alone_does_not_make_two_pairs_significant() -> None:
    # b=2, c=0 out of 2: the score interval excludes 0 but the exact p is 0.5 — noise.
    result = paired_compare([True, True], [False, False])
    assert result.ci_low > 0
    assert result.p_value == 0.5
    assert not result.significant


def test_unpaired_inputs_are_refused() -> None:
    with pytest.raises(LoopError, match="same pairs"):
        paired_compare([True], [True, False])
