"""A two-parameter logistic (2PL) IRT fit of a models x items 0/1 matrix, NumPy and SciPy only.

P(model m right on item i) = sigmoid(a_i * (theta_m - b_i)). Joint maximum a posteriori fit with weak priors
(theta ~ N(0, 1), log a ~ N(0, 1), b ~ N(0, 2^2)), which keep the estimates finite for an item every model gets
right or none does; L-BFGS-B on the analytic gradient. Only meaningful with many models (``MIN_MODELS``).
"""

from __future__ import annotations

import numpy as np

try:  # scipy comes with the bench, evaluate and review extras; without it there is no fit
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit
except ImportError:
    minimize = None

MIN_MODELS = 8


def fit_2pl(matrix) -> dict[str, list[float]] | None:
    """Each item's discrimination ``a`` and difficulty ``b`` and each model's ability ``theta``; None with fewer
    than ``MIN_MODELS`` models, no item, or no scipy."""
    x = np.asarray(matrix, dtype=float)
    n, k = x.shape
    if n < MIN_MODELS or k < 1 or minimize is None:
        return None

    def split(p):
        return p[:n], p[n : n + k], p[n + k :]

    def loss(p):
        theta, log_a, b = split(p)
        a = np.exp(log_a)
        z = a * (theta[:, None] - b)
        nll = -(x * log_expit(z) + (1 - x) * log_expit(-z)).sum()
        prior = 0.5 * (theta @ theta + log_a @ log_a + b @ b / 4)
        r = x - expit(z)  # d loglik / dz
        g_theta = -(r * a).sum(axis=1) + theta
        g_b = (r * a).sum(axis=0) + b / 4
        g_log_a = -(r * (theta[:, None] - b)).sum(axis=0) * a + log_a
        return nll + prior, np.concatenate([g_theta, g_log_a, g_b])

    start = np.zeros(n + 2 * k)
    start[:n] = (x.mean(axis=1) - x.mean()) / (x.mean(axis=1).std() or 1.0)
    fit = minimize(loss, start, jac=True, method="L-BFGS-B")
    theta, log_a, b = split(fit.x)
    return {
        "theta": [round(float(t), 4) for t in theta],
        "a": [round(float(v), 4) for v in np.exp(log_a)],
        "b": [round(float(v), 4) for v in b],
    }
