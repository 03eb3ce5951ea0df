// nvrtc_compile end to end (no GPU needed): kernels/common's accessor contract and scalar
// types compiled by NVRTC, with a __global__ kernel that copies through a dense accessor and a
// mapped one (a guard, two pieces: the shape of the structs cpu_codegen emits) converting
// between f16, bf16 and f32, to a cubin for sm_90a and to PTX; the cache (hits, invalidation
// by a kernel header, corrupt entries rebuilt); and the one-line error a broken source gives.
// Skipped where vtc was built without NVRTC.
#include "jit/nvrtc_compiler.h"

#include <filesystem>

#include "jit_test_util.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::write_file;

const char* const kCopyKernels = R"(// a cuda target's generated code, by hand
#include "accessor.h"
#include "scalar_types.h"
using namespace vtc::kernels;

// A dense row-major accessor, as kernels/cpu's DenseAccessor.
template <typename T, int R> struct Dense {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = 1 << 30;
  static constexpr bool has_ptr = true;
  T* data;
  Index<R> strides;
  int64_t offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o += i[k] * strides[k];
    return o;
  }
  T* ptr(const Index<R>& i) const { return data + offset(i); }
  auto load(const Index<R>& i) const { return to_compute(data[offset(i)]); }
  template <typename V> void store(const Index<R>& i, V v) const {
    data[offset(i)] = from_compute<T>(v);
  }
};

// A Concat of two [4, 3] halves along the last dimension: [4, 6], one guard, two pieces.
struct M0 {
  using value_type = vtc::kernels::half;
  using T = vtc::kernels::half;
  using C = decltype(to_compute(T{}));
  static constexpr int rank = 2;
  static constexpr int64_t contig = 3;
  static constexpr bool has_ptr = true;
  T* p0;
  T* p1;
  T* ptr(const Index<2>& i) const {
    const long long i0 = i[0];
    const long long i1 = i[1];
    if (i1 < 3) { return p0 + (i0 * 3 + i1); }
    return p1 + (i0 * 3 + (i1 - 3));
  }
  C load(const Index<2>& i) const {
    const long long i0 = i[0];
    const long long i1 = i[1];
    if (i1 < 3) { return to_compute(p0[i0 * 3 + i1]); }
    return to_compute(p1[i0 * 3 + (i1 - 3)]);
  }
  template <typename V> void store(const Index<2>& i, V v) const {
    const long long i0 = i[0];
    const long long i1 = i[1];
    if (i1 < 3) { p0[i0 * 3 + i1] = from_compute<T>(v); return; }
    p1[i0 * 3 + (i1 - 3)] = from_compute<T>(v); return;
  }
};

static_assert(Accessor<Dense<bfloat16, 2>> && Accessor<M0>);
static_assert(portable::is_same_v<compute_t<M0>, float>);
static_assert(from_compute<bfloat16>(1.0f).bits == 0x3f80); // constexpr bit casts on device

template <typename Out, typename In> __device__ void copy_2d(const Out& out, const In& in,
                                                             Index<2> shape) {
  const int64_t n = shape[0] * shape[1];
  for (int64_t f = blockIdx.x * blockDim.x + threadIdx.x; f < n; f += gridDim.x * blockDim.x) {
    const Index<2> i{f / shape[1], f % shape[1]};
    out.store(i, in.load(i));
  }
}

// f16 through the mapping -> bf16, dense.
extern "C" __global__ void vtc_copy_mapped_f16_to_bf16(bfloat16* out, vtc::kernels::half* a,
                                                       vtc::kernels::half* b) {
  copy_2d(Dense<bfloat16, 2>{out, {6, 1}}, M0{a, b}, Index<2>{4, 6});
}

// bf16, dense -> f16 through the mapping (the epilogue side: stores through pieces).
extern "C" __global__ void vtc_copy_bf16_to_mapped_f16(vtc::kernels::half* a,
                                                       vtc::kernels::half* b, bfloat16* in) {
  copy_2d(M0{a, b}, Dense<bfloat16, 2>{in, {6, 1}}, Index<2>{4, 6});
}

// f32 -> f16 and bf16 of every element, and back: the round trip of each conversion.
extern "C" __global__ void vtc_round_trips(float* out, const float* in, int64_t n) {
  for (int64_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    out[2 * k] = to_compute(from_compute<vtc::kernels::half>(in[k]));
    out[2 * k + 1] = vtc_round(in[k]);
  }
}
)";

class NvrtcCompiler : public testing::ScratchDirTest {
protected:
  void SetUp() override {
    if (!nvrtc_available()) GTEST_SKIP() << "vtc was built without NVRTC";
    ScratchDirTest::SetUp();
  }

  NvrtcOptions nvrtc_options() const {
    NvrtcOptions o;
    o.include_dirs = {(fs::path(VTC_SOURCE_DIR) / "kernels" / "common").string()};
    o.cache_dir = (dir_ / "cache").string();
    return o;
  }

  // kCopyKernels with vtc_round defined (as generated code's preamble defines it).
  static std::string copy_kernels() {
    std::string s = kCopyKernels;
    const std::string marker = "using namespace vtc::kernels;\n";
    return s.replace(s.find(marker), marker.size(),
                     marker + "__device__ float vtc_round(float v) { return "
                              "to_compute(from_compute<bfloat16>(v)); }\n");
  }
};

// The message of the vtc::Error that `body` throws; fails the test when none is thrown.
template <typename Body> std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected vtc::Error";
  return "";
}

TEST_F(NvrtcCompiler, ReportsItsVersion) {
  const std::string v = nvrtc_version();
  ASSERT_NE(v.find('.'), std::string::npos) << v;
  EXPECT_GE(std::stoi(v), 12) << v;
  EXPECT_FALSE(nvrtc_toolkit_include_dirs().empty());
}

TEST_F(NvrtcCompiler, CompilesTheAccessorContractToACubinForSm90a) {
  const NvrtcOptions o = nvrtc_options();
  ASSERT_EQ(o.arch, "sm_90a");
  const GpuObject cubin = nvrtc_compile(copy_kernels(), GpuCode::cubin, o);
  EXPECT_FALSE(cubin.cached);
  EXPECT_GT(cubin.seconds, 0);
  ASSERT_GT(cubin.code.size(), size_t(1000));
  EXPECT_EQ(cubin.code.substr(0, 4), "\x7f"
                                     "ELF");
  for (const char* kernel :
       {"vtc_copy_mapped_f16_to_bf16", "vtc_copy_bf16_to_mapped_f16", "vtc_round_trips"})
    EXPECT_NE(cubin.code.find(kernel), std::string::npos) << kernel;
  EXPECT_EQ(cubin.code_path, (fs::path(o.cache_dir) / (cubin.key + ".cubin")).string());
  EXPECT_EQ(read_file(cubin.code_path), cubin.code);
  EXPECT_EQ(read_file(cubin.source_path), copy_kernels());
}

TEST_F(NvrtcCompiler, CompilesToPtxForTheVirtualArchitecture) {
  const GpuObject ptx = nvrtc_compile(copy_kernels(), GpuCode::ptx, nvrtc_options());
  EXPECT_NE(ptx.code.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(ptx.code.find(".entry vtc_copy_mapped_f16_to_bf16"), std::string::npos);
  EXPECT_EQ(ptx.code.find('\0'), std::string::npos);
  EXPECT_TRUE(ptx.code_path.ends_with(".ptx"));
  NvrtcOptions virt = nvrtc_options();
  virt.arch = "compute_90a"; // the same entry, whichever spelling
  EXPECT_EQ(nvrtc_cache_key(copy_kernels(), GpuCode::ptx, virt), ptx.key);
  EXPECT_NE(nvrtc_cache_key(copy_kernels(), GpuCode::cubin, virt), ptx.key);
}

TEST_F(NvrtcCompiler, SecondCompileHitsTheCacheAndAHeaderEditMisses) {
  // The kernel headers in a directory of the test's own, so that one can be edited.
  const fs::path headers = dir_ / "kernels";
  for (const char* name : {"accessor.h", "scalar_types.h", "portable.h"})
    write_file(headers / name, read_file(fs::path(VTC_SOURCE_DIR) / "kernels" / "common" / name));
  NvrtcOptions o = nvrtc_options();
  o.include_dirs = {headers.string()};
  const GpuObject first = nvrtc_compile(copy_kernels(), GpuCode::cubin, o);
  const GpuObject second = nvrtc_compile(copy_kernels(), GpuCode::cubin, o);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.seconds, 0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.code, first.code);

  // portable.h is included only through the other two: still part of the key.
  write_file(headers / "portable.h", read_file(headers / "portable.h") + "\n// edited\n");
  EXPECT_NE(nvrtc_cache_key(copy_kernels(), GpuCode::cubin, o), first.key);
  NvrtcOptions other_driver = nvrtc_options();
  other_driver.driver_version = 13000;
  EXPECT_NE(nvrtc_cache_key(copy_kernels(), GpuCode::cubin, other_driver),
            nvrtc_cache_key(copy_kernels(), GpuCode::cubin, nvrtc_options()));
}

TEST_F(NvrtcCompiler, CorruptOrTruncatedEntriesAreRebuilt) {
  const NvrtcOptions o = nvrtc_options();
  const GpuObject first = nvrtc_compile(copy_kernels(), GpuCode::cubin, o);
  write_file(first.code_path, first.code.substr(0, first.code.size() / 2));
  const GpuObject rebuilt = nvrtc_compile(copy_kernels(), GpuCode::cubin, o);
  EXPECT_FALSE(rebuilt.cached);
  EXPECT_EQ(rebuilt.code, first.code);
  fs::remove(fs::path(o.cache_dir) / (first.key + ".ok"));
  EXPECT_FALSE(nvrtc_compile(copy_kernels(), GpuCode::cubin, o).cached);
  EXPECT_TRUE(nvrtc_compile(copy_kernels(), GpuCode::cubin, o).cached);
  for (const auto& entry : fs::directory_iterator(o.cache_dir))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST_F(NvrtcCompiler, ABrokenSourceGivesOneLineNamingItsFileAndFirstError) {
  const NvrtcOptions o = nvrtc_options();
  const std::string broken =
      copy_kernels() + "\n__global__ void broken() { undeclared_name = 1; }\n";
  const std::string msg = error_of([&] { nvrtc_compile(broken, GpuCode::cubin, o); });
  const std::string key = nvrtc_cache_key(broken, GpuCode::cubin, o);
  const fs::path cu = fs::path(o.cache_dir) / (key + ".cu");
  const fs::path log = fs::path(o.cache_dir) / (key + ".log");
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find(cu.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("undeclared_name"), std::string::npos) << msg;
  EXPECT_NE(msg.find("error"), std::string::npos) << msg;
  EXPECT_NE(msg.find(log.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("sm_90a"), std::string::npos) << msg;
  EXPECT_EQ(read_file(cu), broken);
  const std::string full = read_file(log);
  EXPECT_NE(full.find("undeclared_name"), std::string::npos) << full;
  EXPECT_FALSE(fs::exists(fs::path(o.cache_dir) / (key + ".cubin")));
  EXPECT_FALSE(fs::exists(fs::path(o.cache_dir) / (key + ".ok")));
  // kCopyKernels alone lacks the vtc_round that copy_kernels() adds: the first error names it.
  const std::string missing = error_of([&] { nvrtc_compile(kCopyKernels, GpuCode::cubin, o); });
  EXPECT_NE(missing.find("vtc_round"), std::string::npos) << missing;
}

TEST_F(NvrtcCompiler, AMissingHeaderAndABadArchitectureAreOneLineErrors) {
  NvrtcOptions o = nvrtc_options();
  o.include_dirs.clear();
  const std::string no_header = error_of([&] { nvrtc_compile(kCopyKernels, GpuCode::cubin, o); });
  EXPECT_EQ(no_header.find('\n'), std::string::npos) << no_header;
  EXPECT_NE(no_header.find("accessor.h"), std::string::npos) << no_header;
  o = nvrtc_options();
  o.arch = "hopper";
  const std::string bad_arch = error_of([&] { nvrtc_compile(copy_kernels(), GpuCode::cubin, o); });
  EXPECT_NE(bad_arch.find("'hopper'"), std::string::npos) << bad_arch;
  o.arch = "sm_1";
  const std::string old_arch = error_of([&] { nvrtc_compile(copy_kernels(), GpuCode::cubin, o); });
  EXPECT_EQ(old_arch.find('\n'), std::string::npos) << old_arch;
  EXPECT_NE(old_arch.find("sm_1"), std::string::npos) << old_arch;
}

} // namespace
} // namespace vtc::jit
