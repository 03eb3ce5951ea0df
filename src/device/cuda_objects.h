// Owners of CUDA driver objects, one small move-only class each: device memory, a loaded module,
// a stream, an event, a captured graph. A moved-from or default-made owner holds nothing. Every
// call, a destructor's included, acts in the calling thread's current context (cuda_device(), or
// DeviceInfo::make_current() on another thread); destructors ignore the driver's errors (at exit
// it may already be shut down). Driver failures are thrown as one-line vtc::Errors naming the
// call and what it was for.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "device/cuda_device.h"
#include "device/cuda_driver.h"

namespace vtc::device {

// Is `p` device memory (CU_POINTER_ATTRIBUTE_MEMORY_TYPE is CU_MEMORYTYPE_DEVICE)? False for host
// memory, for which the driver answers with an error, and for null. Throws only where there is
// no driver.
bool is_device_pointer(const void* p);

// Copies of `bytes` bytes between raw addresses, queued on `stream`; `what` names the copy in
// errors.
void copy_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream,
                  const std::string& what);
void copy_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream,
                    const std::string& what);
void copy_on_device(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream,
                    const std::string& what);

// Queues kernel `fn` on `stream`: grid and block sizes, dynamic shared memory, its parameters
// (cuLaunchKernel's kernelParams). `what` names it in errors. With `overlap` (where the driver
// has cuLaunchKernelEx) the kernel is a programmatic dependent launch: its blocks may start
// before the kernel queued before it has finished, so it must execute griddepcontrol.wait
// before it touches memory that kernel reads or writes (vtc's generated entry points do, first).
void launch_kernel(CUfunction fn, const unsigned (&grid)[3], const unsigned (&block)[3],
                   unsigned shared_bytes, CUstream stream, void** params, const std::string& what,
                   bool overlap = false);

// cuMemAlloc'd memory of size() bytes. A 0-byte buffer holds no allocation: ptr() is 0, and
// copies of 0 bytes do nothing. The copies check their range against size().
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return bytes_; }

  // `bytes` from host memory to [offset, offset + bytes), and back; synchronous.
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;
  // The same, queued on `stream` (the host memory must live until it has run; pinned memory
  // makes it asynchronous to the host).
  void upload_async(const void* host, size_t bytes, CUstream stream, size_t offset = 0);
  void download_async(void* host, size_t bytes, CUstream stream, size_t offset = 0) const;
  // Every byte set to `value` (cuMemsetD8); zero() sets 0.
  void fill_bytes(unsigned char value);
  void fill_bytes_async(unsigned char value, CUstream stream);
  void zero() { fill_bytes(0); }

private:
  void check_range(const char* what, size_t bytes, size_t offset) const;
  void reset() noexcept;

  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Page-locked host memory of size() bytes that the device reads and writes directly
// (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP): host() on the host, device() in kernels.
// Zeroed when made.
class MappedHostBuffer {
public:
  MappedHostBuffer() = default;
  explicit MappedHostBuffer(size_t bytes);
  ~MappedHostBuffer() { reset(); }
  MappedHostBuffer(MappedHostBuffer&& other) noexcept;
  MappedHostBuffer& operator=(MappedHostBuffer&& other) noexcept;
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;

  void* host() const { return host_; }
  CUdeviceptr device() const { return device_; }
  size_t size() const { return bytes_; }

private:
  void reset() noexcept;
  void* host_ = nullptr;
  CUdeviceptr device_ = 0;
  size_t bytes_ = 0;
};

// A __device__ variable of a module: its address and size.
struct DeviceGlobal {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};

// A cubin or PTX image loaded into the current context (cuModuleLoadData; a PTX image is
// compiled by the driver, and its error log quoted when that fails). `label` names the module in
// errors (the image's file, say).
class CudaModule {
public:
  CudaModule() = default;
  CudaModule(const DeviceInfo& device, const std::string& image, std::string label = "CUDA module");
  ~CudaModule() { reset(); }
  CudaModule(CudaModule&& other) noexcept;
  CudaModule& operator=(CudaModule&& other) noexcept;
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  CUmodule get() const { return module_; }
  const std::string& label() const { return label_; }

  // The kernel `name` (its extern "C" name, or the mangled one). Throws "<label>: no kernel
  // 'name' (cuModuleGetFunction: CUDA_ERROR_NOT_FOUND ...)" when the module has none.
  CUfunction function(const std::string& name);
  // Lets `fn` launch with up to `bytes` of dynamic shared memory
  // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). Throws, naming the kernel, when its static
  // shared memory and `bytes` together exceed the device's opt-in limit.
  void set_max_dynamic_shared(CUfunction fn, size_t bytes);
  // The __device__ variable `name`; throws, naming it, when the module has none.
  DeviceGlobal global(const std::string& name) const;

private:
  std::string kernel_name(CUfunction fn) const;
  void reset() noexcept;

  CUmodule module_ = nullptr;
  std::string label_;
  size_t max_shared_per_block_optin_ = 0;
  std::vector<std::pair<CUfunction, std::string>> functions_; // for errors
};

// A stream that does not synchronise with the legacy default stream (CU_STREAM_NON_BLOCKING).
class CudaStream {
public:
  CudaStream();
  ~CudaStream() { reset(); }
  CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  CUstream get() const { return stream_; }
  // Waits for everything queued on it; throws the first failure of its work.
  void synchronize() const;

private:
  void reset() noexcept;
  CUstream stream_ = nullptr;
};

// An event, timed unless `timing` is false (CU_EVENT_DISABLE_TIMING, cheaper to record and wait
// for).
class CudaEvent {
public:
  explicit CudaEvent(bool timing = true);
  ~CudaEvent() { reset(); }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  CUevent get() const { return event_; }
  void record(CUstream stream);
  // Recorded where `stream`'s work has reached, as a node of the graph `stream` is capturing
  // (CU_EVENT_RECORD_EXTERNAL): each replay records it as its work passes there.
  void record_in_capture(CUstream stream);
  void synchronize() const;

private:
  void reset() noexcept;
  CUevent event_ = nullptr;
};

// Milliseconds from `start` to `end`, both recorded, timed and complete (cuEventElapsedTime).
float elapsed_ms(const CudaEvent& start, const CudaEvent& end);

// Work captured from a stream and replayed as one graph: begin_capture(s), the work queued on s
// by this thread (other threads' driver calls are not affected:
// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), end_capture(), then launch(s') any number of times.
// Destroys the graph and its executable, and ends a capture left open (a throw between begin and
// end).
class CudaGraph {
public:
  CudaGraph() = default;
  ~CudaGraph() { reset(); }
  CudaGraph(CudaGraph&& other) noexcept;
  CudaGraph& operator=(CudaGraph&& other) noexcept;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Starts capturing `stream`'s work; the graph must be empty.
  void begin_capture(CUstream stream);
  // Ends the capture and instantiates the graph (cuGraphInstantiateWithFlags).
  void end_capture();
  // Queues the whole graph on `stream`.
  void launch(CUstream stream) const;
  bool instantiated() const { return exec_ != nullptr; }
  bool capturing() const { return capturing_; }

private:
  void reset() noexcept;
  CUstream capture_stream_ = nullptr;
  bool capturing_ = false;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

} // namespace vtc::device
