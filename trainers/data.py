"""Seed rows -> TRL training examples, prompted exactly as the generation stage will prompt.

The prompt is rebuilt from the row's paper text, title and keywords with
`builders.prompts`, the same calls `builders.qagen.request_qa` makes at
generation time (title included), so a trained generator sees at serving time
the very prompt it was trained on:

- ``paper``: conversational prompt/completion, ``[user]`` -> ``[assistant]``,
  rendered by the base model's chat template (served through chat completions);
- ``alpaca``: the released raw template (`build_raw_prompt`) -> output text
  (served through plain completions; TRL appends the EOS token).

The target is the seed config's ``output`` (``Keywords: ...`` then ``Q1:``/``A1:``).
An example longer than ``max_length`` gets its paper shortened (never the
answer, which is what the model must learn to write); rows that cannot be used
are reported with the reason, never dropped silently.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import datasets

from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.qa.components import kind_of
from sciqag_dataset.qa.format import render_output
from sciqag_dataset.qa.prompts import build_messages, build_raw_prompt

log = logging.getLogger(__name__)

MAX_FIT_ROUNDS = 8


def build_prompt(style: str, text: str, keywords, n: int = 10, title: str | None = None) -> list[dict] | str:
    """The generator's prompt: chat messages (``paper``) or one raw string (``alpaca``)."""
    if style == "alpaca":
        return build_raw_prompt(text, keywords, n=n, title=title)
    return build_messages(text, keywords, n=n, style="paper", title=title)


def load_splits(dataset: str, config: str = "seed") -> datasets.DatasetDict:
    """The published dataset (a `sciqag publish` folder or a Hub dataset id), all splits."""
    local = Path(dataset)
    if not local.exists() and (dataset.startswith((".", "/", "~")) or dataset.count("/") != 1):
        raise MissingInput(f"dataset {dataset!r} is neither a local folder nor a Hub dataset id (owner/name)")
    try:
        if local.exists():
            # datasets caches a local folder under its *name* and config, not its content: two publish
            # folders both called `dataset` (or one republished) would share a stale cache entry. A
            # private cache, read into memory and dropped, always reads what is on disk now.
            with tempfile.TemporaryDirectory(prefix="sciqag-load-") as cache:
                dsd = datasets.load_dataset(str(local), config, cache_dir=cache, keep_in_memory=True)
        else:
            dsd = datasets.load_dataset(dataset, config)
    except ValueError as exc:
        raise UserError(f"cannot load config {config!r} of {dataset}: {exc}") from None
    if not isinstance(dsd, datasets.DatasetDict):
        dsd = datasets.DatasetDict({"train": dsd})
    return dsd


def pick_split(dsd: datasets.DatasetDict, split: str | None, required: bool) -> datasets.Dataset | None:
    if split is None:
        return None
    if split not in dsd:
        if required:
            raise UserError(f"the dataset has no {split!r} split (it has: {', '.join(dsd) or 'none'})")
        log.info("no %r split: training without evaluation", split)
        return None
    return dsd[split]


@dataclass
class Prepared:
    """Training examples plus what happened to the rows that needed care."""

    dataset: datasets.Dataset | None
    used: int = 0
    shortened: list[str] = field(default_factory=list)  # ids whose paper was cut to fit max_length
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id, reason)
    tokens: int = 0  # prompt + completion tokens over all examples (before packing)

    def summary(self) -> dict:
        return {
            "examples": self.used,
            "papers_shortened": len(self.shortened),
            "skipped": len(self.skipped),
            "skipped_ids": [f"{i}: {r}" for i, r in self.skipped[:20]],
            "tokens": self.tokens,
        }


def _prose(row: dict) -> list[dict]:
    """The pairs asked from the paper's prose (the example's input), not those about its tables or figures."""
    return [p for p in row.get("qa") or [] if isinstance(p, dict) and kind_of(p) in (None, "prose")]


def _target(row: dict) -> str:
    out = row.get("output")
    if isinstance(out, str) and out.strip():
        return out.strip()
    return render_output(_prose(row), row.get("keywords") or [])


def _n_pairs(row: dict, default: int) -> int:
    qa = [p for p in _prose(row) if p.get("question") and p.get("answer")]
    return len(qa) or default  # the prompt asks for as many pairs as the target holds


def _example(style: str, text: str, row: dict, target: str, n: int, messages_form: bool) -> dict:
    prompt = build_prompt(style, text, row.get("keywords") or [], n=n, title=row.get("title"))
    if style == "alpaca":
        return {"prompt": prompt, "completion": target}
    answer = [{"role": "assistant", "content": target}]
    return {"messages": prompt + answer} if messages_form else {"prompt": prompt, "completion": answer}


class _Counter:
    """Token length of one example, as TRL will tokenize it."""

    def __init__(self, tokenizer, style: str):
        self.tok, self.style = tokenizer, style

    def __call__(self, ex: dict) -> int:
        if self.style == "alpaca":
            return len(self.tok(ex["prompt"] + ex["completion"] + (self.tok.eos_token or ""))["input_ids"])
        chat = ex.get("messages") or ex["prompt"] + ex["completion"]
        ids = self.tok.apply_chat_template(chat, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)


def _cut(text: str, chars: int) -> str:
    """``text`` cut to at most ``chars`` characters at a paragraph, sentence or word boundary."""
    if chars >= len(text):
        return text
    for sep in ("\n\n", "\n", ". ", " "):
        at = text.rfind(sep, 0, chars)
        if at > chars * 0.8:
            return text[: at + (1 if sep == ". " else 0)].rstrip()
    return text[:chars].rstrip()


def prepare_examples(
    rows, style: str, tokenizer, max_length: int, *, n_default: int = 10, messages_form: bool = False
) -> Prepared:
    """Turn seed-config rows (``id, title, keywords, qa, input, output``) into TRL examples."""
    if style not in ("paper", "alpaca"):
        raise UserError(f"unknown prompt style {style!r}: paper or alpaca")
    if style == "paper" and not tokenizer.chat_template:
        raise UserError(
            "prompt_style paper needs a chat template, and this tokenizer has none: use "
            "prompt_style alpaca, or set chat_template_path"
        )
    count = _Counter(tokenizer, style)
    out, result = [], Prepared(None)
    for i, row in enumerate(rows):
        rid = str(row.get("id") or f"row-{i}")
        text, target = row.get("input"), _target(row)
        if not isinstance(text, str) or not text.strip():
            result.skipped.append((rid, "no paper text (`input`)"))
            continue
        if not target:
            result.skipped.append((rid, "no target (`output` / `qa`)"))
            continue
        n = _n_pairs(row, n_default)
        text = text.strip()
        ex = _example(style, text, row, target, n, messages_form)
        length = count(ex)
        rounds = 0
        if length > max_length:
            # the paper's share of the tokens sets how many characters may stay; recount to confirm
            paper_tokens = max(1, len(tokenizer(text, add_special_tokens=False)["input_ids"]))
            budget = max_length - (length - paper_tokens)
            keep = int(len(text) * budget / paper_tokens * 0.97)
            while length > max_length and keep > 0 and rounds < MAX_FIT_ROUNDS:
                text = _cut(text, keep)
                ex = _example(style, text, row, target, n, messages_form)
                length, rounds = count(ex), rounds + 1
                keep = int(len(text) * 0.9)
        if length > max_length:
            result.skipped.append((rid, f"the answer and prompt alone need more than max_length={max_length} tokens"))
            continue
        if rounds:
            result.shortened.append(rid)
        result.tokens += length
        out.append(ex)
    result.used = len(out)
    if result.shortened:
        log.warning(
            "%d paper(s) shortened to fit max_length=%d tokens (the answers are kept whole): %s",
            len(result.shortened),
            max_length,
            ", ".join(result.shortened[:10]),
        )
    if result.skipped:
        log.warning(
            "%d row(s) not usable for training: %s",
            len(result.skipped),
            "; ".join(f"{i} ({r})" for i, r in result.skipped[:10]),
        )
    result.dataset = datasets.Dataset.from_list(out) if out else None
    return result
