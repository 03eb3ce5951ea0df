# Entry points a newcomer needs: `make demo` installs, builds and runs vtc on the bundled
# Llama decode-layer example; `make test` builds and runs every test. BUILD_DIR and JOBS
# may be overridden.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
VTC := $(BUILD_DIR)/tools/vtc
EXAMPLE_DIR := $(BUILD_DIR)/examples
EXAMPLE := $(EXAMPLE_DIR)/llama3_layer_small_f32_b1.onnx

.PHONY: setup build demo test clean

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

$(EXAMPLE): build
	@python3 models/generate.py --out $(EXAMPLE_DIR) --size small --only llama3_layer --dtype f32 --batch 1

demo: build $(EXAMPLE)
	$(VTC) info $(EXAMPLE)
	$(VTC) explain $(EXAMPLE) --donate past_k past_v --svg $(BUILD_DIR)/demo-strategy.svg
	$(VTC) run $(EXAMPLE) --donate past_k past_v --output-dir $(BUILD_DIR)/demo-out

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
