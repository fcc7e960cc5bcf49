"""The "Benchmark" section of a published dataset card, added or refreshed in place.

Only the text between our two markers is ours: a card without them gets the section appended; every other
line of the card stays as it was. Only a card `sciqag publish` wrote (its `sciqag` tag) is edited.
"""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import yaml

from sciqag_dataset.core.atomic import write_whole
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.evaluation.benchmark import items
from sciqag_dataset.evaluation.benchmark.leaderboard import markdown

log = logging.getLogger(__name__)

START, END = "<!-- sciqag-benchmark:start -->", "<!-- sciqag-benchmark:end -->"
PLOT = "benchmark_items.png"  # the item analysis plot, copied beside the card
#: A line of the card's "How it was made" (cards/dataset_card.md): who wrote a config's pairs.
WRITER = re.compile(r"^- \*\*(Teacher|Generator)\*\* \(the `([\w-]+)` config\): `([^`]+)`", re.MULTILINE)


def question_writers(data: str | Path) -> dict[str, str]:
    """The models the card of a published folder records as writers of its pairs, each with its role
    ("the teacher (the `seed` config)"); empty for a file of pairs, a Hub id or a card that records none."""
    path = Path(data) / "README.md"
    if not path.is_file():
        return {}
    roles: dict[str, list[str]] = {}
    for role, config, model in WRITER.findall(path.read_text(encoding="utf-8")):
        roles.setdefault(model, []).append(f"the {role.lower()} (the `{config}` config)")
    return {model: " and ".join(r) for model, r in roles.items()}


def item_section(board: dict, plot: bool) -> list[str]:
    summary = board.get("item_analysis")
    if not summary:
        return []
    caption = "*Each question's difficulty (share of models right) against its discrimination; flagged in red.*"
    shown = [f"![Difficulty against discrimination of each question]({PLOT})", caption, ""] if plot else []
    return ["### Item analysis", "", items.markdown(summary), *shown]


def section(board: dict, command: str, plot: bool = False) -> str:
    q = board["questions"]
    kept = q.get("authors_test_set")
    selection = (
        f"Questions kept as the authors' test set: 3 on every RACAR dimension but agnosticism and no "
        f'reference to the source ("Figure 3", "this paper"): {kept["kept"]} kept, {kept["dropped"]} '
        f"dropped, {kept['unscored']} without the scores to decide.\n\n"
        if kept
        else ""
    )
    return "\n".join(
        [
            START,
            "## Benchmark",
            "",
            "Closed-book QA: each model saw a system prompt and the question only, never the paper. "
            "Reference-based scores compare its answer with the reference answer (exact match and token F1 as in "
            "SQuAD, ROUGE, sentence BLEU on sacrebleu's 0–100 scale, BERTScore F1, number agreement: the share of "
            "the reference's numbers the answer states); `judge_*` are an LLM judge's 1–3 scores of correctness "
            "and completeness against the reference.",
            "",
            selection + markdown(board),
            *item_section(board, plot),
            f"Reproduce: `{command}`",
            END,
            "",
        ]
    )


def check_card(folder: str | Path) -> str:
    """The text of the SciQAG dataset card in ``folder``; UserError for any other file (it is not ours to edit)."""
    path = Path(folder) / "README.md"
    if not path.exists():
        raise MissingInput(f"{path} not found: --update-card takes a folder written by `sciqag publish`")
    text = path.read_text(encoding="utf-8")
    try:
        front = yaml.safe_load(text.split("---")[1]) if text.startswith("---") else None
    except yaml.YAMLError:
        front = None
    if not isinstance(front, dict) or "sciqag" not in (front.get("tags") or []):
        raise UserError(f"{path} is not a SciQAG dataset card (no `sciqag` tag in its front matter); not changed")
    return text


def update_card(folder: str | Path, board: dict, command: str) -> Path:
    path = Path(folder) / "README.md"
    text = check_card(folder)
    ours = START in text and END in text.split(START, 1)[1]
    plot = copy_plot(Path(folder), board, ours and f"]({PLOT})" in text.split(START, 1)[1].split(END, 1)[0])
    block = section(board, command, plot)
    if ours:
        head, rest = text.split(START, 1)
        text = head + block.rstrip("\n") + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    return write_whole(path, text)


def copy_plot(folder: Path, board: dict, ours: bool) -> bool:
    """Copy the item analysis plot beside the card, unless a file of that name is there that our section did
    not show (not ours to overwrite)."""
    source = (board.get("item_analysis") or {}).get("plot")
    if not source or not Path(source).is_file():
        return False
    if (folder / PLOT).exists() and not ours:
        log.warning("%s is not ours: the item analysis plot is left out of the card", folder / PLOT)
        return False
    shutil.copyfile(source, folder / PLOT)
    return True
