"""Review a published dataset (a folder `sciqag publish` wrote, or its Hub id) rather than a work directory.

Its `evaluated` rows (every split) and, when it has them, its `papers` are copied once into a review folder as
``evaluated.jsonl`` and ``papers.jsonl``; the review then runs there as on a work directory, and
``sciqag agreement`` reads it the same way. A rerun reuses the copy, so the queue and the offsets stay the same.
A review folder is one this command made (it holds ``review_source.json``) or an empty one: a pipeline's work
directory is refused, as copying into it would replace its papers.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import datasets

from sciqag_dataset.core.atomic import replacing, write_json
from sciqag_dataset.core.errors import MissingInput, UserError
from sciqag_dataset.core.folders import claim, holds_only_marker
from sciqag_dataset.core.wiring import EVALUATED, PAPERS

log = logging.getLogger(__name__)

SOURCE = "review_source.json"  # which dataset the copy was made from


def is_work_dir(path: str | Path) -> bool:
    return (Path(path) / EVALUATED).exists()


def looks_like_hub_id(text: str) -> bool:
    return re.fullmatch(r"[\w.-]+/[\w.-]+", text) is not None and not Path(text).exists()


def _rows(source: str, config: str):
    loaded = datasets.load_dataset(source, config)
    for split in loaded.values():
        yield from split


def copy_for_review(source: str, folder: str | Path) -> Path:
    """``folder`` holding the dataset's evaluated rows and papers (made once; reused as it is afterwards)."""
    folder = claim(folder, "work", option="--review-dir")
    marker = folder / SOURCE
    if not marker.exists() and not holds_only_marker(folder):
        raise UserError(
            f"--review-dir {folder} is a work directory of the pipeline, not a review folder made by "
            "`sciqag review DATASET`: choose a new or empty folder"
        )
    if (folder / EVALUATED).exists():
        made_from = json.loads(marker.read_text(encoding="utf-8"))["source"] if marker.exists() else None
        if made_from != str(source):
            raise UserError(
                f"--review-dir {folder} holds the pairs of {made_from or 'a work directory'}, not {source}: "
                "choose another --review-dir"
            )
        return folder
    write_json(marker, {"source": str(source)})
    try:
        rows = _rows(source, "evaluated")
        with replacing(folder / EVALUATED, durable=True) as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    except (FileNotFoundError, ValueError) as exc:  # DatasetNotFoundError is a FileNotFoundError
        raise MissingInput(f"{source} has no `evaluated` config to review ({exc})") from None
    try:
        with replacing(folder / PAPERS) as out:
            for paper in _rows(source, "papers"):
                out.write(json.dumps(paper, ensure_ascii=False, default=str) + "\n")
    except (FileNotFoundError, ValueError) as exc:  # published without `papers`: the evidence is shown alone
        log.info("%s has no `papers` config (%s): the page shows each answer's evidence only", source, exc)
    return folder
