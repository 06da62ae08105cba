"""Paired comparison of two bench arms over the same task x seed pairs.

Every (task, seed) pair is run under both arms, so the outcomes are paired and the right test is
McNemar's: only the *discordant* pairs carry information — ``b`` pairs the arm solved and the
baseline did not, ``c`` the reverse. Under "no difference" each discordant pair is a fair coin,
so the two-sided exact p-value is a binomial tail on ``min(b, c)`` out of ``b + c``.

The confidence interval is for the difference in solved rate (arm minus baseline). We use
Newcombe's hybrid score interval for paired proportions (Newcombe 1998, Stat Med 17:2635,
"method 10"): it combines the Wilson score intervals of the two marginal rates with the phi
correlation of the pairs. Unlike the Wald interval it stays inside [-1, 1], is not degenerate
when b = c = 0, and keeps close to nominal coverage at the small n a bench has (tens of pairs).
Pure logic: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

from reference_loop.errors import LoopError


@dataclass(frozen=True)
class PairedComparison:
    arm: str
    baseline: str
    n: int  # pairs compared
    both: int  # solved under both arms
    b: int  # solved by the arm only
    c: int  # solved by the baseline only
    neither: int
    arm_rate: float
    baseline_rate: float
    diff: float  # arm_rate - baseline_rate
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float  # exact two-sided McNemar (binomial on the discordant pairs)
    method: str = "exact McNemar p; Newcombe (1998) method 10 hybrid score CI"

    @property
    def significant(self) -> bool:
        """True only when the exact test (p < 1 - confidence) and the interval (excludes 0)
        agree. At the small n of a bench the score interval can exclude 0 while the exact test
        cannot reject (b=2, c=0: p=0.5); we call that noise, not a difference."""
        return self.p_value < 1 - self.confidence and (self.ci_low > 0 or self.ci_high < 0)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["significant"] = self.significant
        return d


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: P(a result at least as lopsided as b:c) with each of the
    b + c discordant pairs a fair coin. 1.0 when there are no discordant pairs."""
    if b < 0 or c < 0:
        raise LoopError("discordant counts must be >= 0")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def wilson_interval(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval for a single proportion (no continuity correction)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired_interval(
    both: int, b: int, c: int, neither: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's method 10 interval for p1 - p2 where p1 = (both + b)/n, p2 = (both + c)/n."""
    n = both + b + c + neither
    if n == 0:
        return -1.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p1 = (both + b) / n
    p2 = (both + c) / n
    l1, u1 = wilson_interval(both + b, n, z)
    l2, u2 = wilson_interval(both + c, n, z)
    # phi of the 2x2 table, with Newcombe's correction pulling a positive ad - bc toward 0 by n/2.
    ad_bc: float = both * neither - b * c
    if ad_bc > 0:
        ad_bc = max(ad_bc - n / 2, 0.0)
    denom = (both + b) * (c + neither) * (both + c) * (b + neither)
    phi = ad_bc / math.sqrt(denom) if denom > 0 else 0.0
    theta = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    eps = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, theta - delta), min(1.0, theta + eps)


def paired_compare(
    arm_solved: Sequence[bool],
    baseline_solved: Sequence[bool],
    *,
    arm: str = "arm",
    baseline: str = "baseline",
    confidence: float = 0.95,
) -> PairedComparison:
    """Compare two arms' outcomes, element i of each being the same task x seed pair."""
    if len(arm_solved) != len(baseline_solved):
        raise LoopError(
            f"paired comparison needs the same pairs: {len(arm_solved)} vs {len(baseline_solved)}"
        )
    if not 0 < confidence < 1:
        raise LoopError("confidence must be between 0 and 1")
    both = sum(1 for x, y in zip(arm_solved, baseline_solved, strict=True) if x and y)
    b = sum(1 for x, y in zip(arm_solved, baseline_solved, strict=True) if x and not y)
    c = sum(1 for x, y in zip(arm_solved, baseline_solved, strict=True) if y and not x)
    n = len(arm_solved)
    neither = n - both - b - c
    lo, hi = newcombe_paired_interval(both, b, c, neither, confidence=confidence)
    return PairedComparison(
        arm=arm,
        baseline=baseline,
        n=n,
        both=both,
        b=b,
        c=c,
        neither=neither,
        arm_rate=(both + b) / n if n else 0.0,
        baseline_rate=(both + c) / n if n else 0.0,
        diff=(b - c) / n if n else 0.0,
        ci_low=lo,
        ci_high=hi,
        confidence=confidence,
        p_value=mcnemar_exact_p(b, c),
    )
