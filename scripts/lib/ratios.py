"""Medians, percentiles and ratios with their bootstrap intervals, shared by the demo's reports
(host-compare.py: plugin against stock in one compositor; compositors_report.py: compositors
side by side).

A ratio counts as a difference only when its whole 95% interval is more than TIE from 1 (the
sweep's verdict uses the same floor): presentation times sit on the refresh grid, and a few
microseconds either way would otherwise read as a difference.
"""
import math
import statistics

TIE = 0.02


def median(v):
    """Median of the values that are not None; None when there are none."""
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def pct(v, q):
    """The q-quantile (0..1) by rank, no interpolation; None for no values."""
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))] if s else None


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def ratio_interval(a, b, rng, resamples=1000):
    """Ratio of medians a/b and its 95% percentile-bootstrap interval (each side's values
    resampled with replacement, `rng` a random.Random): (ratio, low, high), all None when a
    median is 0 or missing."""
    ma, mb = median(a), median(b)
    if not ma or not mb:
        return None, None, None
    rs = []
    for _ in range(resamples):
        x = median([a[rng.randrange(len(a))] for _ in a])
        y = median([b[rng.randrange(len(b))] for _ in b])
        if y:
            rs.append(x / y)
    rs.sort()
    return ma / mb, rs[int(0.025 * len(rs))], rs[min(len(rs) - 1, int(0.975 * len(rs)))]


def clear(lo, hi):
    """Whether an interval lies more than TIE from 1 (a sure difference)."""
    return lo is not None and (lo > 1 + TIE or hi < 1 - TIE)
