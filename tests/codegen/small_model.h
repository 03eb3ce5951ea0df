// The small models of models/ for the code-generation tests: one workload in one dtype at
// batch 1, written by models/generate.py (python3 with onnx and numpy, as the model tests).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace vtc::testing {

// Writes <workload>_small_<dtype>_b1.onnx into `dir` and returns its path; with `layers` (a
// whole model with a depth), <workload>_small_<dtype>_b1_l<layers>.onnx.
inline std::string generate_small_model(const std::string& workload, const std::string& dtype,
                                        const std::filesystem::path& dir, int layers = 0) {
  const std::string depth = layers > 0 ? " --layers " + std::to_string(layers) : "";
  const std::string cmd = "python3 " VTC_SOURCE_DIR "/models/generate.py --out " + dir.string() +
                          " --size small --only " + workload + " --dtype " + dtype + " --batch 1" +
                          depth + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string suffix = layers > 0 ? "_l" + std::to_string(layers) : "";
  return (dir / (workload + "_small_" + dtype + "_b1" + suffix + ".onnx")).string();
}

} // namespace vtc::testing
