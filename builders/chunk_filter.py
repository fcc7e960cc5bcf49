"""Which chunks of a paper are worth asking questions about (``chunk_filter`` of seed and generate).

Before any question is asked, each chunk of a paper is judged useful or not, as ChemLit-QA does: a chunk that
is too short, the title and author lines, captions, references, declarations (funding, conflicts, author
contributions), a bare introduction of a concept, or formulae and tables read out of shape gives questions
about nothing the paper found. Two modes:

- ``signals``: cheap rules, no model (``signals``): length in words, the share of tokens that are words,
  citation density (bracketed numbers, "et al.", years in parentheses), the shape of a reference list (author
  initials and years), caption starts ("Figure 2.", "Table 1:"), declaration headings and phrases, front
  matter (e-mail addresses, affiliations). Each verdict names its reason.
- ``llm``: the signals, then the model that writes the pairs judges the chunks left, ``chunk_check_batch`` of
  them a request (``check_messages``); its reply is a line per chunk, useful or not with a reason. A chunk
  the reply gives no verdict for is kept, so an unparseable reply never loses a paper. A bare concept
  introduction is left to this mode: no cheap rule tells it from a paragraph of method.

The chunks are those the stage asks about: the small-model profile's pieces (``chunk_words``), filtered before
``max_chunks`` picks among them; the one-request prompt's paper is judged paragraph by paragraph (a heading
goes with the paragraph after it) and sent without the paragraphs dropped. Should every chunk be judged not
useful, all are kept with a warning: the filter narrows what a paper is asked about, it never empties it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sciqag_dataset.config.config_file import QAGenConfig
from sciqag_dataset.llm import LLMClient, LLMResponse
from sciqag_dataset.qa import small_model
from sciqag_dataset.qa.prompts import fit_to_context

MIN_WORDS = 25  # fewer words hold no finding to ask about
MIN_WORD_SHARE = 0.4  # below it the chunk is numbers, symbols and cells: a formula or a table out of shape
CITATION_EVERY = 15  # a citation marker every this many words or more often: a list of what others did
CAPTION_WORDS = 80  # a chunk that opens with a caption and has a caption label every this many words at most
HEADING_WORDS = 12  # a paragraph this short without a sentence end is a heading: it goes with the next one

_PUNCT = "()[]{}<>,.;:!?\"'“”‘’*"
_BRACKETED = re.compile(r"\[\d+(?:\s*[-–,]\s*\d+)*\]")
_ET_AL = re.compile(r"\bet al\b\.?", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}[a-z]?\b")
_CITED_YEAR = re.compile(r"\((?:[^()]{0,60}?\D)?(?:19|20)\d{2}[a-z]?\)")
# an author's initials before or after the surname ("K. Biswas", "C.-I. Wu", "Smith, J. A."), never a unit at
# a sentence end ("at 823 K. The")
_INITIALS = re.compile(r"(?<!\d\s)(?<!\d)\b[A-Z]\.(?:\s?-?[A-Z]\.)*\s[A-Z][a-z]+|\b[A-Z][a-z]+,\s(?:[A-Z]\.\s?-?)+")
_CAPTION = re.compile(
    r"(?:^|(?<=[.!?)] ))(?:Figure|FIGURE|Fig\.|FIG\.|Table|TABLE|Scheme|SCHEME)\s+S?\d+[A-Za-z]?\s*(?:[.:|]|\s[-–—])"
)
_DECLARATION_HEADING = re.compile(
    r"^(?:acknowledge?ments?|funding(?: information| sources)?|conflicts? of interests?|competing interests?|"
    r"declaration of competing interests?|declarations?|author contributions?|credit authorship contribution|"
    r"data availability|ethics (?:statement|approval)|notes)(?:\s*[:.]|\s*$)",
    re.I,
)  # the chunk's first line, a heading alone or run in ("Funding: ..."), not "Notes on sample preparation"
_DECLARATION = re.compile(
    r"\b(?:this (?:work|research|study|project) (?:was|is) (?:financially |partly |partially )?"
    r"(?:supported|funded)|(?:is|are) (?:grateful|thankful)|we (?:thank|acknowledge|are grateful)|"
    r"grants? (?:no\.?|number|nos\.?)|conflicts? of interests?|competing (?:financial )?interests?|"
    r"author contributions?|declare(?:s)? (?:no|that)|data (?:that support|are available|availability)|"
    r"conceptuali[sz]ation|writing\W+(?:original draft|review))",
    re.I,
)
_INSTITUTION = re.compile(
    r"University|Universität|Université|Department|Institute|Laboratory|College|Academy|School of", re.I
)
_FRONT_MATTER = re.compile(
    rf"[\w.+-]+@[\w-]+\.[\w.]+|\b(?:{_INSTITUTION.pattern})\b|\bcorresponding author|\bORCID\b|"
    r"\breceived\b[^.]{0,40}\baccepted\b|©|\bcopyright\b|\bkeywords?:",
    re.I,
)


@dataclass(frozen=True)
class Verdict:
    useful: bool
    reason: str  # "useful", or why not (the record counts the chunks dropped by reason)


USEFUL = Verdict(True, "useful")


def _is_word(token: str) -> bool:
    t = token.strip(_PUNCT).replace("-", "").replace("'", "")
    return len(t) >= 2 and t.isalpha()


def signals(text: str) -> Verdict:
    """The cheap verdict on one chunk: the first rule it meets, else useful."""
    flat = " ".join(text.split())
    tokens = flat.split()
    words = len(tokens)
    if words == 0:
        return Verdict(False, "too short")
    labels = len(_CAPTION.findall(flat))
    if _CAPTION.match(flat) and words <= CAPTION_WORDS * labels:
        return Verdict(False, "caption")
    years, initials, et_al = len(_YEAR.findall(flat)), len(_INITIALS.findall(flat)), len(_ET_AL.findall(flat))
    if years and initials >= 2 and (years + initials + et_al) * 100 >= 10 * words:
        return Verdict(False, "references")
    if _DECLARATION_HEADING.match(text.strip().split("\n", 1)[0]) or len(_DECLARATION.findall(flat)) >= 2:
        return Verdict(False, "declaration")
    front = _FRONT_MATTER.findall(flat)
    # an institution's name alone is a methods paragraph's too ("measured at the Department of ..."): front matter
    # has an address, a note to the corresponding author, dates or a copyright as well
    strong = sum(not _INSTITUTION.fullmatch(f) for f in front)
    if strong and (len(front) >= 3 or (len(front) >= 2 and len(front) * 100 >= 4 * words)):
        return Verdict(False, "front matter")
    if words < MIN_WORDS:
        return Verdict(False, "too short")
    if sum(map(_is_word, tokens)) < MIN_WORD_SHARE * words:
        return Verdict(False, "formula or table")
    citations = len(_BRACKETED.findall(flat)) + et_al + len(_CITED_YEAR.findall(flat))
    if citations * CITATION_EVERY >= words:
        return Verdict(False, "citations")
    return USEFUL


# ---------------------------------------------------------------- the model's check

#: what the model may give as the reason a chunk is not useful (another reason is counted as "other")
REASONS = ("short", "front matter", "caption", "references", "declaration", "concept introduction", "garbled")
CHECK_MARK = "Judge each numbered passage"  # the check's prompt says this, and no QA prompt does
CHECK_PROMPT = (
    "Below are {n} numbered passages from one scientific paper. " + CHECK_MARK + ": could a reader learn a "
    "finding, a method or a result of the paper from it, so that a question about the paper's science can be "
    "asked of it? A passage is not useful when it is too short to hold a fact (short); the title, authors, "
    "affiliations or keywords (front matter); a figure or table caption (caption); a list of references "
    "(references); acknowledgements, funding, conflicts of interest, author contributions or data availability "
    "(declaration); only the introduction of a concept any textbook gives (concept introduction); formulae or "
    "tables too garbled to read (garbled).\n\n"
    "Reply with one line per passage, in order, and nothing else, each either `<number>: useful` or "
    "`<number>: not useful: <reason>`, the reason one of the words in brackets above. For example:\n"
    "1: useful\n2: not useful: references\n\n{passages}"
)
_VERDICT = re.compile(
    r"^[^\w\n]*(?:passage[ \t]*)?(\d+)[^\w\n]*[ \t:.)\-–][^\w\n]*(not useful|useful)\b[^\w\n]*(.*)$", re.I | re.M
)


def check_messages(texts: list[str]) -> list[dict]:
    """The chat messages asking the model to judge ``texts``."""
    passages = "\n\n".join(f"Passage {i}:\n{' '.join(t.split())}" for i, t in enumerate(texts, 1))
    return [{"role": "user", "content": CHECK_PROMPT.format(n=len(texts), passages=passages)}]


def parse_verdicts(reply: str, n: int) -> list[Verdict | None]:
    """The verdicts of a check's reply on ``n`` passages, None where it gives none (the first line a passage
    gets counts)."""
    got: list[Verdict | None] = [None] * n
    for m in _VERDICT.finditer(reply):
        i = int(m.group(1)) - 1
        if 0 <= i < n and got[i] is None:
            if m.group(2).lower() == "useful":
                got[i] = USEFUL
            else:
                said = m.group(3).lower()
                got[i] = Verdict(False, "model: " + next((r for r in REASONS if r in said), "other"))
    return got


def made_up_reply(prompt: str) -> str:
    """A check's reply that keeps every passage, for a plan (``orchestration/plan_client.py``)."""
    n = int((re.search(r"Below are (\d+) numbered passages", prompt) or [0, 0])[1])
    return "\n".join(f"{i}: useful" for i in range(1, n + 1))


Ask = Callable[[list[dict]], Awaitable[LLMResponse]]


def asker(client: LLMClient, cfg: QAGenConfig) -> Ask:
    """The check sent as the stage's other requests are: raw completions of the model's chat template (the
    small-model profile), one raw prompt (the alpaca style's completions), else chat. A reply cut at
    ``max_tokens`` is used as far as it goes."""
    if cfg.prompt_style == "small":
        return lambda messages: client.complete(small_model.chat_prompt(messages), partial=True)
    if cfg.prompt_style == "alpaca" and cfg.raw_completion:
        return lambda messages: client.complete(messages[-1]["content"], partial=True)
    return lambda messages: client.chat(messages, partial=True)


async def judge(texts: list[str], mode: str, ask: Ask | None = None, batch: int = 8) -> tuple[list[int], dict]:
    """Which of ``texts`` to ask about (their indices), and the report the stage's record keeps: the chunks,
    those kept, those dropped by reason, the model's checks (``ask``: one request per ``batch`` chunks, ``llm``
    mode) and the chunks a check's reply gave no verdict for (kept)."""
    verdicts = [signals(t) for t in texts]
    checks = unjudged = 0
    if mode == "llm":
        left = [i for i, v in enumerate(verdicts) if v.useful]
        for start in range(0, len(left), batch):
            group = left[start : start + batch]
            reply = await ask(check_messages([texts[i] for i in group]))
            checks += 1
            for i, v in zip(group, parse_verdicts(reply.text, len(group))):
                if v is None:
                    unjudged += 1
                else:
                    verdicts[i] = v
    kept = [i for i, v in enumerate(verdicts) if v.useful]
    dropped = Counter(v.reason for v in verdicts if not v.useful)
    report = {"mode": mode, "chunks": len(texts), "kept": len(kept), "dropped": dict(sorted(dropped.items()))}
    if mode == "llm":
        report.update(checks=checks, unjudged=unjudged)
    if texts and not kept:  # never empty a paper: all of it is asked about, as with no filter
        kept, report["kept"], report["all_dropped"] = list(range(len(texts))), len(texts), True
    return kept, report


def paragraphs(text: str) -> list[str]:
    """``text``'s paragraphs (blank-line separated), a heading joined to the paragraph after it."""
    out, heading = [], ""
    for p in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not p:
            continue
        if len(p.split()) <= HEADING_WORDS and not p.rstrip().endswith((".", "!", "?", ":")):
            heading = f"{heading}\n\n{p}" if heading else p
            continue
        out.append(f"{heading}\n\n{p}" if heading else p)
        heading = ""
    if heading:
        out.append(heading)
    return out


async def filtered_pieces(paper: dict, cfg: QAGenConfig, ask: Ask, char_budget: int) -> tuple[list[str], list, dict]:
    """The pieces of ``paper`` the stage asks about with ``cfg.chunk_filter`` on, the warnings, and the
    filter's report: the small-model profile's chunks judged before ``max_chunks`` picks among them, or the
    paper judged by paragraphs, then fitted to ``char_budget`` characters."""
    text = paper.get("text") or ""
    if cfg.chunk_words:
        pieces, opens = small_model.split(text, cfg.chunk_words, paper.get("section_starts"))
        kept, report = await judge(pieces, cfg.chunk_filter, ask, cfg.chunk_check_batch)
        chosen, warnings = small_model.spread(
            [pieces[i] for i in kept], [opens[i] for i in kept], cfg.chunk_words, cfg.max_chunks
        )
    else:
        blocks = paragraphs(text)
        kept, report = await judge(blocks, cfg.chunk_filter, ask, cfg.chunk_check_batch)
        shown = "\n\n".join(blocks[i] for i in kept) if blocks else text
        chosen, warnings = fit_to_context(shown, char_budget, cfg.long_paper)
    report["asked"] = len(chosen)
    if report.get("all_dropped"):
        warnings.append(f"chunk filter: every one of {report['chunks']} chunks was judged not useful; all kept")
    elif report["dropped"]:
        why = ", ".join(f"{reason} {n}" for reason, n in report["dropped"].items())
        warnings.append(
            f"chunk filter: {report['chunks'] - report['kept']} of {report['chunks']} chunks dropped ({why})"
        )
    return chosen, warnings, report
