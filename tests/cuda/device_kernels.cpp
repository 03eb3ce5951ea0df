// cuda_device_kernels: runs every cuda kernel template on the GPU (driver API: NVRTC -> cubin
// -> cuModuleLoadData -> cuLaunchKernel). Each case of kernel_cases.h runs on random inputs and
// is checked against a double-precision reference (max |out - ref| / max |ref| against the
// dtype's tolerance; an element left unwritten reads as NaN, the poison the output starts
// with); the cases of one group (one function over differently laid-out operands) must give
// bitwise-equal outputs. Large cases on dense operands are then timed with CUDA events (median
// of --repeat launches) and reported in GB/s and TFLOP/s, checked on a sample of outputs.
//
//   cuda_device_kernels [--filter REGEX] [--repeat N] [--no-time] [--arch sm_90a]
//
// --filter keeps the cases whose name the regular expression matches somewhere (a name's part
// is one: `library_prologue|conv2d_direct`); a filter that keeps no case is a failure.
//
// libcuda is opened at run time, so that without a driver or a device the program says so in
// one line and exits with status 1. The last line is "N passed, M failed".
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <cuda.h>
#include <dlfcn.h>

#include "kernel_cases.h"
#include "kernels/common/scalar_types.h"
#include "nvrtc_helper.h"

namespace vtc::cuda_test {
namespace {

#define VTC_STR2(x) #x
#define VTC_STR(x) VTC_STR2(x)

// The driver functions the program calls, resolved from libcuda.so.1.
struct Driver {
#define VTC_DRIVER_FUNCTIONS(X)                                                                    \
  X(cuInit)                                                                                        \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncSetAttribute)                                                                            \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemsetD8)                                                                                    \
  X(cuLaunchKernel)                                                                                \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuGetErrorString)
#define VTC_MEMBER(fn) decltype(&fn) fn##_ = nullptr;
  VTC_DRIVER_FUNCTIONS(VTC_MEMBER)
#undef VTC_MEMBER

  // Empty on success, else why not.
  std::string load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return std::string("libcuda.so.1 not loadable: ") + dlerror();
#define VTC_LOAD(fn)                                                                               \
  fn##_ = reinterpret_cast<decltype(&fn)>(dlsym(lib, VTC_STR(fn)));                                \
  if (!fn##_) return std::string("libcuda.so.1 has no ") + VTC_STR(fn);
    VTC_DRIVER_FUNCTIONS(VTC_LOAD)
#undef VTC_LOAD
    return "";
  }
  std::string error(CUresult r) const {
    const char* s = nullptr;
    if (cuGetErrorString_) cuGetErrorString_(r, &s);
    return s ? s : "CUDA error " + std::to_string(int(r));
  }
};

Driver drv;

struct Failure {
  std::string what;
};

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Failure{std::string(what) + ": " + drv.error(r)};
}

struct DeviceBuffer {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(std::max<size_t>(n, 16)) {
    check(drv.cuMemAlloc_(&p, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    if (p) drv.cuMemFree_(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void upload(const std::vector<unsigned char>& h) {
    if (!h.empty()) check(drv.cuMemcpyHtoD_(p, h.data(), h.size()), "cuMemcpyHtoD");
  }
  std::vector<unsigned char> download(size_t n) const {
    std::vector<unsigned char> h(n);
    if (n) check(drv.cuMemcpyDtoH_(h.data(), p, n), "cuMemcpyDtoH");
    return h;
  }
};

uint64_t hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s)
    h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// Random inputs of a case (operands 1..), the same for every case of its group.
Inputs random_inputs(const Case& c) {
  std::mt19937_64 rng(hash(c.group));
  std::uniform_real_distribution<float> u(-c.input_range, c.input_range);
  Inputs in;
  for (size_t i = 1; i < c.ops.size(); ++i) {
    std::vector<float> v(static_cast<size_t>(c.ops[i].numel()));
    for (float& x : v)
      x = round_to(c.ops[i].dtype, u(rng));
    in.push_back(std::move(v));
  }
  return in;
}

struct Outcome {
  bool pass = false;
  double rel_err = 0;
  int64_t checked = 0;
  std::vector<float> out;
  double ms = 0; // median launch time, when timed
};

struct Options {
  std::string filter, arch = "sm_90a";
  int repeat = 50;
  bool time = true;
};

Outcome run_case(CUfunction f, const Case& c, const Inputs& in, bool time, int repeat) {
  Outcome o;
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<CUdeviceptr> ptrs;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    std::vector<unsigned char> b0, b1;
    if (i == 0) {
      b0.assign(size_t(c.ops[0].elems0) * dtype_bytes(c.ops[0].dtype), 0xff); // NaN poison
      b1.assign(size_t(c.ops[0].elems1) * dtype_bytes(c.ops[0].dtype), 0xff);
    } else {
      c.ops[i].scatter(in[i - 1], b0, b1);
    }
    bufs.push_back(std::make_unique<DeviceBuffer>(b0.size()));
    bufs.back()->upload(b0);
    bufs.push_back(std::make_unique<DeviceBuffer>(b1.size()));
    bufs.back()->upload(b1);
  }
  DeviceBuffer ws(size_t(c.workspace_bytes));
  check(drv.cuMemsetD8_(ws.p, 0, ws.bytes), "cuMemsetD8");
  for (auto& b : bufs)
    ptrs.push_back(b->p);
  ptrs.push_back(ws.p);
  std::vector<void*> args;
  for (CUdeviceptr& p : ptrs)
    args.push_back(&p);
  const Launch& l = c.launch;
  if (l.smem_bytes > 48 * 1024)
    check(drv.cuFuncSetAttribute_(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  int(l.smem_bytes)),
          "cuFuncSetAttribute");
  auto launch = [&] {
    check(drv.cuLaunchKernel_(f, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                              l.block[2], l.smem_bytes, nullptr, args.data(), nullptr),
          "cuLaunchKernel");
  };
  launch();
  check(drv.cuCtxSynchronize_(), "kernel");
  const Operand& out = c.ops[0];
  o.out = out.gather(bufs[0]->download(size_t(out.elems0) * dtype_bytes(out.dtype)),
                     bufs[1]->download(size_t(out.elems1) * dtype_bytes(out.dtype)));

  // The reference at every output, or at a sample of them when that would take long.
  const int64_t n = out.numel();
  const double per =
      std::max(1.0, (c.flops > 0 ? c.flops : c.bytes) / double(std::max<int64_t>(n, 1)));
  std::vector<int64_t> which;
  if (double(n) * per <= 3e8) {
    for (int64_t i = 0; i < n; ++i)
      which.push_back(i);
  } else {
    std::mt19937_64 rng(hash(c.name));
    std::uniform_int_distribution<int64_t> u(0, n - 1);
    which = {0, n - 1};
    for (int i = 0; i < 1024; ++i)
      which.push_back(u(rng));
  }
  double err = 0, ref_max = 0;
  bool exact = true;
  for (int64_t i : which) {
    const double r = c.ref(in, i), v = o.out[size_t(i)];
    if (std::isnan(v) && !std::isnan(r)) err = INFINITY;
    err = std::max(err, std::fabs(v - r));
    ref_max = std::max(ref_max, std::fabs(r));
    exact = exact && float(v) == round_to(out.dtype, float(r));
  }
  o.checked = int64_t(which.size());
  o.rel_err = err / std::max(ref_max, 1e-30);
  o.pass = c.tol == 0 ? exact : o.rel_err <= c.tol;

  if (time) {
    CUevent e0, e1;
    check(drv.cuEventCreate_(&e0, CU_EVENT_DEFAULT), "cuEventCreate");
    check(drv.cuEventCreate_(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
    for (int i = 0; i < 3; ++i)
      launch();
    std::vector<float> ms;
    for (int i = 0; i < repeat; ++i) {
      check(drv.cuEventRecord_(e0, nullptr), "cuEventRecord");
      launch();
      check(drv.cuEventRecord_(e1, nullptr), "cuEventRecord");
      check(drv.cuEventSynchronize_(e1), "cuEventSynchronize");
      float t = 0;
      check(drv.cuEventElapsedTime_(&t, e0, e1), "cuEventElapsedTime");
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    o.ms = ms[ms.size() / 2];
    drv.cuEventDestroy_(e0);
    drv.cuEventDestroy_(e1);
  }
  return o;
}

// The device's 16-bit conversions (the conversion instructions) against the host's integer
// code, bit for bit: every half pattern, a stride through the float patterns, and the edges
// (infinities, zeros, subnormals, halfway cases); a NaN must give a NaN (its bits are the
// instruction's). Empty on success, else the first mismatch.
std::string check_conversions() {
  namespace k = vtc::kernels;
  std::vector<uint32_t> xs;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint32_t v = std::bit_cast<uint32_t>(k::half_to_float(uint16_t(h)));
    xs.insert(xs.end(), {h, v, v + 0x1000, v + 0x0fff}); // a half pattern, its value, halfway
  }
  for (uint64_t x = 0; x < (uint64_t(1) << 32); x += 4099)
    xs.push_back(uint32_t(x));
  for (uint32_t x : {0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffffffffu, 0x7fbfe000u,
                     0x80000000u, 0x477ff000u, 0x477fefffu, 0x33000000u, 0x33000001u, 0x387fe000u})
    xs.push_back(x);
  const std::string src = R"(#include "kernels/common/scalar_types.h"
using namespace vtc::kernels;
extern "C" __global__ void conversions(const unsigned* in, unsigned* out, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float f = __builtin_bit_cast(float, in[i]);
  out[3 * i] = float_to_half(f);
  out[3 * i + 1] = __builtin_bit_cast(unsigned, half_to_float((unsigned short)in[i]));
  out[3 * i + 2] = __builtin_bit_cast(unsigned, half_round(f));
}
)";
  NvrtcOptions no = default_nvrtc_options();
  const NvrtcResult cr = compile_cubin(src, "conversions.cu", no);
  if (!cr.ok) return "NVRTC failed: " + cr.log;
  CUmodule mod;
  check(drv.cuModuleLoadData_(&mod, cr.cubin.data()), "cuModuleLoadData");
  CUfunction f;
  check(drv.cuModuleGetFunction_(&f, mod, "conversions"), "cuModuleGetFunction");
  const long long n = (long long)xs.size();
  DeviceBuffer in(xs.size() * 4), out(xs.size() * 12);
  std::vector<unsigned char> bytes(xs.size() * 4);
  std::memcpy(bytes.data(), xs.data(), bytes.size());
  in.upload(bytes);
  CUdeviceptr pi = in.p, po = out.p;
  long long nn = n;
  void* args[] = {&pi, &po, &nn};
  check(
      drv.cuLaunchKernel_(f, unsigned((n + 255) / 256), 1, 1, 256, 1, 1, 0, nullptr, args, nullptr),
      "cuLaunchKernel");
  check(drv.cuCtxSynchronize_(), "kernel");
  const std::vector<unsigned char> got = out.download(xs.size() * 12);
  drv.cuModuleUnload_(mod);
  for (size_t i = 0; i < xs.size(); ++i) {
    uint32_t d[3];
    std::memcpy(d, got.data() + 12 * i, 12);
    const float fx = std::bit_cast<float>(xs[i]);
    const uint32_t want[3] = {k::float_to_half(fx),
                              std::bit_cast<uint32_t>(k::half_to_float(uint16_t(xs[i]))),
                              std::bit_cast<uint32_t>(k::half_to_float(k::float_to_half(fx)))};
    const char* what[3] = {"float_to_half", "half_to_float", "half_round"};
    const bool half_nan[3] = {true, false, false}; // the result's type: half or float
    for (int j = 0; j < 3; ++j) {
      const bool want_nan =
          half_nan[j] ? (want[j] & 0x7fff) > 0x7c00 : (want[j] & 0x7fffffffu) > 0x7f800000u;
      const bool got_nan =
          half_nan[j] ? (d[j] & 0x7fff) > 0x7c00 : (d[j] & 0x7fffffffu) > 0x7f800000u;
      if (want_nan ? !got_nan : d[j] != want[j]) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s(0x%08x): device 0x%08x, host 0x%08x", what[j], xs[i],
                      d[j], want[j]);
        return buf;
      }
    }
  }
  return "";
}

int run(const Options& opt) {
  if (std::string why = drv.load(); !why.empty()) {
    std::printf("cuda_device_kernels: no CUDA device (%s)\n", why.c_str());
    return 1;
  }
  if (CUresult r = drv.cuInit_(0); r != CUDA_SUCCESS) {
    std::printf("cuda_device_kernels: no CUDA device (cuInit: %s)\n", drv.error(r).c_str());
    return 1;
  }
  int count = 0;
  if (drv.cuDeviceGetCount_(&count) != CUDA_SUCCESS || count == 0) {
    std::printf("cuda_device_kernels: no CUDA device\n");
    return 1;
  }
  CUdevice dev;
  CUcontext ctx;
  check(drv.cuDeviceGet_(&dev, 0), "cuDeviceGet");
  check(drv.cuDevicePrimaryCtxRetain_(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(drv.cuCtxSetCurrent_(ctx), "cuCtxSetCurrent");
  char name[256] = {};
  drv.cuDeviceGetName_(name, sizeof name, dev);
  int sms = 0, major = 0, minor = 0;
  drv.cuDeviceGetAttribute_(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  drv.cuDeviceGetAttribute_(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  drv.cuDeviceGetAttribute_(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  std::printf("device: %s, %d multiprocessors, compute capability %d.%d; code for %s\n", name, sms,
              major, minor, opt.arch.c_str());

  // Families: the representative cases, with the timed cases joined to their family's unit.
  std::vector<CaseFamily> families = representative_cases();
  std::map<std::string, size_t> family_of;
  for (size_t i = 0; i < families.size(); ++i)
    for (const Case& c : families[i].cases)
      family_of[c.family] = i;
  std::map<std::string, bool> is_timed;
  if (opt.time)
    for (Case& c : timed_cases()) {
      is_timed[c.name] = true;
      families[family_of.at(c.family)].cases.push_back(c);
    }

  int passed = 0, failed = 0;
  const std::regex filter(opt.filter);
  const auto kept = [&](const std::string& name) {
    return opt.filter.empty() || std::regex_search(name, filter);
  };
  if (kept("conversions")) {
    const std::string why = check_conversions();
    std::printf("conversions (16-bit, device against host, bit for bit) %s%s\n",
                why.empty() ? "PASS" : "FAIL: ", why.c_str());
    (why.empty() ? passed : failed)++;
  }
  std::map<std::string, std::vector<float>> group_out;
  std::printf("%-58s %10s %8s %6s %10s %12s\n", "case", "rel err", "checked", "bits", "ms", "rate");
  for (const CaseFamily& fam : families) {
    std::vector<Case> cases;
    for (const Case& c : fam.cases)
      if (kept(c.name)) cases.push_back(c);
    if (cases.empty()) continue;
    NvrtcOptions no = default_nvrtc_options();
    no.arch = opt.arch;
    const NvrtcResult cr = compile_cubin(translation_unit(cases), fam.name + ".cu", no);
    if (!cr.ok) {
      std::printf("%s: NVRTC failed\n%s\nFAIL %s (compile)\n", fam.name.c_str(), cr.log.c_str(),
                  fam.name.c_str());
      failed += int(cases.size());
      continue;
    }
    CUmodule mod;
    check(drv.cuModuleLoadData_(&mod, cr.cubin.data()), "cuModuleLoadData");
    std::printf("-- %s: %zu cases, compiled in %.1f s\n", fam.name.c_str(), cases.size(),
                cr.seconds);
    for (const Case& c : cases) {
      const bool timed = is_timed.count(c.name) > 0;
      try {
        CUfunction f;
        check(drv.cuModuleGetFunction_(&f, mod, c.name.c_str()), "cuModuleGetFunction");
        const Inputs in = random_inputs(c);
        Outcome o = run_case(f, c, in, timed, opt.repeat);
        std::string bits = "-";
        auto it = group_out.find(c.group);
        if (it == group_out.end()) {
          group_out[c.group] = o.out;
        } else {
          const bool same = it->second.size() == o.out.size() &&
                            std::memcmp(it->second.data(), o.out.data(), o.out.size() * 4) == 0;
          bits = same ? "same" : "DIFF";
          o.pass = o.pass && same;
        }
        std::string rate;
        if (timed && o.ms > 0) {
          char buf[64];
          if (c.flops > 0 && c.flops / c.bytes > 50)
            std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", c.flops / (o.ms * 1e-3) / 1e12);
          else
            std::snprintf(buf, sizeof buf, "%.0f GB/s", c.bytes / (o.ms * 1e-3) / 1e9);
          rate = buf;
        }
        std::printf("%-58s %10.2e %8lld %6s %10s %12s %s\n", c.name.c_str(), o.rel_err,
                    (long long)o.checked, bits.c_str(),
                    timed ? std::to_string(o.ms).substr(0, 8).c_str() : "", rate.c_str(),
                    o.pass ? "PASS" : "FAIL");
        (o.pass ? passed : failed)++;
      } catch (const Failure& e) {
        std::printf("%-58s FAIL (%s)\n", c.name.c_str(), e.what.c_str());
        ++failed;
        if (e.what.rfind("kernel", 0) == 0) { // a fault poisons the context: stop here
          std::printf("%d passed, %d failed\n", passed, failed);
          return 1;
        }
      }
    }
    drv.cuModuleUnload_(mod);
  }
  if (passed + failed == 0) {
    std::printf("FAIL: no case's name matches --filter '%s'\n0 passed, 0 failed\n",
                opt.filter.c_str());
    return 1;
  }
  std::printf("%s\n%d passed, %d failed\n", failed ? "FAIL" : "PASS", passed, failed);
  return failed ? 1 : 0;
}

} // namespace
} // namespace vtc::cuda_test

int main(int argc, char** argv) {
  vtc::cuda_test::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc)
      opt.filter = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      opt.repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--arch" && i + 1 < argc)
      opt.arch = argv[++i];
    else if (a == "--no-time")
      opt.time = false;
    else {
      std::printf("usage: cuda_device_kernels [--filter REGEX] [--repeat N] [--no-time] "
                  "[--arch sm_90a]\n");
      return 2;
    }
  }
  try {
    (void)std::regex(opt.filter);
  } catch (const std::regex_error& e) {
    std::printf("cuda_device_kernels: --filter '%s' is not a regular expression: %s\n",
                opt.filter.c_str(), e.what());
    return 2;
  }
  try {
    return vtc::cuda_test::run(opt);
  } catch (const vtc::cuda_test::Failure& e) {
    std::printf("cuda_device_kernels: %s\nFAIL\n", e.what.c_str());
    return 1;
  }
}
