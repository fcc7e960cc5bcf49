"""Ingest quality on real papers: a folder of files and a manifest, scored per format.

    python bench/ingest_quality.py DIR                 # score DIR against DIR/manifest.json
    python bench/ingest_quality.py DIR --draft         # add draft entries for files the manifest lacks
    python bench/ingest_quality.py DIR --pdf-backend pdfium   # PDFs read through PDFium instead of pdfminer
    python bench/ingest_quality.py DIR --hash          # rewrite the manifest with its text strings hashed

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

Each string of ``phrases``, ``absent`` and ``body`` may be plain text (a manifest under construction, ``--draft``)
or hashed, so that a committed manifest holds none of the papers' text; both forms may be mixed::

    {"words": N, "sha1": "<hex sha1 of norm(string), UTF-8>", "ends": [len(first word), len(last word)]}

where N is the number of words of ``norm(string)`` and ``ends`` the length in characters of its first and last
word. Every check compares ``norm(string)`` with the normalized record text as a substring, whichever the form:
a hashed string is found among the hashes of the text's runs of N words, whole or with the first word cut to its
last ``ends[0]`` characters and the last word to its first ``ends[1]`` (a substring may start or end inside a
word), so a hashed manifest scores exactly as the plain one. ``--hash`` converts the plain strings of a manifest
in place (draft entries are left as they are); ``title``, ``doi`` and the other fields stay as they are. Failure
lines name a hashed string by its list and index (``phrase missing #2 (7 words)``, ``leaked #0 (11 words)``).

``"broken": true`` marks a file that must fail with a clear error (usable = it failed, nothing was stored).
``--draft`` writes a starting point from the independent extraction: every draft must be read and corrected by
hand against the file before the manifest is scored; a draft entry carries ``"draft": true`` and is not scored.
"""

from __future__ import annotations

import argparse
import hashlib
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


def _sha1(normed: str) -> str:
    return hashlib.sha1(normed.encode("utf-8")).hexdigest()


def hash_string(text: str) -> dict:
    """A manifest string as stored without its text: the sha1 of its norm(), its word count, and the length of its
    first and last word (characters), which the substring match needs (see _Text)."""
    words = norm(text).split()
    return {
        "words": len(words),
        "sha1": _sha1(" ".join(words)),
        "ends": [len(words[0]), len(words[-1])] if words else [0, 0],
    }


def hash_entry(entry: dict) -> dict:
    """The entry with the plain strings of phrases, absent and body hashed; the other fields as they are."""
    out = dict(entry)
    for key in ("phrases", "absent", "body"):
        if key in out:
            out[key] = [hash_string(s) if isinstance(s, str) else s for s in out[key]]
    return out


class _Text:
    """A record's normalized text, in which a manifest string is looked up as ``norm(string) in text``.

    A plain string is looked up as it is. A hashed one is found by hashing the text's runs of N words: first the
    whole words (one set of hashes per N), then, as a substring may begin inside a word and end inside one
    (``"a ex"`` is in ``"data example"``), the runs whose first word is cut to its last ``ends[0]`` characters and
    last word to its first ``ends[1]`` (one set per N and ends; N = 1: every ``ends[0]`` characters of a word).
    The result is the substring test's, for every string.
    """

    def __init__(self, text: str) -> None:
        self.text = norm(text)
        self.words = self.text.split()
        self._runs: dict[tuple, set[str]] = {}

    def _hashes(self, n: int, ends: tuple[int, int] | None) -> set[str]:
        key = (n, ends)
        if key not in self._runs:
            w = self.words
            if ends is None:
                runs = (" ".join(w[k : k + n]) for k in range(len(w) - n + 1))
            elif n == 1:
                runs = (x[i : i + ends[0]] for x in set(w) for i in range(len(x) - ends[0] + 1))
            else:
                a, b = ends
                runs = (
                    " ".join([w[k][-a:], *w[k + 1 : k + n - 1], w[k + n - 1][:b]])
                    for k in range(len(w) - n + 1)
                    if len(w[k]) >= a and len(w[k + n - 1]) >= b
                )
            self._runs[key] = {_sha1(r) for r in runs}
        return self._runs[key]

    def __contains__(self, item: str | dict) -> bool:
        if isinstance(item, str):
            return norm(item) in self.text
        n = item["words"]
        if n == 0:  # "" is in any text
            return True
        return item["sha1"] in self._hashes(n, None) or item["sha1"] in self._hashes(n, tuple(item["ends"]))


def _label(item: str | dict, what: str, k: int) -> str:
    return f"{what}: {item!r}" if isinstance(item, str) else f"{what} #{k} ({item['words']} words)"


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
    text = _Text(rec["text"])
    why = []
    checks = {"title": norm(rec["title"]) == norm(entry["title"])}
    if not checks["title"]:
        why.append(f"title {rec['title']!r}")
    doi = (rec["metadata"].get("doi") or "").lower() or None
    checks["doi"] = doi == ((entry.get("doi") or "").lower() or None)
    if not checks["doi"]:
        why.append(f"doi {doi!r}")
    missing = [_label(p, "phrase missing", k) for k, p in enumerate(entry["phrases"]) if p not in text]
    checks["phrases"] = not missing
    why += missing
    leaked = [_label(a, "leaked", k) for k, a in enumerate(entry.get("absent", [])) if a in text]
    paragraphs = [p for _, body in rec["sections"] for p in body.split("\n\n")]
    captions = [p[:60] for p in paragraphs if _CAPTION_START.match(p.strip())]
    entries = [p[:60] for p in paragraphs if len(_ENTRY.findall(p)) >= 2]
    checks["clean"] = not (leaked or captions or entries)
    why += leaked + [f"caption: {c!r}" for c in captions]
    why += [f"reference entries: {e!r}" for e in entries]
    body = entry.get("body") or []
    share = sum(b in text for b in body) / len(body) if body else 1.0
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


def dump_manifest(manifest: dict) -> str:
    """JSON as the manifest is kept (indent 1), a hashed string on one line."""
    text = json.dumps(manifest, indent=1, ensure_ascii=False)
    one = r'\{\s*"words": (\d+),\s*"sha1": "([0-9a-f]{40})",\s*"ends": \[\s*(\d+),\s*(\d+)\s*\]\s*\}'
    return re.sub(one, r'{"words": \1, "sha1": "\2", "ends": [\3, \4]}', text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--manifest", type=Path, help="default: FOLDER/manifest.json")
    ap.add_argument("--draft", action="store_true", help="add draft entries for files the manifest lacks")
    ap.add_argument("-q", "--quiet", action="store_true", help="the per-format line only")
    ap.add_argument("--pdf-backend", choices=["auto", "layout", "pdfplumber", "pdfium"], help="default: auto")
    ap.add_argument("--hash", action="store_true", help="rewrite the manifest with phrases/absent/body hashed")
    args = ap.parse_args()
    if args.pdf_backend:
        from sciqag_dataset.builders.ingest import pdf

        pdf.BACKEND = args.pdf_backend
    path = args.manifest or args.folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if args.hash:
        if not manifest:
            sys.exit(f"no manifest at {path}")
        hashed = {name: e if e.get("draft") else hash_entry(e) for name, e in manifest.items()}
        path.write_text(dump_manifest(hashed), encoding="utf-8")
        drafts = sum(bool(e.get("draft")) for e in manifest.values())
        print(f"{path}: {len(manifest) - drafts} entries hashed, {drafts} draft entries left plain")
        return
    if args.draft:
        for f in sorted(args.folder.iterdir()):
            if f.name != path.name and f.name not in manifest and f.is_file():
                manifest[f.name] = draft(f)
        path.write_text(dump_manifest(manifest), encoding="utf-8")
        print(f"{path}: {sum(bool(e.get('draft')) for e in manifest.values())} draft entries to check by hand")
        return
    if not manifest:
        sys.exit(f"no manifest at {path}: write one (see --draft)")
    score(args.folder, manifest, verbose=not args.quiet)


if __name__ == "__main__":
    main()
