"""Papers from and the publish folder to fsspec URLs, and ingest spread over ranks.

Real parts: fsspec's in-memory filesystem (an object store's semantics: no folders, whole-file writes) for the
in-process tests, and `datasets` reading the copied publish from it; loopback HTTP servers for hosts that
redirect, trickle, fall silent or never end; the HTTP path across processes is in test_scale.py (a real HTTP
file server read by datatrove's ranks).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import datasets
import fsspec
import pytest
import yaml
from helpers import read_jsonl
from published import published_folder

from sciqag_dataset.builders.ingest import run_ingest
from sciqag_dataset.builders.ingest.files import iter_remote_file
from sciqag_dataset.builders.ingest.ranks import slice_path
from sciqag_dataset.cli import main
from sciqag_dataset.config.config_file import Config
from sciqag_dataset.core import remote
from sciqag_dataset.core.errors import UserError
from sciqag_dataset.orchestration import pipeline

SAMPLES = Path(pipeline.sample_papers()[0])


def memory_folder(name: str, files: dict[str, bytes]) -> str:
    fs = fsspec.filesystem("memory")
    for rel, data in files.items():
        fs.pipe(f"/{name}/{rel}", data)
    return f"memory://{name}"


def sample_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in SAMPLES.iterdir() if p.is_file()}


def test_papers_are_read_from_an_fsspec_url(tmp_path):
    url = memory_folder(
        tmp_path.name, {**sample_files(), ".cache/x.txt": b"Hidden\n\nnot a paper", "sub/broken.pdf": b"%PDF-1.4 cut"}
    )
    summary = run_ingest([url], tmp_path / "work")
    assert summary.counts["ok"] == 5 and summary.counts["failed"] == 1
    papers = read_jsonl(tmp_path / "work" / "papers.jsonl")
    assert sorted(p["source_path"] for p in papers) == sorted(
        f"memory:///{tmp_path.name}/{name}" for name in sample_files() if name != "README.md"
    )
    # the same records as from the local folder, but for where they came from
    local = tmp_path / "local"
    run_ingest([str(SAMPLES)], local)
    strip = lambda recs: sorted((r["id"], r["text"], r["title"]) for r in recs)  # noqa: E731
    assert strip(papers) == strip(read_jsonl(local / "papers.jsonl"))
    report = json.loads((tmp_path / "work" / "ingest_report.json").read_text())
    assert report["failures"][0]["path"] == f"memory:///{tmp_path.name}/sub/broken.pdf"
    assert "sciqag-input-" not in json.dumps(report)  # the temporary copy's path is never what is reported
    assert [w["path"].rsplit("/", 1)[1] for w in report["warnings"]] == ["README.md"]
    # a rerun reads and stores nothing new; a file that changed is stored again
    assert run_ingest([url], tmp_path / "work").counts["skipped"] == 5
    fsspec.filesystem("memory").pipe(
        f"/{tmp_path.name}/sodium_ion_cathode.md",
        sample_files()["sodium_ion_cathode.md"] + b"\n\nA new closing paragraph.\n",
    )
    assert run_ingest([url], tmp_path / "work").counts["updated"] == 1


def test_a_missing_url_fails_alone_and_a_url_with_credentials_is_refused(tmp_path):
    url = memory_folder(tmp_path.name, sample_files())
    summary = run_ingest([f"memory://{tmp_path.name}-missing", url], tmp_path / "w")
    assert summary.counts["ok"] == 5 and summary.counts["failed"] == 1
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    assert "cannot list" in report["failures"][0]["error"]
    for bad in ("s3://AKIA:secret@bucket/papers", "https://host/papers.zip?X-Amz-Signature=secret"):
        with pytest.raises(UserError, match="user:password part or a query string"):
            run_ingest([bad], tmp_path / "w2")
        assert not (tmp_path / "w2" / "papers.jsonl").exists()
    with pytest.raises(UserError, match="user:password part or a query string"):
        remote.check_target("s3://AKIA:secret@bucket/out")


def test_publish_copies_the_folder_to_a_url_and_replaces_only_its_own_files(tmp_path, capsys):
    folder = published_folder(tmp_path)  # a work dir and its local publish
    work = tmp_path / "work"
    cfg = Config(work_dir=str(work))
    cfg.publish.train = cfg.publish.validation = 0.0
    cfg.publish.configs = ["seed", "evaluated"]
    cfg.publish.output_dir = url = f"memory://{tmp_path.name}/published"
    fs = fsspec.filesystem("memory")
    out, copies = pipeline.publish(cfg)
    assert copies == [url] and out == work / "dataset"  # built in the work dir, then copied
    card = fs.cat(f"/{tmp_path.name}/published/README.md").decode()
    named = [f["path"] for c in yaml.safe_load(card.split("---")[1])["configs"] for f in c["data_files"]]
    assert sorted(named) == sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet"))
    seed = datasets.load_dataset("parquet", data_files={"test": f"{url}/{named[0]}"})["test"]
    assert len(seed) == len(datasets.load_dataset(str(folder), named[0].split("/")[0])["test"])
    # republished with other data: the old data files go, a file someone else put there stays
    fs.pipe(f"/{tmp_path.name}/published/NOTES.txt", b"theirs")
    cfg.publish.configs = ["seed"]
    pipeline.publish(cfg)
    now = {p.rsplit("/published/", 1)[1] for p in fs.find(f"/{tmp_path.name}/published")}
    assert "NOTES.txt" in now and not any(p.startswith("evaluated/") for p in now)
    # a folder holding files and no publish of ours is refused before any work
    memory_folder(f"{tmp_path.name}-theirs", {"data.csv": b"a,b\n"})
    code = main(["publish", str(work), "--configs", "seed", "-o", f"memory://{tmp_path.name}-theirs"])
    assert code != 0 and "holds no earlier publish (data.csv)" in capsys.readouterr().err
    assert fs.cat(f"/{tmp_path.name}-theirs/data.csv") == b"a,b\n"
    assert fs.find(f"/{tmp_path.name}-theirs") == [f"/{tmp_path.name}-theirs/data.csv"]


def inputs(tmp_path: Path) -> Path:
    """The sample papers, a copy under another name (a duplicate), a broken PDF and a note."""
    folder = tmp_path / "papers"
    shutil.copytree(SAMPLES, folder)
    shutil.copy(folder / "sodium_ion_cathode.md", folder / "zz_copy.md")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 cut")
    return folder


def test_ingest_on_ranks_stores_what_a_plain_ingest_stores(tmp_path):
    folder = inputs(tmp_path)
    plain, ranked = tmp_path / "plain", tmp_path / "ranked"
    run_ingest([str(folder)], plain)
    parsed = [run_ingest([str(folder)], ranked, shard=(i, 3)).counts["parsed"] for i in range(3)]
    assert sum(parsed) == 7 and not (ranked / "papers.jsonl").exists()  # ranks parse; the merge stores
    run_ingest([str(folder)], ranked, parsed_by=3)
    assert (ranked / "papers.jsonl").read_bytes() == (plain / "papers.jsonl").read_bytes()
    reports = [json.loads((w / "ingest_report.json").read_text()) for w in (plain, ranked)]
    for report in reports:
        report.pop("papers")
    assert reports[0] == reports[1] and reports[0]["duplicates"] and reports[0]["failures"]


def test_the_merge_stores_what_the_ranks_parsed_without_reading_the_files_again(tmp_path):
    folder = inputs(tmp_path)
    work = tmp_path / "w"
    for i in range(2):
        run_ingest([str(folder)], work, shard=(i, 2))
    # the file changes after its rank read it: the merge stores the rank's parse (it does not read the file)
    (folder / "new_title.txt").write_text("Added Later\n\nA paper no rank has seen.\n", encoding="utf-8")
    text = (folder / "thermoelectric_skutterudite.txt").read_text(encoding="utf-8")
    (folder / "thermoelectric_skutterudite.txt").write_text(text + "\n\nA closing line added later.\n")
    run_ingest([str(folder)], work, parsed_by=2)
    stored = {r["source_path"].rsplit("/", 1)[1]: r for r in read_jsonl(work / "papers.jsonl")}
    assert "added later" not in stored["thermoelectric_skutterudite.txt"]["text"]
    assert stored["new_title.txt"]["title"] == "Added Later"  # no rank parsed it: the merge reads it


def test_a_killed_rank_parses_only_its_unfinished_files_again(tmp_path):
    folder = inputs(tmp_path)
    work = tmp_path / "w"
    first = run_ingest([str(folder)], work, shard=(0, 1)).counts["parsed"]
    path = slice_path(work, 0, 1)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    starts = [k for k, line in enumerate(lines) if '"start": true' in line]
    # as a kill leaves it: the last file begun and not done, its last line torn
    path.write_text("".join(lines[: starts[-1] + 2]) + lines[starts[-1] + 2][:20], encoding="utf-8")
    again = run_ingest([str(folder)], work, shard=(0, 1)).counts
    # the file cut off, and broken.pdf: a failure is never trusted (it may have been a dead host)
    assert again["parsed"] == 2 and again["skipped"] == first - 2
    (folder / "zz_copy.md").write_text("# A different paper\n\nIts own text about zeolites.\n", encoding="utf-8")
    (folder / "new.txt").write_text("A new paper\n\nIts text about garnets.\n", encoding="utf-8")
    assert run_ingest([str(folder)], work, shard=(0, 1)).counts["parsed"] == 3  # changed, new, and the failure
    (folder / "later.txt").write_text("A later paper\n\nAdded after the ranks ran.\n", encoding="utf-8")
    summary = run_ingest([str(folder)], work, parsed_by=1)  # a file no rank parsed: the merge reads it
    ids = {r["title"] for r in read_jsonl(work / "papers.jsonl")}
    assert {"A different paper", "A new paper", "A later paper"} <= ids and summary.counts["ok"] == 8


def test_credentials_are_refused_in_any_link_of_a_url_before_anything_is_written(tmp_path, capsys):
    for bad in ("simplecache::s3://AKIA:secret@bucket/papers", "zip://a.txt::https://u:secret@host/p.zip"):
        assert main(["ingest", bad, "-o", str(tmp_path / "w")]) == 2
        assert "user:password part or a query string" in capsys.readouterr().err
        assert not (tmp_path / "w").exists()  # not even the config, which would hold it
    assert main(["ingest", str(SAMPLES), "-o", "s3://bucket/work"]) == 2
    assert "the work dir must be a folder" in capsys.readouterr().err


def test_an_error_never_shows_a_signed_url(tmp_path):
    import http.server
    import threading

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path.startswith("/paper.txt"):
                self.send_response(302)
                self.send_header("Location", "/store/paper.txt?X-Amz-Signature=SIGNATURE-SECRET&X-Amz-Credential=AKIA")
                self.end_headers()
            else:
                self.send_response(403)
                self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        run_ingest([f"http://127.0.0.1:{httpd.server_address[1]}/paper.txt"], tmp_path / "w")
    finally:
        httpd.shutdown()
    written = (tmp_path / "w" / "ingest_report.json").read_text()
    assert json.loads(written)["failures"] and "SIGNATURE-SECRET" not in written and "AKIA" not in written


def test_one_page_over_http_is_a_paper_not_a_folder_and_names_are_stable(tmp_path, paper_host):
    page = f"{paper_host[0]}/papers/perovskite_thin_films.md"
    summary = run_ingest([page], tmp_path / "w")
    assert summary.counts["ok"] == 1 and not summary.counts["failed"]
    assert read_jsonl(tmp_path / "w" / "papers.jsonl")[0]["source_path"] == page
    # in memory: a file named alone and found in its folder is one input, under one name; hidden files and
    # folders stay out of globs as of folder walks
    url = memory_folder(
        tmp_path.name,
        {
            **sample_files(),
            ".hidden.txt": b"Hidden\n\nnot a paper at all",
            ".cache/b.md": b"# Cached\n\nnot a paper either",
        },
    )
    summary = run_ingest([url, f"{url}/thermoelectric_skutterudite.txt"], tmp_path / "w2")
    assert summary.counts["ok"] == 5 and not summary.counts["duplicate"]
    assert remote.list_files(f"{url}/*.txt") == [f"memory:///{tmp_path.name}/thermoelectric_skutterudite.txt"]
    assert not any("/." in p for p in remote.list_files(f"{url}/**"))


def test_a_work_dir_inside_the_input_folder_is_not_read_as_papers(tmp_path):
    folder = tmp_path / "papers"
    shutil.copytree(SAMPLES, folder)
    work = folder / "work"
    assert main(["ingest", str(folder), "-o", str(work)]) == 0  # writes work/config.yaml
    assert main(["ingest", str(folder), "-o", str(work)]) == 0
    report = json.loads((work / "ingest_report.json").read_text())
    assert not report["failures"] and report["counts"]["skipped"] == 5


@contextmanager
def host(handler):
    """A real loopback HTTP server with ``handler``, in a thread; yields its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


class Unhurried(http.server.BaseHTTPRequestHandler):
    """/good.txt at once; /trickle.txt a byte each 50 ms (10 s in all); /silent.txt its headers, then nothing
    for 10 s; /endless.txt a body without a length that runs to 64 MB (without end, as far as a limit of a
    few MB can tell; finite so that a client without a limit stops too)."""

    def do_GET(self):  # noqa: N802 - http.server's name
        name = self.path.lstrip("/")
        body = (
            b"A Trickled Paper\n\n" + b"Perovskite films were annealed at 100 C for ten minutes. " * 3
            if name != "good.txt"
            else SAMPLES.joinpath("sodium_ion_cathode.md").read_bytes()
        )
        self.send_response(200)
        if name != "endless.txt":
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            if name == "trickle.txt":
                for i in range(len(body)):
                    self.wfile.write(body[i : i + 1])
                    time.sleep(10 / len(body))
            elif name == "silent.txt":
                time.sleep(10)
                self.wfile.write(body)
            elif name == "endless.txt":
                for _ in range(1024):
                    self.wfile.write(b"x" * 2**16)
            else:
                self.wfile.write(body)
        except OSError:  # the client gave up: what the test wants
            pass

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


def test_a_download_counts_in_the_file_time_limit_and_the_other_files_are_read(tmp_path):
    with host(Unhurried) as url:
        start = time.monotonic()
        summary = run_ingest(
            [f"{url}/trickle.txt", f"{url}/silent.txt", f"{url}/good.txt"], tmp_path / "w", file_timeout=2
        )
        took = time.monotonic() - start
        # in a thread no alarm can be set: the copy's own check on each chunk stops a trickle all the same
        items: list[dict] = []
        worker = threading.Thread(target=lambda: items.extend(iter_remote_file(f"{url}/trickle.txt", timeout=2)))
        start_thread = time.monotonic()
        worker.start()
        worker.join()
        took_thread = time.monotonic() - start_thread
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    errors = {f["path"].rsplit("/", 1)[1]: f["error"] for f in report["failures"]}
    assert set(errors) == {"trickle.txt", "silent.txt"} and summary.counts["ok"] == 1
    for error in [*errors.values(), items[0]["error"]]:
        assert error.startswith("download gave up after 2 s (ingest.file_timeout)") and "\n" not in error
    assert took < 10 and took_thread < 5  # 2 s a file, not the 10 s each takes in whole
    assert read_jsonl(tmp_path / "w" / "papers.jsonl")[0]["source_path"] == f"{url}/good.txt"


def test_a_reply_without_end_stops_at_the_size_limit_and_leaves_no_copy(tmp_path):
    temp = tmp_path / "tmp"  # the CLI's own temporary folder: nothing else writes there
    temp.mkdir()
    with host(Unhurried) as url:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "sciqag_dataset.cli",
                "ingest",
                f"{url}/endless.txt",
                f"{url}/good.txt",
                "-o",
                str(tmp_path / "w"),
                "--max-file-mb",
                "0.5",
            ],
            env={**os.environ, "TMPDIR": str(temp)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1, proc.stderr  # some papers failed
    report = json.loads((tmp_path / "w" / "ingest_report.json").read_text())
    assert [(f["path"], f["error"]) for f in report["failures"]] == [
        (
            f"{url}/endless.txt",
            "download exceeds ingest.max_file_mb=0.5: far larger than a paper, or a reply without end",
        )
    ]
    assert report["counts"]["ok"] == 1
    assert not list(temp.glob("sciqag-input-*"))  # the partial copy is gone with its folder
