"""The change of reference of ``midref_hack.patch``, checked in numpy.

Run from anywhere::

    python benchmarks/results/colpret_noise_scale_2026-12-06/midref_check.py

For 1,000 random coefficient sets at reference x1 = 0.316 (``curve_bend``:
L = m ((1 - f) + f / ((1 - q) + q (x / x1)^(beta / q)))), the closed-form map to the
reference 1 gives the same curve on x in [0.01, 30]; and for 200 random points the map's
Jacobian determinant in (log m, logit f, log f + log beta, logit q) -> (log m, logit f,
log beta, logit q), by central differences, is 1 (the density needs no Jacobian term).
"""

import numpy as np


def sig(x):
    return 1 / (1 + np.exp(-x))


def curve(x, m, f, b, q, ref):
    return m * ((1 - f) + f / ((1 - q) + q * (x / ref) ** (b / q)))


def to_reference_one(v, x1=0.316, slope=True):
    """(log m, logit f, log slope or log beta, logit q) at x1 -> the same curve's at 1."""
    lm1, lf1, lb_or_s, lq1 = v
    f1, q1 = sig(lf1), sig(lq1)
    lb1 = lb_or_s - np.log(f1) if slope else lb_or_s
    e = np.exp(lb1) / q1  # beta / q: the same at every reference
    logr = -np.log(x1)
    big_a = 1 - q1 + q1 * np.exp(e * logr)
    lq0 = lq1 + e * logr
    lf0 = lf1 - np.log(big_a)
    lm0 = lm1 + np.log(1 - f1 + f1 / big_a)
    return np.array([lm0, lf0, np.log(e) + np.log(sig(lq0)), lq0])


rng = np.random.default_rng(0)
x = np.geomspace(0.01, 30, 50)
rel = []
for _ in range(1000):
    v = np.array([rng.normal(0, 1), rng.normal(0, 2), rng.normal(-0.9, 0.7),
                  rng.normal(1.46, 1.4)])
    lm0, lf0, lb0, lq0 = to_reference_one(v, slope=False)
    a = curve(x, np.exp(v[0]), sig(v[1]), np.exp(v[2]), sig(v[3]), 0.316)
    b = curve(x, np.exp(lm0), sig(lf0), np.exp(lb0), sig(lq0), 1.0)
    rel.append(np.max(np.abs(a / b - 1)))
rel = np.array(rel)
print(f"same curve: relative difference median {np.median(rel):.1e}, max {rel.max():.1e} "
      "(the max on a draw with beta / q = 28, which the map takes to logit q = 28.5: 1 - q "
      "there loses digits)")
dets = []
for _ in range(200):
    v = np.array([rng.normal(0, 1), rng.normal(0, 1.5), rng.normal(-1.6, 0.7),
                  rng.normal(1.46, 1.0)])
    h = 1e-6
    jac = np.column_stack([(to_reference_one(v + h * np.eye(4)[i])
                            - to_reference_one(v - h * np.eye(4)[i])) / (2 * h)
                           for i in range(4)])
    dets.append(np.linalg.det(jac))
print(f"Jacobian determinant over 200 points: {min(dets):.9f} to {max(dets):.9f}")
