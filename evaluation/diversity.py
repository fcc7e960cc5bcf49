"""Question diversity: how alike a paper's questions are, pair by pair (SciQAG, Appendix C).

Two methods, one output shape:

- ``llm``: the paper's method. The Appendix C prompt (chain of thought, few-shot) rates the intent
  similarity of one question pair from 0 to 100; every pair of a paper's questions is one call
  (n(n-1)/2: 45 for 10 questions), sent together through the client's bounded concurrency. The
  score is read from the reply's last "Similarity Score: N"; an unreadable reply or a value outside
  0-100 is recorded as None (the authors' notebook wrote 0 for an unreadable reply; we do not guess).
- ``embedding``: cosine similarity of sentence embeddings (one encode per paper); cheap enough for
  large runs. Cosine lies in [-1, 1]; for these models it is in practice 0-1 and is not rescaled.

Per paper: ``diversity_mean`` = mean pairwise similarity (0-1), per question
``max_question_similarity`` = its highest similarity to another question of the paper, and the full
similarity matrix (for heatmaps). Dataset figures: the paper's bins <0.3, 0.3-0.5, 0.5-0.7, >0.7 of
all pairwise similarities and their mean (paper: 0.31). Output ``WORK/diversity.jsonl``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from datasets import Value

from sciqag_dataset.core import records
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import Context, Metric, Plots, num, pct, register
from sciqag_dataset.core.options import option
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation import plots
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, load_embedder
from sciqag_dataset.evaluation.judge_prompts import build_diversity_messages
from sciqag_dataset.llm import LLMClient

log = logging.getLogger(__name__)

METHODS = ("embedding", "llm")
BINS = ("<0.3", "0.3-0.5", "0.5-0.7", ">0.7")
RAW_KEPT = 500  # characters of an unreadable reply kept in the record

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_SIMILARITY_SCORE = re.compile(r"similarity\s*score\s*(?:\*\*)?\s*[:=]?\s*(?:\*\*)?\s*" + _NUMBER, re.I)
_SCORE = re.compile(r"\bscore\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*" + _NUMBER, re.I)
_BARE = re.compile(r"^\s*" + _NUMBER + r"\s*(?:%|/\s*100)?\s*\.?\s*$")


def parse_similarity(text: str) -> float | None:
    """The 0-100 score of a similarity reply (the last one stated), or None if there is no valid one."""
    text = _THINK.sub("", text or "")
    for pattern in (_SIMILARITY_SCORE, _SCORE):
        found = pattern.findall(text)
        if found:
            value = float(found[-1])
            break
    else:
        m = _BARE.match(text)
        if not m:
            return None
        value = float(m.group(1))
    return value if 0 <= value <= 100 else None


def pair_indices(n: int) -> list[tuple[int, int]]:
    """All question pairs (i, j) with j < i, in the authors' order (Question1 is the later question)."""
    return [(i, j) for i in range(n) for j in range(i)]


def matrix_from_pairs(n: int, values: dict[tuple[int, int], float | None]) -> list[list[float | None]]:
    """A symmetric n x n matrix from pair values; 1.0 on the diagonal."""
    matrix: list[list[float | None]] = [[1.0 if i == j else None for j in range(n)] for i in range(n)]
    for (i, j), v in values.items():
        matrix[i][j] = matrix[j][i] = v
    return matrix


def pairwise_values(matrix: Sequence[Sequence[float | None]]) -> list[float]:
    """The known similarities of distinct question pairs (lower triangle)."""
    return [matrix[i][j] for i, j in pair_indices(len(matrix)) if matrix[i][j] is not None]


def paper_diversity(matrix: Sequence[Sequence[float | None]]) -> tuple[float | None, list[float | None]]:
    """(mean pairwise similarity, each question's maximum similarity to another question)."""
    values = pairwise_values(matrix)
    n = len(matrix)
    per_question = []
    for i in range(n):
        row = [matrix[i][j] for j in range(n) if j != i and matrix[i][j] is not None]
        per_question.append(round(max(row), 4) if row else None)
    return (round(mean(values), 4) if values else None), per_question


def similarity_bins(values: Iterable[float | None]) -> dict[str, float | None]:
    """Share of similarities in the paper's bins, and their mean (None values are left out).

    Bins are left-closed: v < 0.3, 0.3 <= v < 0.5,
    0.5 <= v < 0.7, v >= 0.7 (so an LLM score of 70 counts as ">0.7").
    """
    vals = [v for v in values if v is not None]
    if not vals:
        return {**{b: None for b in BINS}, "mean": None}
    counts = dict.fromkeys(BINS, 0)
    for v in vals:
        key = "<0.3" if v < 0.3 else "0.3-0.5" if v < 0.5 else "0.5-0.7" if v < 0.7 else ">0.7"
        counts[key] += 1
    return {**{b: round(c / len(vals), 4) for b, c in counts.items()}, "mean": round(mean(vals), 4)}


# --- the two methods --------------------------------------------------------------------------------


async def llm_similarity(client: LLMClient, questions: Sequence[str]) -> tuple[list[list[float | None]], list[dict]]:
    """The paper's method: one Appendix C call per question pair. Returns the 0-1 matrix and the
    pairs whose reply had no readable score (with the reply)."""
    pairs = pair_indices(len(questions))
    replies = await asyncio.gather(
        *(client.chat(build_diversity_messages(questions[i], questions[j])) for i, j in pairs)
    )
    values, failures = {}, []
    for (i, j), reply in zip(pairs, replies):
        score = parse_similarity(reply.text)
        values[i, j] = None if score is None else round(score / 100, 4)
        if score is None:
            failures.append({"pair": [i, j], "reply": reply.text[:RAW_KEPT]})
    return matrix_from_pairs(len(questions), values), failures


def embedding_similarity(model, questions: Sequence[str], batch_size: int = 64) -> list[list[float]]:
    """Cosine similarity of every question pair, from one encode of the paper's questions."""
    emb = model.encode(
        list(questions),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    sims = emb @ emb.T
    n = len(questions)
    return [[1.0 if i == j else round(float(sims[i, j]), 4) for j in range(n)] for i in range(n)]


def _record(paper: dict, matrix: list[list[float | None]] | None, method: str, model: str, **extra) -> dict:
    n = len(paper["qa"])
    if matrix is None:
        return {
            "id": paper["id"],
            "status": "too_few_questions",
            "method": method,
            "model": model,
            "pair_metrics": [{"max_question_similarity": None} for _ in range(n)],
            "paper_metrics": {"diversity_mean": None},
            "similarity_matrix": [],
            **extra,
        }
    div_mean, per_question = paper_diversity(matrix)
    known, total = len(pairwise_values(matrix)), n * (n - 1) // 2
    status = "ok" if known == total else "partial" if known else "unjudged"
    return {
        "id": paper["id"],
        "status": status,
        "method": method,
        "model": model,
        "pair_metrics": [{"max_question_similarity": v} for v in per_question],
        "paper_metrics": {"diversity_mean": div_mean},
        "similarity_matrix": matrix,
        **extra,
    }


def _questions(paper: dict) -> list[str]:
    return [p.get("question") or "" for p in paper["qa"]]


class _EmbeddingSimilarity:
    """Cosine similarity of a paper's questions with the embedder ``setup`` loaded in this process."""

    def __init__(self, model_name: str, device: str, batch_size: int):
        self.model_name, self.device, self.batch_size, self.model = model_name, device, batch_size, None

    def setup(self) -> None:
        self.model = load_embedder(self.model_name, device=self.device)

    def __call__(self, paper: dict) -> dict:
        qs = _questions(paper)
        matrix = embedding_similarity(self.model, qs, self.batch_size) if len(qs) >= 2 else None
        return _record(paper, matrix, "embedding", self.model_name, qa_source=paper.get("source"))


def stage(
    source: str | None = None,
    *,
    method: str = "embedding",
    client: LLMClient | None = None,
    model_name: str = DEFAULT_MODEL,
    device: str = "cpu",
    batch_size: int = 64,
) -> Stage:
    """How alike each paper's questions are -> ``WORK/diversity.jsonl``.

    ``method="llm"`` needs ``client`` (the judge); ``method="embedding"`` uses ``model_name``.
    """
    if method not in METHODS:
        raise UserError(f"unknown diversity method {method!r}; choose one of {METHODS}")
    inputs = lambda work: records.qa_papers(work, source)  # noqa: E731
    count = lambda work: records.count_qa(work, source)  # noqa: E731
    if method == "embedding":
        one = _EmbeddingSimilarity(model_name, device, batch_size)
        return Stage(
            name="diversity",
            inputs=inputs,
            process=one,
            setup=one.setup,
            count=count,
            params={"method": method, "model": model_name},
        )
    if client is None:
        raise UserError("diversity method 'llm' needs a judge client")

    async def one_llm(paper: dict) -> dict:
        qs = _questions(paper)
        if len(qs) < 2:
            return _record(paper, None, method, client.name, qa_source=paper.get("source"), judge_calls=0)
        matrix, failures = await llm_similarity(client, qs)
        return _record(
            paper,
            matrix,
            method,
            client.name,
            qa_source=paper.get("source"),
            judge_calls=len(pair_indices(len(qs))),
            failures=failures,
        )

    # A paper issues n(n-1)/2 calls at once; two papers in flight keep the client's slots busy.
    return Stage(
        name="diversity",
        inputs=inputs,
        process=one_llm,
        count=count,
        params={"method": method, "model": client.name, "request": client.params},
        concurrency=max(2, math.ceil(client.concurrency * len(client.urls) / 45) + 1),
        progress=lambda: {"calls": client.usage.requests, "cached": client.usage.cached},
        describe=client.describe,
        close=client.aclose,
    )


# --- reading the results ----------------------------------------------------------------------------


def diversity_summary(work: str | Path) -> dict[str, Any]:
    """The paper's bins and mean over every question pair of the dataset, plus per-paper figures."""
    values, paper_means, statuses, methods = [], [], {}, set()
    missing = 0
    for rec in iter_latest(Path(work) / "diversity.jsonl"):
        statuses[rec.get("status") or "ok"] = statuses.get(rec.get("status") or "ok", 0) + 1
        matrix = rec.get("similarity_matrix") or []
        if not matrix:
            continue
        methods.add(rec.get("method"))
        pv = pairwise_values(matrix)
        values += pv
        missing += len(pair_indices(len(matrix))) - len(pv)
        if (rec.get("paper_metrics") or {}).get("diversity_mean") is not None:
            paper_means.append(rec["paper_metrics"]["diversity_mean"])
    return {
        "papers": sum(statuses.values()),
        "statuses": statuses,
        "methods": sorted(m for m in methods if m),
        "pairs": len(values),
        "missing_pairs": missing,
        "bins": similarity_bins(values),
        "paper_mean": round(mean(paper_means), 4) if paper_means else None,
    }


def _card(s: dict) -> str:
    b = s["bins"]
    return (
        f"**Question diversity** ({', '.join(s['methods']) or 'no question pairs'}): mean pairwise similarity "
        f"{num(b['mean'])} (the paper: 0.31; lower is more diverse); share of question pairs <0.3: "
        f"{pct(b['<0.3'])}, 0.3–0.5: {pct(b['0.3-0.5'])}, 0.5–0.7: {pct(b['0.5-0.7'])}, >0.7: {pct(b['>0.7'])}."
    )


def _collect(got: dict, paper: dict, rec: dict, rows: list[dict], cfg) -> None:
    """Keep the similarity matrices of the first ``sample_papers`` papers with a measured question pair."""
    samples = got.setdefault("samples", [])
    matrix = rec.get("similarity_matrix") or []
    if (
        len(samples) < cfg.sample_papers
        and len(matrix) >= 2
        and any(matrix[i][j] is not None for i in range(len(matrix)) for j in range(i))
    ):
        samples.append(  # the plot names its paper and how the similarity was measured
            {
                "paper_id": paper["id"],
                "title": paper.get("title"),
                "method": rec.get("method"),
                "model": rec.get("model"),
                "matrix": matrix,
                "questions": [p["question"] for p in paper["qa"]],
            }
        )


def _plots(got: dict, draw: Plots, cfg) -> dict:
    """A question-similarity heatmap per sampled paper."""
    made = []
    for i, s in enumerate(got.get("samples") or [], 1):
        label = plots.paper_label(s["paper_id"], s["title"])
        llm = s["method"] == "llm"
        how = (
            f"the judge's intent similarity score ({s['model']}, 0-100, shown / 100)"
            if llm
            else f"cosine similarity of the questions' embeddings ({s['model']})"
        )
        p = draw.attempt(
            "question_similarity",
            lambda cap, s=s, i=i, label=label, llm=llm: plots.question_similarity_heatmap(
                s["matrix"],
                s["questions"],
                draw.folder / f"question_similarity_{i}.png",
                paper=label,
                measure=plots.LLM_SIMILARITY if llm else f"cosine, {s['model']}",
                caption=cap,
            ),
            f"Question diversity of paper {label}: each cell is {how} between two of its {len(s['questions'])} "
            "generated questions; low values mean the questions ask different things.",
        )
        if p:
            made.append({"paper_id": s["paper_id"], "path": p})
    return {"question_similarity": made} if made else {}


def _requires(ctx: Context) -> str | None:
    if ctx.cfg.diversity == "llm" and ctx.llm is None:
        return "diversity method 'llm' needs a judge endpoint; use --diversity embedding to run without one"
    return None


METRIC = register(
    Metric(
        name="diversity",
        cost=30,
        help="how alike each paper's questions are (embedder, or the judge with --diversity llm)",
        build=lambda ctx: stage(
            ctx.source,
            method=ctx.cfg.diversity,
            client=ctx.llm,
            model_name=ctx.cfg.diversity_model or ctx.cfg.embedding_model,
            device=ctx.cfg.device,
            batch_size=ctx.cfg.batch_size,
        ),
        options=(
            option(
                "diversity",
                str,
                "embedding",
                choices=METHODS,
                what="diversity method",
                help="embedding (cheap) | llm (the paper's Appendix C prompt, a call per question pair)",
            ),
            option(
                "diversity_model",
                str | None,
                None,
                help="embedder of the embedding diversity (default: embedding_model)",
            ),
        ),
        requires=_requires,
        collect=_collect,
        plots=_plots,
        plot_files=("question_similarity",),
        pair_columns={"max_question_similarity": Value("float32")},  # 0-1, against the paper's other questions
        paper_columns={"diversity_mean": Value("float32")},  # mean pairwise question similarity, 0-1 (paper: 0.31)
        needs_llm=lambda cfg: cfg.diversity == "llm",
        summarize=lambda path, cfg: diversity_summary(path.parent),
        card=_card,
        how_to_run="sciqag evaluate WORK --metrics diversity",
    )
)
