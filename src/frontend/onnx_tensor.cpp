// TensorProto <-> Tensor: raw_data, the typed repeated fields, and external data.
#include "frontend/onnx_tensor.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "frontend/external_data_map.h"
#include "onnx/onnx_pb.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// Shape of the proto, with every dimension checked and the element count bounded so that a
// corrupted file cannot request an absurd allocation.
Shape checked_shape(const onnx::TensorProto& proto, const std::string& what) {
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    VTC_CHECK(d >= 0) << what << ": negative dimension " << d;
    VTC_CHECK(d == 0 || numel <= (int64_t(1) << 40) / d)
        << what << ": too many elements (dims "
        << shape_str(Shape(proto.dims().begin(), proto.dims().end())) << ")";
    numel *= d;
    shape.push_back(d);
  }
  return shape;
}

Tensor read_external(const onnx::TensorProto& proto, const std::string& base_dir,
                     const std::string& what, const TensorType& type) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") location = kv.value();
    try {
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      VTC_FAIL() << what << ": bad external-data " << kv.key() << " '" << kv.value() << "'";
    }
  }
  VTC_CHECK(!location.empty()) << what << ": external data without a location";
  std::filesystem::path rel(location);
  VTC_CHECK(rel.is_relative() && location.find("..") == std::string::npos)
      << what << ": external-data location '" << location << "' must stay beside the model";
  std::filesystem::path path = std::filesystem::path(base_dir) / rel;
  std::ifstream f(path, std::ios::binary);
  VTC_CHECK(f) << what << ": cannot open external-data file " << path.string();
  f.seekg(0, std::ios::end);
  int64_t size = int64_t(f.tellg());
  int64_t want = int64_t(type.nbytes());
  VTC_CHECK(offset >= 0 && (length < 0 || length == want))
      << what << ": external data length " << length << " but the tensor needs " << want
      << " bytes";
  VTC_CHECK(offset <= size && size - offset >= want)
      << what << ": external-data file " << path.string() << " holds " << size << " bytes, needs "
      << want << " at offset " << offset;
  const MappedRegion region = map_file_region(path, offset, want, int64_t(dtype_size(type.dtype)));
  if (region.data) return Tensor::mapped(type, region.owner, region.data);
  Tensor t(type);
  f.seekg(offset);
  f.read(reinterpret_cast<char*>(t.raw()), want);
  VTC_CHECK(f) << what << ": failed reading " << path.string();
  return t;
}

// Number of values a typed repeated field must hold for this dtype (f16/bf16 as int32 bits).
int64_t typed_field_size(const onnx::TensorProto& proto, DType t) {
  switch (t) {
  case DType::f32:
    return proto.float_data_size();
  case DType::f64:
    return proto.double_data_size();
  case DType::i64:
    return proto.int64_data_size();
  case DType::f16:
  case DType::bf16:
  case DType::i32:
  case DType::i8:
  case DType::u8:
  case DType::boolean:
    return proto.int32_data_size();
  }
  return 0;
}

} // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& what) {
  auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    VTC_UNSUPPORTED() << what << ": unsupported data type " << proto.data_type()
                      << " (vtc supports f32, f16, bf16, f64, i64, i32, i8, u8, bool)";
  if (proto.has_segment()) VTC_UNSUPPORTED() << what << ": segmented tensors are not supported";
  TensorType type{*dtype, checked_shape(proto, what)};
  bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  // Check the source holds exactly the right amount of data before allocating anything.
  if (!external && proto.has_raw_data()) {
    VTC_CHECK(proto.raw_data().size() == type.nbytes())
        << what << ": raw_data has " << proto.raw_data().size() << " bytes, " << type_str(type)
        << " needs " << type.nbytes();
  } else if (!external) {
    VTC_CHECK(typed_field_size(proto, *dtype) == type.numel())
        << what << ": holds " << typed_field_size(proto, *dtype) << " values for "
        << type_str(type);
  }
  if (external) return read_external(proto, base_dir, what, type);
  Tensor t(type);
  if (proto.has_raw_data()) {
    // An empty tensor has no storage to copy into (memcpy's pointers must not be null).
    if (t.nbytes() > 0) std::memcpy(t.raw(), proto.raw_data().data(), t.nbytes());
    return t;
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    int k = int(i);
    switch (*dtype) {
    case DType::f32:
      t.data<float>()[i] = proto.float_data(k);
      break;
    case DType::f64:
      t.data<double>()[i] = proto.double_data(k);
      break;
    case DType::i64:
      t.data<int64_t>()[i] = proto.int64_data(k);
      break;
    case DType::f16:
    case DType::bf16:
      t.data<uint16_t>()[i] = uint16_t(proto.int32_data(k));
      break;
    case DType::i32:
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      t.set_i64(i, proto.int32_data(k));
      break;
    }
  }
  return t;
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(onnx_code(t.dtype()));
  for (int64_t d : t.shape())
    proto->add_dims(d);
  proto->set_raw_data(std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes()));
}

} // namespace vtc
