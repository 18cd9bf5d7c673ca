"""BPE vocab aliases in the `.mtok` codec (mtok/codec.py, used by lower/whole_words.py): a text
starting with `ALIAS_MARK` may look up an id that has its own text.  The writer puts it where the
runtime keeps the id's own text (sorted before it) and leaves the top id slots empty; the reader
gives the aliases back and refuses duplicate ids that are not such aliases."""

from __future__ import annotations

import pytest

from mtok_export.errors import FormatError, UnsupportedError
from mtok_export.ir import Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.mtok.constants import ALIAS_MARK
from tests.mtok.test_codec_errors import DEC, H, NONE2, TAIL, ADDED0, bpe, u32

ALIASED = {ALIAS_MARK + "xab": 2, "a": 0, "b": 1, "ab": 2, ALIAS_MARK: 3}


def test_aliases_round_trip_and_keep_each_ids_text():
    tok = Tokenizer(model=M.BPE(ALIASED, (("a", "b"),)), decoder=D.Fuse())
    data = write_mtok(tok)
    for lazy in (False, True):
        back = read_mtok(data, lazy=lazy)[0].model.vocab
        assert dict(back) == ALIASED
        assert {i: t for t, i in back.items()}[2] == "ab"  # inverting keeps the id's own text
    # five entries, four ids: vocab_size 5, the alias sorted first (the runtime keeps the later text)
    body = data[len(H) + 2:]
    assert body[1:5] == u32(5)
    assert body.index(ALIAS_MARK.encode() + b"xab") < body.index(b"\x02\x00ab")


def test_the_writer_refuses_an_unmarked_second_text():
    with pytest.raises(UnsupportedError, match="vocab id 2 is used by both 'ab' and 'c'"):
        write_mtok(Tokenizer(model=M.BPE({"a": 0, "b": 1, "ab": 2, "c": 2}), decoder=D.Fuse()))
    with pytest.raises(UnsupportedError, match="vocab id 2 has no text"):
        write_mtok(Tokenizer(model=M.BPE({"a": 0, "b": 1, ALIAS_MARK + "b": 1, "c": 3}), decoder=D.Fuse()))


@pytest.mark.parametrize("entries, size, message", [
    (((b"a", 0), (b"b", 0)), 2, "vocab id 0 is used twice"),  # not marked: a corrupt file, not an alias
    (((ALIAS_MARK.encode() + b"a", 1), (b"a", 1)), 2, "id 0 has none"),  # the empty slot is not the top one
    (((ALIAS_MARK.encode() + b"a", 0), (b"a", 0), (b"b", 2)), 3, "id 1 has none"),
])
def test_the_reader_refuses_what_is_no_alias(entries, size, message):
    data = H + NONE2 + bpe(*entries, size=size) + DEC + ADDED0 + TAIL
    with pytest.raises(FormatError, match=message):
        read_mtok(data)
