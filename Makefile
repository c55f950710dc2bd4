# mabpd-kit: two commands. `make demo` and `make test` each set up .venv on first use.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.local-installed
# llama.cpp's own llama-server, built once per machine in the same compile as the bindings (tools/build_llama_cpp.sh)
LLAMA_SERVER_STAMP := $(VENV)/.llama-server-built
# Benchmark data is never committed; tests read the shared copy beside the repo (or your own dir).
SHARED_DATA := $(abspath ../shared/data)
export MABPD_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
export PYTHONDONTWRITEBYTECODE := 1
export MPLBACKEND := Agg
# Notebooks and tests never talk to a real endpoint unless you say so.
TEST_ENV := env -u MABPD_BASE_URL -u MABPD_API_KEY -u MABPD_MODEL -u OPENAI_API_KEY -u OPENAI_BASE_URL MABPD_OFFLINE=1
# Tiers that start Jupyter kernels re-run a test only when its kernel died before it answered (a port race
# in jupyter_client when two kernels start at once); a failing cell or assertion is never re-run.
KERNEL_RETRY := --reruns 2 --only-rerun "Kernel died before replying to kernel_info"

.PHONY: help setup local llama-server demo lint test test-real test-real-llama-server test-unit test-notebooks test-sync test-install test-browser test-fast lab bench exercises course lexicon clean

help:
	@echo "make demo   - set up .venv and run the offline demo (reports/demo.html)"
	@echo "make lint   - ruff check mabpd_kit tests tools bench (the first step of make test)"
	@echo "make test   - set up .venv and run every test (unit, notebooks, exercises in sync, install from a wheel, browser, a real model on both local servers)"
	@echo "make local  - install the local model (llama-cpp-python's server, llama.cpp's llama-server, SmolLM2-135M-Instruct); the first build takes ~10 minutes on 2 cores"
	@echo "make llama-server - llama.cpp's llama-server in ~/.cache/mabpd-kit (make local builds it; this rebuilds it if the bindings were cached before)"
	@echo "make lab    - JupyterLab on notebooks/"
	@echo "make bench  - print the performance figures (bench/)"
	@echo "make exercises - regenerate exercises/ from solutions/"
	@echo "make course - the course bundles: dist/course.zip for students (wheel, lessons, exercises), dist/instructor.zip (+ solutions, instructor pack, grade.py)"

$(STAMP): pyproject.toml tools/setup_venv.sh
	@PYTHON=$(PYTHON) VENV=$(VENV) bash tools/setup_venv.sh
	@touch $(STAMP)

setup: $(STAMP)

$(LOCAL_STAMP): $(STAMP) pyproject.toml tools/setup_local.sh tools/build_llama_cpp.sh
	@VENV=$(VENV) bash tools/setup_local.sh
	@touch $(LOCAL_STAMP)

local: $(LOCAL_STAMP)

$(LLAMA_SERVER_STAMP): $(LOCAL_STAMP) pyproject.toml tools/setup_llama_server.sh
	@VENV=$(VENV) bash tools/setup_llama_server.sh
	@touch $(LLAMA_SERVER_STAMP)

llama-server: $(LLAMA_SERVER_STAMP)

demo: $(STAMP)
	@$(BIN)/mabpd demo

lint: $(STAMP)
	@$(BIN)/ruff check mabpd_kit tests tools bench

test: $(STAMP)
	@$(MAKE) --no-print-directory lint test-unit test-sync test-notebooks test-install test-browser test-real test-real-llama-server

test-fast: $(STAMP)
	@$(MAKE) --no-print-directory lint test-unit test-sync test-notebooks

test-unit: $(STAMP)
	@$(TEST_ENV) $(BIN)/python -m pytest -q -n 2 -m "not browser and not real_model" --ignore=tests/test_install.py --ignore=tests/test_course_bundle.py tests

test-real: $(LOCAL_STAMP)
	@# a real model: SmolLM2-135M-Instruct on llama-cpp-python's server, 127.0.0.1 (tests/test_real_model.py)
	@$(TEST_ENV) MABPD_REAL_MODEL=1 MABPD_REAL_SERVERS=llama-cpp-python $(BIN)/python -m pytest -q -p no:cacheprovider -m real_model tests/test_real_model.py

test-real-llama-server: $(LLAMA_SERVER_STAMP)
	@# the same tier on llama.cpp's llama-server
	@$(TEST_ENV) MABPD_REAL_MODEL=1 MABPD_REAL_SERVERS=llama-server $(BIN)/python -m pytest -q -p no:cacheprovider -m real_model tests/test_real_model.py

test-sync: $(STAMP)
	@$(BIN)/python tools/make_exercises.py --check

test-notebooks: $(STAMP)
	@# lessons run with nbmake; solutions and exercises run in tests/test_exercises.py, which also checks
	@# that every check cell passes on the solution and fails (AssertionError + message) on the stub
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
	$(TEST_ENV) FAST=1 $(BIN)/python -m pytest -q -p no:cacheprovider --nbmake --nbmake-timeout=300 $(KERNEL_RETRY) -n 2 notebooks; \
	else echo "no notebooks yet"; fi
	@if ls solutions/*.ipynb >/dev/null 2>&1; then \
	$(TEST_ENV) FAST=1 MABPD_RUN_EXERCISES=1 $(BIN)/python -m pytest -q -p no:cacheprovider $(KERNEL_RETRY) -n 2 tests/test_exercises.py -k check_cells; \
	else echo "no solutions yet"; fi
	@# every lesson run as a student without benchmark data: it names its data and backs every score with an interval;
	@# and lesson 10 run again gives the figures the instructor documents quote
	@$(TEST_ENV) FAST=1 MABPD_RUN_LESSONS=1 $(BIN)/python -m pytest -q -p no:cacheprovider $(KERNEL_RETRY) -n 2 tests/test_lesson_honesty.py tests/test_instructor_pack.py

test-install: $(STAMP)
	@# the wheel in a fresh venv outside the repo; every notebook copied elsewhere, with and without data;
	@# a lesson from the course bundle (make course) installing the kit from the bundle's wheel, no network
	@$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider $(KERNEL_RETRY) -n 2 tests/test_install.py tests/test_course_bundle.py

test-browser: $(STAMP)
	@bash tools/ensure_chromium.sh
	@$(TEST_ENV) $(BIN)/python -m pytest -q -m browser tests

lab: $(STAMP)
	@$(BIN)/jupyter lab --notebook-dir=notebooks --LabApp.news_url=None

bench: $(STAMP)
	@for b in bench/bench_*.py; do echo "== $$b"; $(TEST_ENV) $(BIN)/python $$b || exit 1; done

exercises: $(STAMP)
	@$(BIN)/python tools/make_exercises.py

course: $(STAMP)
	@# course.json is the one setting (pip source, repository for launch links); see tools/make_course.py
	@$(BIN)/python tools/make_course.py cells --check
	@$(BIN)/python tools/make_course.py docs --check
	@$(BIN)/python tools/make_exercises.py --check
	@$(BIN)/python tools/make_course.py bundle --out dist

lexicon: $(STAMP)
	@$(BIN)/mabpd lexicon build

clean:
	rm -rf $(VENV) reports .pytest_cache build dist *.egg-info
