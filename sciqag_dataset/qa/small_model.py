"""The embedded profile: how a 135M-parameter model is asked for QA pairs.

The paper's prompt (Appendix D) asks for ten pairs on a whole paper; SmolLM2-135M answered it with 0-3
parseable pairs. Asked for five pairs of one ~450-word chunk in one reply, after a worked example, it still
gave only ~3.4 per paper on the sample papers: it numbered ``Q1:``/``A2:``/``Q3:``, wrote answers of a
paragraph until ``max_tokens``, and looped on one question. So the profile *paces* the reply: it writes
``Q1:`` itself and lets the model finish the line, then ``A1:``, and so on (raw completions of the
model's own chat template; a server with a prefix cache, like llama.cpp's, reads the chunk once). Each
line is capped and ends at its newline, a cut answer is trimmed to its last sentence, and a question that
is cut, empty or asked before is asked again a little warmer, a few times at most; a chunk that gives fewer
pairs leaves the rest to the next chunk. This is a profile of the same stages, used only for the embedded
model; real teachers keep the paper's prompt. The worked example is our own text, from another field than
the sample papers.
"""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

INSTRUCTION = (
    "Read the passage and write {n} question-answer pairs about its facts. Each question must make "
    "sense without the passage. Answer each question in one or two sentences. Use exactly this "
    "format:\n"
    "Q1: ...\nA1: ...\nQ2: ...\nA2: ...{focus}\n\nPassage:\n{passage}"
)
FOCUS = "\nFocus on: {keywords}."
EXAMPLE_PASSAGE = (
    "Carbon steel coupons were immersed in aerated seawater at 25 C for 90 days. The mean corrosion rate "
    "fell from 0.21 mm per year in the first month to 0.09 mm per year by the third, as a layer of iron "
    "oxyhydroxides built up on the surface. Adding 50 ppm of sodium molybdate cut the rate to 0.04 mm per "
    "year, because molybdate adsorbs on anodic sites and helps a passive film form."
)
EXAMPLE_PAIRS = [
    (
        "How did the corrosion rate of carbon steel in aerated seawater change over 90 days?",
        "It fell from 0.21 mm per year in the first month to 0.09 mm per year by the third month.",
    ),
    (
        "Why did the corrosion rate of the steel slow down with time?",
        "A layer of iron oxyhydroxides built up on the surface and slowed further attack.",
    ),
    (
        "What effect did 50 ppm of sodium molybdate have on the corrosion of steel in seawater?",
        "It cut the corrosion rate to 0.04 mm per year.",
    ),
    (
        "How does molybdate protect carbon steel from corrosion?",
        "Molybdate adsorbs on anodic sites and helps a passive film form on the steel.",
    ),
    (
        "At what temperature were the steel coupons exposed to seawater?",
        "The coupons were kept in aerated seawater at 25 C.",
    ),
]
EXAMPLE_QUESTIONS = {q.lower() for q, _ in EXAMPLE_PAIRS}
# words too common to tell two passages apart
_COMMON = set(
    """the and for are was were has had have with from that this these those than then what which
who whom whose when where why how does did do not but its their there into onto over under about after before
between during while also can could may might will would should shall been being each such only other more
most less least very much many some any all both one two three per""".split()
)
_WORD = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


def content_words(text: str) -> set[str]:
    """The words and numbers of ``text`` that say what it is about (lower case)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON and (len(w) > 2 or w[0].isdigit())}


EXAMPLE_WORDS = content_words(EXAMPLE_PASSAGE + " " + " ".join(f"{q} {a}" for q, a in EXAMPLE_PAIRS))
#: what the example is about: one of these in a pair whose passage never uses it is the example coming back,
#: mixed into a pair about the passage ("the median grain size of carbon steel in aerated seawater")
EXAMPLE_TOPIC = {
    "corrosion",
    "corroded",
    "steel",
    "seawater",
    "coupons",
    "molybdate",
    "oxyhydroxides",
    "aerated",
    "anodic",
}


#: a run of this many words shared with the example's text (and not in the passage) is copied from it
COPIED_RUN = 5


def word_runs(text: str, n: int = COPIED_RUN, telling: bool = True) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive words and numbers of ``text`` (lower case); ``telling``: only those holding
    two content words or more ("cut the rate to 0.04", not a question's frame like "at what temperature were
    the")."""
    words = _WORD.findall(text.lower())
    runs = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    return {run for run in runs if len(content_words(" ".join(run))) >= 2} if telling else runs


EXAMPLE_RUNS = set().union(*map(word_runs, [EXAMPLE_PASSAGE, *(text for pair in EXAMPLE_PAIRS for text in pair)]))


def off_passage(question: str, answer: str, passage: str) -> str | None:
    """Why a pair written for ``passage`` is not about it, or None: a 135M model copies the worked example it
    was shown (the steel-corrosion pairs came back for papers that never mention corrosion), or writes what
    its passage does not say. Judged by shared words: more with the example than with the passage, one of the
    example's topic words, a run of ``COPIED_RUN`` words of the example's text that the passage does not hold,
    or no word of the passage."""
    words, passage_words = content_words(f"{question} {answer}"), content_words(passage)
    ours, example = len(words & passage_words), len(words & EXAMPLE_WORDS)
    if example > ours or words & EXAMPLE_TOPIC - passage_words:
        return "the prompt's worked example"
    copied = (word_runs(question) | word_runs(answer)) & EXAMPLE_RUNS
    if copied and copied - word_runs(passage, telling=False):
        return "the prompt's worked example"
    if words and not ours:
        return "no word of its passage"
    return None


QUESTION_TOKENS = 40  # a question of this model runs 12-25 tokens; one cut at 40 has lost its way
ANSWER_TOKENS = 48  # one or two sentences; a longer answer is cut back to its last whole sentence
RETRIES_PER_CHUNK = 2  # questions asked again (cut, empty or repeated) before the next chunk takes over
WARMER = 0.2  # each retry samples this much hotter, so that it is a new sample and not the cached one
#: SmolLM2's chat template (ChatML), for the raw completions the paced reply is written with
TURN = "<|im_start|>{role}\n{content}<|im_end|>\n"
REPLY_START = "<|im_start|>assistant\n"
SENTENCE_TAIL = re.compile(r"^(.*[.!?])(?:\s|$)", re.S)


def _instruction(passage: str, n: int, keywords: list[str]) -> str:
    focus = FOCUS.format(keywords=", ".join(keywords[:5])) if keywords else ""
    return INSTRUCTION.format(n=n, focus=focus, passage=passage)


def messages(passage: str, keywords: list[str], n: int) -> list[dict]:
    """A worked example (its pairs as the assistant's turn), then the same request for ``passage``."""
    shown = EXAMPLE_PAIRS[:n] if n <= len(EXAMPLE_PAIRS) else EXAMPLE_PAIRS
    example = "\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(shown, 1))
    return [
        {"role": "user", "content": _instruction(EXAMPLE_PASSAGE, len(shown), [])},
        {"role": "assistant", "content": example},
        {"role": "user", "content": _instruction(passage, n, keywords)},
    ]


def _pieces(text: str, words: int) -> list[str]:
    """``text`` cut at sentence ends into pieces of about ``words`` words."""
    pieces, current, count = [], [], 0
    sentences = SENTENCE_END.split(" ".join(text.split()))
    # a "sentence" without an end mark (a table, a PDF dump) is cut into pieces of ``words`` words
    sentences = [
        " ".join(ws[i : i + words]) for s in sentences for ws in [s.split()] for i in range(0, len(ws), words)
    ]
    for sentence in sentences:
        n = len(sentence.split())
        if current and count + n > words:
            pieces.append(" ".join(current))
            current, count = [], 0
        current.append(sentence)
        count += n
    if current:
        pieces.append(" ".join(current))
    return [p for p in pieces if p]


def _pick(starts: list[int], opens: list[bool], total: int, n: int) -> list[int]:
    """Which ``n`` pieces to ask about (by index; ``starts``: each piece's first word in the paper, ``opens``:
    whether it opens a section): piece i near word i/n of the paper, the nearest section start within half a
    slot if there is one, else the piece holding that word (or the next one not taken)."""
    chosen: list[int] = []
    for i in range(n):
        target = i * total / n
        near = [
            k for k in range(len(starts)) if opens[k] and k not in chosen and abs(starts[k] - target) <= total / n / 2
        ]
        if near:
            chosen.append(min(near, key=lambda k: abs(starts[k] - target)))
            continue
        k = max(k for k in range(len(starts)) if starts[k] <= target)
        chosen.append(next(j for j in [*range(k, len(starts)), *range(k)] if j not in chosen))
    return sorted(chosen)


def split(text: str, words: int, section_starts: list[int] | None = None) -> tuple[list[str], list[bool]]:
    """``text`` cut at sentence ends into pieces of about ``words`` words, a piece never crossing one of
    ``section_starts`` (character offsets in ``text``); and whether each piece opens a section."""
    cuts = sorted({0, *(c for c in section_starts or () if 0 < c < len(text))})
    pieces, opens = [], []
    for a, b in zip(cuts, [*cuts[1:], len(text)]):
        part = _pieces(text[a:b], words)
        pieces += part
        opens += [a > 0] + [False] * (len(part) - 1)
    return pieces, opens


def spread(pieces: list[str], opens: list[bool], words: int, max_chunks: int | None) -> tuple[list[str], list[str]]:
    """With ``max_chunks``, that many of ``pieces`` spread over the paper (piece i from word i/n of it,
    preferring a section's opening, ``opens``), and a warning saying how much was left out."""
    if not pieces:
        return [""], []
    if max_chunks is None or len(pieces) <= max_chunks:
        return pieces, []
    sizes = [len(p.split()) for p in pieces]
    starts = [sum(sizes[:k]) for k in range(len(pieces))]
    kept = [pieces[k] for k in _pick(starts, opens, sum(sizes), max_chunks)]
    left = sum(sizes) - sum(len(p.split()) for p in kept)
    return kept, [
        f"embedded profile: asked about {max_chunks} of {len(pieces)} chunks of ~{words} words; "
        f"{left} words of the paper were left out"
    ]


def chunks(
    text: str, words: int, max_chunks: int | None = None, section_starts: list[int] | None = None
) -> tuple[list[str], list[str]]:
    """``text`` cut at sentence ends into pieces of about ``words`` words (``split``); with ``max_chunks``, that
    many spread over the paper (``spread``), and a warning saying how much was left out."""
    return spread(*split(text, words, section_starts), words, max_chunks)


def chat_prompt(messages_: list[dict]) -> str:
    return "".join(TURN.format(**m) for m in messages_) + REPLY_START


def question_key(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?. ")


def usable_question(text: str, seen: set[str]) -> bool:
    """Three words or more, some of them words, and not asked before (``seen`` holds ``question_key``s)."""
    return len(text.split()) >= 3 and any(c.isalpha() for c in text) and question_key(text) not in seen


def whole_sentences(text: str) -> str:
    """``text`` up to its last sentence end ("" if it has none): an answer cut at its token cap."""
    m = SENTENCE_TAIL.match(text)
    return m.group(1) if m else ""
