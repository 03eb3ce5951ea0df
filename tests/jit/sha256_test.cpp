// SHA-256 against the FIPS 180-4 / NIST example vectors, fed whole and in uneven pieces so
// every path through the block buffer is exercised.
#include "jit/sha256.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "jit_test_util.h"

namespace vtc::jit {
namespace {

TEST(Sha256, NistVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjkl"
                       "mnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionAsInUnevenPieces) {
  Sha256 hash;
  std::string piece(997, 'a');
  size_t left = 1000000;
  for (size_t step = 1; left > 0; step = step % 997 + 13) {
    size_t n = std::min({step, left, piece.size()});
    hash.update(piece.data(), n);
    left -= n;
  }
  EXPECT_EQ(hash.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, BlockBoundaryLengths) {
  // Lengths around the 56-byte padding limit and the 64-byte block must all differ and be
  // stable whether fed at once or byte by byte.
  for (size_t n : {55, 56, 57, 63, 64, 65, 119, 120, 128}) {
    std::string text(n, 'x');
    Sha256 bytewise;
    for (char c : text)
      bytewise.update(&c, 1);
    EXPECT_EQ(bytewise.hex_digest(), sha256_hex(text)) << n;
  }
  EXPECT_NE(sha256_hex(std::string(55, 'x')), sha256_hex(std::string(56, 'x')));
}

class Sha256File : public testing::ScratchDirTest {};

TEST_F(Sha256File, MatchesStringHashAndReportsMissingFile) {
  std::string content(70000, '\0');
  for (size_t i = 0; i < content.size(); ++i)
    content[i] = char(i * 31 + 7);
  testing::write_file(dir_ / "blob", content);
  EXPECT_EQ(sha256_file_hex((dir_ / "blob").string()), sha256_hex(content));
  EXPECT_FALSE(sha256_file_hex((dir_ / "missing").string()).has_value());
}

} // namespace
} // namespace vtc::jit
