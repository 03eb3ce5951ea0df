// The CUDA driver layer. Everywhere: the architecture and version tables, and that this
// machine either has a device or says why not in one line starting "target cuda:" from every
// entry point. With the toolkit: loading against stand-ins for libcuda (fake_libcuda.cpp) — each
// function asked for at its PFN_ type's version, and the one-line errors for an old driver, a
// missing function, no device — and, where this machine has a GPU (found by trying; skipped
// otherwise), buffer copies and fills, device pointers, events, a kernel compiled by NVRTC and
// launched directly and through a captured graph, its __device__ variable, its dynamic shared
// memory limit. Without the toolkit: every entry point's error.
#include "device/cuda_device.h"
#include "device/cuda_driver.h"
#include "device/cuda_objects.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "jit/nvrtc_compiler.h"
#include "vtc/error.h"

namespace vtc::device {
namespace {

// The message `f` throws as vtc::Error; fails the test (and returns "") when it throws nothing.
template <typename F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no vtc::Error thrown";
  return "";
}

bool is_one_line(const std::string& s) {
  return !s.empty() && s.find('\n') == std::string::npos;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(CudaArch, FromComputeCapability) {
  EXPECT_EQ(cuda_arch(9, 0), "sm_90a");
  EXPECT_EQ(cuda_arch(10, 0), "sm_100a");
  EXPECT_EQ(cuda_arch(8, 0), "sm_80");
  EXPECT_EQ(cuda_arch(8, 6), "sm_86");
  EXPECT_EQ(cuda_arch(8, 9), "sm_89");
  EXPECT_EQ(cuda_arch(10, 3), "sm_103");
  EXPECT_EQ(cuda_arch(12, 0), "sm_120");
  DeviceInfo info;
  info.cc_major = 9;
  info.cc_minor = 0;
  EXPECT_EQ(info.arch(), "sm_90a");
}

TEST(CudaVersion, AsText) {
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12090), "12.9");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
  EXPECT_EQ(cuda_version_text(12010), "12.1");
}

// This machine, whatever it has: a device, or one line saying why not from each entry point.
TEST(CudaDevice, ThisMachineHasADeviceOrSaysWhyNot) {
  std::string why;
  try {
    const DeviceInfo& info = cuda_device();
    EXPECT_FALSE(info.name.empty());
    return;
  } catch (const Error& e) {
    why = e.what();
  }
  EXPECT_TRUE(is_one_line(why)) << why;
  EXPECT_TRUE(starts_with(why, "target cuda: ")) << why;
  EXPECT_EQ(error_of([] { cuda_device(); }), why);
  // Where the driver itself is missing, its reason, remembered, from everything that needs it;
  // where only the device is, each driver call's own one-line error.
  bool no_driver = false;
  try {
    cuda_driver();
  } catch (const Error& e) {
    no_driver = true;
    EXPECT_EQ(e.what(), why);
  }
  for (const std::string& e :
       {error_of([] { DeviceBuffer b(16); }), error_of([] { CudaStream s; }),
        error_of([] { CudaEvent e; }), error_of([] { CudaGraph().begin_capture(nullptr); })}) {
    EXPECT_TRUE(is_one_line(e)) << e;
    if (no_driver) {
      EXPECT_EQ(e, why);
    }
  }
  if (no_driver) {
    EXPECT_EQ(error_of([] { is_device_pointer(nullptr); }), why);
  }
}

#if VTC_HAS_CUDA_DRIVER

TEST(CudaDriver, ToolkitVersion) {
  EXPECT_EQ(cuda_toolkit_version(), CUDA_VERSION);
}

// "target cuda: ..." from check() where the driver is missing, CUDA_ERROR_X (description) where
// it is loaded.
TEST(CudaDriver, CheckThrowsOneLineNamingTheCall) {
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuMemAlloc of 8 bytes"));
  std::string e = error_of([] { check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc of 8 bytes"); });
  bool loaded = true;
  try {
    cuda_driver();
  } catch (const Error&) {
    loaded = false;
  }
  EXPECT_EQ(e, loaded ? "cuMemAlloc of 8 bytes: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
                      : "cuMemAlloc of 8 bytes: CUDA error 2");
}

TEST(CudaDriver, ZeroByteBufferHoldsNothing) {
  DeviceBuffer b(0);
  EXPECT_EQ(b.ptr(), 0u);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_NO_THROW(b.upload(nullptr, 0));
  EXPECT_NO_THROW(b.download(nullptr, 0));
  EXPECT_NO_THROW(b.zero());
  char c = 0;
  EXPECT_EQ(error_of([&] { b.upload(&c, 1); }),
            "DeviceBuffer of 0 bytes: upload of 1 bytes at offset 0 is out of its range");
  DeviceBuffer moved = std::move(b);
  EXPECT_EQ(moved.size(), 0u);
}

// Stand-ins for libcuda.

std::string fake_library(const std::string& variant) {
  return std::string(VTC_FAKE_LIBCUDA_DIR) + "/fake_libcuda_" + variant + ".so";
}

// The fake's record of what the device layer asked for.
struct FakeRequests {
  explicit FakeRequests(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_TRUE(handle_) << dlerror();
    if (!handle_) return;
    version_ =
        reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "fake_cuda_requested_version"));
    flags_ = reinterpret_cast<unsigned long long (*)(const char*)>(
        dlsym(handle_, "fake_cuda_requested_flags"));
  }
  ~FakeRequests() {
    if (handle_) dlclose(handle_);
  }
  int version(const char* symbol) const { return version_ ? version_(symbol) : -2; }
  unsigned long long flags(const char* symbol) const { return flags_ ? flags_(symbol) : 0; }

  void* handle_ = nullptr;
  int (*version_)(const char*) = nullptr;
  unsigned long long (*flags_)(const char*) = nullptr;
};

TEST(CudaDriverLoad, NoLibrary) {
  const std::string path = "/nonexistent/libcuda.so.1";
  std::string e = error_of([&] { load_cuda_driver(path); });
  EXPECT_TRUE(is_one_line(e)) << e;
  EXPECT_TRUE(starts_with(e, "target cuda: no CUDA driver on this machine (" + path + ": ")) << e;
  // dlerror() names the library already: it is not named twice.
  EXPECT_EQ(e.find(path), e.rfind(path)) << e;
}

TEST(CudaDriverLoad, NotADriver) {
  EXPECT_EQ(error_of([] { load_cuda_driver("libm.so.6"); }),
            "target cuda: no CUDA driver on this machine (libm.so.6 is not a CUDA driver: it has "
            "no cuDriverGetVersion)");
}

TEST(CudaDriverLoad, DriverOlderThanTheToolkit) {
  const std::string toolkit = cuda_version_text(CUDA_VERSION);
  EXPECT_EQ(error_of([] { load_cuda_driver(fake_library("old")); }),
            "target cuda: the CUDA driver supports CUDA 12.4, vtc was built with the CUDA " +
                toolkit + " toolkit; update the driver");
  // Older than CUDA 12: no cuGetProcAddress_v2 either; the version is what the user needs.
  EXPECT_EQ(error_of([] { load_cuda_driver(fake_library("pre12")); }),
            "target cuda: the CUDA driver supports CUDA 11.8, vtc was built with the CUDA " +
                toolkit + " toolkit; update the driver");
}

TEST(CudaDriverLoad, MissingFunction) {
  EXPECT_EQ(error_of([] { load_cuda_driver(fake_library("missing")); }),
            "target cuda: the CUDA " + cuda_version_text(CUDA_VERSION) +
                " driver has no cuLaunchKernel (cuGetProcAddress: CUDA_ERROR_NOT_FOUND (named "
                "symbol not found))");
}

TEST(CudaDriverLoad, ResolvesEachFunctionAtItsTypesVersion) {
  const std::string path = fake_library("nodevice");
  CudaDriver d = load_cuda_driver(path);
  EXPECT_EQ(d.library, path);
  EXPECT_EQ(d.version, CUDA_VERSION);
  FakeRequests fake(path);
  // The versions whose forms <cuda.h> gives the plain names: not CUDA_VERSION, at which CUDA 13
  // would hand out cuCtxSynchronize_v2(CUcontext).
  EXPECT_EQ(fake.version("cuCtxSynchronize"), 2000);
  EXPECT_EQ(fake.version("cuMemAlloc"), 3020);
  EXPECT_EQ(fake.version("cuMemcpyHtoD"), 3020);
  EXPECT_EQ(fake.version("cuStreamBeginCapture"), 10010);
  EXPECT_EQ(fake.version("cuGraphInstantiateWithFlags"), 11040);
  EXPECT_EQ(fake.version("cuModuleLoadDataEx"), 2010);
  EXPECT_EQ(fake.version("cuLaunchKernel"), 4000);
  EXPECT_EQ(fake.version("cuGraphInstantiate"), -1); // its plain name is another form per version
  // Every function asked for in the legacy default-stream form, and set.
#define VTC_EXPECT_RESOLVED(name, version)                                                         \
  EXPECT_EQ(fake.flags(#name), static_cast<unsigned long long>(CU_GET_PROC_ADDRESS_LEGACY_STREAM)) \
      << #name;                                                                                    \
  EXPECT_NE(d.name, nullptr) << #name;
  VTC_CUDA_DRIVER_FUNCTIONS(VTC_EXPECT_RESOLVED)
#undef VTC_EXPECT_RESOLVED
  // This driver lacks the optional cuModuleLoadDataEx.
  EXPECT_EQ(d.cuModuleLoadDataEx, nullptr);
  // The pointers are the fake's own functions.
  int version = 0;
  ASSERT_EQ(d.cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, CUDA_VERSION);
  EXPECT_EQ(d.error_text(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(d.error_text(static_cast<CUresult>(12345)), "CUDA error 12345");
}

TEST(CudaDriverLoad, NoDevice) {
  CudaDriver nodevice = load_cuda_driver(fake_library("nodevice"));
  EXPECT_EQ(error_of([&] { init_cuda(nodevice); }),
            "target cuda: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
            "detected))");
  CudaDriver zero = load_cuda_driver(fake_library("zero"));
  EXPECT_EQ(error_of([&] { init_cuda(zero); }),
            "target cuda: no CUDA device (the driver counts 0)");
  CudaDriver two = load_cuda_driver(fake_library("two"));
  EXPECT_NE(two.cuModuleLoadDataEx, nullptr);
  EXPECT_EQ(init_cuda(two), 2);
}

// A kernel writing value + i to out[i] through dynamic shared memory, and value to a __device__
// variable.
const char* const kKernel = R"(
extern "C" {
__device__ int vtc_test_flag;
}
extern "C" __global__ void write_values(int* out, int value, int n) {
  extern __shared__ int scratch[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  scratch[threadIdx.x] = value + i;
  __syncthreads();
  const int t = threadIdx.x, b = blockDim.x;
  if (i < n) out[i] = scratch[b - 1 - t] + (2 * t + 1 - b); // the other end's value, moved back
  if (i == 0) vtc_test_flag = value;
}
)";
constexpr unsigned kBlock = 128;

// A cache directory of its own, removed afterwards.
struct ScratchDir {
  ScratchDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("vtc-device-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

std::string compile_kernel(jit::GpuCode code, const std::string& arch, int driver_version) {
  ScratchDir dir;
  jit::NvrtcOptions o;
  o.arch = arch;
  o.driver_version = driver_version;
  o.cache_dir = dir.path.string();
  return jit::nvrtc_compile(kKernel, code, o).code;
}

// The GPU tests' kernel, compiled where there is no GPU too.
TEST(CudaKernelSource, CompilesWithNvrtc) {
  if (!jit::nvrtc_available()) GTEST_SKIP() << "vtc was built without NVRTC";
  const std::string cubin = compile_kernel(jit::GpuCode::cubin, "sm_90a", 0);
  EXPECT_EQ(cubin.substr(0, 4), std::string(1, '\x7f') + "ELF");
  const std::string ptx = compile_kernel(jit::GpuCode::ptx, "sm_90a", 0);
  EXPECT_NE(ptx.find(".entry write_values"), std::string::npos);
  EXPECT_NE(ptx.find("vtc_test_flag"), std::string::npos);
}

// With a GPU.

class CudaGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      device_ = &cuda_device();
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
  }
  const DeviceInfo& device() const { return *device_; }
  const DeviceInfo* device_ = nullptr;
};

TEST_F(CudaGpuTest, DeviceInfo) {
  const DeviceInfo& d = device();
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 5);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GE(d.driver_version, CUDA_VERSION);
  EXPECT_GT(d.total_memory, int64_t(1) << 28);
  EXPECT_GE(d.max_shared_per_block_optin, size_t(48) << 10);
  EXPECT_NE(d.context, nullptr);
  EXPECT_EQ(d.arch(), cuda_arch(d.cc_major, d.cc_minor));
  EXPECT_EQ(&cuda_device(0), &d);
  std::string e = error_of([] { cuda_device(-1); });
  EXPECT_TRUE(starts_with(e, "target cuda: no CUDA device -1 (the driver counts ")) << e;
}

// A new thread has no current context until make_current().
TEST_F(CudaGpuTest, MakeCurrentOnAnotherThread) {
  std::string before;
  bool after = false;
  std::thread t([&] {
    before = error_of([] { DeviceBuffer b(64); });
    device().make_current();
    DeviceBuffer b(64);
    b.zero();
    after = b.ptr() != 0;
  });
  t.join();
  EXPECT_TRUE(starts_with(before, "cuMemAlloc of 64 bytes: CUDA_ERROR_")) << before;
  EXPECT_TRUE(after);
}

TEST_F(CudaGpuTest, BufferRoundTripAndFill) {
  const size_t n = 1000;
  std::vector<int> host(n), back(n, -1);
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<int>(i * 7 + 3);
  DeviceBuffer b(n * sizeof(int));
  EXPECT_EQ(b.size(), n * sizeof(int));
  EXPECT_NE(b.ptr(), 0u);
  b.upload(host.data(), n * sizeof(int));
  b.download(back.data(), n * sizeof(int));
  EXPECT_EQ(back, host);
  // A part, at an offset.
  const int part[3] = {-1, -2, -3};
  b.upload(part, sizeof part, 10 * sizeof(int));
  int got[5] = {};
  b.download(got, sizeof got, 9 * sizeof(int));
  EXPECT_EQ(got[0], host[9]);
  EXPECT_EQ(got[1], -1);
  EXPECT_EQ(got[3], -3);
  EXPECT_EQ(got[4], host[13]);
  EXPECT_EQ(error_of([&] { b.download(got, sizeof got, b.size() - 4); }),
            "DeviceBuffer of 4000 bytes: download of 20 bytes at offset 3996 is out of its range");
  // Every byte set.
  b.fill_bytes(0xab);
  std::vector<unsigned char> bytes(b.size());
  b.download(bytes.data(), bytes.size());
  EXPECT_EQ(bytes, std::vector<unsigned char>(b.size(), 0xab));
  b.zero();
  b.download(bytes.data(), bytes.size());
  EXPECT_EQ(bytes, std::vector<unsigned char>(b.size(), 0));
  // On a stream.
  CudaStream s;
  b.upload_async(host.data(), n * sizeof(int), s.get());
  std::vector<int> async_back(n, -1);
  b.download_async(async_back.data(), n * sizeof(int), s.get());
  s.synchronize();
  EXPECT_EQ(async_back, host);
  b.fill_bytes_async(0x01, s.get());
  b.download_async(async_back.data(), n * sizeof(int), s.get());
  s.synchronize();
  EXPECT_EQ(async_back, std::vector<int>(n, 0x01010101));
  // Moved, the memory goes with it.
  const CUdeviceptr p = b.ptr();
  DeviceBuffer moved = std::move(b);
  EXPECT_EQ(moved.ptr(), p);
  EXPECT_EQ(b.ptr(), 0u);
  EXPECT_EQ(b.size(), 0u);
}

TEST_F(CudaGpuTest, AllocationTooLargeIsOneLine) {
  const size_t bytes = size_t(1) << 50;
  std::string e = error_of([&] { DeviceBuffer b(bytes); });
  EXPECT_EQ(e, "cuMemAlloc of " + std::to_string(bytes) +
                   " bytes: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST_F(CudaGpuTest, IsDevicePointer) {
  DeviceBuffer b(256);
  EXPECT_TRUE(is_device_pointer(reinterpret_cast<const void*>(b.ptr())));
  EXPECT_TRUE(is_device_pointer(reinterpret_cast<const void*>(b.ptr() + 100)));
  std::vector<float> heap(64);
  int stack = 0;
  EXPECT_FALSE(is_device_pointer(heap.data()));
  EXPECT_FALSE(is_device_pointer(&stack));
  EXPECT_FALSE(is_device_pointer(nullptr));
}

TEST_F(CudaGpuTest, EventsTimeTheirStream) {
  CudaStream s;
  CudaEvent start, end;
  DeviceBuffer b(size_t(64) << 20);
  start.record(s.get());
  for (int i = 0; i < 4; ++i)
    b.fill_bytes_async(static_cast<unsigned char>(i), s.get());
  end.record(s.get());
  end.synchronize();
  const float ms = elapsed_ms(start, end);
  EXPECT_TRUE(std::isfinite(ms));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
  // Without timing, there is no elapsed time.
  CudaEvent untimed(false);
  untimed.record(s.get());
  untimed.synchronize();
  EXPECT_FALSE(error_of([&] { elapsed_ms(start, untimed); }).empty());
}

class CudaKernelTest : public CudaGpuTest {
protected:
  void SetUp() override {
    CudaGpuTest::SetUp();
    if (IsSkipped()) return;
    if (!jit::nvrtc_available()) GTEST_SKIP() << "vtc was built without NVRTC";
  }

  std::string compile(jit::GpuCode code) const {
    return compile_kernel(code, device().arch(), device().driver_version);
  }

  // write_values over n ints, `shared` bytes of dynamic shared memory, on `stream`.
  static void launch(CUfunction fn, const DeviceBuffer& out, int value, int n, unsigned shared,
                     CUstream stream) {
    CUdeviceptr p = out.ptr();
    void* args[] = {&p, &value, &n};
    const unsigned grid = (static_cast<unsigned>(n) + kBlock - 1) / kBlock;
    check(cuda_driver().cuLaunchKernel(fn, grid, 1, 1, kBlock, 1, 1, shared, stream, args, nullptr),
          "cuLaunchKernel(write_values)");
  }

  static std::vector<int> expected(int value, int n) {
    std::vector<int> v(n);
    for (int i = 0; i < n; ++i)
      v[i] = value + i;
    return v;
  }

  static std::vector<int> contents(const DeviceBuffer& b) {
    std::vector<int> v(b.size() / sizeof(int));
    b.download(v.data(), b.size());
    return v;
  }
};

TEST_F(CudaKernelTest, CubinLaunchedDirectly) {
  CudaModule m(device(), compile(jit::GpuCode::cubin), "write_values.cubin");
  CUfunction fn = m.function("write_values");
  const int n = 1000;
  DeviceBuffer out(n * sizeof(int));
  out.zero();
  CudaStream s;
  launch(fn, out, 42, n, kBlock * sizeof(int), s.get());
  s.synchronize();
  EXPECT_EQ(contents(out), expected(42, n));
  // The __device__ variable.
  DeviceGlobal flag = m.global("vtc_test_flag");
  EXPECT_EQ(flag.bytes, sizeof(int));
  int value = 0;
  check(cuda_driver().cuMemcpyDtoH(&value, flag.ptr, sizeof value), "cuMemcpyDtoH");
  EXPECT_EQ(value, 42);
  // What the module lacks, named.
  EXPECT_EQ(error_of([&] { m.function("no_such_kernel"); }),
            "write_values.cubin: no kernel 'no_such_kernel' (cuModuleGetFunction: "
            "CUDA_ERROR_NOT_FOUND (named symbol not found))");
  EXPECT_EQ(error_of([&] { m.global("no_such_global"); }),
            "write_values.cubin: no global 'no_such_global' (cuModuleGetGlobal: "
            "CUDA_ERROR_NOT_FOUND (named symbol not found))");
}

TEST_F(CudaKernelTest, PtxLaunchedDirectly) {
  CudaModule m(device(), compile(jit::GpuCode::ptx), "write_values.ptx");
  const int n = 300;
  DeviceBuffer out(n * sizeof(int));
  launch(m.function("write_values"), out, -7, n, kBlock * sizeof(int), nullptr);
  check(cuda_driver().cuCtxSynchronize(), "cuCtxSynchronize");
  EXPECT_EQ(contents(out), expected(-7, n));
}

TEST_F(CudaKernelTest, BadImageIsOneLine) {
  std::string e = error_of([&] { CudaModule m(device(), "not a cubin", "broken.cubin"); });
  EXPECT_TRUE(is_one_line(e)) << e;
  EXPECT_TRUE(starts_with(e, "broken.cubin: cuModuleLoadData: CUDA_ERROR_")) << e;
  EXPECT_EQ(error_of([&] { CudaModule m(device(), "", "empty.cubin"); }),
            "empty.cubin: an empty image is neither a cubin nor PTX");
}

TEST_F(CudaKernelTest, DynamicSharedMemoryAboveTheDefault) {
  CudaModule m(device(), compile(jit::GpuCode::cubin), "write_values.cubin");
  CUfunction fn = m.function("write_values");
  const size_t optin = device().max_shared_per_block_optin;
  ASSERT_GT(optin, size_t(48) << 10);
  const unsigned big = static_cast<unsigned>(std::min(size_t(64) << 10, optin));
  const int n = 256;
  DeviceBuffer out(n * sizeof(int));
  // Over 48 KiB a launch needs the kernel's limit raised.
  EXPECT_TRUE(starts_with(error_of([&] { launch(fn, out, 1, n, big, nullptr); }),
                          "cuLaunchKernel(write_values): CUDA_ERROR_"));
  m.set_max_dynamic_shared(fn, big);
  out.zero();
  launch(fn, out, 5, n, big, nullptr);
  check(cuda_driver().cuCtxSynchronize(), "cuCtxSynchronize");
  EXPECT_EQ(contents(out), expected(5, n));
  // Above the device's opt-in limit: refused before the driver is asked.
  std::string e = error_of([&] { m.set_max_dynamic_shared(fn, optin + 1); });
  EXPECT_TRUE(starts_with(
      e, "write_values.cubin: kernel 'write_values': " + std::to_string(optin + 1) +
             " bytes of dynamic shared memory asked for, " + std::to_string(optin) + " at most"))
      << e;
}

TEST_F(CudaKernelTest, CapturedGraphReplays) {
  CudaModule m(device(), compile(jit::GpuCode::cubin), "write_values.cubin");
  CUfunction fn = m.function("write_values");
  const int n = 2048;
  DeviceBuffer out(n * sizeof(int));
  out.zero();
  CudaStream s;
  CudaGraph g;
  EXPECT_FALSE(g.instantiated());
  g.begin_capture(s.get());
  EXPECT_TRUE(g.capturing());
  out.fill_bytes_async(0xff, s.get());
  launch(fn, out, 1000, n, kBlock * sizeof(int), s.get());
  g.end_capture();
  EXPECT_FALSE(g.capturing());
  EXPECT_TRUE(g.instantiated());
  // Captured, not run.
  s.synchronize();
  EXPECT_EQ(contents(out), std::vector<int>(n, 0));
  g.launch(s.get());
  s.synchronize();
  EXPECT_EQ(contents(out), expected(1000, n));
  // Replayed, on another stream.
  out.zero();
  CudaStream other;
  g.launch(other.get());
  other.synchronize();
  EXPECT_EQ(contents(out), expected(1000, n));
  EXPECT_EQ(error_of([&] { g.begin_capture(s.get()); }),
            "CudaGraph: begin_capture on a graph already captured");
  EXPECT_EQ(error_of([] { CudaGraph().launch(nullptr); }),
            "CudaGraph: launch of a graph not captured (end_capture)");
}

// A capture left open is ended by the destructor: the stream can be used again.
TEST_F(CudaKernelTest, OpenCaptureEndedByTheDestructor) {
  CudaStream s;
  DeviceBuffer out(64);
  {
    CudaGraph g;
    g.begin_capture(s.get());
    out.fill_bytes_async(1, s.get());
  }
  out.fill_bytes_async(2, s.get());
  s.synchronize();
  std::vector<unsigned char> bytes(64);
  out.download(bytes.data(), bytes.size());
  EXPECT_EQ(bytes, std::vector<unsigned char>(64, 2));
}

#else // !VTC_HAS_CUDA_DRIVER

TEST(CudaDriver, BuiltWithoutTheToolkit) {
  const std::string e = "target cuda: vtc was built without the CUDA toolkit";
  EXPECT_EQ(cuda_toolkit_version(), 0);
  EXPECT_EQ(error_of([] { cuda_driver(); }), e);
  EXPECT_EQ(error_of([] { load_cuda_driver("libcuda.so.1"); }), e);
  EXPECT_EQ(error_of([] { cuda_device(); }), e);
  EXPECT_EQ(error_of([] { DeviceBuffer b(0); }), e);
  EXPECT_EQ(error_of([] { CudaStream s; }), e);
  EXPECT_EQ(error_of([] { CudaEvent ev; }), e);
  EXPECT_EQ(error_of([] { CudaGraph().begin_capture(nullptr); }), e);
  EXPECT_EQ(error_of([] { is_device_pointer(nullptr); }), e);
  EXPECT_EQ(error_of([] { DeviceInfo().make_current(); }), e);
}

#endif

} // namespace
} // namespace vtc::device
