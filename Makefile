# Fresh machine: `make test` (set up + tests) or `make demo` (set up + export the samples).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test demo bench samples clean

$(BIN)/mtok-export: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

setup: $(BIN)/mtok-export

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

clean:
	rm -rf out .pytest_cache
