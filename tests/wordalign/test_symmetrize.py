"""Pharaoh links, symmetrisation heuristics (hand-worked grids), one-to-one and identity filters."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.wordalign.symmetrize import (
    HEURISTICS,
    drop_identical,
    filter_links,
    format_pharaoh,
    one_to_one,
    parse_pharaoh,
    read_pharaoh,
    symmetrize,
    write_pharaoh,
)

# The main worked example, 5 source rows (e) x 5 target columns (f).
# B = in both directions, 1 = forward (A1) only, 2 = reverse (A2) only.
#
#          f=0 f=1 f=2 f=3 f=4
#    e=0    B   .   1   .   .
#    e=1    .   1   .   .   .
#    e=2    .   .   B   2   .
#    e=3    1   .   .   .   .
#    e=4    .   .   .   .   2
#
# intersection = {00, 22}; union = {00, 02, 11, 22, 23, 30, 44}.
#
# grow (4 neighbours), start {00, 22} (aligned e: 0 2, f: 0 2):
#   (0,0): up/left outside, (1,0) (0,1) not in the union.
#   (2,2): (1,2) (2,1) (3,2) not in the union; (2,3) is, f=3 unaligned -> add 23.
#   (2,3): no neighbour in the union is new.  Next pass adds nothing.
#   grow = {00, 22, 23}            (11 is only a diagonal neighbour: not grown)
# grow-diag, same start:
#   (0,0): ... the diagonal (1,1) is in the union, e=1 unaligned -> add 11.
#   (1,1): diagonal (0,2) is in the union but e=0 and f=2 are both aligned -> no.
#   (2,2): (2,3) -> add 23 as in grow.
#   grow-diag = {00, 11, 22, 23}
# final(A1) on grow-diag (aligned e: 0 1 2, f: 0 1 2 3), points in order:
#   02: e=0, f=2 aligned -> no;  30: e=3 unaligned (f=0 aligned) -> add.
# final(A2): 44: both unaligned -> add.
#   grow-diag-final = {00, 11, 22, 23, 30, 44}       (02 never: both its words aligned)
# final-and(A1): 02 no; 30 no (f=0 aligned).  final-and(A2): 44 both unaligned -> add.
#   grow-diag-final-and = {00, 11, 22, 23, 44}
A1 = {(0, 0), (0, 2), (1, 1), (2, 2), (3, 0)}
A2 = {(0, 0), (2, 2), (2, 3), (4, 4)}
EXPECTED = {
    "intersection": {(0, 0), (2, 2)},
    "union": {(0, 0), (0, 2), (1, 1), (2, 2), (2, 3), (3, 0), (4, 4)},
    "grow": {(0, 0), (2, 2), (2, 3)},
    "grow-diag": {(0, 0), (1, 1), (2, 2), (2, 3)},
    "grow-diag-final": {(0, 0), (1, 1), (2, 2), (2, 3), (3, 0), (4, 4)},
    "grow-diag-final-and": {(0, 0), (1, 1), (2, 2), (2, 3), (4, 4)},
}


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_worked_example(heuristic: str) -> None:
    assert symmetrize(A1, A2, heuristic) == EXPECTED[heuristic]
    assert symmetrize(A1, A2, heuristic, n_src=5, n_tgt=5) == EXPECTED[heuristic]


def test_grow_diag_adds_a_diagonal_neighbour_that_grow_does_not() -> None:
    assert (1, 1) in symmetrize(A1, A2, "grow-diag")
    assert (1, 1) not in symmetrize(A1, A2, "grow")


def test_final_adds_a_half_aligned_point_but_final_and_does_not() -> None:
    # (3,0): source word 3 unaligned, target word 0 aligned by (0,0).
    assert (3, 0) in symmetrize(A1, A2, "grow-diag-final")
    assert (3, 0) not in symmetrize(A1, A2, "grow-diag-final-and")
    # (4,4): both words unaligned, so both variants add it.
    assert (4, 4) in symmetrize(A1, A2, "grow-diag-final-and")


def test_state_is_updated_immediately() -> None:
    #        f=0 f=1
    #  e=0    B   1
    #  e=1    1   2
    # From (0,0) the neighbours in order: (1,0) e=1 unaligned -> add; (0,1) f=1 unaligned
    # -> add; then the diagonal (1,1): e=1 and f=1 are now both aligned -> not added
    # (with a deferred update it would be). final(A2) cannot add it either.
    fwd = {(0, 0), (1, 0), (0, 1)}
    rev = {(0, 0), (1, 1)}
    assert symmetrize(fwd, rev, "grow-diag") == {(0, 0), (1, 0), (0, 1)}
    assert symmetrize(fwd, rev, "grow-diag-final") == {(0, 0), (1, 0), (0, 1)}


def test_grow_is_not_always_inside_grow_diag() -> None:
    #        f=0 f=1 f=2
    #  e=0    B   .   .
    #  e=1    .   1   .
    #  e=2    .   2   B
    # grow, pass 1: (0,0) has no 4-neighbour in the union; row 1 has no point yet;
    #   (2,2): the left neighbour (2,1), f=1 unaligned -> add (it lies left of (2,2), so
    #   it is visited in the next pass).
    # grow, pass 2: (2,1): the upper neighbour (1,1), e=1 unaligned -> add.
    #   grow = {00, 11, 21, 22}
    # grow-diag: (0,0) first adds the diagonal (1,1) (e=1, f=1 free); when (2,2) is
    # visited, (2,1) has e=2 and f=1 aligned -> {00, 11, 22}, without 21.
    fwd = {(0, 0), (1, 1), (2, 2)}
    rev = {(0, 0), (2, 1), (2, 2)}
    assert symmetrize(fwd, rev, "grow") == {(0, 0), (1, 1), (2, 1), (2, 2)}
    assert symmetrize(fwd, rev, "grow-diag") == {(0, 0), (1, 1), (2, 2)}


def test_points_added_later_in_a_row_are_visited_in_the_same_pass() -> None:
    # A diagonal chain grows from (0,0) to (3,3): each point adds the next one.
    #   e=0: B . . .
    #   e=1: . 1 . .
    #   e=2: . . 2 .
    #   e=3: . . . 1
    fwd = {(0, 0), (1, 1), (3, 3)}
    rev = {(0, 0), (2, 2)}
    assert symmetrize(fwd, rev, "grow-diag") == {(0, 0), (1, 1), (2, 2), (3, 3)}
    # A horizontal chain: (0,0) -> (0,1) -> (0,2), source word 0 aligned, targets free.
    assert symmetrize({(0, 0), (0, 1)}, {(0, 0), (0, 2)}, "grow") == {(0, 0), (0, 1), (0, 2)}


def _random_links(rng: random.Random, n_src: int, n_tgt: int, p: float) -> set[tuple[int, int]]:
    return {(i, j) for i in range(n_src) for j in range(n_tgt) if rng.random() < p}


def _aligned(links: set[tuple[int, int]]) -> tuple[set[int], set[int]]:
    return {i for i, _ in links}, {j for _, j in links}


def test_inclusions_and_fixpoints_on_random_alignments() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        n_src, n_tgt = rng.randint(1, 9), rng.randint(1, 9)
        fwd = _random_links(rng, n_src, n_tgt, rng.uniform(0.05, 0.4))
        rev = _random_links(rng, n_src, n_tgt, rng.uniform(0.05, 0.4))
        rev |= set(rng.sample(sorted(fwd), k=len(fwd) // 2))  # a sizeable intersection
        r = {h: symmetrize(fwd, rev, h, n_src=n_src, n_tgt=n_tgt) for h in HEURISTICS}
        union = fwd | rev
        assert r["intersection"] == fwd & rev and r["union"] == union
        assert r["intersection"] <= r["grow"] <= union
        assert r["intersection"] <= r["grow-diag"] <= r["grow-diag-final"] <= union
        assert r["grow-diag"] <= r["grow-diag-final-and"] <= union
        # Fixpoint of grow-diag: no union neighbour of an aligned point has a free word.
        src, tgt = _aligned(r["grow-diag"])
        for e, f in r["grow-diag"]:
            for de in (-1, 0, 1):
                for df in (-1, 0, 1):
                    p = (e + de, f + df)
                    if p in union - r["grow-diag"]:
                        assert p[0] in src and p[1] in tgt
        # After final: every union point left out has both words aligned ...
        src, tgt = _aligned(r["grow-diag-final"])
        assert all(e in src and f in tgt for e, f in union - r["grow-diag-final"])
        # ... after final-and: at least one.
        src, tgt = _aligned(r["grow-diag-final-and"])
        assert all(e in src or f in tgt for e, f in union - r["grow-diag-final-and"])
        # Lengths only bound the loops: the result does not depend on them.
        assert symmetrize(fwd, rev, "grow-diag-final-and") == r["grow-diag-final-and"]


def test_empty_and_one_sided_inputs() -> None:
    for h in HEURISTICS:
        assert symmetrize(set(), set(), h) == set()
    # No intersection: nothing to grow from; final adds the points in order.
    #   A1 = {00, 01}: final adds 00 (free), 01 (e=0 aligned, f=1 free); final-and only 00.
    assert symmetrize({(0, 0), (0, 1)}, set(), "grow-diag") == set()
    assert symmetrize({(0, 0), (0, 1)}, set(), "grow-diag-final") == {(0, 0), (0, 1)}
    assert symmetrize({(0, 0), (0, 1)}, set(), "grow-diag-final-and") == {(0, 0)}


def test_unknown_heuristic_and_links_out_of_range() -> None:
    with pytest.raises(ConfigError, match="grow-diag-final-and"):
        symmetrize(A1, A2, "grow-diagonal")
    with pytest.raises(InputError, match="outside"):
        symmetrize(A1, A2, "union", n_src=4, n_tgt=5)
    with pytest.raises(InputError, match="non-negative"):
        symmetrize({(-1, 0)}, set(), "union")


def test_parse_and_format_round_trip() -> None:
    assert parse_pharaoh("0-0 1-2 2-1") == {(0, 0), (1, 2), (2, 1)}
    assert parse_pharaoh("") == set() and parse_pharaoh("   ") == set()
    assert parse_pharaoh("1-1 1-1 0-3") == {(1, 1), (0, 3)}
    assert format_pharaoh({(2, 1), (0, 0), (1, 2), (0, 5)}) == "0-0 0-5 1-2 2-1"
    assert format_pharaoh(set()) == ""
    rng = random.Random(7)
    for _ in range(50):
        links = _random_links(rng, 12, 12, 0.2)
        assert parse_pharaoh(format_pharaoh(links)) == links


@pytest.mark.parametrize("token", ["0-", "a-1", "1-2-3", "-1-2", "1--2", "1:2", "1-²"])
def test_parse_errors_name_where(token: str) -> None:
    with pytest.raises(InputError, match=r"align\.txt line 3: bad link"):
        parse_pharaoh(f"0-0 {token}", where="align.txt line 3")


def test_parse_range_check() -> None:
    assert parse_pharaoh("2-3", n_src=3, n_tgt=4) == {(2, 3)}
    with pytest.raises(InputError, match=r"a\.txt line 1: .*source index 3.*3 source"):
        parse_pharaoh("3-0", where="a.txt line 1", n_src=3, n_tgt=4)
    with pytest.raises(InputError, match=r"target index 4.*4 target"):
        parse_pharaoh("0-4", where="a.txt line 1", n_src=3, n_tgt=4)


def test_read_and_write_files(tmp_path: Path) -> None:
    sents = [{(0, 0), (1, 1)}, set(), {(2, 0)}]
    out = tmp_path / "out.align"
    assert write_pharaoh(sents, out) == 3
    assert out.read_text() == "0-0 1-1\n\n2-0\n"
    assert list(read_pharaoh(out)) == sents
    gz = tmp_path / "in.align.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("0-1\n1-x\n")
    it = read_pharaoh(gz)
    assert next(it) == {(0, 1)}
    with pytest.raises(InputError, match=r"in\.align\.gz: line 2: bad link '1-x'"):
        next(it)


def test_one_to_one() -> None:
    #        f=0 f=1 f=2 f=3 f=4
    #  e=0    x   .   .   .   .     00 kept
    #  e=1    .   x   x   .   .     e=1 has two targets: 11, 12 dropped
    #  e=2    .   .   .   x   .     f=3 has two sources: 23, 33 dropped
    #  e=3    .   .   .   x   .
    #  e=4    .   .   .   .   x     44 kept
    links = {(0, 0), (1, 1), (1, 2), (2, 3), (3, 3), (4, 4)}
    assert one_to_one(links) == {(0, 0), (4, 4)}
    assert one_to_one(set()) == set()


def test_drop_identical() -> None:
    src = ["Berlin", "is", "big", "2020"]
    tgt = ["berlin", "ist", "Berlin", "groß", "2020"]
    links = {(0, 0), (0, 2), (1, 1), (2, 3), (3, 4)}
    assert drop_identical(links, src, tgt) == {(0, 0), (1, 1), (2, 3)}
    assert drop_identical(links, src, tgt, casefold=True) == {(1, 1), (2, 3)}
    with pytest.raises(InputError, match=r"s\.txt line 2: link 4-0 out of range"):
        drop_identical({(4, 0)}, src, tgt, where="s.txt line 2")


def test_filter_links_order_and_counts() -> None:
    src = ["a", "b", "c"]
    tgt = ["a", "x", "y", "c"]
    # one-to-one first: b-x b-y dropped (b has two targets) -> {a-a, c-c};
    # then the identical a-a and c-c go too.
    links = {(0, 0), (1, 1), (1, 2), (2, 3)}
    kept, counts = filter_links(links, src, tgt, one_to_one=True, drop_identical=True)
    assert kept == set() and counts == {"not_one_to_one": 2, "identical": 2}
    kept, counts = filter_links(links, src, tgt, one_to_one=True, drop_identical=False)
    assert kept == {(0, 0), (2, 3)} and counts == {"not_one_to_one": 2, "identical": 0}
    kept, counts = filter_links(links, src, tgt, one_to_one=False, drop_identical=True)
    assert kept == {(1, 1), (1, 2)} and counts == {"not_one_to_one": 0, "identical": 2}
    kept, counts = filter_links(links, src, tgt, one_to_one=False, drop_identical=False)
    assert kept == links and counts == {"not_one_to_one": 0, "identical": 0}
    with pytest.raises(InputError, match="out of range"):
        filter_links({(3, 0)}, src, tgt, one_to_one=True, drop_identical=False)
