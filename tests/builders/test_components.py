"""Tables, equations and figures as the paper record's ``components``: the shared record shape, the marks and
their offsets (builders/ingest/components.py). ``components_by_id``, ``mentioned`` and ``no_marks`` serve the
readers' tests too (test_jats_components.py, test_latex_components.py)."""

from __future__ import annotations

import re
from pathlib import Path

import datasets

from sciqag_dataset.builders.ingest.components import (
    component,
    keep_marks,
    markdown_table,
    mention_marks,
    mentioned_as,
    place_marks,
    resolve,
    unmark,
)
from sciqag_dataset.core import schema

FIX = Path(__file__).parents[1] / "fixtures"
JATS = FIX / "components" / "jats_paper.xml"
MARKS = re.compile("[\ue000-\ue002]")


def components_by_id(rec: dict) -> dict[str, dict]:
    return {c["id"]: c for c in rec["components"]}


def mentioned(rec: dict, comp: dict) -> list[str]:
    return [rec["text"][m["start"] : m["end"]] for m in comp["mentions"]]


def no_marks(rec: dict) -> None:
    """Nothing of the readers' marks is left in what the record shows."""
    shown = [rec["text"], rec["title"], *(s["heading"] + s["text"] for s in rec["sections"])]
    for c in rec["components"]:
        shown += [c["caption"], c["content"], c["context_before"], c["context_after"], *map(str, c["cells"])]
    assert not any(MARKS.search(s) for s in shown)


def test_records_without_components_load_with_none():
    old = {"id": "sha-1", "title": "T", "text": "Some text.", "sections": [], "metadata": {"doi": None}}
    row = schema.conform(old, schema.features_for("papers"))
    assert row["components"] == []
    ds = datasets.Dataset.from_list([row], features=schema.features_for("papers"))
    assert ds[0]["components"] == []
    assert "components" in schema.PAPER_COLUMNS and "components" in schema.CONFIG_COLUMNS["papers"]


def test_marks_map_to_offsets_in_the_normalised_text():
    """Offsets survive what normalising does to spaces: collapsed runs, unwrapped lines, dropped invisibles."""
    comps = [component("table", "t1"), component("equation", "e1", content="x")]
    m_open, m_close = mention_marks([0])
    p_open, p_close = place_marks(1)
    marked = [
        f"See   {m_open}Table\n 1{m_close} and\u200b the\nnext.",
        f"Before.\n\n{p_open}$$x$${p_close}\n\n  After   it.",
    ]
    text = "See Table 1 and the next.\n\nBefore.\n\n$$x$$\n\nAfter it."
    warnings = []
    t1, e1 = resolve(comps, marked, text, warnings.append)
    assert not warnings
    assert [text[m["start"] : m["end"]] for m in t1["mentions"]] == ["Table 1"]
    assert (e1["context_before"], e1["context_after"]) == ("Before.", "After it.")
    # a text that is not the marked text's normal form: no offsets at all, and a warning
    lost = resolve(comps, marked, text + " more", warnings.append)
    assert lost[0]["mentions"] == [] and warnings and "left out" in warnings[0]
    assert unmark(marked[0]) == "See   Table\n 1 and\u200b the\nnext."


def test_markdown_tables():
    assert markdown_table([["a|b", "c"], ["1", "2\n3"]], 1) == "| a\\|b | c |\n| --- | --- |\n| 1 | 2 3 |"
    assert markdown_table([["1"], ["2", "3"]], 0) == "|  |  |\n| --- | --- |\n| 1 |  |\n| 2 | 3 |"
    assert markdown_table([], 0) == ""
    made = component("table", "t", cells=[["k", "v"], ["a", "1"]], header_rows=1)
    assert made["content"] == "| k | v |\n| --- | --- |\n| a | 1 |" and made["content_format"] == "markdown"


def test_a_mention_of_a_number_alone_takes_its_word_and_brackets():
    comps = [component("equation", "e3"), component("figure", "f1"), component("figure", "f2")]

    def mark(i: int, shown: str) -> str:
        before, after = mention_marks([i])
        return before + shown + after

    marked = [
        f"By Eq. ({mark(0, '3')}), Figure {mark(1, '1A')} and Figs. 1 and {mark(2, '2')} and ({mark(1, 'Fig. 1')})."
    ]
    text = unmark(marked[0])
    e3, f1, f2 = resolve(comps, marked, text, print)
    assert [text[m["start"] : m["end"]] for m in e3["mentions"]] == ["Eq. (3)"]
    assert [text[m["start"] : m["end"]] for m in f1["mentions"]] == ["Figure 1A", "Fig. 1"]  # a word: as marked
    assert [text[m["start"] : m["end"]] for m in f2["mentions"]] == ["2"]  # "and 2": no word of its own


def test_an_appendix_or_sectioned_number_alone_takes_its_word_and_brackets_too():
    comps = [component("equation", "a1"), component("table", "t2")]
    marked = []
    for i, (before, shown, after) in enumerate([("with Eq. (", "A.1", ")"), ("and Table ", "2.1.3", ".")]):
        start, end = mention_marks([i])
        marked.append(f"{before}{start}{shown}{end}{after}")
    text = " ".join(unmark(m) for m in marked)
    a1, t2 = resolve(comps, [" ".join(marked)], text, print)
    assert [text[m["start"] : m["end"]] for m in a1["mentions"]] == ["Eq. (A.1)"]
    assert [text[m["start"] : m["end"]] for m in t2["mentions"]] == ["Table 2.1.3"]


def test_a_label_is_mentioned_whatever_the_case_of_its_word():
    text = "As equation (3) shows, and Eq. 3 too; see table 2 and TABLE 2, not Table 22 nor Eq. 3.1 or eq 33."
    assert [m[0] for m in re.finditer(mentioned_as("equation", "3"), text)] == ["equation (3)", "Eq. 3"]
    assert [m[0] for m in re.finditer(mentioned_as("table", "2"), text)] == ["table 2", "TABLE 2"]


def test_a_deleting_rule_works_on_the_text_as_if_it_had_no_marks():
    """A citation beside a figure's place: the rule that drops "(\x01)" sees the brackets as adjacent."""
    before, after = place_marks(0)
    drop = lambda t: re.sub(r" ?\(\x01\)", "", t)  # noqa: E731
    marked = f"heat (\x01{before}{after}) flows"
    assert unmark(keep_marks(marked, drop)) == drop(unmark(marked)) == "heat flows"
    assert keep_marks(marked, drop) == f"heat {before}{after}flows"  # before the next character kept
    assert keep_marks("no marks (\x01)", drop) == "no marks"
