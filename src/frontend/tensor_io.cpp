// .npy and .pb tensor files.
#include "frontend/tensor_io.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
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

// The header's shape tuple: non-negative decimal sizes separated by commas. Anything else
// (or a size past int64) is refused rather than read loosely.
Shape parse_npy_shape(const std::string& dims, const std::string& name) {
  Shape shape;
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ',' || dims[i] == 'L'))
      ++i;
  };
  skip_spaces();
  while (i < dims.size()) {
    VTC_CHECK(std::isdigit(uint8_t(dims[i])))
        << name << ": .npy shape '(" << dims << ")' is not a tuple of sizes";
    int64_t d = 0;
    while (i < dims.size() && std::isdigit(uint8_t(dims[i]))) {
      VTC_CHECK(d <= (std::numeric_limits<int64_t>::max() - 9) / 10)
          << name << ": .npy shape '(" << dims << ")' has a size past int64";
      d = d * 10 + (dims[i++] - '0');
    }
    shape.push_back(d);
    skip_spaces();
  }
  return shape;
}

// The text of the header dictionary's entry `key`. With `open` set the value must start with
// that character and ends at `close`; otherwise it runs to `close` (or the end), trimmed.
std::string_view npy_header_field(std::string_view header, const std::string& key, char open,
                                  char close, const std::string& name) {
  size_t at = header.find("'" + key + "'");
  VTC_CHECK(at != std::string_view::npos) << name << ": .npy header has no " << key;
  size_t i = at + key.size() + 2;
  auto skip_spaces = [&] {
    while (i < header.size() && header[i] == ' ')
      ++i;
  };
  skip_spaces();
  VTC_CHECK(i < header.size() && header[i] == ':')
      << name << ": .npy header's " << key << " has no value";
  ++i;
  skip_spaces();
  if (open) {
    VTC_CHECK(i < header.size() && header[i] == open)
        << name << ": .npy header's " << key << " is not written as " << open << "..." << close;
    ++i;
  }
  size_t end = header.find(close, i);
  if (open)
    VTC_CHECK(end != std::string_view::npos)
        << name << ": .npy header's " << key << " is not closed";
  std::string_view value = header.substr(i, end == std::string_view::npos ? end : end - i);
  while (!value.empty() && (value.back() == ' ' || value.back() == '}' || value.back() == '\n'))
    value.remove_suffix(1);
  return value;
}

} // namespace

Tensor parse_npy(std::string_view bytes, const std::string& name, std::optional<DType> expected) {
  VTC_CHECK(bytes.size() >= 10 && bytes.substr(0, 6) == "\x93NUMPY") << name << ": not a .npy file";
  int major = uint8_t(bytes[6]);
  VTC_CHECK(major >= 1 && major <= 3) << name << ": unsupported .npy format version " << major;
  size_t header_len, header_start;
  if (major == 1) {
    header_len = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    header_start = 10;
  } else {
    VTC_CHECK(bytes.size() >= 12) << name << ": truncated .npy header";
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    header_start = 12;
  }
  VTC_CHECK(header_len <= bytes.size() - header_start) << name << ": truncated .npy header";
  std::string_view header = bytes.substr(header_start, header_len);
  std::string descr(npy_header_field(header, "descr", '\'', '\'', name));
  std::string_view fortran = npy_header_field(header, "fortran_order", 0, ',', name);
  VTC_CHECK(fortran == "False" || fortran == "True")
      << name << ": .npy header's fortran_order is '" << fortran << "'";
  VTC_CHECK(fortran == "False") << name << ": Fortran-ordered arrays are not supported";
  Shape shape =
      parse_npy_shape(std::string(npy_header_field(header, "shape", '(', ')', name)), name);
  std::optional<DType> dtype;
  for (DType t : {DType::f32, DType::f16, DType::f64, DType::i64, DType::i32, DType::i8, DType::u8,
                  DType::boolean})
    if (descr == npy_descr(t)) dtype = t;
  bool bf16_bits = descr == "<u2" && expected == DType::bf16;
  VTC_CHECK(dtype || bf16_bits) << name << ": unsupported .npy dtype '" << descr << "'";
  TensorType type{bf16_bits ? DType::bf16 : *dtype, shape};
  // Sizes are checked against the file before anything is allocated.
  size_t needed = dtype_size(type.dtype);
  for (int64_t d : shape)
    VTC_CHECK(!__builtin_mul_overflow(needed, size_t(d), &needed))
        << name << ": " << type_str(type) << " has more bytes than a 64-bit size holds";
  size_t data_bytes = bytes.size() - (header_start + header_len);
  VTC_CHECK(data_bytes == type.nbytes()) << name << ": holds " << data_bytes << " data bytes, "
                                         << type_str(type) << " needs " << type.nbytes();
  Tensor raw(type.dtype, shape);
  if (raw.nbytes() > 0) // an empty tensor has no storage (memcpy's pointers must not be null)
    std::memcpy(raw.raw(), bytes.data() + header_start + header_len, raw.nbytes());
  if (expected == DType::bf16 && raw.dtype() == DType::f32) {
    Tensor t(DType::bf16, shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<bf16_t>()[i] = bf16_t(raw.data<float>()[i]);
    return t;
  }
  return raw;
}

Tensor read_npy(const std::string& path, std::optional<DType> expected) {
  return parse_npy(read_file(path), path, expected);
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

Tensor parse_tensor_pb(const std::string& bytes, const std::string& name,
                       const std::string& base_dir, std::string* stored_name) {
  onnx::TensorProto proto;
  VTC_CHECK(proto.ParseFromString(bytes)) << name << ": not a valid TensorProto file";
  if (stored_name) *stored_name = proto.name();
  return tensor_from_proto(proto, base_dir, name);
}

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_tensor_pb(read_file(path), path, dir.empty() ? "." : dir, name);
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
