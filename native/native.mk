# Native workloads (native/): included by the top-level Makefile.
#
#   make native          optimised build into native/build/ (part of `make setup`)
#   make native-asan     ASan + UBSan build into native/build-asan/
#   make test-native     native tests against both builds
#   make bench           reports/bench/latest.{json,md} + plots

NATIVE_DIR := $(TOP)/native
NATIVE_TESTS := $(wildcard $(TOP)/tests/integration/test_native*.py)

.PHONY: native native-asan test-native test-native-asan bench

native:  ## Build pingpong, rcat, stencil-bench into native/build/
	@$(MAKE) -s -C $(NATIVE_DIR)

native-asan:
	@$(MAKE) -s -C $(NATIVE_DIR) BUILD=build-asan SANITIZE=1

test-native-asan: setup native-asan
	CXFAB_NATIVE_BUILD=$(NATIVE_DIR)/build-asan pytest -q $(NATIVE_TESTS) $(PYTEST_ARGS)

test-native: setup native test-native-asan  ## Native tests on the optimised and the ASan/UBSan build
	pytest -q $(NATIVE_TESTS) $(PYTEST_ARGS)

bench: setup native  ## Benchmarks with ratios against references -> reports/bench/
	python $(NATIVE_DIR)/bench/bench.py --build $(NATIVE_DIR)/build --out $(TOP)/reports/bench

SETUP_EXTRA += native
INTEGRATION_PREREQS += native
# test-integration already runs the native tests on the optimised build.
TEST_EXTRA += test-native-asan
