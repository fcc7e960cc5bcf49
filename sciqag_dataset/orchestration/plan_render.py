"""The plan of `sciqag run --plan` (``orchestration/plan.py``) as a readable table."""

from __future__ import annotations


def _money(v: float | None) -> str:
    return "no price set" if v is None else f"${v:.4f}"


def requests_text(n: int, most: int | None) -> str:
    """``n`` requests, or the range ``n–most`` where a discarded reply may be asked again."""
    return f"{n}–{most}" if most is not None and most > n else str(n)


def render(plan: dict) -> str:
    """The plan as a readable table."""
    papers = plan["papers"]
    lines = [f"Plan of `sciqag run` on {plan['work_dir']} (stages: {', '.join(plan['stages'])})", ""]
    lines.append(f"Papers: {len(papers)}, {sum(p['words'] for p in papers):,} words")
    width = max([len(p["id"]) for p in papers] + [2])
    for p in papers:
        lines.append(f"  {p['id']:<{width}}  {p['words']:>7,} words  {p['chars']:>8,} chars  {p['title']}")
    lines += ["", "Stages:"]
    lines += [f"  {s['stage']:<16} {s['planned']}" for s in plan["steps"]]
    lines += ["", "LLM requests (no model was called):"]
    head = f"  {'stage':<9} {'endpoint':<10} {'model':<36} {'requests':>11} {'cached':>6} {'prompt tok':>10}"
    lines.append(head + f" {'cost':>14} {'time':>9}")
    for r in plan["requests"]:
        time_ = f"~{r['seconds']:.0f} s" if r["seconds"] is not None else "unmeasured"
        lines.append(
            f"  {r['stage']:<9} {r['endpoint']:<10} {r['model'][:36]:<36} "
            f"{requests_text(r['requests'], r['requests_most']):>11} {r['cached']:>6} "
            f"{r['prompt_tokens']:>10,} {_money(r['cost']):>14} {time_:>9}"
        )
    if not plan["requests"]:
        lines.append("  none: no stage of this run asks a model")
    total = plan["total"]
    total_requests = requests_text(total["requests"], total["requests_most"])
    lines.append(f"  total: {total_requests} requests, {total['prompt_tokens']:,} prompt tokens")
    lines.append("")
    for r in plan["requests"]:
        if r["requests_most"] is not None and r["requests_most"] > r["requests"]:
            lines.append(
                f"{r['stage']} ({r['endpoint']}): {requests_text(r['requests'], r['requests_most'])} requests: "
                f"{r['requests']} if every line is usable, {r['requests_most']} if each chunk's lines are discarded "
                "and asked again as often as the embedded profile allows"
            )
    for how in sorted({r["tokenizer"] for r in plan["requests"]}):
        lines.append(f"Tokens counted with: {how}")
    for r in plan["requests"]:
        if r["pace"]:
            lines.append(
                f"Time of {r['stage']} ({r['model']}): {r['pace']['seconds_per_request']} s a request, measured "
                f"over {r['pace']['replies']} replies ({r['pace']['from']})"
            )
    if any(r["seconds"] is None for r in plan["requests"]):
        lines.append("Time: not estimated where neither the response cache nor a manifest has measured that endpoint")
    cap = plan["max_cost"]
    if cap is None:
        lines.append("--max-cost: not set")
    elif cap["stops_in"]:
        lines.append(
            f"--max-cost ${cap['max_cost']:g} (${cap['left']:.4f} left of it): stops in {cap['stops_in']} "
            f"({cap['model']}) after ~{cap['requests_that_fit']} of its requests; ~{cap['cut_requests']} cut, "
            "and every later stage (the cap reserves each request's worst case, so it may stop sooner)"
        )
    else:
        lines.append(f"--max-cost ${cap['max_cost']:g}: the estimate fits under it")
    if cap and cap["unpriced"]:
        lines.append(f"  no price set for {', '.join(cap['unpriced'])}: the cap cannot see what it costs")
    lines += [f"Note: {n}" for n in plan["notes"]]
    return "\n".join(lines)
