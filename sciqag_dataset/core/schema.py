"""The one record schema, declared once as `datasets.Features`.

A record is one paper. Stages add columns to it: ingest fills the paper fields,
`keywords` adds ``keywords``, `seed`/`generate` add ``qa`` and the generation
fields, formatting adds the instruction columns. Every artifact in a work
directory and every published config is a column subset of ``RECORD``.
"""

from __future__ import annotations

import datasets
from datasets import Features, List, Value

from sciqag_dataset.core import metrics

COMPONENT_KINDS = ("table", "equation", "figure")
GROUNDING_KINDS = ("prose", *COMPONENT_KINDS)  # what a pair can be asked from


def grounding_rank(kind: str) -> tuple:
    """Sort key of grounding kinds: the known ones in their order, then any other by name."""
    return (GROUNDING_KINDS.index(kind), "") if kind in GROUNDING_KINDS else (len(GROUNDING_KINDS), kind)


QA_PAIR = {
    "question": Value("string"),
    "answer": Value("string"),
    # where the pair came from: "teacher", "generator", "released" (authors' JSON) ...
    "origin": Value("string"),
    # what it was asked from: kind "prose" (the paper's text; component_id null), or "table", "equation" or
    # "figure" with the id of that component (``components``); null where the pair does not record it (the
    # authors' released pairs, pairs written before it was recorded)
    "grounding": {"kind": Value("string"), "component_id": Value("string")},
}

SECTION = {"heading": Value("string"), "text": Value("string")}

#: A table, equation or figure of a paper, kept out of its ``text`` (which stays the prose alone). ``mentions`` are
#: character offsets into ``text`` where the prose refers to it (``text[start:end]`` is "Table 2");
#: ``context_before``/``context_after`` are the paragraphs of ``text`` before and after where it stands.
COMPONENT = {
    "id": Value("string"),  # the source's own id ("T2", "tab:rates"), else "table-2"
    "kind": Value("string"),  # "table", "equation" or "figure"
    "label": Value("string"),  # as printed: "Table 2", "Figure 1", "Eq. (3)"
    "caption": Value("string"),
    # a table: Markdown (header rows merged into one); an equation: LaTeX, or MathML where the source has no
    # TeX; a figure: empty
    "content": Value("string"),
    "content_format": Value("string"),  # "markdown", "latex", "mathml", "text"; None for a figure
    "cells": List(List(Value("string"))),  # a table's rows, header rows first (a spanning cell in each it spans)
    "header_rows": Value("int32"),
    "context_before": Value("string"),
    "context_after": Value("string"),
    "mentions": List({"start": Value("int64"), "end": Value("int64")}),
}

METADATA = {
    "doi": Value("string"),
    "journal": Value("string"),
    "category": Value("string"),
    "license": Value("string"),
    "authors": List(Value("string")),
    "year": Value("int32"),
    "url": Value("string"),
}

MESSAGE = {"role": Value("string"), "content": Value("string")}

#: How a paper was read, and how well: what to look at before trusting a corpus (``ingest_report.json`` sums it).
INGEST = {
    "extractor": Value("string"),  # the reader and its library: "pdf/pdfplumber", "latex/pylatexenc", "jats/lxml"
    "words": Value("int64"),
    "n_sections": Value("int32"),
    "has_abstract": Value("bool"),
    "references_dropped": Value("int32"),  # reference-list entries left out of the text
    "partial": Value("bool"),  # read in part only (recovered XML, pages without text): kept out of publish
    "partial_reason": Value("string"),
    "warnings": List(Value("string")),
}

PAPER_COLUMNS = {
    "id": Value("string"),
    "title": Value("string"),
    "text": Value("string"),
    "sections": List(SECTION),
    "components": List(COMPONENT),
    "source_format": Value("string"),
    "source_path": Value("string"),
    "content_hash": Value("string"),
    "metadata": METADATA,
    "existing_qa": List(QA_PAIR),
    "ingest": INGEST,
}

KEYWORD_COLUMNS = {"keywords": List(Value("string"))}

GENERATION_COLUMNS = {
    "qa": List(QA_PAIR),
    "model_keywords": List(Value("string")),  # the `Keywords:` line some generators write first
    "raw_output": Value("string"),
    # ok: parsed enough pairs; short: fewer than asked; unparsed: no pair found; failed: no reply
    "status": Value("string"),
    "error": Value("string"),
    "warnings": List(Value("string")),
    "model": Value("string"),
    "prompt_style": Value("string"),
    "prompt_tokens": Value("int64"),
    "completion_tokens": Value("int64"),
    # the words of the paper the model was shown, of its words, and their share (the embedded profile reads a few
    # chunks of each paper; a long paper may be truncated)
    "seen_words": Value("int64"),
    "paper_words": Value("int64"),
    "seen_share": Value("float32"),
}

INSTRUCTION_COLUMNS = {
    "instruction": Value("string"),
    "input": Value("string"),
    "output": Value("string"),
    "messages": List(MESSAGE),
}

RACAR_DIMENSIONS = ("relevance", "agnosticism", "completeness", "accuracy", "reasonableness")

#: What kind of reasoning a question asks for: ChemLit-QA's seven expert-checked types, and "factual" (ours)
#: for a question that asks for a stated fact or value, which most generated questions do.
REASONING_TYPES = (
    "factual",
    "explanatory",
    "comparative",
    "causal",
    "conditional",
    "analogical",
    "evaluative",
    "predictive",
)
#: How hard a question is to answer closed-book, 1-3 (ChemLit-QA's three levels).
DIFFICULTY_LEVELS = {1: "easy", 2: "medium", 3: "hard"}
#: The labels the judge gives each pair beside its scores, and people may correct in `sciqag review`.
LABELS = ("reasoning_type", "difficulty")
#: What is given on the 1-3 scale: the five scores and the difficulty.
SCALED = (*RACAR_DIMENSIONS, "difficulty")


def reasoning_type(value) -> str | None:
    """A reasoning type as given ("Causal" -> "causal"), None for a blank; ValueError for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str) or value.strip().lower() not in REASONING_TYPES:
        raise ValueError(f"reasoning_type must be one of {', '.join(REASONING_TYPES)} (or blank), not {value!r}")
    return value.strip().lower()


def majority(values) -> str | None:
    """The value given most often (None left out); a tie goes to the one given first."""
    given = [v for v in values if v is not None]
    if not given:
        return None
    counts = {v: given.count(v) for v in given}
    top = max(counts.values())
    return next(v for v in given if counts[v] == top)


RECORD = Features({**PAPER_COLUMNS, **KEYWORD_COLUMNS, **GENERATION_COLUMNS, **INSTRUCTION_COLUMNS})

#: The `evaluated` config has one row per QA pair (what filtering and benchmarks want): these columns, then
#: each registered metric's (``metrics.Metric.pair_columns`` and ``paper_columns``).
EVALUATED_BASE = {
    "pair_id": Value("string"),  # stable across reruns and publishes (``pair_ids``)
    "paper_id": Value("string"),
    "title": Value("string"),
    "doi": Value("string"),
    "keywords": List(Value("string")),
    "question": Value("string"),
    "answer": Value("string"),
    "origin": Value("string"),
    "grounding": QA_PAIR["grounding"],
}


#: What people decided about a pair in `sciqag review`, added to the published `evaluated` rows: who reviewed
#: it, their mean score per RACAR dimension and difficulty, the reasoning type most of them chose, and the
#: generated text where a reviewer edited it.
REVIEW_COLUMNS = {
    "reviewed_by": List(Value("string")),
    **{f"human_{d}": Value("float32") for d in RACAR_DIMENSIONS},
    "human_reasoning_type": Value("string"),
    "human_difficulty": Value("float32"),
    "original_question": Value("string"),
    "original_answer": Value("string"),
}


def evaluated_features() -> Features:
    """The `evaluated` rows' columns with the metrics registered now, in their order of registration."""
    return Features({**EVALUATED_BASE, **metrics.pair_columns(), **metrics.paper_columns()})


#: Columns of each published config, in order. Later configs extend these.
CONFIG_COLUMNS: dict[str, list[str]] = {
    "papers": list(PAPER_COLUMNS) + list(KEYWORD_COLUMNS),
    "seed": [
        "id",
        "title",
        "metadata",
        "keywords",
        "qa",
        "status",
        "model",
        "prompt_style",
        "seen_share",
        *INSTRUCTION_COLUMNS,
    ],
    "generated": [
        "id",
        "title",
        "metadata",
        "keywords",
        "qa",
        "model_keywords",
        "status",
        "error",
        "warnings",
        "model",
        "prompt_style",
        "seen_share",
        "raw_output",
    ],
}


#: A published pair also carries its stable id (``pair_ids``); stage records do not store it.
PUBLISHED_QA_PAIR = {**QA_PAIR, "pair_id": Value("string")}


def features_for(config: str) -> Features:
    published = {**RECORD, "qa": List(PUBLISHED_QA_PAIR)}
    return Features({name: published[name] for name in CONFIG_COLUMNS[config]})


def empty_value(feature):
    """The value a missing column takes, so partial records still fit the schema."""
    if isinstance(feature, dict):
        return {k: empty_value(v) for k, v in feature.items()}
    if isinstance(feature, (List, datasets.Sequence, list)):
        return []
    return None


def conform(record: dict, features: Features = RECORD) -> dict:
    """Return ``record`` restricted to ``features``, missing columns filled empty."""
    out = {}
    for name, feature in features.items():
        value = record.get(name)
        if value is None:
            value = empty_value(feature)
        elif isinstance(feature, dict) and isinstance(value, dict):
            value = {k: value.get(k, empty_value(f)) for k, f in feature.items()}
        out[name] = value
    return out
