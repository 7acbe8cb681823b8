# gradcheck: `make run` sweeps the registry and writes reports/; `make test` runs the tests.
# Both install what they need first (a virtual environment with the package and its extras).

# The interpreter .venv is made from: the first CPython 3.11 with venv and ensurepip among
# the distribution's /usr/bin/python3.11, python3.11 and python3 (PyTorch's CPU wheel on this
# machine's disk is for 3.11), else python3.  A distribution builds CPython with
# profile-guided optimisation and LTO; pyenv's default build has neither.  Here the
# distribution's 3.11.2 checked a third of the registry in 9.1-10.5 s of CPU against
# 11.2-12.6 s for pyenv's 3.11.7, and ran the tests in 496 s against 525 s (README, Speed;
# bench/interpreters.py measures it).
# `make PYTHON=...` chooses another; an existing .venv is kept (`make clean` first).
PY_CANDIDATES := /usr/bin/python3.11 python3.11 python3
PY_OK := import sys, venv, ensurepip; ensurepip.version(); sys.exit(sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11))
PYTHON ?= $(or $(firstword $(foreach p,$(PY_CANDIDATES),$(shell $(p) -c '$(PY_OK)' >/dev/null 2>&1 && echo $(p)))),python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2
# Small matrices: one BLAS thread per process is fastest when processes share 2 cores.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
# Python writes bytecode (into __pycache__/, which git ignores) even where the environment
# sets PYTHONDONTWRITEBYTECODE: without it every test process, sweep worker and Dask worker
# compiled the package again and pytest rewrote every test module's asserts again (four
# subprocess-heavy test files: 133 s of CPU with it set, 103-109 s without).
unexport PYTHONDONTWRITEBYTECODE
PYTEST_ARGS ?=
# Idle workers take queued tests from busy ones: with xdist's default scheduling one worker
# was handed all 155 slow registry tests (1-9 s each) and ran alone for the last 108 s.
XDIST  := -n $(JOBS) --dist worksteal

.PHONY: install run test test-fast smoke-report browser-deps lint bench sizes clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all,test]"
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install gradcheck with every extra

run: install  ## the main job: sweep the full suite, write reports/index.html and reports/results.json
	$(BIN)/gradcheck run --suite full --jobs $(JOBS) \
		--json reports/results.json --html reports/index.html

# Debian's chromium renders the HTML report in the browser test.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (Debian package) for the HTML report's browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: install browser-deps  ## every test (slow, TensorFlow and browser ones included), then the smoke report
	$(BIN)/pytest $(XDIST) $(PYTEST_ARGS)
	$(MAKE) smoke-report

test-fast: install  ## the quick local loop: no slow, TensorFlow or browser tests
	$(BIN)/pytest $(XDIST) -m "not slow and not tensorflow and not browser" $(PYTEST_ARGS)

smoke-report: install  ## a broken report must fail CI: render the smoke suite's report
	$(BIN)/gradcheck run --suite smoke --json reports/smoke.json --html reports/smoke.html

lint: install
	$(BIN)/ruff check gradcheck tests bench
	$(BIN)/mypy gradcheck

bench: install  ## speed and memory figures side by side with numpy, autograd, TensorFlow (and torch, JAX if installed); local vs Dask
	$(BIN)/python bench/engine_overhead.py
	$(BIN)/python bench/check_cost.py
	$(BIN)/python bench/check_memory.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python bench/blas_threads.py --busy 1
	$(BIN)/python bench/report_load.py
	$(BIN)/python bench/interpreters.py --candidates $(PY_CANDIDATES)
	$(BIN)/python bench/tf_forward.py

sizes:  ## lines per module (modules stay small)
	@find gradcheck -name '*.py' | xargs wc -l | sort -n | tail -15

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
