"""The recall (coups) table is verifiable: every row is anchored in the hash chain.

Each test damages a real journal file the way a person with the sqlite3 shell (or a failing disk)
would, then checks that `journal verify --full`, the quick verification and the reads refuse it.
"""

from __future__ import annotations

import json
import random
import sqlite3
import struct

import pytest

from shoe_daemon.journal import FORMAT_VERSION, Journal, JournalCorrupt, Reason, RecallCorrupt

from .helpers import build, shoes, sql
from .test_journal_cli import cli

N_SHOES, PER_SHOE = 2, 30


def result(shoe: int, coup: int) -> dict:
    return {"winner": "banco" if coup % 2 else "punto", "punto": ["9S", "KH"], "banco": ["2C", "3D"],
            "shoe": shoe, "coup": coup}


@pytest.fixture
def jpath(tmp_path):
    """Two shoes of events; each shoe's coups recorded after some of its events."""
    path = tmp_path / "j.sqlite3"
    build(path, shoes(N_SHOES, PER_SHOE))
    with Journal.open(path) as j:
        for shoe in (1, 2):
            for coup in range(1, 8):
                seq = (shoe - 1) * PER_SHOE + 2 + coup * 3
                j.record_coup(f"{shoe}-{coup}", shoe, coup, result(shoe, coup), seq=seq)
    return path


def column(path, coup_id: str, name: str):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT CAST({name} AS BLOB), typeof({name}) FROM coups WHERE coup_id = ?",
                            (coup_id,)).fetchone()
    finally:
        conn.close()


def real(path, coup_id: str, name: str) -> float:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT {name} FROM coups WHERE coup_id = ?", (coup_id,)).fetchone()[0]
    finally:
        conn.close()


def test_intact_recall_verifies_and_reads(jpath):
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "14 recall record(s) verified" in r.stdout
    with Journal.open(jpath, readonly=True) as j:
        assert j.report.ok and j.report.recall_rows == 7          # quick: the current shoe's rows
        assert j.coup("1-3").result["winner"] == "banco"
        assert [c.coup_id for c in j.coups(last=3)] == ["2-5", "2-6", "2-7"]


def test_edited_winner_is_refused_by_verify_and_reads(jpath):
    sql(jpath, "UPDATE coups SET result = replace(result, '\"banco\"', '\"punto\"') WHERE coup_id = '1-3'")
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 1
    assert "coup 1-3" in r.stdout and "recall record fails verification" in r.stdout
    r = cli("verify", "--full", "--json", "--journal", str(jpath))
    assert json.loads(r.stdout)["reason"] == "recall_mismatch"
    with Journal.open(jpath, readonly=True) as j:   # an older shoe: not in the quick window
        with pytest.raises(RecallCorrupt) as err:
            j.coup("1-3")
        assert err.value.coup_id == "1-3" and "recall record fails verification" in str(err.value)
        with pytest.raises(RecallCorrupt):
            j.coups(last=100)
        assert j.coup("1-2").result["winner"] == "punto"       # the other rows still read


def test_edited_row_of_the_current_shoe_stops_the_start(jpath):
    sql(jpath, "UPDATE coups SET result = replace(result, '\"punto\"', '\"tie\"') WHERE coup_id = '2-4'")
    with pytest.raises(JournalCorrupt) as err:
        Journal.open(jpath)
    assert err.value.reason is Reason.RECALL_MISMATCH and "coup 2-4" in str(err.value)


@pytest.mark.parametrize("edit", [
    "UPDATE coups SET seq = seq + 1 WHERE coup_id = '1-5'",                      # moved to another anchor
    "UPDATE coups SET coup = 6 WHERE coup_id = '1-5'",
    "UPDATE coups SET recorded = recorded + 1 WHERE coup_id = '1-5'",
    "UPDATE coups SET checksum = NULL WHERE coup_id = '1-5'",
    "UPDATE coups SET seq = 9999 WHERE coup_id = '1-5'",                          # an anchor that does not exist
    "UPDATE events SET checksum = 'ab' || substr(checksum, 3) WHERE seq = 17",     # the anchor's chain value
])
def test_every_column_is_covered(jpath, edit):
    sql(jpath, edit)
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 1, r.stdout


def test_random_bit_flips_in_recall_rows_are_all_detected(jpath, tmp_path):
    """60 random single-bit flips in the stored values of the coups rows: every one is refused by
    `verify --full` and by the read of that row (the issue found 22 of 60 passing)."""
    rng = random.Random(13)
    pristine = jpath.read_bytes()
    cols = ["coup_id", "shoe", "coup", "result", "seq", "recorded", "checksum"]
    missed = []
    trial = 0
    while trial < 60:
        path = tmp_path / f"flip{trial}.sqlite3"
        path.write_bytes(pristine)
        coup_id = f"{rng.choice((1, 2))}-{rng.randint(1, 7)}"
        col = rng.choice(cols)
        raw, kind = column(path, coup_id, col)
        if kind == "integer":
            value = int(raw) ^ (1 << rng.randrange(0, 20))
            sql(path, f"UPDATE coups SET {col} = ? WHERE coup_id = ?", (value, coup_id))
        elif kind == "real":
            # The exact stored double: its text form (CAST AS BLOB) has 15 digits, and a bit flipped
            # in that rounded value could land back on the stored one (a flaky "missed" flip).
            exact = real(path, coup_id, col)
            bits = struct.unpack(">Q", struct.pack(">d", exact))[0] ^ (1 << rng.randrange(0, 52))
            flipped = struct.unpack(">d", struct.pack(">Q", bits))[0]
            assert flipped != exact
            sql(path, f"UPDATE coups SET {col} = ? WHERE coup_id = ?", (flipped, coup_id))
        else:
            data = bytearray(raw)
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            try:
                sql(path, f"UPDATE coups SET {col} = CAST(? AS TEXT) WHERE coup_id = ?", (bytes(data), coup_id))
            except sqlite3.IntegrityError:
                continue   # the flip made another row's coup id: SQLite itself refuses it
        trial += 1
        with Journal.open(path, readonly=True, verify="none") as j:
            report = j.verify(full=True)
            if report.ok or report.reason is not Reason.RECALL_MISMATCH:
                missed.append((trial, coup_id, col, report.summary()))
                continue
            with pytest.raises(RecallCorrupt):
                j.coups(last=100)
    assert not missed, missed


def test_invalid_utf8_row_is_a_verification_failure_not_a_crash(jpath):
    sql(jpath, "UPDATE coups SET result = CAST(X'7B2277696E6E6572223A22FF227D' AS TEXT) WHERE coup_id = '2-2'")
    with Journal.open(jpath, readonly=True, verify="none") as j:
        with pytest.raises(RecallCorrupt) as err:
            j.coup("2-2")
        assert "not valid UTF-8" in str(err.value)
        assert j.verify(full=True).reason is Reason.RECALL_MISMATCH


def test_a_correction_rewrites_the_row_with_a_new_anchor(jpath):
    with Journal.open(jpath) as j:
        j.record_coup("2-7", 2, 7, {"winner": "tie"})          # anchored at the last event
        row = j.coup("2-7")
        assert row.result == {"winner": "tie"} and row.seq == j.last_seq()
        assert j.verify(full=True).ok
        with pytest.raises(ValueError, match="no event seq 999"):
            j.record_coup("2-8", 2, 8, {"winner": "tie"}, seq=999)


def downgrade_to_format_1(path) -> None:
    """The file as the previous version wrote it: no checksum column, no audit table."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript("""
            BEGIN;
            ALTER TABLE coups DROP COLUMN checksum;
            DROP TABLE audit;
            UPDATE meta SET value = '1' WHERE key = 'format';
            PRAGMA user_version = 1;
            COMMIT;
        """)
    finally:
        conn.close()


def test_a_format_1_journal_stays_readable_and_is_migrated_by_a_writer(jpath):
    downgrade_to_format_1(jpath)
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 0 and "recall not verifiable (journal format 1" in r.stdout
    with Journal.open(jpath, readonly=True) as j:
        row = j.coup("1-3")
        assert row.verified is False and row.result["winner"] == "banco"
    with Journal.open(jpath) as j:                              # the daemon's open: migrated
        assert j.format == FORMAT_VERSION and json.loads(j.meta["migrated"])["recall_rows"] == 14
        assert j.coup("1-3").verified and j.verify(full=True).recall_rows == 14
    sql(jpath, "UPDATE coups SET result = replace(result, '\"banco\"', '\"punto\"') WHERE coup_id = '1-3'")
    assert cli("verify", "--full", "--journal", str(jpath)).returncode == 1


def test_export_ignores_recall_damage_and_recover_sets_it_aside(jpath, tmp_path):
    sql(jpath, "UPDATE coups SET result = replace(result, '\"punto\"', '\"tie\"') WHERE coup_id = '2-4'")
    r = cli("export", "--journal", str(jpath), "--out", str(tmp_path / "x.jsonl"))
    assert r.returncode == 0, r.stderr                      # the events are intact: all exported
    r = cli("recover", "--journal", str(jpath), "--out", str(tmp_path / "y.jsonl"), "--carry-shoe")
    assert r.returncode == 0 and "recall record fails verification" in r.stderr, r.stderr
    assert (tmp_path / "j.sqlite3.corrupt-1").exists()
    with Journal.open(jpath) as j:                          # the daemon can start again
        assert j.report.ok and j.count() == PER_SHOE and j.coup_count() == 0
