"""PDFs through a GROBID server. GROBID cannot run here (a Java service): a FAKE GROBID, a loopback HTTP
server that checks the request as GROBID's API takes it and answers with a recorded TEI reply
(tests/fixtures/grobid/reply.tei.xml), or with 503 while "busy"."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest
from pdf_samples import DOI, make_paper_pdf

from sciqag_dataset.builders.ingest import run_ingest
from sciqag_dataset.cli import main
from sciqag_dataset.core.jsonl import read_jsonl

TEI = (Path(__file__).parents[1] / "fixtures" / "grobid" / "reply.tei.xml").read_bytes()


class FakeGrobid:
    """FAKE GROBID: POST /api/processFulltextDocument with a multipart "input" PDF -> the recorded TEI."""

    def __init__(self, busy: int = 0):
        self.requests: list[bytes] = []
        self.busy = busy
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append(body)
                ok = (
                    self.path == "/api/processFulltextDocument"
                    and b'name="input"' in body
                    and b"%PDF-" in body
                    and "multipart/form-data" in self.headers["Content-Type"]
                )
                if fake.busy:
                    fake.busy -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "application/xml")
                self.end_headers()
                self.wfile.write(TEI if ok else b"bad request")

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()  # refused from now on, as a server that is down


@pytest.fixture
def grobid():
    server = FakeGrobid()
    yield server
    server.close()


def test_a_pdf_through_grobid_becomes_a_record(tmp_path, grobid):
    (tmp_path / "papers").mkdir()
    make_paper_pdf(tmp_path / "papers" / "paper.pdf")
    assert (
        main(
            [
                "ingest",
                str(tmp_path / "papers"),
                "-o",
                str(tmp_path / "w"),
                "--pdf-backend",
                "grobid",
                "--grobid-url",
                grobid.url,
            ]
        )
        == 0
    )
    [rec] = read_jsonl(tmp_path / "w" / "papers.jsonl")
    assert len(grobid.requests) == 1
    assert rec["title"] == "Oxygen Vacancies Control the Band Gap of Sputtered Zinc Oxide Films"
    assert rec["metadata"]["doi"] == DOI and rec["metadata"]["authors"] == ["Ada Quill", "Bo Renner"]
    assert [s["heading"] for s in rec["sections"]] == [
        "Abstract",
        "Introduction",
        "Results",
        "Appendix: Fitting details",
    ]
    text = rec["text"]
    assert "change their gap by up to 0.2 eV." in text  # the bibliographic references gone, the sentence whole
    assert "Eg(t) = Eg0" in text and "Fig. 1" in text  # formulas and figure references kept as text
    assert "Transmission spectra" not in text and "cited work" not in text
    q = rec["ingest"]
    assert q["extractor"] == "pdf/grobid" and q["references_dropped"] == 2 and q["has_abstract"]


def test_a_busy_grobid_is_asked_again_and_a_dead_one_fails_the_paper_not_the_run(tmp_path):
    busy = FakeGrobid(busy=2)
    papers = tmp_path / "papers"
    papers.mkdir()
    make_paper_pdf(papers / "paper.pdf")
    (papers / "note.txt").write_text("A Plain Paper\n\nRead without GROBID at all.\n", encoding="utf-8")
    try:
        assert run_ingest([papers], tmp_path / "w", grobid_url=busy.url).counts["ok"] == 2
        assert len(busy.requests) == 3  # two 503s, then the TEI
    finally:
        busy.close()
    make_paper_pdf(papers / "second.pdf", doi="10.5555/imag.2031.043")
    summary = run_ingest([papers], tmp_path / "w2", grobid_url=busy.url)  # nothing listens there now
    assert summary.counts["ok"] == 1 and summary.counts["failed"] == 2  # the second fails at once
    report = json.loads((tmp_path / "w2" / "ingest_report.json").read_text())
    assert "cannot be reached" in report["failures"][0]["error"]
    assert main(["ingest", str(papers), "-o", str(tmp_path / "w3"), "--pdf-backend", "grobid"]) == 2
