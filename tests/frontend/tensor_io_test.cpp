// .npy and .pb tensor files round-trip every dtype and read numpy's header format.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "frontend/tensor_io.h"
#include "onnx/onnx_pb.h"
#include "ref/random_inputs.h"
#include "vtc/error.h"

namespace vtc {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vtc_io_test_" + name)).string();
}

TEST(TensorIO, NpyAndPbRoundTripEveryDType) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32,
                  DType::i8, DType::u8, DType::boolean}) {
    Tensor x = random_tensor({t, {3, 5}}, 7);
    std::string npy = temp_path(std::string(dtype_name(t)) + ".npy");
    write_tensor_file(npy, x);
    EXPECT_TRUE(read_tensor_file(npy, t).bitwise_equal(x)) << dtype_name(t);
    std::string pb = temp_path(std::string(dtype_name(t)) + ".pb");
    write_tensor_file(pb, x, "x");
    std::string name;
    EXPECT_TRUE(read_tensor_pb(pb, &name).bitwise_equal(x)) << dtype_name(t);
    EXPECT_EQ(name, "x");
  }
}

TEST(TensorIO, ReadsNumpyHeaderLayout) {
  // Exactly what numpy 2 writes for np.arange(3, dtype=np.int32) (header padded to 64 bytes).
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + char(0) + header;
  for (int32_t v : {0, 1, 2})
    bytes.append(reinterpret_cast<const char*>(&v), 4);
  std::string path = temp_path("numpy.npy");
  std::ofstream(path, std::ios::binary) << bytes;
  Tensor t = read_npy(path);
  EXPECT_EQ(type_str(t.type()), "i32[3]");
  EXPECT_EQ(t.get_i64(2), 2);
}

TEST(TensorIO, ScalarsKeepRankZero) {
  Tensor s = Tensor::from<int64_t>({}, {42});
  std::string path = temp_path("scalar.npy");
  write_npy(path, s);
  Tensor r = read_npy(path);
  EXPECT_EQ(r.rank(), 0);
  EXPECT_EQ(r.get_i64(0), 42);
}

TEST(TensorIO, RejectsTruncatedAndUnknownFiles) {
  Tensor x = random_tensor({DType::f32, {4, 4}}, 1);
  std::string path = temp_path("trunc.npy");
  write_npy(path, x);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  EXPECT_THROW(read_npy(path), Error);
  EXPECT_THROW(read_tensor_file(temp_path("x.txt")), Error);
  EXPECT_THROW(read_tensor_file(temp_path("missing.npy")), Error);
}

// A version-1 .npy file with `header` (padded as numpy pads it) and `data` bytes.
std::string npy_bytes(const std::string& header, const std::string& data = "") {
  std::string h = header;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h + data;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorIO, ParsesNumpyHeadersWrittenInAnyOrder) {
  std::string data(12, '\0');
  Tensor t = parse_npy(npy_bytes("{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}", data),
                       "x.npy");
  EXPECT_EQ(t.dtype(), DType::i32);
  EXPECT_EQ(t.shape(), Shape({3}));
  Tensor s = parse_npy(
      npy_bytes("{'descr': '<f4', 'shape': (), 'fortran_order': False}", std::string(4, '\0')),
      "s.npy");
  EXPECT_EQ(s.shape(), Shape{});
}

// Byte counts that wrap size_t matched files of a few bytes, and std::stoll threw a
// non-vtc exception on sizes past int64.
TEST(TensorIO, RejectsHeadersWhoseSizesDoNotFit) {
  std::string wrap = error_of([] {
    parse_npy(
        npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2305843009213693952,), }"),
        "wrap.npy");
  });
  EXPECT_NE(wrap.find("wrap.npy"), std::string::npos) << wrap;
  EXPECT_NE(wrap.find("more bytes than a 64-bit size holds"), std::string::npos) << wrap;
  std::string big = error_of([] {
    parse_npy(
        npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
        "big.npy");
  });
  EXPECT_NE(big.find("big.npy: .npy shape"), std::string::npos) << big;
}

// Fuzzing findings: an empty tensor read from either format copied zero bytes into storage
// that does not exist (memcpy with a null destination, undefined behaviour under UBSan).
TEST(TensorIO, ReadsEmptyTensors) {
  Tensor npy = parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }"),
                         "empty.npy");
  EXPECT_EQ(npy.shape(), Shape({0, 3}));
  EXPECT_EQ(npy.nbytes(), 0u);
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(0);
  proto.set_raw_data("");
  Tensor pb = parse_tensor_pb(proto.SerializeAsString(), "empty.pb", ".");
  EXPECT_EQ(pb.shape(), Shape({0}));
}

TEST(TensorIO, RejectsMalformedHeaders) {
  for (const char* header : {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, }",
                             "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
                             "{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }",
                             "{'fortran_order': False, 'shape': (2,), }", "{'descr': '<f4"}) {
    std::string e = error_of([&] { parse_npy(npy_bytes(header, std::string(8, '\0')), "m.npy"); });
    EXPECT_EQ(e.rfind("m.npy: ", 0), 0u) << header << " -> " << e;
  }
  std::string v = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  v[6] = char(9);
  EXPECT_NE(error_of([&] { parse_npy(v, "v.npy"); }).find("format version 9"), std::string::npos);
}

TEST(TensorIO, RejectsTensorProtosWhoseSizesDoNotFit) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims((int64_t(1) << 61) + 2); // 8 bytes each: wraps to 16
  proto.set_raw_data(std::string(16, '\0'));
  std::string e = error_of([&] { parse_tensor_pb(proto.SerializeAsString(), "wrap.pb", "."); });
  EXPECT_EQ(e.rfind("wrap.pb: ", 0), 0u) << e;
  proto.set_dims(0, 2);
  EXPECT_EQ(parse_tensor_pb(proto.SerializeAsString(), "ok.pb", ".").numel(), 2);
}

} // namespace
} // namespace vtc
