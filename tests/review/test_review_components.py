"""The review page and a pair asked from a table, an equation or a figure: the component is shown beside the pair,
the text's mentions of it are flagged, and the queue filters by what a pair was asked from."""

from __future__ import annotations

from starlette.testclient import TestClient

from sciqag_dataset.review.app import create_app
from sciqag_dataset.review.session import ReviewSession, passage, shown_component

H = {"X-Review-Token": "t0ken"}


def test_a_mention_inside_evidence_is_flagged_and_the_segments_rebuild_the_text():
    text = "We heated it. Table 2 lists the rates at 300 K. Nothing else."
    at = text.index("Table 2")
    segs = passage(
        text, ["Table 2 lists the rates at 300 K."], [{"start": at, "end": at + 7}, {"start": 99, "end": 120}]
    )
    assert "".join(s["text"] for s in segs) == text
    assert [s["text"] for s in segs if s.get("mention")] == ["Table 2"]  # a mention beyond the text is ignored
    assert "".join(s["text"] for s in segs if s["mark"]) == "Table 2 lists the rates at 300 K."
    assert [s["text"] for s in passage(text, [])] == [text]  # no evidence, no mention: one plain segment


def test_a_component_is_shown_only_for_its_own_id_and_kind():
    paper = {"components": [{"kind": "figure", "label": "Fig. 1"}, {"id": "T1", "kind": "figure", "label": "Fig. 2"}]}
    # no id recorded, or an id naming a component of another kind: never some other component
    assert shown_component(paper, {"kind": "table"}) == {"id": None, "kind": "table", "missing": True}
    assert shown_component(paper, {"kind": "table", "component_id": "T1"})["missing"]
    assert shown_component(paper, {"kind": "figure", "component_id": "T1"})["label"] == "Fig. 2"
    assert shown_component(paper, "table") is None and shown_component(paper, {"kind": "prose"}) is None
    # a mention without its offsets is skipped, not a server error
    assert passage("Table 1 here.", [], [{"start": 0}, {"start": 0, "end": 7}])[0] == {
        "text": "Table 1",
        "mark": False,
        "mention": True,
    }


def _client(work) -> TestClient:
    session = ReviewSession(work, work / "reviews.jsonl")
    return TestClient(create_app(session, "t0ken"), base_url="http://127.0.0.1:9")


def _first(client, asked_from: str) -> dict:
    i = client.get(f"/api/find?reviewer=ann&from=0&step=1&asked_from={asked_from}", headers=H).json()["i"]
    assert i is not None, asked_from
    return client.get(f"/api/pair?reviewer=ann&i={i}", headers=H).json()


def test_a_table_pair_shows_its_table_and_where_the_text_mentions_it(grounded_review_work):
    client = _client(grounded_review_work)
    pair = _first(client, "table")
    assert pair["question"].startswith("How much water does the zeolite take up")
    c = pair["component"]
    assert (c["kind"], c["label"], c["header_rows"]) == ("table", "Table 1", 1)
    assert c["cells"][1] == ["20", "0.21"] and c["caption"].startswith("Water uptake")
    assert [s["text"] for s in pair["passage"] if s.get("mention")] == ["Table 1"]
    assert pair["asked_from"] == ["prose", "table", "equation", "figure"]

    eq = _first(client, "equation")["component"]
    assert eq["content_format"] == "latex" and eq["content"].startswith("q(T) =")
    figure = _first(client, "figure")["component"]  # a component the paper record does not have
    assert figure == {"id": "F9", "kind": "figure", "missing": True}
    prose = _first(client, "prose")
    assert prose["component"] is None and not any(s.get("mention") for s in prose["passage"])


def test_the_filter_walks_only_the_pairs_asked_from_that_kind(grounded_review_work):
    client = _client(grounded_review_work)
    kinds = []
    i = -1
    while (
        i := client.get(f"/api/find?reviewer=ann&from={i + 1}&step=1&asked_from=prose", headers=H).json()["i"]
    ) is not None:
        kinds.append(client.get(f"/api/pair?reviewer=ann&i={i}", headers=H).json()["component"])
    # 5 catalyst pairs (no grounding recorded: asked from the text), a zeolite pair recorded as prose and one not
    assert kinds == [None] * 7
    assert client.get("/api/find?reviewer=ann&from=0&step=1&asked_from=slides", headers=H).status_code == 400
