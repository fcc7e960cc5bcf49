"""`sciqag run --plan`: print what the run would send (``orchestration.plan``), and write it as JSON."""

from __future__ import annotations

from pathlib import Path

from sciqag_dataset.core.atomic import write_json
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.orchestration import plan


def add_flags(p) -> None:
    """``--plan`` and ``--plan-json`` on the parser of `sciqag run`."""
    p.add_argument(
        "--plan",
        action="store_true",
        help="print what the run would send (papers; requests, prompt tokens, cost and time per LLM stage) "
        "without calling a model or writing into the work dir",
    )
    p.add_argument("--plan-json", metavar="PATH", help="with --plan (implied): the plan as JSON into PATH")


def wanted(args) -> bool:
    return bool(getattr(args, "plan", False) or getattr(args, "plan_json", None))


def show(cfg, args) -> int:
    """Make the plan, print it, and write it where ``--plan-json`` says (never inside the work dir)."""
    target = Path(args.plan_json) if args.plan_json else None
    if target is not None and target.resolve().is_relative_to(Path(cfg.work_dir).resolve()):
        raise UserError(f"--plan-json {target} is inside the work dir, which --plan leaves as it is")
    made = plan.make_plan(cfg)
    print(plan.render(made))
    if target is not None:
        write_json(target, made)
        print(f"Plan written to {target}")
    return 0
