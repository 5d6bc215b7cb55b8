// Issue 17: files made to hurt a reader. Each case failed (a crash, a hang, gigabytes, an error
// echoing the attack) before the fix named in its comment.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quote.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> safetensors(const std::string& header, std::size_t data_bytes = 0) {
  std::vector<std::byte> out(8 + header.size() + data_bytes);
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::byte((n >> (8 * i)) & 0xFF);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

// The message of the tfdebug::Error that reading `bytes` as safetensors throws.
std::string safetensors_error(const std::string& header, std::size_t data_bytes = 0) {
  const std::vector<std::byte> bytes = safetensors(header, data_bytes);
  std::vector<NamedTensor> out;
  std::map<std::string, std::string> metadata;
  try {
    detail::read_safetensors("f.safetensors", bytes, out, metadata);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string nested(int depth) {
  return std::string(std::size_t(depth), '[') + std::string(std::size_t(depth), ']');
}

// Note [Header by SAX]: deep nesting is refused at a bounded depth, never serialised back.
TEST(HostileSafetensors, DeepNestingIsABoundedShortError) {
  for (const int depth : {20, 20'000, 100'000}) {
    const std::string shape = safetensors_error(
        R"({"t":{"dtype":"F32","shape":)" + nested(depth) + R"(,"data_offsets":[0,4]}})", 4);
    EXPECT_EQ(shape, "f.safetensors: tensor 't': shape holds an array, not a non-negative integer") << depth;
    const std::string extra = safetensors_error(
        R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":)" + nested(depth) + "}}", 4);
    EXPECT_EQ(
        extra,
        "f.safetensors: header nests arrays or objects deeper than 16 levels (a safetensors header needs 3)");
  }
  // A field the format does not define may hold anything shallower.
  EXPECT_EQ(safetensors_error(
                R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":{"a":[1,{"b":null}]}}})", 4),
            "");
}

// Note [Quoted input]: names are escaped and cut in errors.
TEST(HostileSafetensors, ErrorsQuoteNamesSafely) {
  const std::string long_dtype = safetensors_error(
      R"({"t":{"dtype":")" + std::string(100'000, 'F') + R"(","shape":[1],"data_offsets":[0,4]}})", 4);
  EXPECT_LT(long_dtype.size(), 400u);
  EXPECT_NE(long_dtype.find("... (100000 bytes)"), std::string::npos);
  const std::string escaped =
      safetensors_error(R"({"a\n\u001b]0;x\u0007b":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}})", 4);
  EXPECT_NE(escaped.find(R"('a\n\x1b]0;x\x07b')"), std::string::npos) << escaped;
  EXPECT_EQ(escaped.find('\n'), std::string::npos);
  EXPECT_EQ(detail::quote("caf\xc3\xa9 \xc2\x9b x\xff"),
            "'caf\xc3\xa9 \\xc2\\x9b x\\xff'");  // C1 CSI and a bad byte
}

// Note [Header by SAX]: linear in the tensors, in file order, duplicates refused.
TEST(HostileSafetensors, HundredThousandTensorsInFileOrder) {
  constexpr int kTensors = 100'000;
  std::string header = "{";
  for (int i = kTensors - 1; i >= 0; --i) {  // names in reverse order of their data
    const int at = kTensors - 1 - i;
    header += "\"t" + std::to_string(i) + R"(":{"dtype":"F32","shape":[1],"data_offsets":[)" +
              std::to_string(4 * at) + "," + std::to_string(4 * at + 4) + "]},";
  }
  header += R"("__metadata__":{"format":"pt"}})";
  const std::vector<std::byte> bytes = safetensors(header, 4 * kTensors);
  std::vector<NamedTensor> out;
  std::map<std::string, std::string> metadata;
  detail::read_safetensors("f.safetensors", bytes, out, metadata);
  ASSERT_EQ(out.size(), std::size_t(kTensors));
  EXPECT_EQ(out.front().name, "t99999");
  EXPECT_EQ(out.back().name, "t0");
  EXPECT_EQ(metadata.at("format"), "pt");
  EXPECT_EQ(
      safetensors_error(
          R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          8),
      "f.safetensors: header names 'a' twice");
}

class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tfdebug_hostile_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& path, const std::vector<std::byte>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  std::string open_error(const fs::path& path) {
    try {
      (void)ModelFile::open(path.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::vector<std::byte> one_tensor() {
    return safetensors(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
  }
  fs::path dir_;
};

// Note [Only regular files]: a FIFO is refused at once instead of blocking in open().
TEST_F(HostileFiles, FifosAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "m.safetensors").c_str(), 0600), 0);
  EXPECT_NE(open_error(dir_ / "m.safetensors").find("a FIFO, not a regular file"), std::string::npos);
  fs::create_directories(dir_ / "sharded");
  std::ofstream(dir_ / "sharded" / "model.safetensors.index.json")
      << R"({"weight_map":{"t":"s1.safetensors"}})";
  ASSERT_EQ(::mkfifo((dir_ / "sharded" / "s1.safetensors").c_str(), 0600), 0);
  EXPECT_NE(open_error(dir_ / "sharded").find("s1.safetensors: a FIFO"), std::string::npos);
}

// Note [Contained paths]: loops are loops; symlinks out of the folder are refused; the Hugging
// Face cache's snapshots -> blobs layout still opens.
TEST_F(HostileFiles, SymlinksStayInsideTheFolder) {
  fs::create_directories(dir_ / "loop");
  fs::create_symlink("b.safetensors", dir_ / "loop" / "a.safetensors");
  fs::create_symlink("a.safetensors", dir_ / "loop" / "b.safetensors");
  EXPECT_NE(open_error(dir_ / "loop").find("a symlink loop"), std::string::npos) << open_error(dir_ / "loop");

  write(dir_ / "outside.safetensors", one_tensor());
  fs::create_directories(dir_ / "escape");
  fs::create_symlink("../outside.safetensors", dir_ / "escape" / "m.safetensors");
  EXPECT_NE(open_error(dir_ / "escape").find("outside the model's folder"), std::string::npos);

  const fs::path repo = dir_ / "hub" / "models--org--name";
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / "abc123");
  write(repo / "blobs" / "0123abcd", one_tensor());
  fs::create_symlink("../../blobs/0123abcd", repo / "snapshots" / "abc123" / "model.safetensors");
  const ModelFile model = ModelFile::open((repo / "snapshots" / "abc123").string());
  EXPECT_EQ(model.tensors().size(), 1u);
}

// Note [Memory budget]: inflated bytes are charged against the budget.
TEST_F(HostileFiles, InflationStopsAtTheBudget) {
  detail::OwnedBuffers owned(1 << 20);
  (void)owned.allocate(600 << 10, "a.npz:x.npy");
  try {
    (void)owned.allocate(600 << 10, "a.npz:y.npy");
    FAIL() << "no error past the budget";
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "a.npz:y.npy: needs 1 MiB in memory (inflated or converted data), which with the 1 MiB already "
        "used passes tfdebug's budget of 1 MiB (set TFDEBUG_MEMORY_BUDGET_MB to change it)");
  }
  EXPECT_EQ(owned.used(), std::uint64_t{600} << 10);
}

}  // namespace
}  // namespace tfdebug::io
