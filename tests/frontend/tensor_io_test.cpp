// .npy and .pb tensor files round-trip every dtype and read numpy's header format.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/tensor_io.h"
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

} // namespace
} // namespace vtc
