# trustformers-debug: the two commands a new user needs.
#   make run    install dependencies, build (Release), run the main job
#   make test   install dependencies, build, run the whole test suite
.PHONY: run test deps build bench lint fuzz format clean

PRESET ?= release
BUILD_DIR := build/$(PRESET)
TFDEBUG := $(BUILD_DIR)/tools/tfdebug/tfdebug

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET)

run: build
	@$(TFDEBUG) doctor
	@echo
	@/usr/bin/python3 tests/io/make_fixtures.py build/fixtures
	@$(TFDEBUG) inspect build/fixtures/model.safetensors --target-dtype f16
	@echo
	@$(TFDEBUG) stats examples/data/digits_1797x64.f32 --shape 1797,64 --target-dtype fp8-e4m3
	@echo
	@# The live-debugging demo (with LibTorch): a planted log of a negative value, diagnosed.
	@if $(TFDEBUG) --help | grep -q '^  demo '; then \
	  $(TFDEBUG) demo --fault log --steps 100 --every 25 --out build/demo_log; test $$? -eq 1; fi

test: build
	@ctest --preset $(PRESET)

bench: build
	@bash bench/run.sh

lint: build
	@bash scripts/lint.sh $(BUILD_DIR)

fuzz: deps
	@FUZZ_SECONDS=$(or $(FUZZ_SECONDS),30) bash scripts/fuzz.sh

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	@rm -rf build
