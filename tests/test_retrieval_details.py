"""Retrieval details the ranking tests do not pin, on small hand-written items: which index files a lexical-only
configuration writes. Written from surviving mutants of ``ragdial.retrieval`` (docs/testing.md, sessions 5-6)."""

from __future__ import annotations

from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.index import read_meta, write_index
from ragdial.schema import Knowledge, SourceKind

ITEMS = [
    Knowledge("h1:parking", "Free parking is available at Sunrise Lodge", SourceKind.FAQ, {"entity": "Sunrise Lodge"}),
    Knowledge("h1:wifi", "Wifi is free in every room of Sunrise Lodge", SourceKind.FAQ, {"entity": "Sunrise Lodge"}),
    Knowledge("h2:pets", "Pets are not allowed at Harbour Inn", SourceKind.FAQ, {"entity": "Harbour Inn"}),
]


def test_a_lexical_only_index_keeps_no_vectors_even_with_an_encoder_named(tmp_path):
    # fusion bm25 uses no dense score, so the encoder named in the config is not run and no vector is written
    write_index(ITEMS, tmp_path / "bm25", RetrieverConfig(encoder="hash", fusion="bm25"))
    assert read_meta(tmp_path / "bm25")["encoder"] is None
    assert not (tmp_path / "bm25" / "vectors.npy").exists()
    write_index(ITEMS, tmp_path / "rrf", RetrieverConfig(encoder="hash", fusion="rrf"))
    assert read_meta(tmp_path / "rrf")["encoder"] is not None
    assert (tmp_path / "rrf" / "vectors.npy").is_file()
