"""The scoreboard roads: hand-worked grids for every rule, a public cross-check, properties.

Grids in the comments: columns left to right, rows top to bottom (0-based in the
assertions), '.' an empty cell; on the Big Road a digit after the letter is the
number of ties counted on that cell.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_daemon.game.roads import (
    BANCO,
    BLUE,
    PUNTO,
    RED,
    TIE,
    CoupOutcome,
    Roads,
    TokenError,
    derived_mark,
    outcome,
    parse_tokens,
    roads_dict,
)

R, U = RED, BLUE  # U for blUe, so that a row of marks reads at a glance


def roads(text: str) -> Roads:
    return Roads(parse_tokens(text))


def big(r: Roads) -> list[tuple]:
    """Big Road cells as (col, row, letter, ties) in the order they were drawn."""
    return [(c.col, c.row, c.winner[0].upper(), c.ties) for c in r.big_road]


def cells(r: Roads, name: str) -> list[tuple]:
    return [(c["col"], c["row"], c["color"][0]) for c in r.to_dict()[name]["cells"]]


# --------------------------------------------------------------------------- tokens


def test_parse_tokens():
    assert parse_tokens("B Pp T Bbp\n Tpb  Pb") == [
        CoupOutcome(BANCO), CoupOutcome(PUNTO, False, True), CoupOutcome(TIE),
        CoupOutcome(BANCO, True, True), CoupOutcome(TIE, True, True), CoupOutcome(PUNTO, True, False),
    ]
    assert parse_tokens("  \n") == []


@pytest.mark.parametrize(
    ("text", "token", "position"),
    [("B X P", "X", 2), ("B P b", "b", 3), ("Bx", "Bx", 1), ("B Bbb", "Bbb", 2), ("P T Bpbp", "Bpbp", 3),
     ("BP", "BP", 1), ("t", "t", 1)],
)
def test_bad_token_names_token_and_position(text, token, position):
    with pytest.raises(TokenError) as info:
        parse_tokens(text)
    assert info.value.token == token and info.value.position == position
    assert f"bad token {token!r} at position {position}" in str(info.value)


def test_winner_names():
    assert outcome("Banker").winner == BANCO and outcome("PUNTO").winner == PUNTO and outcome("t").winner == TIE
    with pytest.raises(ValueError, match="unknown coup winner"):
        outcome("draw")
    with pytest.raises(ValueError, match="unknown coup winner"):
        Roads().add(3)


# --------------------------------------------------------------------------- bead plate


def test_bead_plate_column_major_wraps_after_six_with_ties_and_pairs():
    # B  Bb        coups 1-6 down column 0, coup 7 starts column 1
    # P  .
    # T  .
    # Pp .
    # B  .
    # Tbp .
    d = roads("B P T Pp B Tbp Bb").to_dict()["bead_plate"]
    assert [(c["col"], c["row"], c["winner"][0], c["banco_pair"], c["punto_pair"]) for c in d["cells"]] == [
        (0, 0, "b", False, False), (0, 1, "p", False, False), (0, 2, "t", False, False),
        (0, 3, "p", False, True), (0, 4, "b", False, False), (0, 5, "t", True, True),
        (1, 0, "b", True, False),
    ]
    assert d["rows"] == 6 and d["width"] == 2
    assert all(c["natural"] is None for c in d["cells"])
    # The 13th coup opens column 2.
    d13 = roads(" ".join(["T"] * 13)).to_dict()["bead_plate"]
    assert (d13["cells"][12]["col"], d13["cells"][12]["row"]) == (2, 0) and d13["width"] == 3


# --------------------------------------------------------------------------- big road


def test_big_road_new_column_when_the_winner_changes():
    # B P B
    # B . .
    r = roads("B B P B")
    assert big(r) == [(0, 0, "B", 0), (0, 1, "B", 0), (1, 0, "P", 0), (2, 0, "B", 0)]
    assert r.lengths == [2, 1, 1] and r.winners == [BANCO, PUNTO, BANCO]


def test_leading_ties_wait_then_attach_to_the_first_cell():
    r = roads("T T")
    assert r.big_road == [] and r.pending_ties == 2
    assert r.to_dict()["big_road"]["pending_ties"] == 2
    # B2 P        the two ties before the first win are counted on the first cell
    r.add("banco")
    r.add("punto")
    assert big(r) == [(0, 0, "B", 2), (1, 0, "P", 0)]
    assert r.pending_ties == 0


def test_ties_in_the_middle_count_on_the_previous_cell_and_do_not_break_a_streak():
    # B1 P3       B T B T T P T T T B: the tie after the first B is on it, the two after
    # B2 .        the second B on that one; a tie between two Bs keeps them in one column
    # B  .
    r = roads("B T B T T P T T T B")
    assert big(r) == [(0, 0, "B", 1), (0, 1, "B", 2), (1, 0, "P", 3), (2, 0, "B", 0)]
    # (the last B is in column 2: the three ties do not change who won before it)


def test_pairs_on_the_cell_of_the_coup_and_tie_pairs_on_the_cell_the_tie_goes_to():
    # Bb  P1bp    coup 3 is a tie with both pairs: it is counted on the P above, which also
    # .   Pp      gets its pair marks; coup 4's Punto pair is on its own cell.
    r = roads("Bb P Tbp Pp")
    d = r.to_dict()["big_road"]["cells"]
    assert [(c["col"], c["row"], c["ties"], c["banco_pair"], c["punto_pair"], c["coup"]) for c in d] == [
        (0, 0, 0, True, False, 1), (1, 0, 1, True, True, 2), (1, 1, 0, False, True, 4),
    ]
    # A leading tie's pairs go to the first cell with the tie.
    first = roads("Tp Tb B").to_dict()["big_road"]["cells"][0]
    assert (first["ties"], first["banco_pair"], first["punto_pair"]) == (2, True, True)


def test_dragon_tail_of_nine():
    # B P . .     9 Bancos: 6 down column 0, then right along the bottom row
    # B P . .     (the streak is one logical column of length 9); the P column starts at
    # B . . .     drawn column 1, above the tail.
    # B . . .
    # B . . .
    # B B B B
    r = roads("B B B B B B B B B P P")
    assert big(r) == [
        (0, 0, "B", 0), (0, 1, "B", 0), (0, 2, "B", 0), (0, 3, "B", 0), (0, 4, "B", 0), (0, 5, "B", 0),
        (1, 5, "B", 0), (2, 5, "B", 0), (3, 5, "B", 0),
        (1, 0, "P", 0), (1, 1, "P", 0),
    ]
    assert r.lengths == [9, 2]
    assert [(c.logical_col, c.logical_row) for c in r.big_road][6:9] == [(0, 6), (0, 7), (0, 8)]


def test_blocked_tail_turns_right_above_the_earlier_tail():
    # B P B P     8 B: column 0 then tail (1,5) (2,5).
    # B P B .     7 P: column 1 rows 0-4; the cell below (1,5) is taken: turns right on row 4.
    # B P B .     5 B: column 2 rows 0-3; (2,4) is taken by the P tail: turns right on row 3.
    # B P B B     1 P: the next column starts at drawn column 3.
    # B P P P
    # B B B .
    r = roads("B B B B B B B B  P P P P P P P  B B B B B  P")
    assert big(r) == [
        (0, 0, "B", 0), (0, 1, "B", 0), (0, 2, "B", 0), (0, 3, "B", 0), (0, 4, "B", 0), (0, 5, "B", 0),
        (1, 5, "B", 0), (2, 5, "B", 0),
        (1, 0, "P", 0), (1, 1, "P", 0), (1, 2, "P", 0), (1, 3, "P", 0), (1, 4, "P", 0),
        (2, 4, "P", 0), (3, 4, "P", 0),
        (2, 0, "B", 0), (2, 1, "B", 0), (2, 2, "B", 0), (2, 3, "B", 0), (3, 3, "B", 0),
        (3, 0, "P", 0),
    ]
    assert r.lengths == [8, 7, 5, 1]
    assert r.to_dict()["big_road"]["width"] == 4


def test_a_tail_stays_on_its_row_after_passing_the_tail_below_it():
    # 8 B then 9 P: the P streak turns right on row 4 above the B tail and stays on row 4
    # even where row 5 is free again (columns 3, 4, ...).
    # B P . . . . .
    # B P . . . . .
    # B P . . . . .
    # B P . . . . .
    # B P P P P P .
    # B B B . . . .
    r = roads(" ".join("B" * 8 + "P" * 9))
    assert big(r)[8:] == [
        (1, 0, "P", 0), (1, 1, "P", 0), (1, 2, "P", 0), (1, 3, "P", 0), (1, 4, "P", 0),
        (2, 4, "P", 0), (3, 4, "P", 0), (4, 4, "P", 0), (5, 4, "P", 0),
    ]


# --------------------------------------------------------------------------- derived roads: rules


def test_derived_mark_rules():
    lengths = [3, 1, 2]
    # first cell of a new column: the two columns before it
    assert derived_mark([2, 2], 1, 2, 1) == RED    # equal lengths
    assert derived_mark([3, 2], 1, 2, 1) == BLUE   # different
    # a cell below: the column k to the left
    assert derived_mark(lengths, 1, 2, 2) == BLUE  # column 1 (length 1) ended just above row 2
    assert derived_mark(lengths, 2, 2, 2) == RED   # column 0 (length 3) has a cell on row 2
    assert derived_mark(lengths, 2, 2, 3) == RED   # ... and on row 3
    assert derived_mark(lengths, 2, 2, 4) == BLUE  # row 4 is one below its end
    assert derived_mark(lengths, 2, 2, 5) == RED   # row 5: it ended two or more rows above
    # before the starting cell: nothing
    assert derived_mark([1], 1, 0, 2) is None
    assert derived_mark([1, 1], 1, 1, 1) is None
    assert derived_mark([1, 1], 2, 1, 2) is None


@pytest.mark.parametrize(
    ("before", "nxt", "road", "after"),
    [
        # Big Eye Boy (k=1) starts on column 1 row 1 ...     B P         B P
        #   P at (1,1): column 0 ended on row 0 -> blue      . .    ->   . P
        ("B P", "P", "big_eye_boy", ([U], [], [])),
        # ... or on the first cell of column 2 if column 1 has one cell:
        #   B B P + B at (2,0): columns 1 and 0 are 1 and 2 long -> blue
        ("B B P", "B", "big_eye_boy", ([U], [], [])),
        # Small Road (k=2) starts on column 2 row 1 ...
        #   B P B + B at (2,1): column 0 ended on row 0 -> blue
        ("B P B", "B", "small_road", ([R, U], [U], [])),
        # ... or on the first cell of column 3:
        #   B P B + P at (3,0): columns 2 and 0 both 1 long -> red
        ("B P B", "P", "small_road", ([R, R], [R], [])),
        # Cockroach Pig (k=3) starts on column 3 row 1 ...
        #   B P B P + P at (3,1): column 0 ended on row 0 -> blue
        ("B P B P", "P", "cockroach_pig", ([R, R, U], [R, U], [U])),
        # ... or on the first cell of column 4:
        #   B B P B P + B at (4,0): columns 3 and 0 are 1 and 2 long -> blue
        ("B B P B P", "B", "cockroach_pig", ([U, R, R], [U, R], [U])),
    ],
)
def test_each_derived_road_starts_exactly_where_expected(before, nxt, road, after):
    r = roads(before)
    assert getattr(r, road) == []
    r.add(nxt)
    assert (r.big_eye_boy, r.small_road, r.cockroach_pig) == after
    assert len(getattr(r, road)) == 1


# The long hand-worked shoe: B B T B P T B B P P B P P P P B P B B
# Logical columns (0-based index: length):  0:3B 1:1P 2:2B 3:2P 4:1B 5:4P 6:1B 7:1P 8:2B
#
# Big Road                     Big Eye Boy (k=1)     Small Road (k=2)       Cockroach Pig (k=3)
# B  P1 B  P  B  P  B  P  B    b r b r b r b         r b r b r b r b        r b r b r b r
# B1 .  B  P  .  P  .  .  B    b r b r b . .         . b . . . . . b        . . r . . b r
# B  .  .  .  .  P  .  .  .    b . . . . . .         . b . . . . . .
# .  .  .  .  .  P  .  .  .                          . b . . . . . .
#
# Big Eye Boy, cell by cell (column, row of the Big Road cell -> mark):
#   (2,0) columns 1,0 = 1,3 differ -> b   (2,1) column 1 ended on row 0 -> b
#   (3,0) columns 2,1 = 2,1 -> b          (3,1) column 2 has row 1 -> r
#   (4,0) columns 3,2 = 2,2 -> r
#   (5,0) columns 4,3 = 1,2 -> b          (5,1) column 4 ended on row 0 -> b
#   (5,2) column 4 ended 2 rows up -> r   (5,3) -> r
#   (6,0) 4,1 -> b   (7,0) 1,4 -> b   (8,0) 1,1 -> r   (8,1) column 7 ended on row 0 -> b
# Small Road: (2,1) column 0 has row 1 -> r; (3,0) cols 2,0 = 2,3 -> b; (3,1) col 1 ended on row 0 -> b;
#   (4,0) 2,1 -> b; (5,0) 1,2 -> b; (5,1) col 3 has row 1 -> r; (5,2) col 3 ended on row 1 -> b;
#   (5,3) -> r; (6,0) 4,2 -> b; (7,0) 1,1 -> r; (8,0) 1,4 -> b; (8,1) col 6 ended on row 0 -> b
# Cockroach Pig: (3,1) col 0 has row 1 -> r; (4,0) cols 3,0 = 2,3 -> b; (5,0) 1,1 -> r;
#   (5,1) col 2 has row 1 -> r; (5,2) col 2 ended on row 1 -> b; (5,3) -> r; (6,0) 4,2 -> b;
#   (7,0) 1,2 -> b; (8,0) 1,1 -> r; (8,1) col 5 has row 1 -> r
LONG = "B B T B P T B B P P B P P P P B P B B"


def test_long_hand_worked_shoe_all_roads():
    r = roads(LONG)
    assert big(r) == [
        (0, 0, "B", 0), (0, 1, "B", 1), (0, 2, "B", 0), (1, 0, "P", 1), (2, 0, "B", 0), (2, 1, "B", 0),
        (3, 0, "P", 0), (3, 1, "P", 0), (4, 0, "B", 0), (5, 0, "P", 0), (5, 1, "P", 0), (5, 2, "P", 0),
        (5, 3, "P", 0), (6, 0, "B", 0), (7, 0, "P", 0), (8, 0, "B", 0), (8, 1, "B", 0),
    ]
    assert r.lengths == [3, 1, 2, 2, 1, 4, 1, 1, 2]
    assert r.big_eye_boy == [U, U, U, R, R, U, U, R, R, U, U, R, U]
    assert r.small_road == [R, U, U, U, U, R, U, R, U, R, U, U]
    assert r.cockroach_pig == [R, U, R, R, U, R, U, U, R, R]
    assert cells(r, "big_eye_boy") == [
        (0, 0, "b"), (0, 1, "b"), (0, 2, "b"), (1, 0, "r"), (1, 1, "r"), (2, 0, "b"), (2, 1, "b"),
        (3, 0, "r"), (3, 1, "r"), (4, 0, "b"), (4, 1, "b"), (5, 0, "r"), (6, 0, "b"),
    ]
    assert cells(r, "small_road") == [
        (0, 0, "r"), (1, 0, "b"), (1, 1, "b"), (1, 2, "b"), (1, 3, "b"), (2, 0, "r"), (3, 0, "b"),
        (4, 0, "r"), (5, 0, "b"), (6, 0, "r"), (7, 0, "b"), (7, 1, "b"),
    ]
    assert cells(r, "cockroach_pig") == [
        (0, 0, "r"), (1, 0, "b"), (2, 0, "r"), (2, 1, "r"), (3, 0, "b"), (4, 0, "r"), (5, 0, "b"),
        (5, 1, "b"), (6, 0, "r"), (6, 1, "r"),
    ]
    # Next coup: a B would be row 2 of column 8 (columns 7, 6, 5 are 1, 1, 4 long: 2 rows up,
    # 2 rows up, has row 2 -> red red red); a P opens column 9 (2 vs 1, 1, 4 -> blue blue blue).
    d = r.to_dict()
    assert d["ask_banco"] == {"big_eye_boy": R, "small_road": R, "cockroach_pig": R}
    assert d["ask_punto"] == {"big_eye_boy": U, "small_road": U, "cockroach_pig": U}


def test_derived_roads_use_logical_columns_not_drawn_ones():
    # 8 B, 6 P, B. Drawn:  B P B        Logical columns 8, 6, 1. The B opening column 2
    #                      B P .        compares columns 1 and 0: 6 vs 8 -> blue. Counted
    #                      B P .        on the drawing, columns 0 and 1 both hold 6 cells
    #                      B P .        (column 1: five P and the B tail), which would say red.
    #                      B P P
    #                      B B B
    r = roads(" ".join("B" * 8 + "P" * 6 + "B"))
    assert big(r)[8:] == [(1, 0, "P", 0), (1, 1, "P", 0), (1, 2, "P", 0), (1, 3, "P", 0), (1, 4, "P", 0),
                          (2, 4, "P", 0), (2, 0, "B", 0)]
    # P rows 1-5 of column 1 all have a cell of column 0 (8 long) on their row -> red.
    assert r.big_eye_boy == [R, R, R, R, R, U]
    assert cells(r, "big_eye_boy") == [(0, 0, "r"), (0, 1, "r"), (0, 2, "r"), (0, 3, "r"), (0, 4, "r"),
                                       (1, 0, "b")]


def test_derived_road_dragon_tail():
    # B P B P B P B P B P: ten columns of one cell; every first cell compares two equal
    # columns -> red. Big Eye Boy: 8 reds (columns 2-9), Small Road 7, Cockroach Pig 6.
    # Big Eye Boy   r r r      Small Road  r r     Cockroach Pig  r
    #               r . .                  r .                    r
    #               r . .                  r .                    r
    #               r . .                  r .                    r
    #               r . .                  r .                    r
    #               r r r                  r r                    r
    r = roads("B P " * 5)
    col0 = [(0, row, "r") for row in range(6)]
    assert cells(r, "big_eye_boy") == col0 + [(1, 5, "r"), (2, 5, "r")]
    assert cells(r, "small_road") == col0 + [(1, 5, "r")]
    assert cells(r, "cockroach_pig") == col0
    # The last column is a P. A Banco opens column 10 and keeps the chop (columns 9 and 8,
    # 7, 6 all one long -> red); a Punto goes to row 1 of column 9, one below where the
    # compared columns ended (blue).
    assert r.ask("banco") == {"big_eye_boy": R, "small_road": R, "cockroach_pig": R}
    assert r.ask("punto") == {"big_eye_boy": U, "small_road": U, "cockroach_pig": U}


# --------------------------------------------------------------------------- ask


@pytest.mark.parametrize("text", ["", "T", "B", "B P", "B Pp T Bbp", LONG, "B P " * 5, " ".join("B" * 8 + "P" * 6)])
def test_ask_previews_what_the_next_win_adds(text):
    base = roads(text)
    for winner in (BANCO, PUNTO):
        preview = base.ask(winner)
        after = roads(text)
        before = {name: len(after.to_dict()[name]["marks"]) for name in preview}
        after.add(winner)
        added = {name: after.to_dict()[name]["marks"][before[name]:] for name in preview}
        assert added == {name: [] if m is None else [m] for name, m in preview.items()}


def test_ask_small_example_and_tie():
    # B P1 B       Big Eye Boy: (2,0) columns 1, 0 both 1 long -> red.
    # Ask Banco: row 1 of column 2 -> column 1 ended on row 0 (blue), column 0 too (blue),
    #   Cockroach Pig has no column 3 to the left -> nothing.
    # Ask Punto: column 3 opens -> columns 2,1 equal (red), 2,0 equal (red), no column -1.
    d = roads("B Pp T Bbp").to_dict()
    assert d["big_eye_boy"]["marks"] == [R] and d["small_road"]["marks"] == [] == d["cockroach_pig"]["marks"]
    assert d["ask_banco"] == {"big_eye_boy": U, "small_road": U, "cockroach_pig": None}
    assert d["ask_punto"] == {"big_eye_boy": R, "small_road": R, "cockroach_pig": None}
    assert Roads().ask("banco") == {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}
    with pytest.raises(ValueError, match="tie"):
        Roads().ask("tie")


# --------------------------------------------------------------------------- stats


def test_stats():
    r = Roads()
    r.add("banco", natural=True)
    r.add("punto", punto_pair=True, natural=False)
    r.add("tie", banco_pair=True)
    r.add("punto", natural=True)
    r.add("punto")
    r.add("banco", banco_pair=True, punto_pair=True)
    assert r.stats() == {
        "coups": 6, "banco": 2, "punto": 3, "tie": 1, "naturals": 2,
        "banco_pairs": 2, "punto_pairs": 2,
        "longest_banco_streak": 1, "longest_punto_streak": 3,   # the tie does not break P P P
        "current_streak": {"winner": BANCO, "length": 1}, "big_road_columns": 3,
    }
    s = roads(LONG).stats()
    assert (s["banco"], s["punto"], s["tie"], s["naturals"]) == (9, 8, 2, None)  # no natural info given
    assert (s["longest_banco_streak"], s["longest_punto_streak"], s["current_streak"]) == (
        3, 4, {"winner": BANCO, "length": 2})
    empty = Roads().stats()
    assert empty["coups"] == 0 and empty["current_streak"] == {"winner": None, "length": 0}
    tail = roads("B " * 9 + "P").stats()
    assert tail["longest_banco_streak"] == 9 and tail["current_streak"] == {"winner": PUNTO, "length": 1}


def test_fed_from_coup_results():
    from shoe_daemon.game.coup import play_coup

    result, used = play_coup(["4H", "KS", "4S", "2D"])  # Punto 4+4 = 8 natural, a Punto pair
    assert used == 4
    r = Roads()
    r.add(result)
    r.add({"winner": "tie", "banco_pair": True})
    cell = r.to_dict()["bead_plate"]["cells"][0]
    assert (cell["winner"], cell["natural"], cell["punto_pair"], cell["banco_pair"]) == (PUNTO, True, True, False)
    assert r.stats()["naturals"] == 1 and big(r) == [(0, 0, "P", 1)]


# --------------------------------------------------------------------------- public cross-check

# jconradi/baccarat-engine, test/roadmaps/roadmapGenerator.spec.js (commit 8ff4254), "100 game
# results set C" and "set A": the expected Big Eye Road of their RoadmapGenerator. Their
# bigRoad() scrolls the drawing to its last 12 drawn columns by default and bigEyeRoad() then
# derives marks only from the logical columns still visible (cells whose compared columns
# scrolled off make no mark; their derivedRoad also skips comparisons with logical column 0).
SET_C = ("PTPBTBBTPPPBPBTBPPPPPPPPBBPBTBTBBPPPTPPPBBBBPBBBPPPPBPBPTPBBPBBBBPBPPPPPPPBPBBBBBBB"
         "PPBBPTPBPPPBPPPPB")
SET_C_BIG_EYE = [U, R, U, R, R, R, R, R, U, R, U, R, R, R, R, U, U, R, U, U, U, R, R, U]
SET_A = ("BPBPBBPBBPPPBTBBBPTPPPBPBPPBBTPBPBBPBPBPTPPBPTBPPPBBPBPBPBPBBPBPPBBPPPBBPPBPPPTPPBBTPP"
         "BPBTBTBPBBPPBP")
SET_A_BIG_EYE = [U, U, R, R, R, U, R, R, R, U, U, R, U, R, U, U, U, U, R, R, U]


def _visible_big_eye(lengths: dict[int, int]) -> list[str]:
    """Big Eye Boy marks of the visible logical columns {column: visible cells}, as jconradi."""
    full = [lengths.get(i, 0) for i in range(max(lengths) + 1)]
    out = []
    for n in sorted(lengths):
        for m in range(1, lengths[n] + 1):
            if m >= 2:  # compare with column n-1 (their code skips logical column 0)
                visible = n - 1 in lengths and n - 1 > 0
            else:  # compare columns n-1 and n-2
                visible = n - 1 in lengths and n - 2 in lengths
            if visible:
                out.append(derived_mark(full, 1, n, m))
    return out


def test_big_eye_boy_matches_jconradi_set_c():
    s = SET_C
    assert len(s) == 100
    r = roads(" ".join(s))
    offset = max(c.col for c in r.big_road) - 11
    visible: dict[int, int] = {}
    for c in r.big_road:
        if c.col >= offset:
            visible[c.logical_col] = visible.get(c.logical_col, 0) + 1
    assert _visible_big_eye(visible) == SET_C_BIG_EYE
    # The same marks are the tail of our full Big Eye Boy.
    assert r.big_eye_boy[-len(SET_C_BIG_EYE):] == SET_C_BIG_EYE


def test_big_eye_boy_rule_matches_jconradi_set_a_with_their_old_tie_columns():
    # Set A's expectation was produced before their PR #7 ("Should increase logicalColumnNumber
    # when tie stacked"): a win right after a tie always continued the current column. Our Big
    # Road does not do that (a tie never joins two different winners), but fed the same
    # logical columns our derived-road rule gives their 21 marks exactly.
    s = SET_A
    assert len(s) == 100
    lengths: list[int] = []
    prev = None
    for ch in s:
        if ch != "T":
            if lengths and (prev == "T" or prev == ch):
                lengths[-1] += 1
            else:
                lengths.append(1)
        prev = ch if ch != "T" else "T"
    assert max(lengths) <= 6  # no dragon tail: drawn column == logical column
    first = len(lengths) - 12
    visible = {n: lengths[n] for n in range(first, len(lengths))}
    assert _visible_big_eye(visible) == SET_A_BIG_EYE
    # With the correct columns the shoe has a different Big Road, hence different marks.
    assert roads(" ".join(s)).lengths != lengths


# --------------------------------------------------------------------------- properties

_runs = st.lists(
    st.tuples(st.sampled_from([BANCO, PUNTO, TIE]), st.integers(1, 10), st.booleans(), st.booleans(),
              st.sampled_from([None, False, True])),
    max_size=30,
)


def _coups(runs) -> list[CoupOutcome]:
    out = []
    for winner, n, bp, pp, nat in runs:
        out.append(CoupOutcome(winner, bp, pp, nat))
        out += [CoupOutcome(winner)] * (n - 1)
    return out[:100]


@settings(max_examples=60, deadline=None)
@given(_runs)
def test_incremental_equals_batch_after_every_coup(runs):
    coups = _coups(runs)
    r = Roads()
    assert r.to_dict() == roads_dict([])
    for i, c in enumerate(coups, start=1):
        r.add(c)
        assert r.to_dict() == roads_dict(coups[:i])


@settings(max_examples=80, deadline=None)
@given(_runs)
def test_ask_equals_what_appears_and_banco_punto_are_opposite(runs):
    coups = _coups(runs)
    r = Roads(coups)
    for winner in (BANCO, PUNTO):
        preview = r.ask(winner)
        nxt = roads_dict(coups + [CoupOutcome(winner)])
        now = r.to_dict()
        for name, mark in preview.items():
            assert nxt[name]["marks"] == now[name]["marks"] + ([] if mark is None else [mark])
    b, p = r.ask(BANCO), r.ask(PUNTO)
    for name in b:
        assert (b[name] is None and p[name] is None) or {b[name], p[name]} == {RED, BLUE}


def _check_drawing(grid_cells, groups):
    """No two cells share a position, rows stay on the grid, and each cell of a group
    (a logical column / a run of one colour) is just below or just right of the one before,
    never below again once it has turned right."""
    positions = [(c["col"], c["row"]) for c in grid_cells]
    assert len(set(positions)) == len(positions)
    assert all(0 <= row < 6 and col >= 0 for col, row in positions)
    for group in groups:
        turned = False
        for (c0, r0), (c1, r1) in zip(group, group[1:], strict=False):
            if (c1, r1) == (c0, r0 + 1):
                assert not turned
            else:
                assert (c1, r1) == (c0 + 1, r0)
                turned = True
        if group:
            assert group[0][1] == 0


@settings(max_examples=80, deadline=None)
@given(_runs)
def test_drawings_and_mark_counts(runs):
    coups = _coups(runs)
    d = Roads(coups).to_dict()
    cells_ = d["big_road"]["cells"]
    lengths = [c["length"] for c in d["big_road"]["columns"]]
    groups = [[(c["col"], c["row"]) for c in cells_ if c["logical_col"] == n] for n in range(len(lengths))]
    _check_drawing(cells_, groups)
    assert len(cells_) == sum(lengths) == d["stats"]["banco"] + d["stats"]["punto"]
    assert sum(c["ties"] for c in cells_) + d["big_road"]["pending_ties"] == d["stats"]["tie"]
    for name, k in (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3)):
        road = d[name]
        # Every Big Road cell makes a mark except the first k columns and the top of column k.
        expected = 0 if len(lengths) <= k else len(cells_) - sum(lengths[:k]) - 1
        assert len(road["marks"]) == expected
        assert [c["color"] for c in road["cells"]] == road["marks"]
        runs_, prev = [], None
        for c in road["cells"]:
            if c["color"] != prev:
                runs_.append([])
                prev = c["color"]
            runs_[-1].append((c["col"], c["row"]))
        _check_drawing(road["cells"], runs_)
