"""Prompt-lookup drafts (no model needed): the continuation of the latest earlier occurrence of the longest suffix."""

from __future__ import annotations

from ragdial.generation.lookup import DraftIndex


def test_draft_continues_the_latest_match_of_the_longest_suffix():
    index = DraftIndex([1, 2, 3, 4, 5, 9, 2, 3, 7, 8])
    for token in (2, 3):
        index.add(token)
    # suffix (2, 3) last occurred at 6..7, followed by 7, 8, then the reply's own 2, 3
    assert index.draft(2) == [7, 8]
    assert index.draft(10) == [7, 8, 2, 3]
    index.add(4)
    assert index.draft(3) == [5, 9, 2]  # (2, 3, 4) only occurs at the start


def test_no_draft_without_a_two_token_match_or_room():
    index = DraftIndex([1, 2, 3, 4])
    index.add(9)
    assert index.draft(4) == []  # (4, 9) never occurred; a single-token match is not used
    assert DraftIndex([1, 2, 1, 2]).draft(0) == []
    assert DraftIndex([]).draft(3) == []


def test_a_draft_is_cut_to_fill_whole_blocks_of_the_batch():
    from ragdial.generation.lookup import fit_draft

    draft = list(range(10))
    # with the token before it, a call holds 4 or 8 rows (llama.cpp multiplies 4 rows at a time)
    assert fit_draft(draft) == list(range(7))
    assert fit_draft(draft[:6]) == fit_draft(draft[:3]) == [0, 1, 2]
    assert fit_draft(draft[:2]) == [] and fit_draft([]) == []
    assert fit_draft(draft[:5], block=1) == draft[:5]  # no blocks: only the minimum length applies
    assert fit_draft(draft[:2], block=1) == []
