"""`mtok_export.signals` in a process of its own (the handlers are process-wide): what a stop signal
raises, and that a forked job's cleanup survives the second SIGINT a Ctrl-C on a fleet sends it."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A job as the fleet runs it: the export's runtime run nests handled(); the first signal arrives
# inside it, a second while the export unwinds (its `finally` removing the `.verifying` file).
JOB = textwrap.dedent("""
    import os, signal, sys
    from mtok_export import signals
    killed = []
    if sys.argv[1] == "forked":
        signals.for_forked_job()
    with signals.handled():  # the CLI's, or (forked) already installed: a no-op
        try:
            with signals.handled(), signals.on_stop(lambda: killed.append("group")):  # as verify/runtime.py
                os.kill(os.getpid(), getattr(signal, sys.argv[2]))
                print("not raised")
        except BaseException as e:
            print("raised", type(e).__name__)
            try:
                os.kill(os.getpid(), signal.SIGINT)  # the fleet's own SIGINT, during the cleanup
                print("cleanup finished")
            except BaseException as e:
                print("cleanup cut short by", type(e).__name__)
    print("kills", killed)
""")


def run(mode: str, signame: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", JOB, mode, signame], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("signame, raised", [("SIGINT", "KeyboardInterrupt"), ("SIGTERM", "Interrupted")])
def test_a_forked_job_raises_the_first_stop_signal_only(signame, raised):
    assert run("forked", signame) == [f"raised {raised}", "cleanup finished", "kills ['group']"]


def test_outside_a_forked_job_every_stop_signal_raises():
    # the single-model CLI: a second Ctrl-C still stops a cleanup a library might hold up
    assert run("cli", "SIGINT") == ["raised KeyboardInterrupt", "cleanup cut short by KeyboardInterrupt", "kills ['group']"]
