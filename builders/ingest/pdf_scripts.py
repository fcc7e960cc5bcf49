"""Superscripts and subscripts joined back to their words: pdfplumber cuts a word where the font size changes, so
a citation mark, an exponent or a formula's subscript comes as a word of its own on a baseline of its own."""

from __future__ import annotations

import re

_SCRIPT_MARK = re.compile(r"(?:(?!0)\d{1,3}|[*†‡§¶‖a-f])(?:[,–-]?(?:(?!0)\d{1,3}|[*†‡§¶‖]))*,?")  # "7,8" "9–11" "1*"
# a raised number after these is an exponent (cm², mol⁻¹), not a citation
_UNITS = {
    "mol",
    "min",
    "eV",
    "keV",
    "MeV",
    "Pa",
    "kPa",
    "MPa",
    "GPa",
    "Hz",
    "kHz",
    "MHz",
    "GHz",
    "mL",
    "kJ",
    "kg",
    "deg",
    "arcsec",
    "arcmin",
    "pc",
    "kpc",
    "Mpc",
    "Gpc",
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
}


# a mass number set before an element's symbol, no letter or full stop after it ("31P", "13C-NMR", "57Fe"; not
# "1CNRS", nor a reference entry's number before an initial, "1S. Writer")
_ELEMENTS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr Rb Sr Y Zr Nb "
    "Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au "
    "Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr"
).split()
_ISOTOPE = re.compile(rf"\d{{1,3}}(?:{'|'.join(sorted(_ELEMENTS, key=len, reverse=True))})(?![A-Za-z.])")


def join_scripts(words: list[dict]) -> list[dict]:
    """pdfplumber cuts a word where the font size changes, so a superscript or subscript set against a word
    is a word of its own, on a baseline of its own. Join them back: a citation or footnote mark goes
    ("films⁷˒⁸," -> "films,"), an exponent is written ^x ("cm^−3"), a subscript joins its formula ("Ni12P5")."""
    ends: dict[int, list[dict]] = {}
    for w in words:
        ends.setdefault(round(w["x1"]), []).append(w)
    chain_of: dict[int, list[dict]] = {}
    chains: list[list[dict]] = []
    for w in sorted(words, key=lambda w: w["x0"]):
        x = round(w["x0"])
        left = next(
            (
                v
                for k in (x, x - 1, x + 1, x - 2)
                for v in ends.get(k, ())
                if id(v) in chain_of
                and -1 <= w["x0"] - v["x1"] <= 1.5
                # side by side: a third of the lower one's height shared (a superscript's top touching the line
                # above is not on that line)
                and min(v["bottom"], w["bottom"]) - max(v["top"], w["top"])
                > 0.3 * min(v["bottom"] - v["top"], w["bottom"] - w["top"])
                and chain_of[id(v)][-1] is v
                # a script is set in another size or on another baseline; two words of one size and baseline a
                # narrow space apart ("A value", spaced by the PDF's own space) stay two unless they touch with no
                # space character between them (slanted letters' boxes touch across one: "Ocimum sanctum")
                and (
                    abs(w["size"] - v["size"]) > 0.3
                    or abs(w["bottom"] - v["bottom"]) > 0.5
                    or w["x0"] - v["x1"] <= 0.5
                    and not w.get("spaced")
                )
            ),
            None,
        )
        left = left or _stacked_on(w, ends, chain_of)
        chain = chain_of[id(left)] if left is not None else []
        if not chain:
            chains.append(chain)
        chain.append(w)
        chain_of[id(w)] = chain
    return [_script_word(c) if len(c) > 1 else c[0] for c in chains]


def _stacked_on(w: dict, ends: dict[int, list[dict]], chain_of: dict[int, list[dict]]) -> dict | None:
    """The script a script is stacked over or under (``M²_τ``: the "2" over the "τ", both after the "M"): a word
    of its size ending a chain, starting where it starts, on another baseline within the chain's first word."""
    x = round(w["x0"])
    return next(
        (
            v
            for k in range(x, x + 12)
            for v in ends.get(k, ())
            if id(v) in chain_of
            and chain_of[id(v)][-1] is v
            and len(chain_of[id(v)]) > 1
            and abs(v["size"] - w["size"]) < 0.3
            and v["x0"] - 1 <= w["x0"] < v["x1"]
            and abs(v["bottom"] - w["bottom"]) > 0.3 * w["size"]
            and w["size"] < 0.85 * chain_of[id(v)][0]["size"]
            and chain_of[id(v)][0]["top"] - 2 <= (w["top"] + w["bottom"]) / 2 <= chain_of[id(v)][0]["bottom"] + 2
        ),
        None,
    )


def _script_word(parts: list[dict]) -> dict:
    parts = list(parts)
    base = max(parts, key=lambda w: w["size"])
    for k in range(1, len(parts)):  # of two stacked scripts, the raised one first ("M^2τ", as M^2_τ is written)
        a, b = parts[k - 1], parts[k]
        scripts = max(a["size"], b["size"]) < 0.85 * base["size"]
        if scripts and a["x0"] - 1 <= b["x0"] < a["x1"] - 1 and b["bottom"] < a["bottom"] - 0.3 * b["size"]:
            parts[k - 1], parts[k] = b, a
    text, dropped = "", False
    for k, w in enumerate(parts):
        small = w["size"] < 0.85 * base["size"]
        if small and w["bottom"] < base["bottom"] - 0.15 * base["size"]:  # raised: a mark or an exponent
            unit = re.search(r"[^\W\d_]*$", text)[0]
            if not text and _ISOTOPE.match(w["text"] + "".join(p["text"] for p in parts[k + 1 : k + 2])):
                text += w["text"]  # a mass number before its element ("³¹P", "¹³C-labelled"): "31P"
                continue
            if (
                not text
                or _SCRIPT_MARK.fullmatch(w["text"])
                and not text[-1:].isdigit()
                and (len(unit) > 2 and unit not in _UNITS or not unit)
            ):  # "ᵃUniversity", "films⁷˒⁸", "Ball¹*"
                dropped = True
                continue
            text += "^" + w["text"]
        else:  # a subscript, or the same line in another font
            # a mark set in the space between two words ("Relaxations ᵃin"): the mark goes, the space stays
            if dropped and not small and text[-1:].isalpha() and w["text"][:1].isalnum():
                text += " "
            text += w["text"]
        dropped = False
    return {**base, "text": text, "x0": parts[0]["x0"], "x1": parts[-1]["x1"]}
