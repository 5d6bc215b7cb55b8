#!/usr/bin/env bash
# Style checks run by CI: clang-format (no diff allowed) and clang-tidy (.clang-tidy) over our
# own sources, using the compile database of the given build directory.
set -euo pipefail
build_dir="${1:-build/release}"
cd "$(dirname "$0")/.."

mapfile -t sources < <(git ls-files '*.cpp' '*.hpp')
echo "lint: clang-format on ${#sources[@]} files"
clang-format --dry-run --Werror "${sources[@]}"

# clang-tidy: library and tool sources (tests and benchmarks follow GoogleTest's macro style).
# Highway kernels (they define HWY_TARGET_INCLUDE) follow Highway's PascalCase op naming.
mapfile -t kernels < <(git grep -l 'define HWY_TARGET_INCLUDE' -- 'src/*.cpp')
# The demo models (demo_model.cpp, zoo.cpp) and graph_demo.cpp (it includes demo_model.hpp since the
# ONNX export carries the demo's trained weights) include LibTorch's optim and nn functional headers, which clang 14 cannot parse
# as C++20 against libstdc++ 12 (IValue "not destructible" inside std::vector): GCC builds it
# with -Werror, clang-tidy skips it. The other LibTorch TUs (src/torch/attach.cpp,
# tools/tfdebug/cmd_demo.cpp) are checked in full (attach.cpp takes ~1 minute).
# src/torch/torchscript_model.cpp and tools/tfdebug/script_trainer.cpp (torch/script.h, for
# torch::jit::load) have the same trouble.
# The interpretability models over LibTorch (interpret_model.cpp, rule_model.cpp,
# rule_parameter_paths.cpp, torch_layer_model.cpp and the torchscript_*_model.cpp files) reach
# the same IValue-in-std::vector instantiation through ATen's op and autograd headers.
# tools/tfdebug/demo_target.cpp (the demo's one-hot gradients for tfdebug attack) too.
unparsed=(tools/tfdebug/demo/demo_model.cpp tools/tfdebug/demo/zoo.cpp tools/tfdebug/graph_demo.cpp
  src/torch/torchscript_model.cpp src/torch/interpret_model.cpp src/torch/rule_model.cpp
  src/torch/rule_parameter_paths.cpp src/torch/torch_layer_model.cpp src/torch/torchscript_layer_model.cpp src/torch/torchscript_attention_model.cpp
  src/torch/torchscript_rule_model.cpp tools/tfdebug/demo_target.cpp tools/tfdebug/script_trainer.cpp)
# attention_capture.cpp: bugprone-forward-declaration-namespace fires on caffe2::Tensor inside
# LibTorch's own ATen/core/blob.h in this TU; it is checked with that one check off.
relaxed=(src/torch/attention_capture.cpp)
mapfile -t tidy < <(git ls-files 'src/*.cpp' 'tools/*.cpp' |
  grep -v -x -F "${kernels[@]/#/-e}" "${unparsed[@]/#/-e}" "${relaxed[@]/#/-e}")
echo "lint: clang-tidy on ${#tidy[@]} files"
printf '%s\n' "${tidy[@]}" | xargs -P 2 -n 4 clang-tidy -p "$build_dir" --quiet 2>/dev/null
clang-tidy -p "$build_dir" --quiet --checks='-bugprone-forward-declaration-namespace' "${relaxed[@]}" 2>/dev/null
# The Highway kernels: bug checks only.
clang-tidy -p "$build_dir" --quiet --checks='-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-narrowing-conversions,-bugprone-implicit-widening-of-multiplication-result,-bugprone-reserved-identifier' \
  "${kernels[@]}" 2>/dev/null
echo "lint: ok"
