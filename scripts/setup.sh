#!/usr/bin/env bash
# Installs what vtc needs on a fresh Debian 12 machine: the compiler toolchain and libraries
# from Debian's packages, and the Python packages the tests and model scripts use. Installs
# only what is missing, so running it again is quick.
set -euo pipefail

debian_packages=(
  build-essential cmake clang libclang-rt-14-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libopenblas-dev graphviz python3 python3-pip python3-dev python3-venv
)
# nanobind and scikit-build-core build the Python package (python/), pytest runs its tests.
python_packages=(onnx onnxruntime numpy ml_dtypes nanobind scikit-build-core pytest)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 - <<'PY' 2>/dev/null || {
import onnx, onnxruntime, numpy, ml_dtypes, nanobind, scikit_build_core, pytest
PY
  echo "setup: installing Python packages: ${python_packages[*]}"
  python3 -m pip install -q "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${python_packages[@]}"
}
echo "setup: dependencies present"
