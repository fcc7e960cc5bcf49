"""Numeric source validation (SciQAG Eq. 2), no LLM needed.

For each answer: extract its numbers, and count how many occur in the paper: its title and text, and the
captions and contents of its tables, equations and figures, which the text leaves out (``components``). Numbers
are compared as values, not strings (0.50 == 0.5, 1,200 == 1200, 1.2e-3 == 1.2 × 10^-3). Per pair: ``numbers``
(distinct values, in order of first appearance), ``unsupported_numbers`` and ``numeric_ratio`` = supported /
distinct numbers (None when the answer has none). Per dataset (``numeric_summary``): the share of answers with
numbers (paper: 54 %) and the share of all their numbers found in the source (paper: 96.7 %).

What counts as a number (``extract_numbers``):
- decimals (3.5, .5), thousands separators (1,200 -> 1200; only exact 3-digit groups), signs including
  the Unicode minus (−0.61); a sign counts only when no digit or letter is glued to its left, so 3-5 is
  a range and TiO2-5 is not negative;
- scientific notation: 1.2e-3, 1.2 × 10^-3, 1.2×10−3, 1.2 x 10^-3, 1.2 * 10^(-3), a bare 10^19, Unicode
  superscripts (10⁻³), and LaTeX as tables and equations keep it ($1.2\times10^{-3}$);
- percentages (54 % -> 54), ranges (3–5 nm, 3-5, 3 to 5 -> 3 and 5), units glued on the right (25°C,
  10nm, 723K -> 25, 10, 723);
- skipped: digits glued to a letter or closing bracket on their left, which are formula subscripts or
  identifiers rather than measurements (TiO2, Li7La3Zr2O12, CoSb3, (Bi,Sb)2Te3, Q1, S3); numeric
  citation brackets ([12], [3, 4], [5–7]); ordinals (1st, 2nd, 3rd, 4th); the number after a
  cross-reference word (Fig. 3, Figure 3, Table 2, Eq. 1, Section 4, Ref. 12, Scheme 1); unit powers
  (the 2 of m^2, the -1 of W m^-1 K^-1; 10^19 itself is a number).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from datasets import List, Value

from sciqag_dataset.core import records
from sciqag_dataset.core.jsonl import iter_latest
from sciqag_dataset.core.metrics import FAIL, MISSING, Metric, Rule, pct, register
from sciqag_dataset.core.options import option
from sciqag_dataset.core.stage import Stage

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SIGNS = "-−+"  # not the en dash: "3 – 5" is a range

_CITATION = re.compile(r"\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]")
_CROSS_REF = re.compile(
    r"\b(?:Fig(?:ure)?s?|Tables?|Tab|Eqs?|Equations?|Sections?|Sec|Refs?|References?|Schemes?|Chapters?"
    r"|Appendix)\.?\s*\(?S?\d+[a-z]?(?:\s*(?:[,–-]|and)\s*S?\d+[a-z]?)*\)?",
    re.IGNORECASE,
)

_MANTISSA = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_EXP = r"[-−+]?\d+"
_NUMBER = re.compile(
    rf"(?<![\w.)\]^])(?P<sign>[{_SIGNS}](?=[\d.]))?"
    rf"(?:(?P<base10>10)\s*\^\s*\(?(?P<bexp>{_EXP})\)?"  # 10^19
    rf"|(?P<mant>{_MANTISSA})"
    rf"(?:\s*[×xX*·]\s*10(?:\s*\^\s*\(?(?P<exp1>{_EXP})\)?|(?P<exp2>[-−]\d+))"  # × 10^-3, ×10−3
    rf"|[eE](?P<exp3>{_EXP})(?![A-Za-z]))?)"
    rf"(?P<ordinal>st|nd|rd|th)?(?![\d])"
)

_UNIT_POWER = re.compile(r"\^\s*\(?[-−+]?$")  # the 2 of m^2, the -1 of K^-1
# LaTeX as a table cell or an equation writes numbers: "$2\times10^{-7}$" -> "2 × 10^(-7)"
_LATEX = (
    (re.compile(r"\\(?:times|cdot)(?![A-Za-z])\s*"), " × "),
    (re.compile(r"\\pm(?![A-Za-z])"), " ± "),
    (re.compile(r"\^\{([^{}]*)\}"), r"^(\1)"),
    (re.compile(r"\\%"), "%"),
    (re.compile(r"\\[,;:! ]|\$"), " "),
)


def _prepare(text: str) -> str:
    for pattern, replacement in _LATEX:
        text = pattern.sub(replacement, text)
    # superscripts "10⁻³" -> "10^-3"
    text = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "^" + m.group().translate(_SUPERSCRIPTS), text)
    text = _CITATION.sub(" ", text)
    return _CROSS_REF.sub(" ", text)


def _to_decimal(m: re.Match) -> Decimal:
    if m.group("base10"):
        value = Decimal(1).scaleb(int(m.group("bexp").replace("−", "-")))
    else:
        value = Decimal(m.group("mant").replace(",", ""))
        exp = m.group("exp1") or m.group("exp2") or m.group("exp3")
        if exp:
            value = value.scaleb(int(exp.replace("−", "-")))
    sign = m.group("sign")
    # "300 - 400 K" is a range, not 300 and -400
    if sign and sign != "+" and not re.search(r"\d\s*$", m.string[max(0, m.start() - 8) : m.start()]):
        value = -value
    return value


def canonical(value: Decimal) -> str:
    """A stable string for a value: plain decimals for ordinary magnitudes, else 1.2e-9 style."""
    value = value.normalize()
    if value == 0:
        return "0"
    exp = value.adjusted()
    if -6 <= exp <= 15:
        s = format(value, "f")
        return s.rstrip("0").rstrip(".") if "." in s else s
    digits = format(value.scaleb(-exp).normalize(), "f")
    return f"{digits}e{exp}"


def extract_values(text: str) -> list[Decimal]:
    """Every number in ``text`` as a Decimal, in order (duplicates kept)."""
    out = []
    for m in _NUMBER.finditer(_prepare(text or "")):
        if m.group("ordinal") or _UNIT_POWER.search(m.string[max(0, m.start() - 4) : m.start()]):
            continue
        try:
            out.append(_to_decimal(m))
        except (InvalidOperation, ValueError):
            continue
    return out


def extract_numbers(text: str) -> list[str]:
    """The numbers of ``text`` as canonical strings, in order (duplicates kept)."""
    return [canonical(v) for v in extract_values(text)]


def _value(number) -> Decimal:
    if isinstance(number, Decimal):
        return number
    if isinstance(number, (int, float)):
        return Decimal(str(number))
    try:
        return Decimal(str(number).strip().replace(",", ""))
    except InvalidOperation:
        values = extract_values(str(number))
        if len(values) != 1:
            raise ValueError(f"not a single number: {number!r}") from None
        return values[0]


def supported(number, source_numbers: Iterable, *, allow_rounding: bool = False) -> bool:
    """Does ``number`` occur among ``source_numbers``? Values compare after parsing, so 0.50 == 0.5,
    "1,200" == 1200 and "1.2e-3" == "1.2 × 10^-3". With ``allow_rounding`` an answer's 3.1 also matches
    a source 3.14 (the source rounded to the answer's decimals); off by default, as Eq. 2 asks for
    occurrence."""
    value = _value(number)
    sources = source_numbers if isinstance(source_numbers, (set, frozenset)) else list(source_numbers)
    values = {_value(s) for s in sources}
    if value in values:
        return True
    if allow_rounding:
        places = Decimal(1).scaleb(value.as_tuple().exponent)
        return any(s.quantize(places) == value for s in values if abs(s.adjusted() - value.adjusted()) <= 1)
    return False


def _distinct(values: list[Decimal]) -> list[Decimal]:
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def pair_numeric(answer: str, source_values: set[Decimal], *, allow_rounding: bool = False) -> dict:
    """Eq. 2 for one answer: its distinct numbers, those not in the source, and the supported share."""
    values = _distinct(extract_values(answer))
    unsupported = [v for v in values if not supported(v, source_values, allow_rounding=allow_rounding)]
    return {
        "numbers": [canonical(v) for v in values],
        "unsupported_numbers": [canonical(v) for v in unsupported],
        "numeric_ratio": (len(values) - len(unsupported)) / len(values) if values else None,
    }


def component_source(components: Iterable[dict] | None) -> str:
    """The text of a paper's tables, equations and figures that numbers are looked up in: each caption, each
    table's cells a line each (its Markdown where it has no cells), each equation's LaTeX or text (MathML
    without its tags, whose namespace URL is no number of the paper)."""
    parts = []
    for c in components or []:
        parts.append(c.get("caption") or "")
        if c.get("kind") == "table":
            cells = [cell for row in c.get("cells") or [] for cell in row]
            parts += cells or [c.get("content") or ""]
        elif c.get("kind") == "equation":
            content = c.get("content") or ""
            parts.append(re.sub(r"<[^>]*>", " ", content) if c.get("content_format") == "mathml" else content)
    return "\n".join(p for p in parts if p)


def numeric_record(paper: dict, *, allow_rounding: bool = False) -> dict:
    """One paper -> its numeric.jsonl record (numbers of the title, the text and the components are the
    source: a pair asked about a table gives the table's numbers)."""
    text = f"{paper.get('title') or ''}\n{paper.get('text') or ''}\n{component_source(paper.get('components'))}"
    source = set(extract_values(text))
    pairs = [pair_numeric(p.get("answer") or "", source, allow_rounding=allow_rounding) for p in paper["qa"]]
    return {"id": paper["id"], "status": "ok", "pair_metrics": pairs, "paper_metrics": {}}


class _Numeric:
    def __init__(self, allow_rounding: bool):
        self.allow_rounding = allow_rounding

    def __call__(self, paper: dict) -> dict:
        return numeric_record(paper, allow_rounding=self.allow_rounding)


def stage(source: str | None = None, *, allow_rounding: bool = False) -> Stage:
    """Eq. 2 for every paper's answers -> ``WORK/numeric.jsonl`` (regex work: one process is plenty)."""
    return Stage(
        name="numeric",
        inputs=lambda work: records.qa_papers(work, source),
        process=_Numeric(allow_rounding),
        params={"allow_rounding": allow_rounding},
        count=lambda work: records.count_qa(work, source),
    )


def numeric_summary(records: Iterable[dict]) -> dict:
    """Dataset figures from numeric records (or anything with ``pair_metrics`` holding the numeric fields):
    ``answers_with_numbers`` (paper: 54 %) and ``supported_ratio`` = supported / all numbers found
    (paper: 96.7 %), plus the counts behind them."""
    answers = with_numbers = numbers = unsupported = 0
    for rec in records:
        if rec.get("status", "ok") != "ok":
            continue
        for pair in rec.get("pair_metrics") or []:
            answers += 1
            n = len(pair.get("numbers") or [])
            if n:
                with_numbers += 1
                numbers += n
                unsupported += len(pair.get("unsupported_numbers") or [])
    return {
        "answers": answers,
        "answers_with_numbers": with_numbers / answers if answers else None,
        "numbers": numbers,
        "supported_ratio": (numbers - unsupported) / numbers if numbers else None,
    }


def _ratio_rule(row: dict, threshold: float) -> str | None:
    """An answer without numbers has nothing unsupported and passes; numbers but no ratio (not run) is missing."""
    ratio = row.get("numeric_ratio")
    if ratio is None:
        return MISSING if extract_numbers(row.get("answer") or "") else None
    return FAIL if ratio < threshold else None


def _card(s: dict) -> str:
    return (
        f"**Numeric validation** (Eq. 2): {pct(s['answers_with_numbers'])} of answers contain numbers; "
        f"{pct(s['supported_ratio'], 1)} of those numbers occur in the source paper (the paper: 54 % and 96.7 %)."
    )


METRIC = register(
    Metric(
        name="numeric",
        cost=10,
        help="Eq. 2: the share of each answer's numbers found in its paper (no LLM)",
        build=lambda ctx: stage(ctx.source, allow_rounding=ctx.cfg.allow_rounding),
        options=(option("allow_rounding", bool, False, help="numeric: accept an answer's 3.1 for the paper's 3.14"),),
        pair_columns={
            "numbers": List(Value("string")),
            "unsupported_numbers": List(Value("string")),
            # share of the answer's numbers found in the paper; null if none
            "numeric_ratio": Value("float32"),
        },
        summarize=lambda path, cfg: numeric_summary(iter_latest(path)),
        card=_card,
        rules=(
            Rule(
                "min_numeric_ratio",
                _ratio_rule,
                lambda t: f"at least {t:.0%} of an answer's numbers found in its paper",
                help="minimum share of an answer's numbers found in the paper (answers without numbers pass)",
                constraints={"min": 0, "max": 1},
            ),
        ),
        how_to_run="sciqag evaluate WORK --metrics numeric",
    )
)
