# gpuplane: the two commands of the README's quick start.
#   make run   installs dependencies, builds, and runs the main job
#   make test  installs dependencies, builds, and runs the whole test suite
# Other targets are the steps they are made of.

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test deps build build-asan unit asan-unit format-check fuzz bench clean

run: deps build
	./$(BUILD)/gpuplane validate examples/
	./$(BUILD)/gpuplane simulate

test: deps
	bash scripts/test.sh

deps:
	bash scripts/install-deps.sh

build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

bench: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	bash scripts/bench.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
