"""Reference-based scores of one predicted answer against the reference answer.

- ``exact_match`` and ``f1``: SQuAD's definitions (lower case, punctuation and articles removed, tokens
  by whitespace; F1 over the shared tokens);
- ``rouge1``/``rouge2``/``rougeL``: F-measures from ``rouge-score`` with its Porter stemmer;
- ``bleu``: sacrebleu's sentence BLEU (0-100, its scale; exponential smoothing, effective n-gram order);
- ``number_agreement``: the share of the reference's distinct numbers that the prediction states (values
  compared after parsing, as in the numeric metric: 0.50 == 0.5); None when the reference has none;
- ``bertscore``: BERTScore F1 (``bert-score``) with the embedding model named in the results, no idf and
  no baseline rescaling (none exists for the default all-MiniLM-L6-v2), so values sit high: compare models
  with each other, not with published BERTScores.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import cached_property

from sciqag_dataset.core.errors import Unavailable
from sciqag_dataset.evaluation.embedder import DEFAULT_MODEL, model_location
from sciqag_dataset.evaluation.numeric import extract_values, pair_numeric

REFERENCE_METRICS = ("exact_match", "f1", "rouge1", "rouge2", "rougeL", "bleu", "number_agreement", "bertscore")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize(text: str) -> str:
    """SQuAD's answer normalisation."""
    return " ".join(_ARTICLES.sub(" ", (text or "").lower().translate(_PUNCTUATION)).split())


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize(prediction) == normalize(reference))


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = normalize(prediction).split(), normalize(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def number_agreement(prediction: str, reference: str) -> float | None:
    return pair_numeric(reference, set(extract_values(prediction)))["numeric_ratio"]


class ReferenceScorer:
    """Every reference-based score of one prediction; the models behind ROUGE and BERTScore load once."""

    def __init__(self, bertscore_model: str | None = DEFAULT_MODEL, batch_size: int = 32):
        self.bertscore_model = bertscore_model  # None: no BERTScore
        self.batch_size = batch_size

    @cached_property
    def _rouge(self):
        try:
            from rouge_score import rouge_scorer
        except ImportError as exc:
            raise Unavailable("the benchmark's metrics need the bench extra: pip install 'sciqag-hf[bench]'") from exc
        return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)

    @cached_property
    def _bleu(self):
        from sacrebleu.metrics import BLEU

        return BLEU(effective_order=True)

    @cached_property
    def _location(self) -> tuple[str, int]:
        """Where the BERTScore model loads from, and its last layer (whose embeddings it compares)."""
        from transformers import AutoConfig

        location = model_location(self.bertscore_model)
        return location, AutoConfig.from_pretrained(location).num_hidden_layers

    @cached_property
    def _bertscore(self):
        try:
            from bert_score import BERTScorer
        except ImportError as exc:
            raise Unavailable("BERTScore needs the bench extra: pip install 'sciqag-hf[bench]'") from exc
        location, layer = self._location
        return BERTScorer(model_type=location, num_layers=layer, batch_size=self.batch_size, device="cpu")

    def describe(self) -> dict:
        if not self.bertscore_model:
            return {"bertscore": None}
        return {
            "bertscore": {"model": self.bertscore_model, "layer": self._location[1], "idf": False, "rescaled": False}
        }

    def __call__(self, prediction: str, reference: str) -> dict[str, float | None]:
        rouge = self._rouge.score(reference, prediction)
        scores = {
            "exact_match": exact_match(prediction, reference),
            "f1": round(token_f1(prediction, reference), 6),
            **{k: round(rouge[k].fmeasure, 6) for k in ("rouge1", "rouge2", "rougeL")},
            "bleu": round(self._bleu.sentence_score(prediction, [reference]).score, 4),
            "number_agreement": number_agreement(prediction, reference),
            "bertscore": None,
        }
        if self.bertscore_model and prediction.strip():
            _, _, f1 = self._bertscore.score([prediction], [reference])
            scores["bertscore"] = round(float(f1[0]), 6)
        elif self.bertscore_model:
            scores["bertscore"] = 0.0  # an empty answer shares nothing with the reference
        return scores
