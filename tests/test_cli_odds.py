"""`shoe-daemon odds`: as a subprocess (the real front door), and the parser in-process."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from shoe_daemon.commands import odds as odds_command

ROOT = Path(__file__).resolve().parents[1]

PUBLISHED_8 = (2_292_252_566_437_888, 2_230_518_282_592_256, 475_627_426_473_216)
PUBLISHED_6 = (403_095_751_234_560, 392_220_492_728_832, 83_552_962_932_288)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shoe_daemon", "odds", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


# --------------------------------------------------------------------------- subprocess


def test_json_8_decks_is_exact():
    proc = cli("--decks", "8", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    d = json.loads(lines[0])
    assert (d["banco"], d["punto"], d["tie"]) == PUBLISHED_8
    assert d["total"] == 4_998_398_275_503_360
    assert all(isinstance(d[k], int) for k in ("banco", "punto", "tie", "total"))
    assert d["decks"] == 8 and d["cards"] == 416
    assert d["probability"]["banco"] == pytest.approx(0.458597, abs=1e-6)
    assert d["house_edge"]["banco"] == pytest.approx(0.010579, abs=1e-6)
    assert Fraction(d["house_edge_exact"]["punto"]) == Fraction(PUBLISHED_8[0] - PUBLISHED_8[1], d["total"])


def test_readable_table_6_decks():
    proc = cli("--decks", "6")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "6-deck shoe: 312 cards left" in out
    for count in PUBLISHED_6:
        assert f"{count:,}" in out
    assert "1.0558%" in out and "14.4382%" in out


def test_remaining_per_value_and_per_rank_agree():
    by_value = cli("--remaining", "128,32,32,32,32,32,32,32,32,32", "--json")
    ranks = ",".join(f"{r}:32" for r in "A23456789TJQK")
    by_rank = cli("--remaining", ranks, "--json")
    assert by_value.returncode == by_rank.returncode == 0, by_value.stderr + by_rank.stderr
    a, b = json.loads(by_value.stdout), json.loads(by_rank.stdout)
    assert (a["banco"], a["punto"], a["tie"]) == (b["banco"], b["punto"], b["tie"]) == PUBLISHED_8


def test_dealt_cards():
    proc = cli("--decks", "4", "--dealt", "AS 9H,TD", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["cards"] == 205 and d["composition"] == [63, 15, 16, 16, 16, 16, 16, 16, 16, 15]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--remaining", "1,2,3"], "3 counts given; give 10"),
        (["--remaining", "A:3,Z:1"], "unknown rank 'Z'"),
        (["--remaining", "A:x"], "count 'x' for rank A"),
        (["--remaining", "1,1,1,1,1,0,0,0,0,0"], "only 5 cards left in the shoe"),
        (["--decks", "4", "--remaining", "70,16,16,16,16,16,16,16,16,16"], "holds only 64"),
        (["--decks", "0"], "must be 4, 6 or 8"),
        (["--decks", "9"], "must be 4, 6 or 8"),          # as deal, shuffle, demo, emulate, record
        (["--decks", "4", "--dealt", "AS AS AS AS AS"], "AS dealt 5 times"),
        (["--dealt", "ZZ"], "bad card code 'ZZ'"),
        (["--remaining", "6,0,0,0,0,0,0,0,0,0", "--dealt", "AS"], "not allowed with argument"),
    ],
)
def test_bad_input_is_a_clear_message_and_exit_2(args, message):
    proc = cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""


def test_help_documents_the_remaining_format():
    proc = cli("--help")
    assert proc.returncode == 0
    assert "--remaining" in proc.stdout and "A:32,2:32" in proc.stdout and "values 0,1,...,9" in proc.stdout


# --------------------------------------------------------------------------- in-process


@pytest.fixture
def parser():
    p = argparse.ArgumentParser(prog="shoe-daemon odds")
    odds_command.configure(p)
    return p


def test_in_process_run(parser, capsys):
    assert odds_command.run(parser.parse_args(["--json", "--remaining", "A:1,2:1,3:1,4:1,5:1,K:1"])) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total"] == 720 and d["banco"] + d["punto"] + d["tie"] == 720 and d["decks"] is None


def test_in_process_default_is_8_decks(parser, capsys):
    assert odds_command.run(parser.parse_args([])) == 0
    out = capsys.readouterr().out
    assert "8-deck shoe: 416 cards left" in out and f"{PUBLISHED_8[0]:,}" in out


def test_in_process_too_few_cards(parser, capsys):
    assert odds_command.run(parser.parse_args(["--remaining", "0,0,0,0,0,0,0,0,0,5"])) == 2
    assert "only 5 cards left" in capsys.readouterr().err


def test_rank_given_twice(parser):
    with pytest.raises(SystemExit) as e:
        parser.parse_args(["--remaining", "T:3,10:2"])
    assert e.value.code == 2
