"""Ingest quality on real papers: a folder of files and a manifest, scored per format.

    python bench/ingest_quality.py DIR                 # score DIR against DIR/manifest.json
    python bench/ingest_quality.py DIR --draft         # add draft entries for files the manifest lacks
    python bench/ingest_quality.py DIR --pdf-backend pdfium   # PDFs read through PDFium instead of pdfminer

The papers stay outside the repository (their text is not ours to commit); the manifest sits next to them.
A paper is *usable* when all of these hold (issue 27's definition):

- title: the record's title equals the expected one (case, spacing and punctuation aside);
- doi: the record's DOI equals the expected one (``null``: the paper prints none, and none may be invented);
- phrases: four verbatim body phrases are in the text (the abstract, the first paragraph after it, the middle
  of the body, the end of the last section);
- clean: no ``absent`` string (a reference entry, a caption, a running header the manifest names) is in the
  text, and no paragraph starts like a caption ("Figure 3:") or reads as reference entries;
- body: at least 70 % of ``body`` windows (four words from the inside of each prose line of an independent
  extraction, pypdfium2 for PDF, the XML's paragraphs for JATS) are in the text.

Manifest entry (JSON object keyed by file name)::

    {"title": "...", "doi": "10.1/x" | null, "phrases": [4 strings], "absent": [strings], "body": [strings],
     "broken": false}

``"broken": true`` marks a file that must fail with a clear error (usable = it failed, nothing was stored).
``--draft`` writes a starting point from the independent extraction: every draft must be read and corrected by
hand against the file before the manifest is scored; a draft entry carries ``"draft": true`` and is not scored.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

from sciqag_dataset.builders.ingest import read_file  # noqa: E402

BODY_SHARE = 0.7
_CAPTION_START = re.compile(r"^(?:fig(?:ure)?|table|scheme)\.?\s*\d+[a-z]?\s*[.:|]", re.I)
# "[12] Writer, A. ...", "12. Writer A, ...", "Writer, A. B., and C. Other. 2004."; two or more in one paragraph
_ENTRY = re.compile(
    r"(?:^|\s)(?:\[\d{1,3}\]\s+[A-Z][\w'-]+,?\s+[A-Z]|"
    r"[A-Z][\w'-]+,\s+(?:[A-Z]\.\s*){1,3}(?:,|and)\s[^.]{0,200}?\b(?:19|20)\d\d[a-z]?\b)"
)


def norm(text: str) -> str:
    """Compare words only: NFKC (ligatures), lower case, punctuation and spacing as one space."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return " ".join(re.findall(r"[^\W_]+", text))


def _kind(path: Path) -> str:
    suffix = "".join(path.suffixes[-2:]).lower()
    if path.suffix.lower() == ".pdf":
        return "pdf"
    if path.suffix.lower() in {".nxml", ".xml"}:
        return "jats"
    if path.suffix.lower() in {".html", ".htm"}:
        return "html"
    if path.suffix.lower() in {".tex", ".gz", ".tgz"} or suffix == ".tar.gz":
        return "latex"
    return path.suffix.lower().lstrip(".") or "other"


def score_paper(path: Path, entry: dict) -> dict:
    """The checks of one file: {check: passed} plus what failed, for the report."""
    try:
        records = read_file(path)
    except Exception as exc:  # a bug in a reader is a failed paper here, and named
        records = [{"error": f"{type(exc).__name__}: {exc}"}]
    papers = [r for r in records if "text" in r]
    if entry.get("broken"):
        return {"checks": {"fails clearly": not papers}, "why": [] if not papers else ["a broken file was read"]}
    if not papers:
        err = records[0].get("error") if records else "nothing read"
        return {"checks": {"read": False}, "why": [f"not read: {err}"]}
    rec = papers[0]
    text = norm(rec["text"])
    why = []
    checks = {"title": norm(rec["title"]) == norm(entry["title"])}
    if not checks["title"]:
        why.append(f"title {rec['title']!r}")
    doi = (rec["metadata"].get("doi") or "").lower() or None
    checks["doi"] = doi == ((entry.get("doi") or "").lower() or None)
    if not checks["doi"]:
        why.append(f"doi {doi!r}")
    missing = [p for p in entry["phrases"] if norm(p) not in text]
    checks["phrases"] = not missing
    why += [f"phrase missing: {p!r}" for p in missing]
    leaked = [a for a in entry.get("absent", []) if norm(a) in text]
    paragraphs = [p for _, body in rec["sections"] for p in body.split("\n\n")]
    captions = [p[:60] for p in paragraphs if _CAPTION_START.match(p.strip())]
    entries = [p[:60] for p in paragraphs if len(_ENTRY.findall(p)) >= 2]
    checks["clean"] = not (leaked or captions or entries)
    why += [f"leaked: {a!r}" for a in leaked] + [f"caption: {c!r}" for c in captions]
    why += [f"reference entries: {e!r}" for e in entries]
    body = entry.get("body") or []
    share = sum(norm(b) in text for b in body) / len(body) if body else 1.0
    checks["body"] = share >= BODY_SHARE
    if not checks["body"]:
        why.append(f"body {share:.0%}")
    return {"checks": checks, "why": why}


def score(folder: Path, manifest: dict, verbose: bool = True) -> dict[str, tuple[int, int]]:
    per_format: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fails: Counter = Counter()
    for name, entry in sorted(manifest.items()):
        if entry.get("draft"):
            print(f"skipped (draft, not yet checked by hand): {name}")
            continue
        path = folder / name
        kind = "broken" if entry.get("broken") else entry.get("format") or _kind(path)
        result = score_paper(path, entry)
        ok = all(result["checks"].values())
        per_format[kind][0] += ok
        per_format[kind][1] += 1
        fails.update(k for k, v in result["checks"].items() if not v)
        if verbose:
            print(f"{'usable' if ok else 'NOT   '} {kind:>6} {name}")
            for w in result["why"]:
                print(f"         {w[:150]}")
    print("\n" + "  ".join(f"{k} {u}/{n}" for k, (u, n) in sorted(per_format.items())))
    if fails:
        print("failed checks: " + ", ".join(f"{k} {n}" for k, n in fails.most_common()))
    return {k: (u, n) for k, (u, n) in per_format.items()}


# ---------------------------------------------------------------- drafts (to be corrected by hand)


def _inner(line: str, n: int = 4) -> str | None:
    """n words from the inside of a prose line (its first and last words may be broken or hyphenated)."""
    words = line.split()
    if len(words) < n + 2 or sum(w.isalpha() for w in words) < 0.8 * len(words):
        return None
    mid = words[1 : n + 1] if len(words) < n + 4 else words[2 : n + 2]
    return " ".join(mid) if all(re.fullmatch(r"[A-Za-z][a-z]*,?", w) for w in mid) else None


def _pdf_lines(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        text = "\n".join(p.get_textpage().get_text_range() for p in doc)
    finally:
        doc.close()
    return [ln.strip().replace("\ufffe", "-") for ln in text.splitlines() if ln.strip()]


def _xml_lines(path: Path) -> list[str]:
    from lxml import etree

    root = etree.parse(str(path)).getroot()
    out = []
    for p in root.iter("p"):
        if any(a.tag in {"fig", "table-wrap", "ref-list", "back", "caption", "fn"} for a in p.iterancestors()):
            continue
        text = " ".join("".join(p.itertext()).split())
        out += [" ".join(text.split()[k : k + 12]) for k in range(0, len(text.split()), 12)]
    return out


def _tex_lines(path: Path) -> list[str]:
    """Prose lines of an archive's .tex files: no command, comment, math or table cell on them."""
    import tarfile

    out = []
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".tex") and "old" not in member.name:
                text = tar.extractfile(member).read().decode("utf-8", "replace")
                for ln in text.splitlines():
                    if ln.strip() and not re.search(r"[\\%$&{}~]", ln):
                        words = ln.split()
                        out += [" ".join(words[k : k + 12]) for k in range(0, len(words), 12)]
    return out


def draft(path: Path) -> dict:
    kind = _kind(path)
    reader = {"pdf": _pdf_lines, "jats": _xml_lines, "latex": _tex_lines}.get(kind)
    lines = reader(path) if reader else []
    low = [ln.lower() for ln in lines]
    refs = next((k for k, ln in enumerate(low) if re.fullmatch(r"(?:\d+\.?\s*)?references|bibliography", ln)), None)
    body = lines[:refs] if refs else lines
    windows = [w for w in map(_inner, body) if w]
    phrases = (
        [windows[k] for k in (0, min(8, len(windows) - 1), len(windows) // 2, len(windows) - 2)] if windows else []
    )
    captions = [_inner(ln[12:]) for ln in lines if _CAPTION_START.match(ln)]
    refline = [_inner(ln, 3) for ln in lines[refs + 1 : refs + 6]] if refs else []
    return {
        "draft": True,
        "format": kind,
        "title": lines[0] if lines else "",
        "doi": None,
        "phrases": phrases,
        "absent": [a for a in captions[:2] + refline[:2] if a],
        "body": windows[:: max(1, len(windows) // 60)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--manifest", type=Path, help="default: FOLDER/manifest.json")
    ap.add_argument("--draft", action="store_true", help="add draft entries for files the manifest lacks")
    ap.add_argument("-q", "--quiet", action="store_true", help="the per-format line only")
    ap.add_argument("--pdf-backend", choices=["pdfplumber", "pdfium"], help="the PDF reader's character source")
    args = ap.parse_args()
    if args.pdf_backend:
        from sciqag_dataset.builders.ingest import pdf

        pdf.BACKEND = args.pdf_backend
    path = args.manifest or args.folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if args.draft:
        for f in sorted(args.folder.iterdir()):
            if f.name != path.name and f.name not in manifest and f.is_file():
                manifest[f.name] = draft(f)
        path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"{path}: {sum(bool(e.get('draft')) for e in manifest.values())} draft entries to check by hand")
        return
    if not manifest:
        sys.exit(f"no manifest at {path}: write one (see --draft)")
    score(args.folder, manifest, verbose=not args.quiet)


if __name__ == "__main__":
    main()
