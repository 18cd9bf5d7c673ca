"""The reference runs where its memory is bounded (`verify.bounded`, issue 40): its answer, progress
and errors come back as they would in-process; running out of its budget or dying of a signal is an
`InputError` naming the library and what it was doing (exit 2), never a kill of this process.
Each check is shown to fail on the wrong behaviour it is for (a call that is not bounded, an error
that is not passed on)."""

from __future__ import annotations

import os
import signal

import pytest

from mtok_export.errors import InputError
from mtok_export.verify import bounded
from mtok_export.verify.reference import ReferenceUnavailable

pytestmark = pytest.mark.skipif(not bounded.available(), reason="no fork here: the call runs in-process")


def test_the_answer_and_the_progress_come_back():
    told = []

    def call(tell):
        for k in range(3):
            tell(k, 3)
        return [[1, 2], [3]], os.getpid()

    value, pid = bounded.run(call, what="", library="lib", tell=lambda d, t: told.append((d, t)))
    assert value == [[1, 2], [3]] and told == [(0, 3), (1, 3), (2, 3)]
    assert pid != os.getpid()  # it ran in the child


def test_an_answer_that_cannot_be_pickled_is_asked_again_here():
    where = []
    f = bounded.run(lambda tell: where.append(os.getpid()) or (lambda s: s.upper()), what="", library="lib")
    assert f("a") == "A" and where[-1] == os.getpid() and len(where) == 1  # the child's append is not ours


def test_errors_come_back_as_themselves():
    def unavailable(tell):
        raise ReferenceUnavailable("no llama.cpp here", install="pip install llama-cpp-python")

    with pytest.raises(ReferenceUnavailable) as e:
        bounded.run(unavailable, what="", library="lib")
    assert e.value.install == "pip install llama-cpp-python"
    with pytest.raises(InputError, match="bad source"):
        bounded.run(lambda tell: (_ for _ in ()).throw(InputError("bad source")), what="", library="lib")


def test_running_out_of_the_budget_is_a_named_input_error():
    def greedy(tell):
        return len(bytearray(512 << 20))  # 512 MiB, four times the budget below

    with pytest.raises(bounded.OutOfMemory, match=r"the reference \(lib 1\.0\) ran out of its 0\.1 GB memory "
                                                  r"budget on the vocabulary sweep"):
        bounded.run(greedy, what=" on the vocabulary sweep", library="lib 1.0", memory=128 * 2**20)
    # the same call unbounded answers: the refusal above is the bound's, not the call's
    assert bounded.run(greedy, what="", library="lib", memory=0) == 512 << 20


def test_a_crash_is_named_not_a_crash_of_ours():
    with pytest.raises(InputError, match=r"the reference \(lib\) was killed by SIGABRT on the special tokens"):
        bounded.run(lambda tell: os.abort(), what=" on the special tokens", library="lib")
    with pytest.raises(InputError, match="killed by SIGSEGV"):
        bounded.run(lambda tell: os.kill(os.getpid(), signal.SIGSEGV), what="", library="lib")


def test_a_rust_allocation_failure_is_out_of_memory():
    """What a Rust library prints before it aborts on a failed allocation names the cause."""
    def rust_oom(tell):
        os.write(2, b"memory allocation of 34359738368 bytes failed\n")
        os.abort()

    with pytest.raises(bounded.OutOfMemory, match="ran out of its .* memory budget .*memory allocation of"):
        bounded.run(rust_oom, what="", library="tokenizers")
