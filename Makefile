# The one place that knows how to install, build and test pytensor-onnx.
# `make example` installs everything and runs the bundled example;
# `make test` runs the whole test suite (C++ and Python).

VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
CPP_BUILD := build/cpp
LOCK := flock /tmp/pytensor_onnx_build.lock

.PHONY: all system-deps venv build cpp-tests py-tests test example bench docs clean

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

$(VENV)/.deps-installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "scikit-build-core>=0.10" "nanobind>=2.0" "onnx>=1.16" "onnxruntime>=1.18" \
	    "pytensor>=2.30" "numpy>=1.26" "pytest>=8" "hypothesis>=6.100"
	touch $@

venv: system-deps $(VENV)/.deps-installed

build: venv
	$(LOCK) $(PIP) install -q --no-build-isolation -e .

cpp-tests: venv
	$(LOCK) sh -c 'cmake -S . -B $(CPP_BUILD) -G Ninja -DPYTENSOR_ONNX_BUILD_PYTHON=OFF -DPYTENSOR_ONNX_BUILD_TESTS=ON \
	    -DPython_EXECUTABLE=$(abspath $(PY)) >/dev/null && cmake --build $(CPP_BUILD)'
	ctest --test-dir $(CPP_BUILD) --output-on-failure

py-tests: build
	$(PY) -m pytest -q tests/python

test: cpp-tests py-tests

example: build
	$(PY) examples/mlp_classifier.py

bench: build
	$(PY) bench/overhead.py
	$(PY) bench/elementwise.py
	$(PY) bench/conversion.py

# Regenerate the supported-op table (tests check it is current).
docs: build
	$(VENV)/bin/pytensor-onnx ops --markdown > docs/ops.md

clean:
	rm -rf build $(CPP_BUILD)
