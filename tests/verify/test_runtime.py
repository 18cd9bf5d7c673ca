"""Tests of `mtok_export.verify.runtime` against the real MNN runtime, with `.mtok` files built by hand
from the spec (section 2.10 worked example), not by the project's writer."""

from __future__ import annotations

import os
import stat
import struct
import sys
import time

import pytest

from mtok_export.errors import RuntimeEngineError
from mtok_export.verify.runtime import RuntimeResult, run_runtime

from tests.support.marks import needs_mnn


# Spec 2.10: vocab {"a":0,"b":1,"ab":2,"<s>":3}, merge (a, b), no normalizer/pre-tokenizer, decoder
# written as 0 (= ByteLevel), added special "<s>" (id 3), header special = stop = [3], prefix = [].
WORKED_VOCAB = {"a": 0, "b": 1, "ab": 2, "<s>": 3}
# Extra ids for single-id decode; with the ByteLevel decoder they are GPT-2 byte characters:
# "\u0120" = byte 0x20, "\u00e4" = byte 0xE4 (first byte of U+4E2D), "\u00e4\u00b8\u0143" = e4 b8 ad.
DECODE_VOCAB = {**WORKED_VOCAB, "\u0120": 4, "\u00e4": 5, "\u00e4\u00b8\u0143": 6, "a\u00e4": 7}
MESSAGES_TEMPLATE = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"


def _str(b: bytes | str) -> bytes:
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<H", len(b)) + b


def build_mtok(vocab: dict[str, int] = WORKED_VOCAB, *, template: str = "{{x}}",
               header: bytes = b"430 4\n1 1 0\n3 3\n") -> bytes:
    """A BPE `.mtok` laid out as in spec 2.10 (merge a+b rank 0, added special <s>, eos </s>, bos <s>)."""
    body = b"\x00"                                           # normalizer: none
    body += b"\x00"                                          # pre-tokenizer: none
    body += struct.pack("<BIBBI", 0, len(vocab), 0, 0, 1)    # BPE, vocab size, byte_fallback, byte_level, 1 merge
    for token, i in sorted(vocab.items(), key=lambda kv: kv[0].encode()):  # sorted by UTF-8 bytes
        body += _str(token) + struct.pack("<I", i)
    body += struct.pack("<III", vocab["a"], vocab["b"], 0)  # merge (a, b) rank 0
    body += b"\x00"                                          # decoder 0 = ByteLevel
    body += struct.pack("<I", 1) + struct.pack("<IBBB", 3, 1, 0, 0) + _str("<s>")  # added <s>, special
    tpl = template.encode()
    body += struct.pack("<I", len(tpl)) + tpl                # chat template
    body += _str("</s>") + b"\x01" + _str("<s>")             # eos, flags (clean_up), bos
    body += struct.pack("<H", 2) + b"\x01" + struct.pack("<I", 3) + b"\x00"  # post program [<s>, $A]
    return header + body


@pytest.fixture
def write(tmp_path):
    def _write(data: bytes, name: str = "tokenizer.mtok"):
        path = tmp_path / name
        path.write_bytes(data)
        return path
    return _write


def test_worked_example_bytes_match_spec_dump():
    data = build_mtok()
    assert data[:0x10] == b"430 4\n1 1 0\n3 3\n"
    assert data[0x12:0x1d].hex() == "00" "04000000" "00" "00" "01000000"
    assert data[0x1d:0x26].hex() == "0300" "3c733e" "03000000"
    assert data.endswith(bytes.fromhex("0300" "3c733e" "0200" "01" "03000000" "00"))


@needs_mnn
def test_encode_worked_example(write):
    r = run_runtime(write(build_mtok()),
                    texts=["ab", "abab<s>ab", "aab", "ba", "", "c", b"a\xffb", "a\x00b"])
    assert isinstance(r, RuntimeResult)
    assert r.version.startswith("3.")
    assert r.encodes == [
        [2],           # a b -> merge rank 0 -> "ab"
        [2, 2, 3, 2],  # split at header special <s>; abab -> ab ab; 3.6 ignores the post program
        [0, 2],        # a a b: only (a, b) merges
        [1, 0],        # no merge (b, a)
        [],            # empty: no prefix ids
        [],            # unknown character dropped silently
        [2],           # malformed byte dropped before merging, a b -> ab
        [0],           # C string: everything after NUL is lost
    ]
    assert "Load module failed" in r.log  # the dummy model's load error is captured, not printed


@needs_mnn
def test_encode_adds_header_prefix(write):
    r = run_runtime(write(build_mtok(header=b"430 4\n1 1 1\n3 3 3\n")), texts=["", "ab"])
    assert r.encodes == [[3], [3, 2]]


@needs_mnn
def test_single_id_decode_returns_raw_bytes(write):
    r = run_runtime(write(build_mtok(DECODE_VOCAB)), decode_ids=[0, 1, 2, 3, 4, 5, 6, 7, 99, -1])
    assert r.decodes == {0: b"a", 1: b"b", 2: b"ab", 3: b"<s>", 4: b" ", 5: b"\xe4",
                         6: "\u4e2d".encode(), 7: b"a\xe4", 99: b"", -1: b""}


@needs_mnn
def test_chat_template_embedded_and_override(write):
    path = write(build_mtok(template=MESSAGES_TEMPLATE + "{% if add_generation_prompt %}[G]{% endif %}"
                                     "|{{ bos_token }}|{{ eos_token }}"))
    chats = [[{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}], [], ["not a message"]]
    r = run_runtime(path, chats=chats)
    assert r.chats == ["<system>S<user>hi[G]|<s>|</s>", "[G]|<s>|</s>", None]
    r = run_runtime(path, chats=chats[:1], llm_config={"jinja": {
        "chat_template": "{{ messages|length }}:{{ eos_token }}:{{ bos_token }}:{{ foo }}",
        "eos": "<E>", "bos": "<ignored>", "context": {"foo": "F"}}})
    assert r.chats == ["2:<E>:<s>:F"]


@needs_mnn
def test_chat_renderings_are_encoded_in_the_same_process(write):
    """`encode_chats` encodes each rendering where it was made: the ids a second process gives for
    the same texts, and None where the render raised."""
    path = write(build_mtok(template=MESSAGES_TEMPLATE + "ab"))
    chats = [[{"role": "user", "content": "ab"}], ["not a message"]]
    r = run_runtime(path, chats=chats, encode_chats=True)
    assert r.chats[1] is None and r.chat_encodes[1] is None
    assert r.chat_encodes[:1] == run_runtime(path, texts=r.chats[:1]).encodes
    assert run_runtime(path, chats=chats).chat_encodes == []  # only when asked


@needs_mnn
def test_legacy_name_is_kept(write):
    r = run_runtime(write(build_mtok(), name="tokenizer.txt"), texts=["ab"])
    assert r.encodes == [[2]]


@needs_mnn
def test_bad_magic_is_a_load_error(write):
    with pytest.raises(RuntimeEngineError, match="could not load(.|\n)*magic number is wrong"):
        run_runtime(write(b"431 4\n0 0 0\n\n" + b"\0" * 16), texts=["ab"], check=False)


@needs_mnn
def test_crash_reports_signal_and_input(write):
    data = build_mtok()
    data = data[:0x12] + b"\x09" + data[0x13:]  # unknown model code: model_ is null, encode crashes
    with pytest.raises(RuntimeEngineError, match=r"killed by SIG\w+.*encode of text #1 'boom'") as e:
        run_runtime(write(data), texts=["", "boom"], timeout=60, check=False)
    assert "Load module failed" in str(e.value)  # the log tail is included


def _script(tmp_path, body: str):
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.runtime
def test_timeout_kills_the_process_group(tmp_path, write):
    pidfile = tmp_path / "child.pid"
    python = _script(tmp_path, f"sleep 30 & echo $! > {pidfile}\nwait")
    start = time.monotonic()
    with pytest.raises(RuntimeEngineError, match="did not finish within 0.5s"):
        run_runtime(write(build_mtok()), texts=["ab"], python=python, timeout=0.5)
    assert time.monotonic() - start < 5
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the worker's child process survived the timeout")


@pytest.mark.runtime
def test_missing_mnn_is_explained(tmp_path, write):
    python = _script(tmp_path, f'exec "{sys.executable}" -S "$@"')  # -S: no site-packages, so no MNN
    with pytest.raises(RuntimeEngineError, match="not importable") as e:
        run_runtime(write(build_mtok()), texts=["ab"], python=python)
    assert str(python) in str(e.value) and "pip install MNN==3.6.1" in str(e.value)


@pytest.mark.runtime
def test_missing_file_and_interpreter(tmp_path, write):
    with pytest.raises(RuntimeEngineError, match="not found"):
        run_runtime(tmp_path / "nope.mtok", texts=["ab"])
    with pytest.raises(RuntimeEngineError, match="cannot start"):
        run_runtime(write(build_mtok()), texts=["ab"], python=tmp_path / "no-such-python")


def test_invalid_inputs_are_refused_before_running(write):
    path = write(build_mtok())
    with pytest.raises(ValueError, match="not valid Unicode"):
        run_runtime(path, texts=["\ud800"])  # would segfault MNN
    with pytest.raises(ValueError, match="int32"):
        run_runtime(path, decode_ids=[2**32])


@needs_mnn
def test_while_running_runs_during_the_worker_and_a_failure_kills_it(write, tmp_path):
    """`while_running` is this process's work while the runtime's process runs: called once, before
    the result is read; when it raises, the worker is killed and the error propagates."""
    path = write(build_mtok(DECODE_VOCAB))
    seen = []
    r = run_runtime(path, texts=["ab"], while_running=lambda: seen.append(1))
    assert seen == [1] and r.encodes == [[2]]

    def boom():
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        run_runtime(path, texts=["ab"], while_running=boom)


def _render(template: str, content: str = "hi") -> dict:
    return {"jinja": {"chat_template": template, "eos": "</E>", "context": {}},
            "messages": [{"role": "user", "content": content}]}


@needs_mnn
def test_renders_apart_use_their_own_tokenizer_in_the_same_process(write):
    """With `renders_apart` the renders run last in the one runtime process, with the tokenizer given
    (its bos), while the rest runs on the file; the file's results are unchanged by them."""
    from mtok_export.verify.chat_parity import _tiny_mtok

    path = write(build_mtok())
    items = [_render("{{ bos_token }}|{{ messages[0]['content'] }}|{{ eos_token }}")]
    r = run_runtime(path, texts=["ab"], renders=items, renders_apart=(_tiny_mtok("<B>", "</x>"), 10.0))
    assert r.encodes == run_runtime(path, texts=["ab"]).encodes and r.renders == ["<B>|hi|</E>"]
    assert run_runtime(path, renders=items).renders == ["<s>|hi|</E>"]  # without: the file's bos


@needs_mnn
def test_renders_apart_that_hang_cost_only_the_renders(write):
    """A template that hangs MNN's renderer: apart, the renders are cut off after their seconds and
    come back None, with the file's results; not apart, the whole run fails."""
    from mtok_export.verify.chat_parity import _tiny_mtok

    path = write(build_mtok())
    hang = [_render("{% for a, b in [('x', 1), ('y', 2)] %}{{ a }}{{ b }}{% endfor %}")]
    start = time.monotonic()
    r = run_runtime(path, texts=["ab"], renders=hang, renders_apart=(_tiny_mtok("<s>", "</s>"), 1.0), timeout=30)
    assert r.renders is None and r.encodes == run_runtime(path, texts=["ab"]).encodes and time.monotonic() - start < 15
    with pytest.raises(RuntimeEngineError, match="did not finish within 2s"):
        run_runtime(path, texts=["ab"], renders=hang, timeout=2)
