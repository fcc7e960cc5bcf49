"""Letters a PDF prints as glyphs that are no text: ligature code points (U+FB00-FB06) spelt out, ligatures in
fonts without a Unicode map ("speci?ed", "?nd": pdfminer's "(cid:N)") named by the paper's own words, and digits
a Type 3 font names by themselves ("/7", which MuPDF reads as U+0007).

A glyph with no map inside a word is kept by the layout pass as a mark (``mark``): one private-use character per
font family and glyph code, since a typesetter numbers a ligature alike in the roman, bold and italic of one
family, and families number their glyphs as they like. The paper votes: every word with the mark in it is
tried with each ligature's letters, and a spelling that makes a word the paper prints elsewhere in plain letters
is a vote. A glyph whose votes agree is that ligature everywhere (in words the paper spells nowhere else too); a
word the paper spells elsewhere is filled even when its glyph is not settled; any other mark is left out, as a
mark standing alone is."""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter, defaultdict

from sciqag_dataset.builders.ingest.pdf_line import Line

_LIGATURE_POINTS = re.compile("[\ufb00-\ufb06]")
_SPELLINGS = ("fi", "fl", "ff", "ffi", "ffl")
_PLANE = 0xF0000  # supplementary private use area A (65534 points): no font's text uses it
MARK = re.compile("[\U000f0000-\U000ffffd]")
_MARKED_WORD = re.compile(r"[^\W\d_]*(?:[\U000f0000-\U000ffffd][^\W\d_]*)+")


def family(fontname: str) -> str:
    """A font name's family: "Times" of "ABCDEF+Times-Roman" and of "Times-Bold", "NimbusRomNo9L" of "...-Regu"."""
    return re.split(r"[-,]", fontname.split("+")[-1])[0]


def mark(fontname: str, code: int) -> str:
    """The stand-in for glyph ``code`` of the font's family while the paper's words are read (255 families
    by their name's hash, 256 codes: a two-byte code shares its low byte's mark, and a vote split between two
    glyphs names neither)."""
    return chr(_PLANE + (zlib.crc32(family(fontname).encode()) % 255) * 256 + code % 256)


def digit_names(page) -> dict[str, dict[str, str]]:
    """The digits of fonts whose encoding names glyphs by the character they draw ("/7", dvips' Type 3 fonts):
    MuPDF reads such a name as the code point it spells (U+0007, "/9" a tab), which no text has. By the font's
    name as MuPDF gives it to a span (its base font, else "Type3 (115 0 R)"): control character to digit. "/0"
    needs none: MuPDF reads it as "0"."""
    named = {}
    for xref, _, kind, base, *_ in page.get_fonts(full=True):
        form, differences = page.parent.xref_get_key(xref, "Encoding/Differences")
        digits = {chr(int(n)): n for n in re.findall(r"/(\d)(?=[\s/\]])", differences) if n != "0"}
        if form == "array" and digits:
            named[base or f"{kind} ({xref} 0 R)"] = digits
    return named


def alone(text: str) -> bool:
    """Marks and no letters: a symbol's glyphs (math, a bullet), not a word's."""
    return bool(MARK.search(text)) and not re.search(r"[^\W\d_]", MARK.sub("", text))


def spell(pages: list[list[Line]]) -> None:
    """Rewrite the lines' text in place: ligature code points spelt out, marks named or left out. Two rounds:
    the words filled in the first are the paper's words for the second (a glyph seen in a few words only, each
    spelt plainly nowhere but through another glyph's filled words)."""
    lines = [ln for page in pages for ln in page]
    for ln in lines:
        ln.text = _LIGATURE_POINTS.sub(lambda m: unicodedata.normalize("NFKC", m[0]), ln.text)
    if not any(MARK.search(ln.text) for ln in lines):
        return
    for last in (False, True):
        # the paper's words in plain letters: not the pieces either side of a mark
        plain = (t for ln in lines for t in ln.text.split() if not MARK.search(t))
        vocab = Counter(w.lower() for t in plain for w in re.findall(r"[^\W\d_]{2,}", t))
        named = _named(lines, vocab)
        for ln in lines:
            ln.text = _MARKED_WORD.sub(lambda m, n=named, v=vocab, e=last: _fill(m[0], n, v, e), ln.text)


def _named(lines: list[Line], vocab: Counter) -> dict[str, str]:
    """The glyphs whose words agree on one ligature: two votes or more, four in five for the same letters."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for ln in lines:
        for word in _MARKED_WORD.findall(ln.text):
            if len(set(MARK.findall(word))) != 1 or not MARK.sub("", word):
                continue
            glyph = MARK.search(word)[0]
            votes[glyph].update(s for s in _SPELLINGS if vocab[word.replace(glyph, s).lower()])
    named = {}
    for glyph, count in votes.items():
        best = count.most_common(1)
        if best and best[0][1] >= 2 and best[0][1] >= 0.8 * sum(count.values()):
            named[glyph] = best[0][0]
    return named


def _fill(word: str, named: dict[str, str], vocab: Counter, last: bool) -> str:
    """The word with its marks named: by the glyph's ligature, else by the one spelling the paper prints; in
    the last round a mark still unnamed is left out."""
    if not MARK.sub("", word):  # a glyph (or several) standing alone: a symbol, not a letter of a word
        return "" if last else word
    filled = MARK.sub(lambda m: named.get(m[0], m[0]), word)
    if MARK.search(filled):
        known = [s for s in _SPELLINGS if vocab[MARK.sub(s, filled).lower()]]
        if len(known) == 1:
            filled = MARK.sub(known[0], filled)
    return MARK.sub("", filled) if last else filled
