"""Every file the project rewrites goes through ``atomic``: a reader sees the old file or the new, never half."""

from __future__ import annotations

import json

import pytest

from sciqag_dataset.core.atomic import replacing, write_json, write_whole


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one(tmp_path):
    path = write_json(tmp_path / "m.json", {"n": 1})
    with pytest.raises(UnicodeEncodeError):
        write_whole(path, "half \ud800")
    with pytest.raises(RuntimeError):
        with replacing(path) as f:
            f.write('{"n": 2')
            raise RuntimeError("killed mid-write")
    assert json.loads(path.read_text()) == {"n": 1} and sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]
    with replacing(path, durable=True) as f:
        f.write("new\n")
        assert path.read_text().startswith("{")  # the old content until the block ends
    assert path.read_text() == "new\n"
