# The one place that knows how to install, build and test pytensor-onnx.
#
#   make example      installs everything and runs the bundled example
#   make test         the whole test suite (C++ and Python) on the default leg
#   make test-legs    the other CI legs: PyMC 5 / PyTensor 2.38 (full suite)
#                     and the unpinned newest releases on Python 3.13 (smoke)
#   make deploy-tests exported models in onnxruntime-node, onnxruntime-web
#                     (Node) and headless Chromium, in the C++ program
#                     (deploy/cpp) and in ONNX Runtime's mobile format (.ort),
#                     against PyTensor's and PyMC's numbers; the JavaScript
#                     NUTS sampler (deploy/nuts) against pm.sample
#   make deploy-cpp   builds the C++ program, build/deploy-cpp/pymc_logp
#   make example-web  serves the example page (examples/web) on port 8000
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
LOCK := flock /tmp/pytensor_onnx_build.lock
PYTEST_WORKERS ?= 2
# ccache (CMakeLists.txt): paths under the checkout are hashed relative to it,
# so the legs' build directories share compiled objects.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: all system-deps venv build cpp-tests py-tests smoke test test-legs example bench docs lock clean \
	deploy-deps deploy-cpp deploy-tests example-web fuzz sanitize sanitize-python

all: build

# Debian packages: the protobuf compiler and library (serialization),
# GoogleTest (C++ unit tests), Boost.Math (the kernel library's special
# functions) and ccache (the legs' builds share compiled objects). Skipped
# when already present. Then ONNX Runtime's C/C++ API headers for the kernel
# library (tools/fetch_ort_headers.sh: Debian's
# libonnxruntime-dev, downloaded, not installed).
system-deps:
	@if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/message_lite.h ] \
	    || [ ! -f /usr/include/gtest/gtest.h ] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null \
	    || [ ! -f /usr/include/boost/math/special_functions/digamma.hpp ] || ! command -v ccache >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  $$SUDO apt-get install -y -qq protobuf-compiler libprotobuf-dev libgtest-dev cmake ninja-build g++ \
	    libboost-math-dev ccache >/dev/null; \
	fi
	@tools/fetch_ort_headers.sh build/onnxruntime-headers

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

# The GoogleTest suite is built in the extension's own build directory
# (scikit-build-core's build/{wheel_tag}, same flags), so the core library is
# compiled once per leg rather than twice. The directory keeps the tests on
# afterwards, which later editable rebuilds simply keep up to date.
EXT_BUILD = build/$(shell $(PY) -c "import sys, sysconfig; v = 'cp%d%d' % sys.version_info[:2]; print(f'{v}-{v}-' + sysconfig.get_platform().replace('-', '_').replace('.', '_'))")

cpp-tests: build
	@test -f $(EXT_BUILD)/CMakeCache.txt || { echo "cpp-tests: no extension build in $(EXT_BUILD) (pyproject.toml build-dir changed?)"; exit 1; }
	$(LOCK) sh -c 'cmake -S . -B $(EXT_BUILD) -DPYTENSOR_ONNX_BUILD_TESTS=ON >/dev/null && cmake --build $(EXT_BUILD)'
	ctest --test-dir $(EXT_BUILD) --output-on-failure

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

# Deployment: Node.js >= 20 (playwright-core needs it; Debian 12's own nodejs
# is 18, so a machine without node needs NodeSource's or Debian 13's) and
# Debian's chromium, both from apt when missing; the npm packages exactly as
# deploy/package-lock.json pins them (npm ci). onnxruntime-node's install
# script would fetch GPU binaries: skipped, its CPU binary ships in the package.
DEPLOY_NODE_MODULES := deploy/node_modules/.installed

deploy-deps: $(DEPLOY_NODE_MODULES)
	@if [ ! -x "$${CHROMIUM:-/usr/bin/chromium}" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; fi

$(DEPLOY_NODE_MODULES): deploy/package.json deploy/package-lock.json
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm >/dev/null; fi
	@node -e 'if (+process.versions.node.split(".")[0] < 20) { console.error("Node.js >= 20 needed, found " + process.version); process.exit(1) }'
	cd deploy && ONNXRUNTIME_NODE_INSTALL_CUDA=skip ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The C++ program (deploy/cpp, docs/deploying.md): Debian's nlohmann-json, the
# ONNX Runtime headers system-deps fetched (Debian's libonnxruntime-dev 1.21),
# and the shared library of the leg's onnxruntime wheel, which the build links
# through a libonnxruntime.so.1 link of its own. Incremental: a rebuild
# compiles only what changed. It needs the leg's venv (the wheel), not the
# package: .ci/run builds it beside the default leg's tests, and `build`
# there would reinstall the package under them (pip removes the installed
# extension and kernel library before it copies them again: a test process
# that looks for the library in that moment finds none).
DEPLOY_CPP_BUILD := build/deploy-cpp
ORT_WHEEL_LIBRARY = $(shell $(PY) -c "import glob, os, onnxruntime; print(sorted(glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), 'capi', 'libonnxruntime.so.*')))[0])")

deploy-cpp: venv
	@if [ ! -f /usr/include/nlohmann/json.hpp ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nlohmann-json3-dev >/dev/null; fi
	$(LOCK) sh -c 'cmake -S deploy/cpp -B $(DEPLOY_CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DONNXRUNTIME_INCLUDE_DIR=$(abspath build/onnxruntime-headers/usr/include/onnxruntime) \
	  -DONNXRUNTIME_LIBRARY=$(ORT_WHEEL_LIBRARY) >/dev/null && cmake --build $(DEPLOY_CPP_BUILD)'

# The test files run side by side, each on one worker (loadfile: a file's
# module fixtures, PyMC's posteriors and the exported cases, are made once).
deploy-tests: build deploy-deps deploy-cpp
	$(PY) examples/web/model.py  # the example page's model, which the browser test loads
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=8 deploy/tests

example-web: build deploy-deps
	$(PY) examples/web/model.py
	node deploy/serve.mjs 8000

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
	rm -rf build

# -- reliability (docs/testing.md) ---------------------------------------------
# make fuzz: the fuzzers (differential and C++ core) with fresh seeds for
# FUZZ_SECONDS of wall time (default 600) on PYTEST_WORKERS processes, each
# seed printed; stops at the first failure (a differential failure's shrunk
# case is written to tests/python/fuzz_cases/). CI runs 90 s of it.
# Batches of FUZZ_EXAMPLES graphs per test; FUZZ_SHRINK_SECONDS bounds the
# shrinking of a failure past the budget (then the batch stops, its seed
# printed for a rerun); FUZZ_BUILD= skips the
# rebuild when the caller has just built (.ci/run).
FUZZ_SECONDS ?= 600
FUZZ_EXAMPLES ?= 30
FUZZ_SHRINK_SECONDS ?= 600
FUZZ_BUILD ?= build

fuzz: $(FUZZ_BUILD)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_SHRINK_SECONDS=$(FUZZ_SHRINK_SECONDS) \
	  FUZZ_WORKERS=$(PYTEST_WORKERS) $(PY) tests/python/fuzz/run.py

# make sanitize: the C++ core and its GoogleTest suite built with ASan and
# UBSan (CMake option PYTENSOR_ONNX_SANITIZE, own build dir) and run.
# -O0 -g1: line tables are enough for stack traces, and the sanitizers
# check every access an unoptimized build makes. The build is most of the
# stage: -O0 compiles it in 3:04 where -O1 (what ASan's documentation
# suggests for speed) took 4:11 and RelWithDebInfo's -O2 -g 2.3x that; the
# tests run 13.5 s instead of 7.5 s. (make sanitize-python runs the whole
# Python suite on its build: -O1 there.)
SANITIZE_BUILD := build/sanitize
sanitize: SANITIZE_OPT := -O0
sanitize-python: SANITIZE_OPT := -O1
SANITIZE_CMAKE = -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(SANITIZE_OPT) -g1 -DNDEBUG" \
	-DPYTENSOR_ONNX_SANITIZE=ON -DPython_EXECUTABLE=$(abspath $(PY))
SANITIZER_ENV := ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

sanitize: venv
	$(LOCK) sh -c 'cmake -S . -B $(SANITIZE_BUILD) $(SANITIZE_CMAKE) -DPYTENSOR_ONNX_BUILD_PYTHON=OFF -DPYTENSOR_ONNX_BUILD_TESTS=ON >/dev/null && cmake --build $(SANITIZE_BUILD)'
	$(SANITIZER_ENV) ctest --test-dir $(SANITIZE_BUILD) --output-on-failure -j $(PYTEST_WORKERS)

# make sanitize-python: the Python suite (SANITIZE_PYTEST, default all of
# tests/python) against a sanitizer build of the extension. Python is not
# instrumented, so the ASan runtime is preloaded and leak checks are off
# (the interpreter keeps objects until exit by design). libstdc++ is
# preloaded too: python does not link it, so without it ASan's __cxa_throw
# interceptor finds no real __cxa_throw and aborts at the first C++ exception
# (every BuildError). ASan's quarantine of freed memory is bounded to 64 MB
# so resident-memory checks (test_concurrency) stay meaningful; they add the
# quarantine to their bound. tools/sanitize_python makes
# `import pytensor_onnx._core` load the sanitizer build; the kernel library is
# built beside it, where kernels.library_path() looks first (without it mode
# ONNX would run the portable graph, and the native sessions, which get ONNX
# Runtime's C API through it, would not be made).
SANITIZE_PY_BUILD := build/sanitize-python
SANITIZE_PYTEST ?= tests/python
SANITIZE_PY_ENV := LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so.6)" \
	ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:quarantine_size_mb=64 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	PYTHONPATH=$(abspath tools/sanitize_python) PYTENSOR_ONNX_CORE=$$(ls $(abspath $(SANITIZE_PY_BUILD))/_core*.so)

sanitize-python: build
	$(LOCK) sh -c 'cmake -S . -B $(SANITIZE_PY_BUILD) $(SANITIZE_CMAKE) -DPYTENSOR_ONNX_BUILD_PYTHON=ON >/dev/null && cmake --build $(SANITIZE_PY_BUILD) --target _core pytensor_onnx_kernels'
	$(SANITIZE_PY_ENV) $(PY) -c 'import pytensor_onnx._core as c; assert "$(SANITIZE_PY_BUILD)" in c.__file__, c.__file__; print("sanitized core:", c.__file__)'
	$(SANITIZE_PY_ENV) $(PY) -m pytest -q -n $(PYTEST_WORKERS) -p no:cacheprovider $(SANITIZE_PYTEST)
