"""Count a paper's tables, figures and equations in its source, with a parse of this script's own, and check the
record's ``components`` against them: counts per kind, labels, captions, and mentions.

    python bench/heldout/fetch.py --mirror /work/.mirror --sources bench/components_sources.json \\
        --out bench/components_papers
    python bench/components.py bench/components_papers bench/heldout/papers bench/heldout2/papers \\
        bench/heldout3/papers [--json OUT]

Each JATS (``.xml``/``.nxml`` whose root is ``<article>``), LaTeX (a ``.tex`` with ``\\documentclass``, an arXiv
``.gz``/``.tar.gz``/``.tgz``) and HTML file under the folders is read with the project's reader. The source count:

- JATS (lxml): every ``table-wrap``, ``fig`` and ``disp-formula``, wherever it stands (``floats-group`` too, and a
  sub-article's). A ``fig-group``/``table-wrap-group`` is not one itself: each ``fig``/``table-wrap`` in it is. A
  component is referred to when an ``xref`` in the abstract, ``body`` or an ``app`` (outside the floats and the
  reference list) names its id or its group's id.
- LaTeX: the outermost ``figure``/``table`` float environments (starred, ``wrap``/``sideways``, AASTeX's
  ``deluxetable``, ``longtable``) and display equations (``equation``, ``align``, ``gather``, ``multline``,
  ``eqnarray``, ``flalign``, ``alignat``, starred or not, ``displaymath``, ``\\[...\\]``) in the document body,
  ``\\input``/``\\include`` expanded, comments and macro definitions out, and plain TeX's ``$$...$$`` (not the
  ``$$`` between two inline maths, ``$a$$b$``). Referred to: a ``\\ref``/``\\eqref``/``\\cref``/``\\Cref``/
  ``\\autoref`` to one of its ``\\label``s outside the component environments.
- HTML: the ``<table>`` and ``<figure>`` elements of the page's article (the ``<article>`` element with the most
  paragraph text, else ``<main>``, else the body), outside ``nav``/``header``/``footer``/``aside``/``form``: a
  ``<figure>`` not inside another, a table not inside a ``<figure>``, holding no table and at least two cells with
  text (as tests/builders/test_html_components.py counts them); such a table of one row, a formula and its number
  "(3)", is an equation (RSC sets its displays so); other equations are not counted. Referred to: a link
  ``href="#id"`` in the article's paragraphs naming the element's id, an id inside it, or its parent's.

Checks per component, matched to the record's by id (JATS, and LaTeX by its first ``\\label``), else in order per
kind: a label where the source has one (JATS ``label``; a numbered LaTeX float with a caption or a numbered
equation; an HTML caption starting "Table 2"/"Fig. 2"); a non-empty caption where the source has one; at least
one mention where the source refers to it. Every mention of every record component: ``text[start:end]`` holds
the number of the component's label (or a range "1-3" spanning it). Only counts, ids and labels are printed.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

import lxml.etree
import lxml.html

from sciqag_dataset.builders.ingest import read_file

KINDS = ("table", "figure", "equation")


# ---------------------------------------------------------------------------------------------------- JATS


def _local(el) -> str:
    return lxml.etree.QName(el).localname if isinstance(el.tag, str) else ""


def _text(el) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def jats_source(path: Path) -> list[dict] | None:
    root = lxml.etree.parse(str(path), lxml.etree.XMLParser(recover=True, huge_tree=True)).getroot()
    if root is None or _local(root) != "article":
        return None
    kinds = {"table-wrap": "table", "fig": "figure", "disp-formula": "equation"}
    groups = {"fig-group", "table-wrap-group", "disp-formula-group"}
    prose_roots = [el for el in root.iter() if _local(el) in ("abstract", "body", "app")]
    outside = set(kinds) | groups | {"ref-list"}
    refs: Counter = Counter()
    seen = set()
    for top in prose_roots:
        for x in top.iter():
            if _local(x) != "xref" or x in seen:
                continue
            seen.add(x)
            if any(_local(a) in outside for a in x.iterancestors()):
                continue
            for rid in (x.get("rid") or "").split():
                refs[rid] += 1
    out = []
    for el in root.iter():
        kind = kinds.get(_local(el))
        if kind is None:
            continue
        label = next((c for c in el if _local(c) == "label"), None)
        caption = next((c for c in el if _local(c) == "caption"), None)
        ids = [el.get("id")] + [a.get("id") for a in el.iterancestors() if _local(a) in groups]
        ids = [i for i in ids if i]
        out.append(
            {
                "kind": kind,
                "key": el.get("id"),
                "label": _text(label),
                "has_caption": bool(_text(caption)),
                "refs": sum(refs[i] for i in ids),
                "where": "sub-article" if any(_local(a) == "sub-article" for a in el.iterancestors()) else "",
            }
        )
    return out


# ---------------------------------------------------------------------------------------------------- LaTeX

_FLOATS = {
    **dict.fromkeys(("figure", "figure*", "wrapfigure", "sidewaysfigure", "SCfigure"), "figure"),
    **dict.fromkeys(
        ("table", "table*", "wraptable", "sidewaystable", "deluxetable", "deluxetable*", "longtable", "longtable*"),
        "table",
    ),
}
_EQS = [e for n in ("equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat") for e in (n, n + "*")]
_ENVS = {**_FLOATS, **dict.fromkeys([*_EQS, "displaymath"], "equation")}
_ENV_RE = re.compile(
    r"\\begin\{(" + "|".join(re.escape(e) for e in sorted(_ENVS, key=len, reverse=True)) + r")\}|(?<!\\)\\\["
    r"|(?<![\\$])\$\$"
)
_REF_RE = re.compile(r"\\(?:ref|eqref|cref|Cref|autoref|vref|cpageref|subref)\*?\s*\{([^{}]*)\}")
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")


def _strip_comments(tex: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", tex)


def _expand(tex: str, folder: Path, files: dict[str, str], depth: int = 0) -> str:
    def sub(m):
        name = m[1].strip()
        for cand in (name, name + ".tex"):
            if cand in files and depth < 8:
                return _expand(_strip_comments(files[cand]), folder, files, depth + 1)
        return ""

    return re.sub(r"\\(?:input|include)\s*\{([^{}]+)\}", sub, tex)


def latex_files(path: Path) -> dict[str, str] | None:
    """name -> text of the paper's .tex files, its main file under ``""``."""
    files: dict[str, str] = {}
    if path.suffix == ".tex":
        root = path.parent
        for p in root.rglob("*.tex"):
            files[str(p.relative_to(root))] = p.read_text(encoding="utf-8", errors="replace")
        main = files.get(str(path.relative_to(root)), "")
    else:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                for m in tar.getmembers():
                    if m.isfile() and m.name.endswith(".tex"):
                        files[m.name.lstrip("./")] = tar.extractfile(m).read().decode("utf-8", "replace")
        except tarfile.TarError:
            files["main.tex"] = data.decode("utf-8", "replace")
        main = next((t for t in files.values() if re.search(r"^\s*\\document(?:class|style)", t, re.M)), "")
    if not re.search(r"^\s*\\document(?:class|style)", main, re.M):
        return None
    files[""] = main
    return files


def latex_source(path: Path) -> dict | None:
    files = latex_files(path)
    if files is None:
        return None
    tex = _expand(_strip_comments(files[""]), path.parent, files)
    begin = tex.find("\\begin{document}")
    body = tex[begin if begin >= 0 else 0 :]
    end = body.find("\\end{document}")
    body = body[: end if end >= 0 else None]
    body = re.sub(r"\\(?:(?:re|provide)?newcommand|def)\b[^\n]*", "", body)  # a macro's \begin{equation} is no display
    spans, pos = [], 0
    for m in _ENV_RE.finditer(body):
        if m.start() < pos:
            continue
        name = m[1] or m[0]
        if name == "$$" and len(re.findall(r"(?<![\\$])\$(?!\$)", body[pos : m.start()])) % 2:
            continue  # "$a$$b$": inline maths side by side
        closing = {"\\[": "\\]", "$$": "$$"}.get(name, f"\\end{{{name}}}")
        close = body.find(closing, m.end())
        if close < 0:
            continue
        pos = close + len(closing)
        spans.append((name, m.start(), pos))
    prose, last = [], 0
    for _, s, e in spans:
        prose.append(body[last:s])
        last = e
    prose.append(body[last:])
    refs: Counter = Counter(x.strip() for m in _REF_RE.finditer(" ".join(prose)) for x in m[1].split(","))
    out = []
    for name, s, e in spans:
        src = body[s:e]
        labels = [x.strip() for x in _LABEL_RE.findall(src)]
        kind = _ENVS.get(name, "equation")
        caption = re.search(r"\\(?:caption\*?\s*(?:\[[^\]]*\])?|tablecaption)\s*\{\s*[^}\s]", src)
        captionof = re.search(r"\\captionof\s*\{(figure|table)\}\s*(?:\[[^\]]*\])?\s*\{\s*[^}\s]", src)
        if kind != "equation" and captionof and not caption:  # a \captionof{table} in a wrapfigure: a table
            kind, caption = captionof[1], captionof
        if kind == "equation":
            lines = re.split(r"\\\\", src) if name.rstrip("*") in ("align", "gather", "eqnarray", "flalign") else [src]
            numbered = not name.endswith("*") and name not in ("displaymath", "\\[", "$$")
            numbered = numbered and any(not re.search(r"\\(?:nonumber|notag)\b", ln) for ln in lines)
            numbered = numbered or bool(re.search(r"\\tag\s*\{", src))
        else:
            numbered = bool(caption) and "\\caption*" not in src
        out.append(
            {
                "kind": kind,
                "key": labels[0] if labels else None,
                "wants_label": numbered,
                "has_caption": bool(caption),
                "refs": sum(refs[x] for x in labels),
                "where": "",
            }
        )
    return {"components": out}


# ---------------------------------------------------------------------------------------------------- HTML

_OUTSIDE = ("nav", "header", "footer", "aside", "form")
_LABEL_ONLY = re.compile(r"(?:Fig(?:ure)?\.?|Table|Scheme|Chart)\s*S?\d+[a-z]?\.?", re.I)  # a wrapper's "Figure 3"
_CAPTION_LABEL = re.compile(r"^\s*(?:Supplementary\s+)?(?:Fig(?:ure)?s?\.?|Tables?|Scheme|Chart)\s*S?\d+", re.I)


def _article(page):
    articles = [a for a in page.iter("article")]
    if articles:
        return max(articles, key=lambda a: sum(len(_text(p)) for p in a.iter("p")))
    main = next(page.iter("main"), None)
    return main if main is not None else next(page.iter("body"), page)


def html_source(path: Path) -> list[dict]:
    page = lxml.html.parse(str(path)).getroot()
    art = _article(page)
    found = []
    for el in art.iter("table", "figure"):
        if any(a.tag in _OUTSIDE for a in el.iterancestors()):
            continue
        if el.tag == "figure":
            if any(a.tag == "figure" for a in el.iterancestors()):
                continue
        else:
            if any(a.tag == "figure" for a in el.iterancestors()) or any(True for _ in el.iterdescendants("table")):
                continue
            if sum(1 for c in el.iter("td", "th") if _text(c)) < 2:
                continue
        found.append(el)
    links: Counter = Counter()
    for a in art.iter("a"):
        href = a.get("href") or ""
        if href.startswith("#") and not any(x in found for x in a.iterancestors()):
            if any(p.tag == "p" for p in a.iterancestors()):
                links[href[1:]] += 1
    out = []
    for el in found:
        table = el if el.tag == "table" else next(el.iter("table"), None)
        cap = next(el.iter("figcaption"), None) if el.tag == "figure" else None
        if table is not None and cap is None:
            cap = next(table.iter("caption"), None)
        # its id, those inside it (not a table's own footnote anchors), its wrappers' that hold nothing else
        ids = {d.get("id") for d in el.iter() if isinstance(d.tag, str) and d.get("id")}
        ids -= {d.get("id") for t in el.iter("table") for d in t.iterdescendants() if isinstance(d.tag, str)}
        wrappers = [w for w in list(el.iterancestors())[:2] if len(list(w.iter("table", "figure"))) == 1]
        ids |= {w.get("id") for w in wrappers if w.get("id")}
        inside = set(el.iter())
        heads = [
            _text(d)
            for w in wrappers
            for d in w.iter()
            if d not in inside
            and isinstance(d.tag, str)
            and not any(a.tag in ("p", "a") for a in d.iterancestors())
            and d.tag not in ("p", "a")
        ]
        kind = "table" if table is not None else "figure"
        if el.tag == "table":  # a table of one row, a formula and its number "(3)": a displayed equation
            cells = [[_text(c) for c in r.iter("td", "th") if _text(c)] for r in el.iter("tr")]
            cells = [r for r in cells if r]
            if (
                len(cells) == 1
                and len(cells[0]) == 2
                and re.fullmatch(r"\(\s*[A-Z]?\d+(?:\.\d+)?[a-z]?\s*\)", cells[0][1])
            ):
                kind = "equation"
        out.append(
            {
                "kind": kind,
                "key": None,
                "wants_label": kind == "equation"
                or bool(_CAPTION_LABEL.match(_text(cap)))
                or any(map(_LABEL_ONLY.fullmatch, heads)),
                "has_caption": bool(_text(cap)),
                "refs": sum(links[i] for i in ids),
                "where": "",
            }
        )
    return out


# ---------------------------------------------------------------------------------------------------- checks


def _number(label: str) -> str | None:
    m = re.search(r"(?<![A-Za-z])[A-Z]?\.?\d+(?:\.\d+)*", label or "")
    return m[0] if m else None


def _slices(text: str, start: int, end: int, number: str) -> bool:
    piece = text[start:end]
    if re.search(rf"(?<![\w.]){re.escape(number)}(?![\d.]\d|\d)", piece):
        return True
    if number.isdigit():  # "Figs. 1-3" mentions Figure 2
        n = int(number)
        return any(int(a) <= n <= int(b) for a, b in re.findall(r"(\d+)\s*[-–—]\s*(\d+)", piece))
    return False


def _match(src: list[dict], comps: list[dict]) -> list[tuple[dict, dict | None]]:
    by_id = {c["id"]: c for c in comps}
    used = set()
    pairs: list[tuple[dict, dict | None]] = []
    for s in src:
        c = by_id.get(s["key"]) if s["key"] else None
        if c is not None and c["kind"] == s["kind"] and id(c) not in used:
            used.add(id(c))
        else:
            c = None
        pairs.append((s, c))
    left = {k: [c for c in comps if c["kind"] == k and id(c) not in used] for k in KINDS}
    return [(s, c if c is not None else (left[s["kind"]].pop(0) if left[s["kind"]] else None)) for s, c in pairs]


def check(fmt: str, path: Path, src: list[dict], rec: dict, extra: dict) -> dict:
    comps, text = rec.get("components") or [], rec.get("text") or ""
    name = path.name if path.name != "main.tex" else f"{path.parent.name}/{path.name}"
    row = {"format": fmt, "file": name, "source": {}, "found": {}, **extra}
    for k in KINDS:
        row["source"][k] = sum(s["kind"] == k for s in src)
        row["found"][k] = sum(c["kind"] == k for c in comps)
    labels = [0, 0]
    captions = [0, 0]
    mentioned = [0, 0]
    problems: list[str] = []
    for s, c in _match(src, comps):
        name = s["key"] or s["kind"]
        if c is None:
            problems.append(f"missing {s['kind']} {name}")
            continue
        if s.get("label") or s.get("wants_label"):
            labels[1] += 1
            want = _number(s.get("label", "")) if s.get("label") else None
            ok = bool(c["label"]) and (want is None or want in c["label"])
            labels[0] += ok
            if not ok:
                problems.append(f"label {c['id']}: {c['label']!r} (source {s.get('label', '')!r})")
        if s["has_caption"] and s["kind"] != "equation":
            captions[1] += 1
            captions[0] += bool(c["caption"])
            if not c["caption"]:
                problems.append(f"no caption {c['id']} {c['label']!r}")
        if s["refs"]:
            mentioned[1] += 1
            mentioned[0] += bool(c["mentions"])
            if not c["mentions"]:
                problems.append(f"not mentioned {c['id']} {c['label']!r} (source refs {s['refs']})")
    sliced = [0, 0]
    for c in comps:
        number = _number(c["label"])
        for m in c["mentions"]:
            sliced[1] += 1
            ok = bool(number) and _slices(text, m["start"], m["end"], number)
            sliced[0] += ok
            if not ok:
                problems.append(f"mention of {c['id']} {c['label']!r} at {m['start']}:{m['end']} lacks its number")
    extras = len(comps) - sum(1 for _, c in _match(src, comps) if c is not None)
    if extras > 0 and fmt != "html":  # HTML: a publisher's div.figure and the equations are beyond <figure>/<table>
        problems.append(f"{extras} record components with no source component")
    row.update(
        labels=labels,
        captions=captions,
        mentioned=mentioned,
        mentions_slice=sliced,
        mentions=sum(len(c["mentions"]) for c in comps),
        source_refs=sum(s["refs"] for s in src),
        sub_article=sum(s["where"] == "sub-article" for s in src),
        problems=problems,
    )
    return row


def _kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith((".xml", ".nxml")):
        return "jats"
    if name.endswith((".tex", ".gz", ".tgz", ".tar")):
        return "latex"
    if name.endswith((".html", ".htm")):
        return "html"
    return None


def measure(path: Path) -> dict | None:
    fmt = _kind_of(path)
    extra: dict = {}
    if fmt == "jats":
        src = jats_source(path)
    elif fmt == "latex":
        got = latex_source(path)
        src = got and got["components"]
        src = src if got else None
    elif fmt == "html":
        src = html_source(path)
    else:
        return None
    if src is None:
        return None
    t = time.perf_counter()
    records = [r for r in read_file(path) if r.get("text")]
    if not records:
        return {"format": fmt, "file": path.name, "error": "no record"}
    row = check(fmt, path, src, records[0], extra)
    row["seconds"] = round(time.perf_counter() - t, 2)
    return row


def _fmt(pair) -> str:
    return f"{pair[0]}/{pair[1]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--problems", action="store_true", help="list each file's problems (ids and labels only)")
    args = ap.parse_args()
    paths = sorted({p for f in args.folders for p in ([f] if f.is_file() else f.rglob("*")) if p.is_file()})
    rows = []
    for p in paths:
        row = measure(p)
        if row is not None:
            rows.append(row)
    head = f"{'format':6} {'file':34} {'tables':>7} {'figures':>7} {'equations':>9} {'labels':>7} {'capts':>7} "
    print(head + f"{'mentd':>7} {'slices':>9}")
    totals: dict[str, dict] = {}
    for r in rows:
        if "error" in r:
            print(f"{r['format']:6} {r['file'][:34]:34} {r['error']}")
            continue
        kinds = [f"{r['found'][k]}/{r['source'][k]}" for k in KINDS]
        print(
            f"{r['format']:6} {r['file'][:34]:34} {kinds[0]:>7} {kinds[1]:>7} {kinds[2]:>9} {_fmt(r['labels']):>7} "
            f"{_fmt(r['captions']):>7} {_fmt(r['mentioned']):>7} {_fmt(r['mentions_slice']):>9}"
        )
        if args.problems:
            for line in r["problems"]:
                print("        " + line)
        t = totals.setdefault(r["format"], Counter())
        t["files"] += 1
        for k in KINDS:
            t[f"source_{k}"] += r["source"][k]
            t[f"found_{k}"] += min(r["found"][k], r["source"][k])
            t[f"extra_{k}"] += max(r["found"][k] - r["source"][k], 0)
        for key in ("labels", "captions", "mentioned", "mentions_slice"):
            t[f"{key}_ok"] += r[key][0]
            t[f"{key}_all"] += r[key][1]
        t["files_clean"] += not r["problems"]
    print("\ntotals (found of source; labels, captions, mentioned: ok of expected; slices: mentions slicing right)")
    for fmt, t in totals.items():
        kinds = ", ".join(f"{t[f'found_{k}']} of {t[f'source_{k}']} {k}s" for k in KINDS)
        extra = sum(t[f"extra_{k}"] for k in KINDS)
        print(
            f"  {fmt}: {t['files']} files ({t['files_clean']} without a problem); {kinds} (+{extra} extra); labels "
            f"{t['labels_ok']}/{t['labels_all']}, captions {t['captions_ok']}/{t['captions_all']}, mentioned "
            f"{t['mentioned_ok']}/{t['mentioned_all']}, mentions slicing {t['mentions_slice_ok']}/"
            f"{t['mentions_slice_all']}"
        )
    if args.json:
        args.json.write_text(json.dumps({"files": rows, "totals": totals}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
