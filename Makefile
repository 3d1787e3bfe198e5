# The one place that knows how to install, build and test pytensor-onnx.
#
#   make example      installs everything and runs the bundled example
#   make test         the whole test suite (C++ and Python) on the default leg
#   make test-legs    the other CI legs: PyMC 5 / PyTensor 2.38 (full suite)
#                     and the unpinned newest releases on Python 3.13 (smoke)
#   make lock         re-resolves requirements/<leg>.lock.txt from <leg>.in
#                     (LOCK_LEGS="newest pymc5" by default)
#
# A "leg" is one tested environment: a Python version, a venv and a lock
# file of exact versions. LEG=newest (the default, what developers use):
# Python 3.12, PyMC 6, PyTensor 3.3.x. LEG=pymc5: Python 3.11, PyMC 5.28,
# PyTensor 2.38.x and the oldest supported numpy/onnx/onnxruntime.
# LEG=smoke: Python 3.13, newest releases, unlocked.

LEG ?= newest

PYVER_newest := 3.12
PYVER_pymc5 := 3.11
PYVER_smoke := 3.13
PYVER := $(PYVER_$(LEG))
ifeq ($(PYVER),)
$(error Unknown LEG=$(LEG); use newest, pymc5 or smoke)
endif

VENV_newest := .venv
VENV ?= $(if $(VENV_$(LEG)),$(VENV_$(LEG)),.venv-$(LEG))
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The requirements a leg installs: its lock file, except the smoke leg.
REQS := $(if $(filter smoke,$(LEG)),requirements/smoke.in,requirements/$(LEG).lock.txt)
CPP_BUILD := build/cpp
LOCK := flock /tmp/pytensor_onnx_build.lock
PYTEST_WORKERS ?= 2

.PHONY: all system-deps venv build cpp-tests py-tests smoke test test-legs example bench docs lock clean

all: build

# Debian packages: the protobuf compiler and library (serialization) and
# GoogleTest (C++ unit tests). Skipped when already present.
system-deps:
	@if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/message_lite.h ] \
	    || [ ! -f /usr/include/gtest/gtest.h ] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  $$SUDO apt-get install -y -qq protobuf-compiler libprotobuf-dev libgtest-dev cmake ninja-build g++ >/dev/null; \
	fi

# The venv of the leg, with exactly the versions of its lock file. Rebuilt
# when the lock (or pyproject.toml) changes.
$(VENV)/.installed-$(LEG): $(REQS) pyproject.toml
	@python=$${PYTHON_$(subst .,,$(PYVER)):-$$(tools/find_python.sh $(PYVER))} && \
	  echo "== venv $(VENV) (leg $(LEG)): $$python" && \
	  if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; assert "%d.%d" % sys.version_info[:2] == "$(PYVER)"' 2>/dev/null; then \
	    rm -rf $(VENV) && $$python -m venv $(VENV); fi
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r $(REQS)
	touch $@

venv: system-deps $(VENV)/.installed-$(LEG)

build: venv
	$(LOCK) $(PIP) install -q --no-build-isolation --no-deps -e .

cpp-tests: venv
	$(LOCK) sh -c 'cmake -S . -B $(CPP_BUILD) -G Ninja -DPYTENSOR_ONNX_BUILD_PYTHON=OFF -DPYTENSOR_ONNX_BUILD_TESTS=ON \
	    -DPython_EXECUTABLE=$(abspath $(PY)) >/dev/null && cmake --build $(CPP_BUILD)'
	ctest --test-dir $(CPP_BUILD) --output-on-failure

py-tests: build
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) tests/python

# Export, mode ONNX and one parity test per dispatch module.
smoke: build
	$(PY) -m pytest -q tests/python/test_smoke.py

test: cpp-tests py-tests

test-legs:
	$(MAKE) py-tests LEG=pymc5
	$(MAKE) smoke LEG=smoke

example: build
	$(PY) examples/mlp_classifier.py

# Every workload of issue 13 on every backend, one table (bench/results.md
# holds a committed run). The other bench/ scripts run on their own.
bench: build
	$(PY) bench/backends.py

# Regenerate the supported-op table (tests check it is current). Run on the
# default leg: the table is written for its PyTensor line.
docs: build
	$(VENV)/bin/pytensor-onnx ops --markdown > docs/ops.md

# Re-resolve the lock files: a fresh venv per leg installs the leg's .in file
# (newest releases within its bounds) and records the exact versions.
LOCK_LEGS ?= newest pymc5

lock:
	@for leg in $(LOCK_LEGS); do \
	  pyver=$$( [ $$leg = newest ] && echo $(PYVER_newest) || echo $(PYVER_pymc5) ); \
	  python=$$(tools/find_python.sh $$pyver) || exit 1; \
	  tmp=$$(mktemp -d) && $$python -m venv $$tmp && \
	  $$tmp/bin/python -m pip install -q --upgrade pip && \
	  $$tmp/bin/python -m pip install -q -r requirements/$$leg.in && \
	  { echo "# Exact versions of CI leg '$$leg' (Python $$pyver), from requirements/$$leg.in."; \
	    echo "# Regenerate with 'make lock'."; \
	    $$tmp/bin/python -m pip freeze --exclude-editable; } > requirements/$$leg.lock.txt && \
	  rm -rf $$tmp && echo "wrote requirements/$$leg.lock.txt" || exit 1; \
	done

clean:
	rm -rf build $(CPP_BUILD)
