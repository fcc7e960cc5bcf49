"""Agreement between raters (SciQAG §4 validated its judge against two experts on 100 pairs; HoneyBee
reports Spearman and Pearson per dimension): ``sciqag agreement WORK`` -> ``WORK/agreement.json`` and one
confusion-matrix plot per dimension in ``WORK/agreement_plots/``.

Per RACAR dimension, for each pair of raters over the pairs both scored: quadratic-weighted Cohen's kappa
(scikit-learn), Spearman's rho (SciPy) and exact agreement; Krippendorff's alpha (ordinal, the
``krippendorff`` package) over the human raters and over humans plus the judge. Each with a bootstrap
95 % interval over pairs and the number of pairs behind it. The difficulty label is ordinal like the scores;
the reasoning type and keep/drop decisions are nominal: unweighted kappa, nominal alpha, no Spearman.
"""

from __future__ import annotations

import itertools
import json
import logging
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import Unavailable, UserError
from sciqag_dataset.core.folders import claim
from sciqag_dataset.core.schema import RACAR_DIMENSIONS, REASONING_TYPES, SCALED
from sciqag_dataset.core.wiring import AGREEMENT
from sciqag_dataset.evaluation.plots import agreement_confusion
from sciqag_dataset.evaluation.ratings import JUDGE, Ratings

log = logging.getLogger(__name__)

DIMENSIONS = (*RACAR_DIMENSIONS, "difficulty", "reasoning_type", "keep")
NOMINAL = ("reasoning_type", "keep")
LOW_KAPPA = 0.4  # below it the card warns: "fair" agreement at best (Landis & Koch)


def _stats():
    """scikit-learn's kappa, SciPy's Spearman and ``krippendorff`` (the `review` extra; imported on first use:
    together ~1 s, which every other command would pay at start)."""
    try:
        import krippendorff
        from scipy.stats import spearmanr
        from sklearn.metrics import cohen_kappa_score
    except ImportError as exc:
        raise Unavailable(f"agreement needs {exc.name}: pip install 'sciqag-hf[review]'") from exc
    return cohen_kappa_score, spearmanr, krippendorff


def _kappa(nominal: bool) -> Callable[[np.ndarray, np.ndarray], float]:
    """Quadratic-weighted kappa over the scale 1-3, or unweighted kappa over the labels given."""

    def kappa(x, y):
        labels = sorted(set(x) | set(y) | (set() if nominal else {1, 2, 3}))
        with warnings.catch_warnings():  # one label everywhere: kappa is undefined (nan), not an error
            warnings.simplefilter("ignore")
            return float(_stats()[0](x, y, weights=None if nominal else "quadratic", labels=labels))

    return kappa


def _spearman(x, y) -> float:
    if len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")  # a constant rater has no ranking
    return float(_stats()[1](x, y).statistic)


def _exact(x, y) -> float:
    return float(np.mean(np.asarray(x) == np.asarray(y)))


def _alpha(matrix: np.ndarray, level: str) -> float:
    """Krippendorff's alpha over ``matrix`` (raters x pairs, nan = not rated); nan when undefined."""
    rated = np.sum(~np.isnan(matrix), axis=0) >= 2
    matrix = matrix[:, rated]
    if matrix.shape[1] < 2 or len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return float("nan")
    return float(_stats()[2].alpha(reliability_data=matrix, level_of_measurement=level))


def _value(v: float) -> float | None:
    return None if v is None or np.isnan(v) else round(float(v), 4)


def _bootstrap(stat: Callable[[np.ndarray], float], n: int, rounds: int, rng: np.random.Generator) -> dict:
    """``stat`` on all ``n`` items, and a percentile 95 % interval from ``rounds`` resamples of them."""
    value = stat(np.arange(n))
    draws = [stat(rng.integers(0, n, n)) for _ in range(rounds)] if n >= 2 and rounds else []
    defined = [d for d in draws if not np.isnan(d)]
    low, high = np.percentile(defined, [2.5, 97.5]) if len(defined) >= 20 else (np.nan, np.nan)
    # a resample where the statistic is undefined (a rater constant on it) is left out of the interval: say so
    out = {"value": _value(value), "low": _value(low), "high": _value(high), "n": n}
    return out | ({"undefined_resamples": len(draws) - len(defined)} if len(defined) < len(draws) else {})


def _table(ratings: Ratings, dimension: str) -> dict[str, dict[str, float]]:
    """rater -> pair_id -> score (keep as 1/0), for the rows that give this dimension."""
    out: dict[str, dict[str, float]] = {}
    for row in ratings.rows:
        v = row.get(dimension)
        if v is not None:
            out.setdefault(row["rater"], {})[row["pair_id"]] = _code(dimension, v)
    return out


def _code(dimension: str, value) -> float:
    """A rating as a number: keep as 1/0, a reasoning type by its place in the list (nominal: order unused)."""
    if dimension == "keep":
        return float(bool(value))
    if dimension == "reasoning_type":
        return float(REASONING_TYPES.index(value))
    return float(value)


def pairwise(by_rater: dict, a: str, b: str, dimension: str, rounds: int, rng) -> dict | None:
    common = sorted(set(by_rater.get(a, {})) & set(by_rater.get(b, {})))
    if not common:
        return None
    x = np.array([by_rater[a][p] for p in common])
    y = np.array([by_rater[b][p] for p in common])
    nominal = dimension in NOMINAL
    stats = {"kappa": _kappa(nominal), **({} if nominal else {"spearman": _spearman}), "exact": _exact}
    out = {"a": a, "b": b, "n": len(common)}
    for name, fn in stats.items():
        out[name] = _bootstrap(lambda idx, fn=fn: fn(x[idx], y[idx]), len(common), rounds, rng)
    return out


def alpha(
    by_rater: dict, raters: Sequence[str], dimension: str, rounds: int, rng, units: set[str] | None = None
) -> dict | None:
    """Krippendorff's alpha of ``raters`` over the pairs two of them rated (or over ``units``)."""
    raters = [r for r in raters if r in by_rater]
    if len(raters) < 2:
        return None
    pairs = sorted(units if units is not None else {p for r in raters for p in by_rater[r]})
    matrix = np.array([[by_rater[r].get(p, np.nan) for p in pairs] for r in raters], dtype=float)
    matrix = matrix[:, np.sum(~np.isnan(matrix), axis=0) >= 2]  # pairs seen by one rater say nothing
    if matrix.shape[1] == 0:
        return None
    level = "nominal" if dimension in NOMINAL else "ordinal"
    result = _bootstrap(lambda idx: _alpha(matrix[:, idx], level), matrix.shape[1], rounds, rng)
    return {**result, "raters": list(raters)}


def agreement(ratings: Ratings, *, rounds: int = 500, seed: int = 0) -> dict:
    """Every statistic for every dimension, as written to agreement.json."""
    rng = np.random.default_rng(seed)
    raters = sorted(ratings.kinds)
    humans, judges = ratings.humans(), ratings.judges()
    out: dict = {
        "raters": {
            r: {"kind": ratings.kinds[r], "pairs": len({x["pair_id"] for x in ratings.rows if x["rater"] == r})}
            for r in raters
        },
        "pairs": len({x["pair_id"] for x in ratings.rows if x["rater"] in humans}),  # pairs people rated
        "bootstrap_rounds": rounds,
        "inputs": ratings.inputs,
        "dimensions": {},
        "warnings": [],
    }
    for dim in DIMENSIONS:
        by_rater = _table(ratings, dim)
        pairs = [p for a, b in itertools.combinations(raters, 2) if (p := pairwise(by_rater, a, b, dim, rounds, rng))]
        if not pairs:
            continue
        # with the judge over the pairs two people rated: the judge rated every reviewed pair, and alpha over
        # all of them would describe another sample than alpha among the people
        by_people = [set(by_rater.get(h, {})) for h in humans]
        shared = {p for p in set().union(*by_people) if sum(p in s for s in by_people) >= 2}
        # null where the judge gave no such rating (it never decides keep/drop): alpha "with the judge" would
        # be the people's alone under another name
        judged = JUDGE in judges and shared & set(by_rater.get(JUDGE, {}))
        with_judge = alpha(by_rater, [*humans, JUDGE], dim, rounds, rng, shared) if judged else None
        out["dimensions"][dim] = {
            "pairs": pairs,
            "alpha_humans": alpha(by_rater, humans, dim, rounds, rng),
            "alpha_all": with_judge,
        }
        for p in pairs:
            k = p["kappa"]["value"]
            if (
                JUDGE in (p["a"], p["b"])
                and (p["a"] in humans or p["b"] in humans)
                and k is not None
                and k < LOW_KAPPA
            ):
                human = p["b"] if p["a"] == JUDGE else p["a"]
                out["warnings"].append(
                    f"{dim}: the judge agrees weakly with {human} (kappa {k:.2f} over {p['n']} pairs, below "
                    f"{LOW_KAPPA}): do not trust its {dim} scores alone"
                )
    return out


def confusion(ratings: Ratings, dimension: str) -> tuple[np.ndarray, str]:
    """A 3 x 3 count over the pairs two raters scored, and who its rows are: the judge's score (rows) against
    each person's (columns), or without a judge score, every two people's scores of a pair, each way round
    (a symmetric coincidence matrix)."""
    by_rater = _table(ratings, dimension)
    judge = by_rater.get(JUDGE, {})
    people = [by_rater.get(h, {}) for h in ratings.humans()]
    m = np.zeros((3, 3), dtype=int)
    for scores in people:
        for pid, score in scores.items():
            if pid in judge:
                m[int(judge[pid]) - 1, int(score) - 1] += 1
    if m.sum():
        return m, JUDGE
    for a, b in itertools.permutations(people, 2):
        for pid in set(a) & set(b):
            m[int(a[pid]) - 1, int(b[pid]) - 1] += 1
    return m, "people"


def check_output(out: Path) -> Path:
    """``out`` may be written: new, or an agreement result written before (never a file of the user's)."""
    if out.is_dir():
        raise UserError(f"-o/--output: {out} is a folder; name the file to write (e.g. {out / AGREEMENT})")
    if out.exists():
        try:
            earlier = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            earlier = None
        if not (isinstance(earlier, dict) and {"raters", "dimensions", "bootstrap_rounds"} <= set(earlier)):
            raise UserError(f"-o/--output: {out} exists and is not a result of `sciqag agreement`; choose a new file")
    return out


def plot_folder(out: Path) -> Path:
    """Where the plots of the result ``out`` go: a folder named after it (agreement.json -> agreement_plots/)."""
    return out.with_name(f"{out.stem}_plots")


def write_agreement(
    work: Path, ratings: Ratings, out: Path | None = None, *, rounds: int = 500, seed: int = 0
) -> Path:
    """agreement.json (``out``, default in WORK) and the confusion plots in a folder of ours named after it
    (``agreement_plots/``; a folder of that name that sciqag did not make is refused before any work)."""
    out = check_output(Path(out) if out else Path(work) / AGREEMENT)
    matrices = {dim: confusion(ratings, dim) for dim in SCALED}
    folder = plot_folder(out)
    if any(m.sum() for m, _ in matrices.values()):
        claim(folder, "agreement plots", option="-o/--output")
    result = agreement(ratings, rounds=rounds, seed=seed)
    result["plots"] = {}
    for dim, (m, rows) in matrices.items():
        if m.sum():
            path = folder / f"{dim}.png"
            if rows == JUDGE:
                caption = (
                    f"{dim.capitalize()}: the judge's score against the people's over {int(m.sum())} ratings "
                    "(the diagonal is agreement)."
                )
            else:
                caption = (
                    f"{dim.capitalize()}: one person's score against another's over {int(m.sum()) // 2} pairs "
                    "of ratings, each counted both ways (no judge score; the diagonal is agreement)."
                )
            try:
                agreement_confusion(m, dim, path, caption, rows=rows)
            except Exception as exc:  # the numbers are what matters; a picture must not lose them
                log.warning("agreement plot for %s failed: %s", dim, exc)
                continue
            result["plots"][path.relative_to(out.parent).as_posix()] = caption
    write_json(out, result)
    return out
