"""`shoe-daemon deal` and `shoe-daemon shuffle`, run as the user runs them (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shoe_daemon", *args], input=stdin, capture_output=True, text=True,
        cwd=ROOT, timeout=60,
    )


def lines(proc) -> list[dict]:
    return [json.loads(ln) for ln in proc.stdout.splitlines()]


# A stacked shoe with known coups (dealing order P B P B ...):
STACKED = """
2H 8H 2S 8S 7C 9D
8C 2S KH 3S
3H 3S 3D 3C
AS AD AH AC 2C 2D
"""


def test_stacked_deck_known_coups():
    proc = cli("deal", "--decks", "8", stdin=STACKED)
    assert proc.returncode == 0 and proc.stderr == ""
    coups = lines(proc)
    assert [c["coup"] for c in coups] == [1, 2, 3, 4]
    want = [
        # the seeds' example: Banco 8+8+9 = 5 against Punto 2+2+7 = 1
        dict(punto=["2H", "2S", "7C"], banco=["8H", "8S", "9D"], punto_total=1, banco_total=5,
             winner="banco", natural=False, natural_total=None, punto_pair=True, banco_pair=True, cards=6),
        # Punto 8+0 natural 8 against Banco 2+3 = 5
        dict(punto=["8C", "KH"], banco=["2S", "3S"], punto_total=8, banco_total=5, winner="punto",
             natural=True, natural_total=8, punto_pair=False, banco_pair=False, cards=4),
        # 6 against 6: both stand, a tie
        dict(punto=["3H", "3D"], banco=["3S", "3C"], punto_total=6, banco_total=6, winner="tie",
             natural=False, natural_total=None, punto_pair=True, banco_pair=True, cards=4),
        # Punto A+A = 2 draws 2 (4); Banco A+A = 2 draws: 4 against 4
        dict(punto=["AS", "AH", "2C"], banco=["AD", "AC", "2D"], punto_total=4, banco_total=4,
             winner="tie", natural=False, natural_total=None, punto_pair=True, banco_pair=True, cards=6),
    ]
    for got, expected in zip(coups, want, strict=True):
        assert {k: got[k] for k in expected} == expected
        assert got["coup_id"] == f"1-{got['coup']}"


def test_stops_when_fewer_than_six_cards_remain():
    # 4 cards for a natural, then 5 left: not enough for a coup that may need 6.
    proc = cli("deal", stdin="8C 2S KH 3S  2H 3S 2S 3D 9C")
    assert proc.returncode == 0 and [c["cards"] for c in lines(proc)] == [4]
    proc = cli("deal", stdin="2H 3S 2S 3D 9C")
    assert proc.returncode == 0 and proc.stdout == ""
    # exactly 6 left: the coup is dealt even though it uses only 5
    proc = cli("deal", stdin="2H 3S 2S 3D 9C KD")
    assert [c["cards"] for c in lines(proc)] == [5]


def test_lenient_codes():
    proc = cli("deal", stdin="10h 2s 8h 3s\n\t9d 9c")
    assert proc.returncode == 0 and lines(proc)[0]["punto"] == ["TH", "8H"]


def test_bad_token_names_token_and_position():
    proc = cli("deal", stdin="AS 9H\n1X KD 2C 3C 4C")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'1X'" in proc.stderr and "position 3" in proc.stderr


def test_more_copies_than_the_shoe_holds():
    proc = cli("deal", "--decks", "4", stdin="AS " * 5 + "2C 3C 4C 5C 6C")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "AS" in proc.stderr and "position 5" in proc.stderr and "4 decks" in proc.stderr


def test_bad_decks_is_a_usage_error():
    proc = cli("deal", "--decks", "5", stdin="")
    assert proc.returncode == 2 and "--decks" in proc.stderr


@pytest.mark.parametrize("decks", [4, 8])
def test_shuffle_prints_a_whole_shoe_reproducibly(decks):
    a = cli("shuffle", "--decks", str(decks), "--seed", "11")
    b = cli("shuffle", "--decks", str(decks), "--seed", "11")
    assert a.returncode == 0 and a.stdout == b.stdout and "seed 11" in a.stderr
    codes = a.stdout.split()
    assert len(codes) == 52 * decks and set(Counter(codes).values()) == {decks}
    assert cli("shuffle", "--decks", str(decks), "--seed", "12").stdout != a.stdout


def test_shuffle_without_seed_differs_and_reports_its_seed():
    a, b = cli("shuffle"), cli("shuffle")
    assert a.stdout != b.stdout and "seed " in a.stderr and len(a.stdout.split()) == 416


def test_shuffle_piped_into_deal():
    shoe = cli("shuffle", "--decks", "6", "--seed", "3").stdout
    proc = cli("deal", "--decks", "6", stdin=shoe)
    assert proc.returncode == 0
    coups = lines(proc)
    assert [c["coup"] for c in coups] == list(range(1, len(coups) + 1))
    used = sum(c["cards"] for c in coups)
    assert 312 - 11 < used <= 312 and 312 - used < 6 + 6
    assert all(c["winner"] in ("punto", "banco", "tie") for c in coups)
    # every coup's cards are the next cards of the shoe, in dealing order
    codes = shoe.split()
    i = 0
    for c in coups:
        p, b = c["punto"], c["banco"]
        order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
        assert codes[i:i + len(order)] == order
        i += len(order)
    assert len(codes) - i < 6
