"""Answer coverage with evidence (SciQAG §3.3 / DESIGN.md §1), no LLM needed.

For one paper: split the text into sentences, embed every sentence once and every query
(question + "\\n" + answer, with an instruction prefix for instruct embedders) in one batch, and take
cosine similarities (answers x sentences). The paper is cut into 10 equal chunks of consecutive
sentences (sentence i falls in chunk floor(10 i / n), as in the authors' notebook) and k = 15 % of the
sentence count (at least 1). A paper of fewer than 10 sentences can hit at most n of the 10 chunks (as in
the notebook); one with no sentences is a failure record.

- ``definition="released"`` (default): the authors' released notebook, which produced the published
  68 %: pool all (answer, sentence) scores of the paper, keep the k best *distinct* sentences overall,
  coverage = share of chunks holding at least one of them.
- ``definition="eq1"``: Eq. 1 taken literally, the union over answers of the chunks of each answer's own
  top-k sentences. With 10 answers x k sentences it saturates near 100 %.
- Per-answer ``chunk_rate`` (paper: 64 %): chunks hit by that answer's own top-k sentences / 10.
- ``context``: the answer's best ``top_context`` sentences, best first (evidence for RAG use).
- ``quotes`` and ``grounded``: those sentences with their offsets in the paper's text, and the share of the
  answer's content words they hold (``grounding``).

Output: ``WORK/coverage.jsonl``, one record per paper with ``pair_metrics`` aligned with ``qa`` and
``paper_metrics.coverage``; ``info`` carries both definitions' values, n, k and the model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from statistics import mean

import numpy as np
from datasets import List, Value

from sciqag_dataset.core import records
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import Metric, Plots, Rule, at_least, pct, register
from sciqag_dataset.core.options import option
from sciqag_dataset.core.stage import Stage
from sciqag_dataset.evaluation import int8_embed, plots
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, ROUTES, TORCH, default_instruction, load_embedder
from sciqag_dataset.evaluation.fast_embed import SentenceCache, embed_sentences, encode_queries, model_key
from sciqag_dataset.evaluation.grounding import grounded, quotes
from sciqag_dataset.evaluation.sentences import split_sentences

log = logging.getLogger(__name__)

N_CHUNKS = 10
K_SHARE = 0.15
DEFINITIONS = ("released", "eq1")

# --- chunks, top-k, coverage --------------------------------------------------------------------


def n_top(n_sentences: int) -> int:
    """k = 15 % of the sentence count, at least 1 (the notebook's int(n * 0.15))."""
    return max(1, int(n_sentences * K_SHARE))


def chunk_of(index: int, n_sentences: int) -> int:
    """The chunk (0-9) of sentence ``index``: the notebook's int(index // (n / 10)), in exact integers."""
    return index * N_CHUNKS // n_sentences


def _chunk_share(indices, n_sentences: int) -> float:
    return len({chunk_of(i, n_sentences) for i in indices}) / N_CHUNKS


def _ranked(row: np.ndarray) -> np.ndarray:
    """Sentence indices by descending score; ties broken by position (stable)."""
    return np.argsort(-row, kind="stable")


def coverage_from_matrix(sim: np.ndarray) -> dict:
    """All coverage numbers from an answers x sentences similarity matrix.

    Returns {"n_sentences", "k", "released", "eq1", "chunk_rates": [per answer], "pooled": [the k
    sentence indices of the released definition], "ranked": [per answer, all sentence indices best first]}.
    """
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[1] == 0:
        raise ValueError("the paper has no sentences to compare answers with (empty or unsplittable text)")
    n_answers, n = sim.shape
    k = n_top(n)
    ranked = [_ranked(row) for row in sim]
    per_answer = [r[:k].tolist() for r in ranked]
    # released: pool every (answer, sentence) score, walk them best first, keep k distinct sentences
    flat = sim.ravel()
    order = np.lexsort((np.tile(np.arange(n), n_answers), -flat))  # score desc, then sentence position
    pooled: list[int] = []
    seen: set[int] = set()
    for pos in order:
        s = int(pos % n)
        if s not in seen:
            seen.add(s)
            pooled.append(s)
            if len(pooled) == k:
                break
    return {
        "n_sentences": n,
        "k": k,
        "released": _chunk_share(pooled, n),
        "eq1": _chunk_share({s for top in per_answer for s in top}, n),
        "chunk_rates": [_chunk_share(top, n) for top in per_answer],
        "pooled": pooled,
        "ranked": ranked,
    }


def _evidence(ranked, sentences: list[str], n: int) -> list[str]:
    """The ``n`` best sentences with distinct texts (a repeated sentence is one piece of evidence)."""
    out: list[str] = []
    for i in ranked:
        if len(out) == n:
            break
        if sentences[i] not in out:
            out.append(sentences[i])
    return out


# --- embeddings ---------------------------------------------------------------------------------


def queries_for(qa: list[dict], instruction: str = "") -> list[str]:
    return [f"{instruction}{p.get('question') or ''}\n{p.get('answer') or ''}" for p in qa]


def answer_sentence_matrix(
    paper: dict,
    model=None,
    *,
    model_name: str = DEFAULT_MODEL,
    instruction: str | None = None,
    batch_size: int = 64,
    sentences: list[str] | None = None,
    cache: SentenceCache | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Cosine similarities (answers x sentences) of one paper, and its sentences (the paper's Fig. 5).

    The paper's sentences are encoded once (or read from ``cache``) and all its queries in one more call,
    both batched by token count (``fast_embed``); ``batch_size`` is accepted for callers and not used.
    """
    model = model if model is not None else load_embedder(model_name)
    if instruction is None:
        instruction = default_instruction(model_name)
    sentences = split_sentences(paper.get("text") or "") if sentences is None else sentences
    if not sentences:
        raise ValueError("the paper has no sentences to compare answers with (empty or unsplittable text)")
    if not paper.get("qa"):
        raise ValueError("the paper has no QA pairs")
    sent_emb = embed_sentences(model, sentences, cache)
    query_emb = encode_queries(model, queries_for(paper["qa"], instruction))
    return query_emb @ sent_emb.T, sentences


def coverage_record(
    paper: dict,
    model,
    *,
    model_name: str = DEFAULT_MODEL,
    definition: str = "released",
    top_context: int = 3,
    instruction: str | None = None,
    batch_size: int = 64,
    cache: SentenceCache | None = None,
) -> dict:
    """One paper -> its coverage.jsonl record (sentence vectors read from and added to ``cache`` if given)."""
    if definition not in DEFINITIONS:
        raise ValueError(f"coverage definition must be one of {DEFINITIONS}, not {definition!r}")
    if instruction is None:
        instruction = default_instruction(model_name)
    sim, sentences = answer_sentence_matrix(
        paper, model, model_name=model_name, instruction=instruction, batch_size=batch_size, cache=cache
    )
    return record_from_matrix(paper, sim, sentences, model_name, definition, top_context, instruction)


def record_from_matrix(
    paper: dict, sim: np.ndarray, sentences: list[str], model_name: str, definition: str, top_context: int, instruction
) -> dict:
    """The coverage.jsonl record from a paper's answers x sentences similarities (however they were embedded)."""
    cov = coverage_from_matrix(sim)
    text, pairs = paper.get("text") or "", []
    for i, (rate, ranked) in enumerate(zip(cov["chunk_rates"], cov["ranked"])):
        found = quotes(text, sentences, ranked, sim[i], top_context)
        pairs.append(
            {
                "chunk_rate": rate,
                "context": _evidence(ranked, sentences, top_context),
                "quotes": found,
                "grounded": grounded(paper["qa"][i].get("answer") or "", found),
            }
        )
    return {
        "id": paper["id"],
        "status": "ok",
        "pair_metrics": pairs,
        "paper_metrics": {"coverage": cov[definition]},
        "info": {
            "definition": definition,
            "coverage_released": cov["released"],
            "coverage_eq1": cov["eq1"],
            "n_sentences": cov["n_sentences"],
            "k": cov["k"],
            "model": model_name,
            "instruction": instruction or None,
        },
    }


def cache_path(work: str | Path, model_name: str) -> Path:
    """``WORK/embeddings/<model>.sqlite``: one file per model (a folder path becomes its last part)."""
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(str(model_name)).name) or "model"
    return Path(work) / "embeddings" / f"{slug}.sqlite"


class _Coverage:
    """Coverage of one paper with the embedder that ``setup`` loaded in this process, its sentence vectors
    cached in the work dir (the runner names the work dir only when it asks for the inputs)."""

    def __init__(self, model_name: str, device: str, source: str | None, embedder: str = TORCH, **options):
        self.model_name, self.device, self.source, self.options = model_name, device, source, options
        self.embedder = embedder
        self.model, self.work, self.cache = None, None, None

    def inputs(self, work):
        self.work = Path(work)
        return records.qa_papers(work, self.source)

    def setup(self) -> None:
        self.model = int8_embed.load(load_embedder(self.model_name, self.device), self.embedder, self.device)

    def __call__(self, paper: dict) -> dict:
        if self.cache is None and self.work is not None:
            key = model_key(self.model, self.model_name)
            self.cache = SentenceCache(cache_path(self.work, self.model_name), key)
        rec = coverage_record(paper, self.model, model_name=self.model_name, cache=self.cache, **self.options)
        if self.embedder != TORCH:
            rec["info"]["embedder"] = self.embedder
        return rec


def stage(
    source: str | None = None,
    *,
    model_name: str = DEFAULT_MODEL,
    definition: str = "released",
    top_context: int = 3,
    instruction: str | None = None,
    batch_size: int = 64,
    device: str = "cpu",
    embedder: str = TORCH,
) -> Stage:
    """Coverage and evidence for every paper's answers -> ``WORK/coverage.jsonl``. ``instruction=None`` picks the
    model's default prefix; pass "" to disable it. One process: the model is the cost, and torch already
    uses the cores."""
    if definition not in DEFINITIONS:
        raise UserError(f"coverage definition must be one of {DEFINITIONS}, not {definition!r}")
    if embedder not in ROUTES:
        raise UserError(f"evaluate.embedder must be one of {ROUTES}, not {embedder!r}")
    one = _Coverage(
        model_name,
        device,
        source,
        embedder,
        definition=definition,
        top_context=top_context,
        instruction=instruction,
        batch_size=batch_size,
    )
    return Stage(
        name="coverage",
        inputs=one.inputs,
        process=one,
        setup=one.setup,
        # not the definition: a record holds both, so switching needs no recomputation
        # "quotes": records before quotes and grounding are recomputed once
        # the int8 route's vectors differ (and with its recipe and ONNX Runtime's release): switching
        # recomputes; the torch route keeps the older fingerprint
        params={"model": model_name, "top_context": top_context, "instruction": instruction, "quotes": 1}
        | ({} if embedder == TORCH else {"embedder": int8_embed.recipe()}),
        count=lambda work: records.count_qa(work, source),
    )


def coverage_summary(recs) -> dict:
    """Dataset figures from coverage records: mean paper coverage (paper: 68 %) and mean per-answer chunk
    rate (paper: 64 %; averaged per paper first, as in the notebook)."""
    ok = [r for r in recs if r.get("status") == "ok"]
    covs = [r["paper_metrics"]["coverage"] for r in ok if r["paper_metrics"].get("coverage") is not None]
    rates = [mean(p["chunk_rate"] for p in r["pair_metrics"]) for r in ok if r.get("pair_metrics")]
    ground = [p["grounded"] for r in ok for p in r.get("pair_metrics") or [] if p.get("grounded") is not None]
    return {
        "papers": len(ok),
        "coverage": mean(covs) if covs else None,
        "chunk_rate": mean(rates) if rates else None,
        "grounded": round(mean(ground), 4) if ground else None,  # older records have none
        "ungrounded": sum(g < 0.5 for g in ground),
        "answers_grounded": len(ground),
    }


def summary_of(path: Path, definition: str) -> dict:
    """``coverage_summary`` of a coverage.jsonl in the chosen definition, plus the mean of both definitions."""
    both: dict[str, list] = {d: [] for d in DEFINITIONS}
    models, slim = set(), []
    for rec in iter_latest(path):  # slimmed: the evidence sentences are not needed here
        info = rec.get("info") or {}
        if info.get("model"):  # the int8 route's records say so, and the card with them
            models.add(info["model"] + (f" ({info['embedder']})" if info.get("embedder") else ""))
        for d in both:
            if info.get(f"coverage_{d}") is not None:
                both[d].append(info[f"coverage_{d}"])
        cov = info.get(f"coverage_{definition}", (rec.get("paper_metrics") or {}).get("coverage"))
        slim.append(
            {
                "status": rec.get("status"),
                "paper_metrics": {"coverage": cov},
                "pair_metrics": [
                    {"chunk_rate": p.get("chunk_rate"), "grounded": p.get("grounded")}
                    for p in rec.get("pair_metrics") or []
                ],
            }
        )
    return {
        **coverage_summary(slim),
        "definition": definition,
        **{f"coverage_{d}": round(mean(v), 4) if v else None for d, v in both.items()},
        "models": sorted(m for m in models if m),
    }


def _card(s: dict) -> str:
    return (
        f"**Answer coverage** ({', '.join(s['models'])}; {N_CHUNKS} chunks, k = {pct(K_SHARE)} of sentences): "
        f"{pct(s['coverage_released'])} with the pooled definition of the authors' released notebook (the "
        f"default; the paper: 68 %), {pct(s['coverage_eq1'])} with Eq. 1 taken literally; chunk rate per answer "
        f"{pct(s['chunk_rate'])} (the paper: 64 %). Each pair's top evidence sentences are in its `context` column"
        + (
            f", with their offsets in the paper in `quotes`; `grounded` (the share of an answer's content words its "
            f"quotes hold) averages {pct(s['grounded'])}, and {s['ungrounded']} of {s['answers_grounded']} answers "
            "are below 50 % (likely stating what the paper does not say)."
            if s.get("grounded") is not None
            else "."
        )
    )


def _chosen_definition(rec: dict, cfg) -> dict:
    """A record holds both definitions: switching needs no recomputation."""
    info, d = rec.get("info") or {}, cfg.coverage_definition
    if d and f"coverage_{d}" in info:
        return {**rec, "paper_metrics": {**(rec.get("paper_metrics") or {}), "coverage": info[f"coverage_{d}"]}}
    return rec


def _collect(got: dict, paper: dict, rec: dict, rows: list[dict], cfg) -> None:
    if rows and rows[0]["coverage"] is not None:
        got.setdefault("coverage", []).append(rows[0]["coverage"])
    got.setdefault("chunk_rates", []).extend(r["chunk_rate"] for r in rows if r["chunk_rate"] is not None)
    got.setdefault("sample", {"paper": paper, "info": rec.get("info") or {}})


def _plots(got: dict, draw: Plots, cfg) -> dict:
    """The answer-sentence heatmap of the first paper, and the histograms of coverage and chunk rate."""
    made: dict = {}
    if "sample" in got:
        paper, info = got["sample"]["paper"], got["sample"]["info"]
        # the model and instruction the coverage record was computed with, so the picture matches it
        model = info.get("model") or cfg.embedding_model
        label = plots.paper_label(paper["id"], paper.get("title"))

        def answer_sentences(cap):
            sim, _ = answer_sentence_matrix(
                paper, model_name=model, instruction=info.get("instruction") or "", batch_size=cfg.batch_size
            )
            return plots.answer_sentence_heatmap(
                sim,
                draw.folder / "answer_sentence_similarity.png",
                paper=label,
                measure=f"cosine, {model}",
                caption=cap,
            )

        p = draw.attempt(
            "answer_sentence_similarity",
            answer_sentences,
            f"Answer coverage of paper {label}: cosine similarity ({model}) of each generated answer "
            "(rows) to each sentence of the paper (columns); dashed lines cut the paper into the 10 "
            "chunks that coverage counts.",
        )
        if p:
            made["answer_sentence_similarity"] = {"paper_id": paper["id"], "path": p}
    coverage, rates = got.get("coverage") or [], got.get("chunk_rates") or []
    if coverage:
        p = draw.attempt(
            "coverage_histogram",
            lambda cap: plots.coverage_histogram(
                coverage,
                draw.folder / "coverage_histogram.png",
                label=f"coverage per paper ({cfg.coverage_definition} definition)",
                unit="paper",
                caption=cap,
            ),
            f"Coverage per paper over {plural(len(coverage), 'paper')}: the share of a paper's 10 chunks holding "
            f"the sentences its answers draw on ({cfg.coverage_definition} definition); the dashed line is the mean.",
        )
        if p:
            made["coverage_histogram"] = p
    if rates:
        p = draw.attempt(
            "chunk_rate_histogram",
            lambda cap: plots.coverage_histogram(
                rates,
                draw.folder / "chunk_rate_histogram.png",
                label="chunk rate per answer",
                unit="answer",
                caption=cap,
            ),
            f"Chunk rate per answer over {plural(len(rates), 'answer')}: the share of its paper's 10 chunks "
            "that hold one answer's best-matching sentences; the dashed line is the mean.",
        )
        if p:
            made["chunk_rate_histogram"] = p
    return made


METRIC = register(
    Metric(
        name="coverage",
        cost=20,
        help="the share of each paper's chunks its answers draw on, with evidence (embedder)",
        build=lambda ctx: stage(
            ctx.source,
            model_name=ctx.cfg.embedding_model,
            definition=ctx.cfg.coverage_definition,
            top_context=ctx.cfg.top_context,
            instruction=ctx.cfg.instruction,
            batch_size=ctx.cfg.batch_size,
            device=ctx.cfg.device,
            embedder=ctx.cfg.embedder,
        ),
        options=(
            option(
                "embedder",
                str,
                TORCH,
                choices=ROUTES,
                what="embedder route",
                help="coverage's encoder: torch (float32, exact) | onnx-int8 (ONNX Runtime int8 weights: faster on a "
                "CPU, vectors close to, not equal to, torch's; the [fast-embed] extra)",
            ),
            option(
                "coverage_definition",
                str,
                "released",
                choices=DEFINITIONS,
                what="coverage definition",
                help="released (the authors' notebook, 68 %%) | eq1 (Eq. 1 literally)",
            ),
            option("top_context", int, 3, min=0, help="evidence sentences kept per answer (the `context` column)"),
            option(
                "instruction",
                str | None,
                None,
                help="embedding query prefix (default: the e5 instruction for *instruct*)",
            ),
        ),
        pair_columns={
            "chunk_rate": Value("float32"),  # share of the paper's 10 chunks hit by this answer's evidence
            "context": List(Value("string")),  # this answer's top evidence sentences from the paper
            # the same sentences where they stand in the paper's text: text == paper_text[start:end]
            "quotes": List(
                {"start": Value("int32"), "end": Value("int32"), "text": Value("string"), "score": Value("float32")}
            ),
            "grounded": Value("float32"),  # share of the answer's content words its quotes hold
        },
        paper_columns={
            "coverage": Value("float32")
        },  # share of the paper's chunks covered by its answers (paper: 68 %)
        view=_chosen_definition,
        summarize=lambda path, cfg: summary_of(path, cfg.coverage_definition),
        card=_card,
        collect=_collect,
        plots=_plots,
        plot_files=("answer_sentence_similarity", "coverage_histogram", "chunk_rate_histogram"),
        rules=(
            Rule(
                "min_chunk_rate",
                at_least("chunk_rate"),
                lambda t: f"answer chunk rate ≥ {t:g}",
                help="minimum share of the paper's 10 chunks an answer's evidence covers",
                constraints={"min": 0, "max": 1},
            ),
            Rule(
                "min_grounding",
                at_least("grounded"),
                lambda t: f"share of the answer's words in its quotes ≥ {t:g}",
                help="minimum share of an answer's content words found in its quoted evidence (coverage's `grounded`)",
                constraints={"min": 0, "max": 1},
            ),
        ),
        how_to_run="sciqag evaluate WORK --metrics coverage",
    )
)
