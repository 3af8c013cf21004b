# orca_nav: one-command setup, demo and tests on a fresh Debian 12 / Python 3.11 machine.
#   make demo   -> creates .venv from PyPI (ROS 2 wheels included) and runs the fleet demo
#   make test   -> creates .venv, then colcon build + colcon test (every test, linters included)
#   make bench  -> the benchmarks (orca_nav vs RVO2 side by side; node load)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip

# DDS stays on loopback: these machines must send nothing off the machine, and a demo must never
# reach real robots on a LAN by accident.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export PYTHONDONTWRITEBYTECODE := 1
# numba's compiled kernels (cache=True) are kept here across runs, whichever copy of orca_nav
# a process imports (the source tree or colcon's install tree, which `make test` rebuilds): a
# cold cache costs about 30 s of compiling per process that needs every kernel. Git-ignored,
# hidden (the linters skip it), not under .colcon/; `make clean` keeps it, `make clean-cache`
# removes it. One folder per state of the sources: numba checks only the stamp of the file
# that defines a cached kernel, so a kernel that calls one in another file (solve_all calls
# escape_velocity) would otherwise run its old callee's code after that file changed.
SRC_HASH := $(shell cat $$(find orca_nav -name '*.py' | LC_ALL=C sort) | sha1sum | cut -c1-12)
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache/$(SRC_HASH)

.PHONY: venv venv-test demo test pytest pytest-fast colcon bench clean clean-cache

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements.txt
	# colcon must not crawl the venv (it ships package.xml files of the ROS wheels).
	touch $(VENV)/COLCON_IGNORE
	touch $@

$(VENV)/.test: $(VENV)/.runtime requirements-test.txt
	$(PIP) install -q -r requirements-test.txt
	touch $@

# The node's kernels of the sources in this folder (what demo and pytest run), compiled into
# NUMBA_CACHE_DIR once per state of the sources: the node's first start is then seconds, not
# a minute. colcon build does the same for its installed copy (setup.py).
# Two processes side by side (the node's variants shared out); the tests' set-up adds the
# core's library modes (what the tests call besides the node) after them in the same two, in
# opposite orders: most of those modes are the node's, so each is compiled once (here, cold:
# 64 s and 128 s of CPU, against 72 s and 146 s in a third process beside them).
KERNELS := $(NUMBA_CACHE_DIR)/.node_kernels
TEST_KERNELS := $(NUMBA_CACHE_DIR)/.test_kernels
$(KERNELS): $(VENV)/.runtime
	PYTHONPATH=$(CURDIR) $(PY) -m orca_nav.control.warmup
	touch $@
$(TEST_KERNELS): $(VENV)/.test
	PYTHONPATH=$(CURDIR) $(PY) -m orca_nav.control.warmup --library
	touch $(KERNELS) $@

venv: $(VENV)/.runtime $(KERNELS)
venv-test: $(VENV)/.test $(TEST_KERNELS)

demo: venv
	PYTHONPATH=$(CURDIR) $(PY) -m orca_nav.demo $(DEMO_ARGS)

# The test command: build and test the ament package the way ROS users do.
# colcon's build/install/log go under .colcon/ (a hidden folder, so the linters skip it).
COLCON := $(VENV)/bin/colcon --log-base .colcon/log
WS     := --build-base .colcon/build --install-base .colcon/install

# pytest-xdist: one worker per core and one more (at most 5): the real-time modules run
# together as one unit on one worker and mostly wait (processes, DDS at its own pace, the
# demo's runs); each test module one unit (its module fixtures run once), each test of the
# lock-stepped world modules one unit (the scheduler of test/conftest.py);
# --no-loadscope-reorder keeps the order conftest.py sorts.
TEST_WORKERS ?= $(shell n=$$(( $$(nproc) + 1 )); [ $$n -gt 5 ] && n=5; echo $$n)
XDIST := -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

test: venv-test
	rm -rf .colcon
	# The kernels of other states of the sources (see NUMBA_CACHE_DIR).
	find .numba_cache -mindepth 1 -maxdepth 1 ! -name $(SRC_HASH) -exec rm -rf {} + \
		2>/dev/null || true
	$(COLCON) build $(WS) --event-handlers console_direct+
	$(COLCON) test $(WS) --event-handlers console_direct+ --return-code-on-test-failure \
		--pytest-args -p no:cacheprovider $(XDIST)
	$(COLCON) test-result --test-result-base .colcon/build --verbose

# Quicker inner loop: plain pytest on the source tree.
pytest: venv-test
	PYTHONPATH=$(CURDIR) $(PY) -m pytest -q -p no:cacheprovider $(XDIST) test $(PYTEST_ARGS)

# The inner loop of the inner loop (about a minute here): every test but those marked slow
# (end-to-end demo runs, node processes, long scenes; see pytest.ini).
pytest-fast: venv-test
	PYTHONPATH=$(CURDIR) $(PY) -m pytest -q -p no:cacheprovider $(XDIST) -m "not slow" test \
		$(PYTEST_ARGS)

bench: venv-test
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_startup
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_core
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_scan
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_node --fleets 10 50 100 200 250
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_node --fleets 1000 --odom-rate 3 \
		--param odom_timeout:=1.0 --gaps 5 --resend-goals 2 --warmup 8
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_node --fleets 50 --scan-beams 360 \
		--param track_people:=true
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_split
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_node --fleets 50 --scan-beams 360
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_routes
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_node --fleets 100 --map --repeats 2
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_crowd --robot orca_nav
	PYTHONPATH=$(CURDIR) $(PY) -m benchmarks.bench_crowdnavpp --robot orca_nav --period 0.1 \
		--drive differential --cases 250 --jobs 2

clean:
	rm -rf .colcon build install log .pytest_cache .hypothesis

clean-cache:
	rm -rf .numba_cache
