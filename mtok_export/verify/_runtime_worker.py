"""Standalone worker that drives MNN's tokenizer; started by `mtok_export.verify.runtime`.

Run as ``python -I _runtime_worker.py REQUEST.json RESPONSE.json LOG PROGRESS``.  It must not import
`mtok_export`: it may run in another virtual environment that only has some `MNN` release.
Keep it compatible with old Pythons (3.6+) and free of third-party imports besides MNN.

Request:  {"config": path, "texts": [{"s": str} | {"hex": str}], "until": {"from": int, "seconds": float} (optional),
           "decode_ids": [int], "decode_encoded": bool,
           "chats": [[{"role": str, "content": str}, ...]], "encode_chats": bool,
           "renders": [{"jinja": {"chat_template", "eos", "context"}, "messages": [...]}],
           "renders_apart": {"config": path, "seconds": float} (optional),
           "robust": {"texts": [{"s": str} | {"hex": str}], "groups": [str], "stack": int, "seconds": float,
                      "memory": int, "results": path} (optional)}
Response: {"version": str, "encodes": [[int]] (with "until", possibly fewer than "texts"), "decodes": [[int, hex]], "chats": [str | null],
           "chat_encodes": [[int] | null] (with encode_chats: each rendered chat encoded),
           "renders": [str | null]}
          or {"error": {"kind": "import" | "load" | "python", "message": str}}
With "renders_apart" the renders load that config's tokenizer and may hang or fail without costing
the rest: the response without "renders" is written first, then the renders run under a timer of
"seconds" (SIGALRM, whose default action ends the process even inside MNN's C++), and the response
is written again with them.  A response without "renders" means they did not finish.
With "robust" the robustness inputs run last, after the response is written (a crash costs only
them): each encode on a thread with a stack of "stack" bytes (a recursion crash shows at short
inputs), under an address-space limit of "memory" bytes more than the process holds and a timer of
"seconds" plus a margin; one JSON line per input goes to "results" as it ends ({"i", "seconds" (wall),
"cpu" (the encoding thread's CPU seconds), "ids"}, {"i", "skipped"} or {"i", "error"}), so a crash or a kill leaves the finished ones and PROGRESS names the
input it died on.  Inputs of a group (a character class at growing lengths) are skipped once the
group's growth predicts one would not finish within what is left of "seconds".
Everything the process prints (including C/C++ output and Python tracebacks) goes to LOG; the
current step is kept in PROGRESS so that the caller can say what was running when it crashed.
"""

import json
import os
import signal
import sys
import threading
import time
import traceback

# Substrings MNN prints when the tokenizer did not load; using the engine after that dereferences null.
LOAD_FAILURES = ("Failed to load tokenizer", "tokenizer file not found", "magic number is wrong")
STEP_WIDTH = 64  # bytes of the progress record; every step name is shorter


def die_with_parent():
    """Linux: have the kernel SIGKILL this worker when the parent dies, even by kill -9 (the parent
    kills our process group itself on Ctrl-C, SIGTERM and timeout).  Exit now if it is already gone."""
    try:
        import ctypes  # inside the try: a Python built without _ctypes still runs the worker
        libc = ctypes.CDLL(None)
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except Exception:  # not Linux: the parent's own cleanup still applies
        return
    if os.environ.get("MTOK_PARENT_PID") not in (None, str(os.getppid())):
        os._exit(1)


def redirect_output(log_path):
    """Send fds 1 and 2 to the log at OS level and make C stdio unbuffered so a crash loses nothing."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        import ctypes  # inside the try: a Python built without _ctypes still runs the worker
        libc = ctypes.CDLL(None)
        for name in ("stdout", "stderr"):
            libc.setvbuf(ctypes.c_void_p.in_dll(libc, name), None, 2, 0)  # 2 = _IONBF (glibc)
    except Exception:  # not glibc: the C code may still flush at exit
        pass
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=True)
    os.replace(tmp, path)


def render_with(config_path, item, step, i):
    """Render item["messages"] with the `jinja` block item["jinja"] (template, eos, context).

    MNN 3.6.1 applies `jinja` from llm_config.json when an Llm is loaded (`set_config` after load
    does not change the template), so each render loads a fresh Llm; with the dummy model that
    takes well under a millisecond."""
    import MNN.llm as llm  # imported by `load` first, where a missing one is an error response, not a traceback

    step("render %d" % i)
    folder = os.path.dirname(config_path)
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    config["jinja"] = item["jinja"]
    with open(os.path.join(folder, "llm_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    model = llm.create(config_path)
    model.load()
    try:
        return model.apply_chat_template(item["messages"])
    except Exception:
        return None
    finally:
        del model


def current_address_space():
    """Bytes of address space this process holds (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def robust(model, req, step):
    """The robustness inputs (see the module's docstring)."""
    try:
        import resource  # POSIX only: elsewhere (ImportError, below) the timer alone bounds it
        held = current_address_space()
        if held:
            resource.setrlimit(resource.RLIMIT_AS, (held + int(req["memory"]), resource.RLIM_INFINITY))
    except (ImportError, ValueError, OSError):  # not Unix, or a lower hard limit: the timer still bounds it
        pass
    timer = getattr(signal, "setitimer", None)
    if timer:  # a hard stop past the budget (SIGALRM's default action ends the process inside C++)
        # twice the budget and one second: an input started within the budget that is still running
        # then is over it whatever the load (a SentencePiece-style BPE reads a 100 KB document as one
        # word: quadratic, minutes); a margin of 5 s made every such file wait 4 s more for the verdict
        timer(signal.ITIMER_REAL, float(req["seconds"]) * 2 + 1)
    results = os.open(req["results"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    end = time.monotonic() + float(req["seconds"])
    # the encoding thread's CPU time: what the file costs, whatever else the machine runs (3.7+)
    clock = getattr(time, "thread_time", time.perf_counter)
    last = {}  # group -> (length, seconds) of its last finished input

    def run():
        for i, (t, group) in enumerate(zip(req["texts"], req["groups"])):
            text = t["s"] if "s" in t else bytes.fromhex(t["hex"])
            left = end - time.monotonic()
            if group in last:  # quadratic from the last one: the runtime's BPE is, per word
                n, seconds = last[group]
                if seconds is None or seconds * (float(len(text)) / n) ** 2 > left:
                    last[group] = (n, None)  # stopped: every longer input of the group is skipped too
                    os.write(results, (json.dumps({"i": i, "skipped": "time budget"}) + "\n").encode())
                    continue
            elif left <= 0:
                os.write(results, (json.dumps({"i": i, "skipped": "time budget"}) + "\n").encode())
                continue
            step("robust %d" % i)
            start, cpu = time.perf_counter(), clock()
            try:
                ids = list(model.tokenizer_encode(text))
            except Exception as e:  # MemoryError under the limit, or the binding's own error
                os.write(results, (json.dumps({"i": i, "error": "%s: %s" % (type(e).__name__, e)}) + "\n").encode())
                last[group] = (max(len(text), 1), None)
                continue
            seconds = time.perf_counter() - start
            last[group] = (max(len(text), 1), max(seconds, 1e-6))
            os.write(results, (json.dumps({"i": i, "seconds": seconds, "cpu": clock() - cpu, "ids": ids})
                               + "\n").encode())

    threading.stack_size(int(req["stack"]))
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if timer:
        timer(signal.ITIMER_REAL, 0)
    os.close(results)


def load(req, log_path, response_path, step):
    """-> (MNN's version, the Llm with the tokenizer loaded), or None after writing the error response."""
    step("import MNN")
    try:
        # MNN in the try: a missing or broken one is the "import" error response, not a traceback
        import MNN
        import MNN.llm as llm
    except ImportError as e:
        write_json(response_path, {"error": {"kind": "import", "message": "%s: %s" % (type(e).__name__, e)}})
        return None
    version = MNN.version() if callable(getattr(MNN, "version", None)) else getattr(MNN, "__version__", "unknown")
    step("load")
    model = llm.create(req["config"])
    model.load()  # fails on the dummy model; the tokenizer is loaded before that
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read()
    if any(marker in log for marker in LOAD_FAILURES):
        write_json(response_path, {"error": {"kind": "load", "message": "MNN did not load the tokenizer"}})
        return None
    return str(version), model


def encode_texts(model, req, step):
    """Every text's ids; with "until" ({"from": i, "seconds": s}) the texts from index i on only
    while s seconds have not passed since the first encode (the caller's time budget: the rest is
    left out of the response, which is then shorter than "texts")."""
    until = req.get("until") or {}
    cut, end = until.get("from"), time.monotonic() + float(until.get("seconds") or 0)
    encodes = []
    for i, t in enumerate(req["texts"]):
        if cut is not None and i >= cut and not i % 256 and time.monotonic() > end:
            break
        step("encode %d" % i)
        encodes.append(list(model.tokenizer_encode(t["s"] if "s" in t else bytes.fromhex(t["hex"]))))
    return encodes


def decode_ids(model, req, encodes, step):
    ids = req["decode_ids"]
    if req.get("decode_encoded"):  # also every id the texts encoded to (ids unknown before the run)
        ids = sorted(set(ids).union(*encodes))
    decodes = []
    for i in ids:
        step("decode %d" % i)
        try:
            raw = model.tokenizer_decode(i).encode("utf-8")
        except UnicodeDecodeError as e:  # the binding decodes strictly; .object is the whole C++ string
            raw = bytes(e.object)
        decodes.append([i, raw.hex()])
    return decodes


def render_chats(model, req, step):
    """-> (each chat rendered, or None where the binding raised; with "encode_chats" each rendering's ids)."""
    chats = []
    for i, messages in enumerate(req["chats"]):
        step("chat %d" % i)
        try:
            chats.append(model.apply_chat_template(messages))
        except Exception:
            chats.append(None)
    chat_encodes = []
    if req.get("encode_chats"):  # the rendered chats' ids, in this process rather than another one
        for i, text in enumerate(chats):
            step("chat encode %d" % i)
            chat_encodes.append(None if text is None else list(model.tokenizer_encode(text)))
    return chats, chat_encodes


def renders(req, result, response_path, step):
    """The renders into `result`; with "renders_apart", after writing the response without them, on
    their own tokenizer under a timer (see the module's docstring).  -> False when they did not finish."""
    apart = req.get("renders_apart")
    if not apart:
        result["renders"] = [render_with(req["config"], item, step, i) for i, item in enumerate(req.get("renders", []))]
        return True
    write_json(response_path, result)
    timer = getattr(signal, "setitimer", None)  # Unix; elsewhere the caller's timeout still ends us
    if timer:
        timer(signal.ITIMER_REAL, apart["seconds"])
    try:
        result["renders"] = [render_with(apart["config"], item, step, i)
                             for i, item in enumerate(req.get("renders", []))]
    except Exception:  # the response already written says: renders not finished
        return False
    if timer:
        timer(signal.ITIMER_REAL, 0)
    return True


def main(argv):
    request_path, response_path, log_path, progress_path = argv[1:5]
    die_with_parent()
    redirect_output(log_path)
    progress = os.open(progress_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def step(text):
        # one write per encoded text or decoded id: a fixed-width record (space-padded) replaces the
        # last one without truncating first (the caller strips the padding)
        os.pwrite(progress, text.encode("utf-8").ljust(STEP_WIDTH), 0)

    try:
        with open(request_path, encoding="utf-8") as f:
            req = json.load(f)
        loaded = load(req, log_path, response_path, step)
        if loaded is None:
            return 0
        version, model = loaded
        encodes = encode_texts(model, req, step)
        decodes = decode_ids(model, req, encodes, step)
        chats, chat_encodes = render_chats(model, req, step)
        result = {"version": version, "encodes": encodes, "decodes": decodes, "chats": chats,
                  "chat_encodes": chat_encodes}
        if not renders(req, result, response_path, step):
            return 0
        step("done")
        write_json(response_path, result)
        if req.get("robust"):
            robust(model, req["robust"], step)
            step("done")
    except BaseException:
        write_json(response_path, {"error": {"kind": "python", "message": traceback.format_exc()}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
