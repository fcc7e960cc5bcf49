"""`sciqag agreement WORK`: how well the judge and the people who reviewed pairs agree, per RACAR dimension."""

from __future__ import annotations

import json
from pathlib import Path

from sciqag_dataset.cli.flags import command
from sciqag_dataset.core.console import plural
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.schema import REASONING_TYPES
from sciqag_dataset.core.wiring import AGREEMENT, EVALUATED
from sciqag_dataset.evaluation.agreement import write_agreement
from sciqag_dataset.evaluation.ratings import collect
from sciqag_dataset.review.dataset import is_work_dir
from sciqag_dataset.review.store import JUDGE


def _work(path: str) -> Path:
    work = Path(path)
    if not work.is_dir():
        raise UserError(f"{work} is not a work directory (run `sciqag evaluate WORK` first)")
    return work


def _number(stat: dict | None) -> str:
    return "–" if not stat or stat.get("value") is None else f"{stat['value']:.2f}"


def agreement_summary(result: dict, out: Path) -> list[str]:
    """What `sciqag agreement` prints: raters, sources, per dimension kappa and alpha, where it wrote."""
    raters = result["raters"]
    people = [r for r, v in raters.items() if v["kind"] != JUDGE]
    lines = [
        f"Agreement of {plural(len(people), 'person', 'people')}"
        + (" and the judge" if JUDGE in raters else "")
        + f" over {plural(result['pairs'], 'pair')} people rated:",
        "  raters: " + ", ".join(f"{r} ({v['kind']}, {plural(v['pairs'], 'pair')})" for r, v in raters.items()),
    ]
    for source in result.get("inputs") or []:
        fmt = f" ({source['format']})" if source.get("format") else ""
        lines.append(f"  {source['source']}{fmt}: {plural(source['rows'], 'row')}, {source['used']} used")
        lines += [f"    {note}" for note in source["notes"]]
    for dim, d in result["dimensions"].items():
        kappas = [
            f"{p['a']}–{p['b']} {_number(p['kappa'])} ({p['n']})"
            for p in d["pairs"]
            if p["a"] in people or p["b"] in people
        ]
        lines.append(
            f"  {dim}: kappa {', '.join(kappas) or '–'}; alpha people {_number(d.get('alpha_humans'))}, "
            f"people + judge {_number(d.get('alpha_all'))}"
        )
    plots = result.get("plots") or {}
    where = f"; {plural(len(plots), 'plot')} in {(out.parent / next(iter(plots))).parent}" if plots else ""
    lines.append(f"Written to {out}{where}")
    lines += [f"Warning: {w}" for w in result.get("warnings") or []]
    return lines


def cmd_agreement(args) -> int:
    work = _work(args.work)
    if not is_work_dir(work):
        raise UserError(f"{work} has no {EVALUATED}: run `sciqag evaluate {work}` first")
    ratings = collect(work, args.ratings or ())
    if not ratings.humans():
        raise UserError(
            f"no human ratings: review pairs with `sciqag review {work}` or pass --ratings FILE (CSV or JSONL)"
        )
    out = write_agreement(work, ratings, Path(args.output) if args.output else None, rounds=args.bootstrap)
    result = json.loads(out.read_text(encoding="utf-8"))
    print("\n".join(agreement_summary(result, out)))
    return 0


def add_parser(subparsers) -> None:
    p = command(
        subparsers,
        "agreement",
        "agreement between the judge and people, per RACAR dimension (kappa, Spearman, Krippendorff's alpha)",
    )
    p.add_argument("work", metavar="WORK", help="the work directory reviewed")
    p.add_argument(
        "--ratings",
        action="extend",
        nargs="+",
        metavar="FILE",
        help="more ratings (repeatable; every file is used), CSV (comma, semicolon or tab; UTF-8, UTF-16 with "
        "BOM or Windows-1252) or JSONL. Required columns: pair_id, rater. Optional: relevance, agnosticism, "
        f"completeness, accuracy, reasonableness, difficulty (1-3), reasoning_type ({', '.join(REASONING_TYPES)}),"
        " keep (0/1); blanks allowed. A pair and rater given twice counts once (values that differ are left "
        "out); rows of pairs not in WORK are left out",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"where to write the result (default WORK/{AGREEMENT}); the plots go to a folder beside it named "
        "after it (WORK/agreement_plots/)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=500,
        metavar="N",
        help="bootstrap rounds for the 95 %% intervals (the time grows with the rounds and the pairs of raters)",
    )
    p.set_defaults(func=cmd_agreement)
