// Where a library convolution's raw product goes on cuda: into the kernel's output buffer
// (the epilogue then stores over it in place) only where that buffer is an intermediate of the
// product's type and size that the step writes and does not read, never a model input or
// output (a replayed graph keeps the library's addresses), laid out as the product is (an NHWC
// product only into an output held channels-last); the rest into the executor's scratch. Lowered
// and generated without a GPU, every convolution on the library where cuDNN loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "codegen/translation_unit.h"
#include "device/cudnn_conv.h"
#include "frontend/onnx_import.h"
#include "runtime/lowering.h"
#include "small_model.h"
#include "target/cuda_target.h"
#include "vtc/dtype.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;

TEST(LibraryConvProduct, IntoTheOutputOnlyWhereItIsAnIntermediateOfItsOwn) {
  if (!device::cudnn_available()) GTEST_SKIP() << "cuDNN does not load here";
  const fs::path dir =
      fs::temp_directory_path() / ("vtc-conv-product-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int in_place = 0, scratch = 0;
  for (const char* workload : {"efficientvit", "yolo11_c3k2", "yolo11n"}) {
    Graph g = import_onnx_file(testing::generate_small_model(workload, "f16", dir));
    canonicalize_for_target(g, TargetKind::cuda);
    Options o;
    o.target = TargetKind::cuda;
    o.strategy = StrategyKind::greedy;
    o.library = LibraryMode::always;
    Program p = lower_for_target(g, o);
    TranslationUnit tu = generate_translation_unit(p, target_for(TargetKind::cuda).dialect());
    for (size_t s = 0; s < p.steps.size(); ++s)
      for (const DeviceLaunch& l : tu.launches[s]) {
        if (!l.library_conv) continue;
        const LibraryConvCall& c = *l.library_conv;
        const int y = c.y_buffer;
        if (y < 0) {
          ++scratch;
          continue;
        }
        ++in_place;
        SCOPED_TRACE(workload + std::string(" ") + p.steps[s].name);
        const BufferInfo& b = p.buffers.at(size_t(y));
        EXPECT_EQ(b.role, BufferRole::intermediate);
        EXPECT_EQ(b.type.dtype, c.conv.dtype);
        EXPECT_EQ(b.type.numel(), c.conv.output_elements());
        // Laid out as the product: NCHW, or held channels-last for an NHWC one.
        EXPECT_EQ(c.channels_last, p.storage.channels_last.count(b.value) != 0);
        EXPECT_NE(y, c.x_buffer);
        EXPECT_TRUE(std::count(p.steps[s].writes.begin(), p.steps[s].writes.end(), y));
        EXPECT_FALSE(std::count(p.steps[s].reads.begin(), p.steps[s].reads.end(), y));
      }
  }
  fs::remove_all(dir);
  EXPECT_GT(in_place, 0);
  EXPECT_GT(scratch, 0); // the models' last convolutions write their outputs
}

} // namespace
} // namespace vtc
