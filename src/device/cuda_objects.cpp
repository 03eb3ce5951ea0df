// The driver objects' owners: each constructor creates through cuda_driver() and throws a
// one-line error naming the call, each reset() destroys and ignores the result. Without
// VTC_HAS_CUDA_DRIVER the constructors and every call that would reach the driver throw, and
// there is never anything to destroy.
#include "device/cuda_objects.h"

#include <cstring>

#include <climits>

#include "vtc/error.h"

namespace vtc::device {

// Members that need no driver.

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::check_range(const char* what, size_t bytes, size_t offset) const {
  VTC_CHECK(offset <= bytes_ && bytes <= bytes_ - offset)
      << "DeviceBuffer of " << bytes_ << " bytes: " << what << " of " << bytes
      << " bytes at offset " << offset << " is out of its range";
}

CudaModule::CudaModule(CudaModule&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), label_(std::move(other.label_)),
      max_shared_per_block_optin_(other.max_shared_per_block_optin_),
      functions_(std::move(other.functions_)) {}

CudaModule& CudaModule::operator=(CudaModule&& other) noexcept {
  if (this != &other) {
    reset();
    module_ = std::exchange(other.module_, nullptr);
    label_ = std::move(other.label_);
    max_shared_per_block_optin_ = other.max_shared_per_block_optin_;
    functions_ = std::move(other.functions_);
  }
  return *this;
}

std::string CudaModule::kernel_name(CUfunction fn) const {
  for (const auto& [f, name] : functions_)
    if (f == fn) return "kernel '" + name + "'";
  return "a kernel";
}

CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    reset();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

CudaGraph::CudaGraph(CudaGraph&& other) noexcept
    : capture_stream_(std::exchange(other.capture_stream_, nullptr)),
      capturing_(std::exchange(other.capturing_, false)),
      graph_(std::exchange(other.graph_, nullptr)), exec_(std::exchange(other.exec_, nullptr)) {}

CudaGraph& CudaGraph::operator=(CudaGraph&& other) noexcept {
  if (this != &other) {
    reset();
    capture_stream_ = std::exchange(other.capture_stream_, nullptr);
    capturing_ = std::exchange(other.capturing_, false);
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

#if VTC_HAS_CUDA_DRIVER

bool is_device_pointer(const void* p) {
  const CudaDriver& d = cuda_driver();
  if (!p) return false;
  // cuPointerGetAttributes, unlike cuPointerGetAttribute, answers plain host memory with
  // success and a memory type of 0 instead of an error (which tools report as a failed call).
  CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned int type = 0;
  void* data[] = {&type};
  CUresult r = d.cuPointerGetAttributes(1, &attribute, data, reinterpret_cast<CUdeviceptr>(p));
  return r == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE;
}

void copy_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream,
                  const std::string& what) {
  if (bytes) check(cuda_driver().cuMemcpyDtoHAsync(dst, src, bytes, stream), what);
}
void copy_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream,
                    const std::string& what) {
  if (bytes) check(cuda_driver().cuMemcpyHtoDAsync(dst, src, bytes, stream), what);
}
void copy_on_device(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream,
                    const std::string& what) {
  if (bytes) check(cuda_driver().cuMemcpyDtoDAsync(dst, src, bytes, stream), what);
}

void launch_kernel(CUfunction fn, const unsigned (&grid)[3], const unsigned (&block)[3],
                   unsigned shared_bytes, CUstream stream, void** params, const std::string& what,
                   bool overlap) {
  const CudaDriver& driver = cuda_driver();
  if (overlap && driver.cuLaunchKernelEx) {
    CUlaunchAttribute attribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = grid[0], config.gridDimY = grid[1], config.gridDimZ = grid[2];
    config.blockDimX = block[0], config.blockDimY = block[1], config.blockDimZ = block[2];
    config.sharedMemBytes = shared_bytes;
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    check(driver.cuLaunchKernelEx(&config, fn, params, nullptr), what);
    return;
  }
  check(driver.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                              shared_bytes, stream, params, nullptr),
        what);
}

// DeviceBuffer

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (bytes == 0) return;
  check(cuda_driver().cuMemAlloc(&ptr_, bytes),
        "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  bytes_ = bytes;
}

void DeviceBuffer::reset() noexcept {
  if (ptr_) cuda_driver().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}

MappedHostBuffer::MappedHostBuffer(size_t bytes) {
  if (bytes == 0) return;
  const CudaDriver& d = cuda_driver();
  check(d.cuMemHostAlloc(&host_, bytes, CU_MEMHOSTALLOC_DEVICEMAP),
        "cuMemHostAlloc of " + std::to_string(bytes) + " bytes");
  bytes_ = bytes;
  std::memset(host_, 0, bytes);
  CUresult r = d.cuMemHostGetDevicePointer(&device_, host_, 0);
  if (r != CUDA_SUCCESS) {
    reset();
    check(r, "cuMemHostGetDevicePointer");
  }
}

MappedHostBuffer::MappedHostBuffer(MappedHostBuffer&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)), device_(std::exchange(other.device_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

MappedHostBuffer& MappedHostBuffer::operator=(MappedHostBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MappedHostBuffer::reset() noexcept {
  if (host_) cuda_driver().cuMemFreeHost(host_);
  host_ = nullptr;
  device_ = 0;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  check_range("upload", bytes, offset);
  if (bytes == 0) return;
  check(cuda_driver().cuMemcpyHtoD(ptr_ + offset, host, bytes),
        "DeviceBuffer: cuMemcpyHtoD of " + std::to_string(bytes) + " bytes");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  check_range("download", bytes, offset);
  if (bytes == 0) return;
  check(cuda_driver().cuMemcpyDtoH(host, ptr_ + offset, bytes),
        "DeviceBuffer: cuMemcpyDtoH of " + std::to_string(bytes) + " bytes");
}

void DeviceBuffer::upload_async(const void* host, size_t bytes, CUstream stream, size_t offset) {
  check_range("upload", bytes, offset);
  if (bytes == 0) return;
  check(cuda_driver().cuMemcpyHtoDAsync(ptr_ + offset, host, bytes, stream),
        "DeviceBuffer: cuMemcpyHtoDAsync of " + std::to_string(bytes) + " bytes");
}

void DeviceBuffer::download_async(void* host, size_t bytes, CUstream stream, size_t offset) const {
  check_range("download", bytes, offset);
  if (bytes == 0) return;
  check(cuda_driver().cuMemcpyDtoHAsync(host, ptr_ + offset, bytes, stream),
        "DeviceBuffer: cuMemcpyDtoHAsync of " + std::to_string(bytes) + " bytes");
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_ == 0) return;
  check(cuda_driver().cuMemsetD8(ptr_, value, bytes_),
        "DeviceBuffer: cuMemsetD8 of " + std::to_string(bytes_) + " bytes");
}

void DeviceBuffer::fill_bytes_async(unsigned char value, CUstream stream) {
  if (bytes_ == 0) return;
  check(cuda_driver().cuMemsetD8Async(ptr_, value, bytes_, stream),
        "DeviceBuffer: cuMemsetD8Async of " + std::to_string(bytes_) + " bytes");
}

// CudaModule

namespace {

// The first non-empty line of a JIT log, for a one-line error.
std::string first_line(const char* log) {
  std::string s = log;
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = s.find_first_of("\r\n", begin);
  return s.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

} // namespace

CudaModule::CudaModule(const DeviceInfo& device, const std::string& image, std::string label)
    : label_(std::move(label)), max_shared_per_block_optin_(device.max_shared_per_block_optin) {
  VTC_CHECK(!image.empty()) << label_ << ": an empty image is neither a cubin nor PTX";
  const CudaDriver& d = cuda_driver();
  device.make_current();
  // c_str(): PTX must end in a NUL; a cubin's size is in its ELF header.
  CUresult r = CUDA_SUCCESS;
  std::string log;
  if (d.cuModuleLoadDataEx) {
    std::vector<char> buffer(16 << 10, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {buffer.data(), reinterpret_cast<void*>(buffer.size() - 1)};
    r = d.cuModuleLoadDataEx(&module_, image.c_str(), 2, options, values);
    log = first_line(buffer.data());
  } else {
    r = d.cuModuleLoadData(&module_, image.c_str());
  }
  if (r != CUDA_SUCCESS) {
    module_ = nullptr;
    VTC_FAIL() << label_ << ": cuModuleLoadData: " << d.error_text(r)
               << (log.empty() ? "" : ": " + log);
  }
}

void CudaModule::reset() noexcept {
  if (module_) cuda_driver().cuModuleUnload(module_);
  module_ = nullptr;
  functions_.clear();
}

CUfunction CudaModule::function(const std::string& name) {
  VTC_CHECK(module_) << "CudaModule: no module is loaded (looking for kernel '" << name << "')";
  const CudaDriver& d = cuda_driver();
  CUfunction fn = nullptr;
  CUresult r = d.cuModuleGetFunction(&fn, module_, name.c_str());
  VTC_CHECK(r == CUDA_SUCCESS) << label_ << ": no kernel '" << name
                               << "' (cuModuleGetFunction: " << d.error_text(r) << ")";
  bool known = false;
  for (const auto& f : functions_)
    known = known || f.first == fn;
  if (!known) functions_.emplace_back(fn, name);
  return fn;
}

void CudaModule::set_max_dynamic_shared(CUfunction fn, size_t bytes) {
  const CudaDriver& d = cuda_driver();
  const std::string kernel = label_ + ": " + kernel_name(fn);
  int static_bytes = 0;
  check(d.cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
        kernel + ": cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  const size_t optin = max_shared_per_block_optin_;
  const size_t used = static_cast<size_t>(static_bytes);
  const size_t limit = optin > used ? optin - used : 0;
  VTC_CHECK(bytes <= limit && bytes <= size_t(INT_MAX))
      << kernel << ": " << bytes << " bytes of dynamic shared memory asked for, " << limit
      << " at most (the device's opt-in limit of " << optin << " bytes a block, less " << used
      << " static)";
  check(d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(bytes)),
        kernel + ": cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(bytes) +
            ")");
}

DeviceGlobal CudaModule::global(const std::string& name) const {
  VTC_CHECK(module_) << "CudaModule: no module is loaded (looking for global '" << name << "')";
  const CudaDriver& d = cuda_driver();
  DeviceGlobal g;
  CUresult r = d.cuModuleGetGlobal(&g.ptr, &g.bytes, module_, name.c_str());
  VTC_CHECK(r == CUDA_SUCCESS) << label_ << ": no global '" << name
                               << "' (cuModuleGetGlobal: " << d.error_text(r) << ")";
  return g;
}

// CudaStream, CudaEvent

CudaStream::CudaStream() {
  check(cuda_driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

void CudaStream::reset() noexcept {
  if (stream_) cuda_driver().cuStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaStream::synchronize() const {
  check(cuda_driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

CudaEvent::CudaEvent(bool timing) {
  check(cuda_driver().cuEventCreate(&event_, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
}

void CudaEvent::reset() noexcept {
  if (event_) cuda_driver().cuEventDestroy(event_);
  event_ = nullptr;
}

void CudaEvent::record(CUstream stream) {
  check(cuda_driver().cuEventRecord(event_, stream), "cuEventRecord");
}

void CudaEvent::record_in_capture(CUstream stream) {
  check(cuda_driver().cuEventRecordWithFlags(event_, stream, CU_EVENT_RECORD_EXTERNAL),
        "cuEventRecordWithFlags");
}

void CudaEvent::synchronize() const {
  check(cuda_driver().cuEventSynchronize(event_), "cuEventSynchronize");
}

float elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  check(cuda_driver().cuEventElapsedTime(&ms, start.get(), end.get()), "cuEventElapsedTime");
  return ms;
}

// CudaGraph

void CudaGraph::begin_capture(CUstream stream) {
  VTC_CHECK(!capturing_ && !graph_)
      << "CudaGraph: begin_capture on a graph already " << (capturing_ ? "capturing" : "captured");
  check(cuda_driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "CudaGraph: cuStreamBeginCapture");
  capture_stream_ = stream;
  capturing_ = true;
}

void CudaGraph::end_capture() {
  VTC_CHECK(capturing_) << "CudaGraph: end_capture without begin_capture";
  const CudaDriver& d = cuda_driver();
  capturing_ = false;
  CUgraph graph = nullptr;
  CUresult r = d.cuStreamEndCapture(capture_stream_, &graph);
  if (r != CUDA_SUCCESS && graph) d.cuGraphDestroy(graph);
  check(r, "CudaGraph: cuStreamEndCapture");
  graph_ = graph;
  check(d.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "CudaGraph: cuGraphInstantiateWithFlags");
}

void CudaGraph::launch(CUstream stream) const {
  VTC_CHECK(exec_) << "CudaGraph: launch of a graph not captured (end_capture)";
  check(cuda_driver().cuGraphLaunch(exec_, stream), "CudaGraph: cuGraphLaunch");
}

void CudaGraph::reset() noexcept {
  if (!capturing_ && !graph_ && !exec_) return;
  const CudaDriver& d = cuda_driver();
  if (capturing_) {
    CUgraph graph = nullptr;
    d.cuStreamEndCapture(capture_stream_, &graph);
    if (graph) d.cuGraphDestroy(graph);
  }
  if (exec_) d.cuGraphExecDestroy(exec_);
  if (graph_) d.cuGraphDestroy(graph_);
  capture_stream_ = nullptr;
  capturing_ = false;
  graph_ = nullptr;
  exec_ = nullptr;
}

#else // !VTC_HAS_CUDA_DRIVER: nothing can be made, so there is never anything to destroy.

bool is_device_pointer(const void*) {
  no_cuda_toolkit();
}
void copy_to_host(void*, CUdeviceptr, size_t, CUstream, const std::string&) {
  no_cuda_toolkit();
}
void copy_to_device(CUdeviceptr, const void*, size_t, CUstream, const std::string&) {
  no_cuda_toolkit();
}
void copy_on_device(CUdeviceptr, CUdeviceptr, size_t, CUstream, const std::string&) {
  no_cuda_toolkit();
}
void launch_kernel(CUfunction, const unsigned (&)[3], const unsigned (&)[3], unsigned, CUstream,
                   void**, const std::string&, bool) {
  no_cuda_toolkit();
}
DeviceBuffer::DeviceBuffer(size_t) {
  no_cuda_toolkit();
}
MappedHostBuffer::MappedHostBuffer(size_t) {
  no_cuda_toolkit();
}
MappedHostBuffer::MappedHostBuffer(MappedHostBuffer&&) noexcept {}
MappedHostBuffer& MappedHostBuffer::operator=(MappedHostBuffer&&) noexcept {
  return *this;
}
void MappedHostBuffer::reset() noexcept {}
void DeviceBuffer::reset() noexcept {}
void DeviceBuffer::upload(const void*, size_t, size_t) {
  no_cuda_toolkit();
}
void DeviceBuffer::download(void*, size_t, size_t) const {
  no_cuda_toolkit();
}
void DeviceBuffer::upload_async(const void*, size_t, CUstream, size_t) {
  no_cuda_toolkit();
}
void DeviceBuffer::download_async(void*, size_t, CUstream, size_t) const {
  no_cuda_toolkit();
}
void DeviceBuffer::fill_bytes(unsigned char) {
  no_cuda_toolkit();
}
void DeviceBuffer::fill_bytes_async(unsigned char, CUstream) {
  no_cuda_toolkit();
}
CudaModule::CudaModule(const DeviceInfo&, const std::string&, std::string) {
  no_cuda_toolkit();
}
void CudaModule::reset() noexcept {}
CUfunction CudaModule::function(const std::string&) {
  no_cuda_toolkit();
}
void CudaModule::set_max_dynamic_shared(CUfunction, size_t) {
  no_cuda_toolkit();
}
DeviceGlobal CudaModule::global(const std::string&) const {
  no_cuda_toolkit();
}
CudaStream::CudaStream() {
  no_cuda_toolkit();
}
void CudaStream::reset() noexcept {}
void CudaStream::synchronize() const {
  no_cuda_toolkit();
}
CudaEvent::CudaEvent(bool) {
  no_cuda_toolkit();
}
void CudaEvent::reset() noexcept {}
void CudaEvent::record(CUstream) {
  no_cuda_toolkit();
}
void CudaEvent::record_in_capture(CUstream) {
  no_cuda_toolkit();
}
void CudaEvent::synchronize() const {
  no_cuda_toolkit();
}
float elapsed_ms(const CudaEvent&, const CudaEvent&) {
  no_cuda_toolkit();
}
void CudaGraph::begin_capture(CUstream) {
  no_cuda_toolkit();
}
void CudaGraph::end_capture() {
  no_cuda_toolkit();
}
void CudaGraph::launch(CUstream) const {
  no_cuda_toolkit();
}
void CudaGraph::reset() noexcept {}

#endif

} // namespace vtc::device
