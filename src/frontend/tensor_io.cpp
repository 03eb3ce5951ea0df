// .npy and .pb tensor files.
#include "frontend/tensor_io.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "frontend/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "vtc/error.h"

namespace vtc {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  VTC_CHECK(f) << path << ": cannot open";
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    VTC_CHECK(f) << path << ": cannot write (is the directory writable?)";
    f.write(bytes.data(), std::streamsize(bytes.size()));
    VTC_CHECK(f) << path << ": write failed";
  }
  std::filesystem::rename(tmp, path);
}

bool has_extension(const std::string& path, const char* ext) {
  return std::filesystem::path(path).extension() == ext;
}

// numpy descr for each dtype; bf16 has none (written as f32).
const char* npy_descr(DType t) {
  switch (t) {
  case DType::f32:
    return "<f4";
  case DType::f16:
    return "<f2";
  case DType::bf16:
    return "<f4";
  case DType::f64:
    return "<f8";
  case DType::i64:
    return "<i8";
  case DType::i32:
    return "<i4";
  case DType::i8:
    return "|i1";
  case DType::u8:
    return "|u1";
  case DType::boolean:
    return "|b1";
  }
  return "";
}

} // namespace

Tensor read_npy(const std::string& path, std::optional<DType> expected) {
  std::string bytes = read_file(path);
  VTC_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0)
      << path << ": not a .npy file";
  int major = uint8_t(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    header_start = 10;
  } else {
    VTC_CHECK(bytes.size() >= 12) << path << ": truncated .npy header";
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    header_start = 12;
  }
  VTC_CHECK(header_start + header_len <= bytes.size()) << path << ": truncated .npy header";
  std::string header = bytes.substr(header_start, header_len);
  std::smatch m;
  VTC_CHECK(std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
      << path << ": .npy header has no descr";
  std::string descr = m[1];
  VTC_CHECK(std::regex_search(header, m, std::regex("'fortran_order':\\s*(True|False)")))
      << path << ": .npy header has no fortran_order";
  VTC_CHECK(m[1] == "False") << path << ": Fortran-ordered arrays are not supported";
  VTC_CHECK(std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
      << path << ": .npy header has no shape";
  Shape shape;
  std::string dims = m[1];
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator();
       ++it)
    shape.push_back(std::stoll(it->str()));
  std::optional<DType> dtype;
  for (DType t : {DType::f32, DType::f16, DType::f64, DType::i64, DType::i32, DType::i8, DType::u8,
                  DType::boolean})
    if (descr == npy_descr(t)) dtype = t;
  bool bf16_bits = descr == "<u2" && expected == DType::bf16;
  VTC_CHECK(dtype || bf16_bits) << path << ": unsupported .npy dtype '" << descr << "'";
  Tensor raw(bf16_bits ? DType::bf16 : *dtype, shape);
  size_t data_start = header_start + header_len;
  VTC_CHECK(bytes.size() - data_start == raw.nbytes())
      << path << ": holds " << bytes.size() - data_start << " data bytes, " << type_str(raw.type())
      << " needs " << raw.nbytes();
  std::memcpy(raw.raw(), bytes.data() + data_start, raw.nbytes());
  if (expected == DType::bf16 && raw.dtype() == DType::f32) {
    Tensor t(DType::bf16, shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<bf16_t>()[i] = bf16_t(raw.data<float>()[i]);
    return t;
  }
  return raw;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::ostringstream h;
  h << "{'descr': '" << npy_descr(t.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (int64_t d : t.shape())
    h << d << ", ";
  h << "), }";
  std::string header = h.str();
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  if (t.dtype() == DType::bf16) {
    std::vector<float> f(size_t(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
      f[size_t(i)] = float(t.data<bf16_t>()[i]);
    out.append(reinterpret_cast<const char*>(f.data()), f.size() * 4);
  } else {
    out.append(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  }
  write_file(path, out);
}

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  onnx::TensorProto proto;
  VTC_CHECK(proto.ParseFromString(read_file(path))) << path << ": not a valid TensorProto file";
  if (name) *name = proto.name();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return tensor_from_proto(proto, dir.empty() ? "." : dir, path);
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(t, name, &proto);
  write_file(path, proto.SerializeAsString());
}

Tensor read_tensor_file(const std::string& path, std::optional<DType> expected) {
  if (has_extension(path, ".pb")) return read_tensor_pb(path);
  VTC_CHECK(has_extension(path, ".npy")) << path << ": unknown tensor file type (use .npy or .pb)";
  return read_npy(path, expected);
}

void write_tensor_file(const std::string& path, const Tensor& t, const std::string& name) {
  if (has_extension(path, ".pb"))
    write_tensor_pb(path, t, name);
  else
    write_npy(path, t);
}

} // namespace vtc
