// The PyTorch reader against files torch.save wrote (tests/io/make_torch_fixtures.py, run by
// Debian's python3-torch as a CTest fixture), and against hand-built bad archives and pickles.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/model_file.hpp"
#include "zip_archive.hpp"

namespace tfdebug::io {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;  // "\0" inside pickle bytes

// Written by tests/io/make_torch_fixtures.py (torch) into <io fixtures>/torch (CTest fixture).
std::string torch_fixture(const std::string& name) {
  return test_support::fixture("torch/" + name);
}

std::vector<std::byte> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

using test_support::find;

// Every element of `a` equals the same element of `b`, visited in row-major order.
void expect_same_values(const TensorView& a, const TensorView& b) {
  ASSERT_EQ(a.rank(), b.rank());
  for (int d = 0; d < a.rank(); ++d) ASSERT_EQ(a.shape(d), b.shape(d));
  std::vector<std::int64_t> index(std::size_t(a.rank()), 0);
  for (std::int64_t n = 0; n < a.numel(); ++n) {
    ASSERT_EQ(a.at(index), b.at(index)) << "at flat index " << n;
    for (int d = a.rank() - 1; d >= 0; --d) {
      if (++index[std::size_t(d)] < a.shape(d)) break;
      index[std::size_t(d)] = 0;
    }
  }
}

// The checkpoint holds exactly the tensors torch showed numpy, with the same values.
void expect_matches_torch(const std::string& file) {
  SCOPED_TRACE(file);
  const ModelFile m = ModelFile::open(torch_fixture(file));
  EXPECT_EQ(m.format(), "pytorch");
  std::size_t expected = 0;
  for (const auto& entry : fs::directory_iterator(torch_fixture("expected/" + file))) {
    ++expected;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const ModelFile npy = ModelFile::open(entry.path().string());
    expect_same_values(find(m, name).view, npy.tensors().at(0).view);
  }
  EXPECT_EQ(m.tensors().size(), expected);
}

std::int64_t total_params(const ModelFile& m) {
  std::int64_t n = 0;
  for (const auto& t : m.tensors()) n += t.view.numel();
  return n;
}

TEST(PyTorch, EveryFixtureMatchesWhatTorchWrote) {
  for (const char* file : {"model.pt", "pytorch_model.bin", "transposed.pt", "offsets.pt", "tied.pt",
                           "dtypes.pt", "parameter.pt", "nested.pt"}) {
    expect_matches_torch(file);
  }
}

TEST(PyTorch, StateDictOfASmallModel) {
  const ModelFile m = ModelFile::open(torch_fixture("model.pt"));
  ASSERT_EQ(m.tensors().size(), 10u);
  EXPECT_EQ(total_params(m), 40 + 12 + 3 + 4 * 3 + 1 + 3 + 6);
  EXPECT_EQ(find(m, "embed.weight").view.describe(), "f16[10, 4]");
  EXPECT_EQ(find(m, "fc.weight").view.describe(), "bf16[3, 4]");
  EXPECT_EQ(find(m, "norm.running_var").view.describe(), "f32[3]");
  EXPECT_EQ(find(m, "norm.num_batches_tracked").view.describe(), "i64[]");
  EXPECT_EQ(find(m, "mask").view.describe(), "bool[3]");
  EXPECT_EQ(find(m, "positions").view.at({5}), 5.0);
  EXPECT_EQ(find(m, "norm.running_var").view.at({2}), 1.0);
  // The file name does not matter: pytorch_model.bin is the same state dict.
  EXPECT_EQ(ModelFile::open(torch_fixture("pytorch_model.bin")).tensors().size(), 10u);
}

TEST(PyTorch, EveryStorageDtype) {
  const ModelFile m = ModelFile::open(torch_fixture("dtypes.pt"));
  const std::map<std::string, DType> expected = {
      {"f64", DType::f64}, {"f32", DType::f32},     {"f16", DType::f16}, {"bf16", DType::bf16},
      {"i64", DType::i64}, {"i32", DType::i32},     {"i16", DType::i16}, {"i8", DType::i8},
      {"u8", DType::u8},   {"bool", DType::boolean}};
  for (const auto& [name, dtype] : expected) {
    SCOPED_TRACE(name);
    const TensorView v = find(m, name).view;
    EXPECT_EQ(v.dtype(), dtype);
    ASSERT_EQ(v.numel(), 2);
  }
  EXPECT_EQ(find(m, "bf16").view.at({1}), -2.25);
  EXPECT_EQ(find(m, "i64").view.at({1}), 1099511627776.0);
  EXPECT_EQ(find(m, "u8").view.at({1}), 200.0);
  EXPECT_EQ(find(m, "scalar").view.describe(), "f32[]");
  EXPECT_EQ(find(m, "scalar").view.at(std::span<const std::int64_t>{}), 7.0);
  EXPECT_EQ(find(m, "empty").view.describe(), "f32[0, 3]");
}

TEST(PyTorch, TransposedTensorIsAStridedView) {
  const ModelFile m = ModelFile::open(torch_fixture("transposed.pt"));
  const TensorView t = find(m, "t").view;
  EXPECT_EQ(t.describe(), "f32[4, 3] strides [1, 4]");
  EXPECT_FALSE(t.is_contiguous());
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(t.at({i, j}), static_cast<double>(4 * j + i) - 5.5);
  }
}

TEST(PyTorch, StorageOffsetsAndSharedStorages) {
  const ModelFile m = ModelFile::open(torch_fixture("offsets.pt"));
  const TensorView row = find(m, "row").view;
  const TensorView cols = find(m, "cols").view;
  EXPECT_EQ(row.describe(), "f32[4]");
  EXPECT_EQ(row.at({0}), -1.5);  // grid[1, 0]
  EXPECT_EQ(cols.describe(), "f32[3, 2] strides [4, 1]");
  EXPECT_EQ(cols.at({2, 1}), 4.5);  // grid[2, 2]
  // One storage: row starts at element 4, cols at element 1.
  EXPECT_EQ(static_cast<const std::byte*>(row.data()) - static_cast<const std::byte*>(cols.data()), 3 * 4);
  const TensorView tail = find(m, "tail").view;
  EXPECT_EQ(tail.dtype(), DType::f64);
  EXPECT_EQ(tail.at({0}), 5.0);
  EXPECT_EQ(tail.at({3}), 8.0);

  const ModelFile tied = ModelFile::open(torch_fixture("tied.pt"));
  const TensorView embed = find(tied, "embed.weight").view;
  EXPECT_EQ(find(tied, "lm_head.weight").view.data(), embed.data());  // tied: one storage, one view
  const TensorView col = find(tied, "second_col").view;
  EXPECT_EQ(col.describe(), "f32[2] strides [4]");
  EXPECT_EQ(static_cast<const std::byte*>(col.data()) - static_cast<const std::byte*>(embed.data()), 4);
  EXPECT_EQ(col.at({1}), 5.0);
}

TEST(PyTorch, NestedCheckpointIsFlattenedToDottedNames) {
  const ModelFile m = ModelFile::open(torch_fixture("nested.pt"));
  EXPECT_EQ(find(m, "model.weight").view.describe(), "f32[2, 3]");
  EXPECT_EQ(find(m, "optimizer.state.0.exp_avg").view.describe(), "f32[2, 3]");
  EXPECT_EQ(find(m, "optimizer.state.1.step").view.at(std::span<const std::int64_t>{}), 1.0);
  EXPECT_EQ(m.tensors().size(), 8u);
  EXPECT_EQ(m.metadata().at("epoch"), "3");
  EXPECT_EQ(m.metadata().at("lr"), "0.5");
  EXPECT_EQ(m.metadata().at("run"), "run1");
  EXPECT_EQ(m.metadata().at("optimizer.param_groups.0.lr"), "0.5");
  EXPECT_EQ(m.metadata().at("optimizer.param_groups.0.amsgrad"), "false");
  // A bare tensor (here an nn.Parameter) is named after the file.
  const ModelFile p = ModelFile::open(torch_fixture("parameter.pt"));
  ASSERT_EQ(p.tensors().size(), 1u);
  EXPECT_EQ(p.tensors()[0].name, "parameter");
}

TEST(PyTorch, ShardedThroughItsIndexAndFoldersPreferSafetensors) {
  const ModelFile index = ModelFile::open(torch_fixture("sharded/pytorch_model.bin.index.json"));
  EXPECT_EQ(index.format(), "pytorch");
  EXPECT_EQ(index.files().size(), 2u);
  EXPECT_EQ(index.tensors().size(), 10u);
  EXPECT_EQ(total_params(index), 77);
  EXPECT_EQ(index.metadata().at("total_size"), "217");  // bytes of all tensors
  // A folder with an index reads the shards once, through it.
  EXPECT_EQ(ModelFile::open(torch_fixture("sharded")).tensors().size(), 10u);
  // The same weights as model.safetensors and pytorch_model.bin: the safetensors only.
  const ModelFile both = ModelFile::open(torch_fixture("both"));
  EXPECT_EQ(both.format(), "safetensors");
  ASSERT_EQ(both.tensors().size(), 1u);
  EXPECT_EQ(both.tensors()[0].view.at({2, 3}), 11 - 5.5);
  EXPECT_EQ(ModelFile::open(torch_fixture("both/pytorch_model.bin")).tensors()[0].view.at({2, 3}), 11 - 5.5);
}

TEST(PyTorch, ViewsPointIntoTheFileBytes) {
  const std::vector<std::byte> bytes = read_all(torch_fixture("tied.pt"));
  std::vector<NamedTensor> out;
  std::map<std::string, std::string> meta;
  detail::OwnedBuffers owned;
  detail::read_pytorch("tied.pt", bytes, out, meta, owned);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(owned.empty());  // nothing copied
  for (const auto& t : out) {
    const auto* p = static_cast<const std::byte*>(t.view.data());
    EXPECT_TRUE(p >= bytes.data() && p < bytes.data() + bytes.size()) << t.name;
  }
  // torch.save aligns each storage to 64 bytes in the file.
  EXPECT_EQ((static_cast<const std::byte*>(out[0].view.data()) - bytes.data()) % 64, 0);
}

TEST(PyTorch, NpzIsNotMistakenForPyTorchAndStoredNpzIsZeroCopy) {
  const std::string npz = test_support::fixture("archive.npz");
  EXPECT_EQ(ModelFile::open(npz).format(), "npz");
  const std::vector<std::byte> bytes = read_all(npz);
  std::vector<NamedTensor> out;
  detail::OwnedBuffers owned;
  detail::read_npz("archive.npz", bytes, out, owned);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(owned.empty());
  const auto* p = static_cast<const std::byte*>(out[0].view.data());
  EXPECT_TRUE(p > bytes.data() && p < bytes.data() + bytes.size());
}

void expect_open_error(const std::string& path, const std::string& phrase) {
  try {
    (void)ModelFile::open(path);
    ADD_FAILURE() << "no error for " << path << ", expected: " << phrase;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path, 0), 0u) << message;
    EXPECT_NE(message.find(phrase), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// Note [Opaque objects]: Python objects beside the tensors are skipped, never called.
TEST(PyTorch, TrainingCheckpointWithPythonObjects) {
  const ModelFile m = ModelFile::open(torch_fixture("training_checkpoint.pt"));
  ASSERT_EQ(m.tensors().size(), 1u);
  EXPECT_EQ(m.tensors()[0].name, "model.w");
  EXPECT_EQ(m.tensors()[0].view.at({2, 3}), 5.5);
  EXPECT_EQ(m.metadata().at("epoch"), "7");
  const std::string skipped = m.metadata().at("tfdebug.skipped_objects");
  EXPECT_NE(skipped.find("argparse.Namespace"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("torch.device"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("numpy"), std::string::npos) << skipped;
}

TEST(PyTorch, RefusesWhatItDoesNotRead) {
  expect_open_error(torch_fixture("legacy.pt"), "a legacy PyTorch checkpoint (torch.save before 1.6");
  expect_open_error(torch_fixture("torchscript.pt"), "a TorchScript archive (torch.jit.save)");
  expect_open_error(torch_fixture("quantized.pt"),
                    "holds a quantized tensor (torch._utils._rebuild_qtensor)");
}

// Note [Opaque objects]: a global that would run code under torch.load is never called either: it
// is an opaque leaf named in the metadata, and the tensors beside it are read. Whether it runs
// code is the pickle scanner's verdict, an error finding of inspect (pickle_scan_test.cpp).
TEST(PyTorch, CodeRunningGlobalsAreNamedNeverRun) {
  // os.system pickles as posix.system on Linux.
  const ModelFile m = ModelFile::open(torch_fixture("forbidden.pt"));
  EXPECT_TRUE(m.tensors().empty());
  EXPECT_EQ(m.metadata().at("tfdebug.skipped_objects"), "posix.system");
}

// ---- Hand-built archives and pickles -------------------------------------------------------

std::uint32_t crc32_of(const std::string& s) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const char c : s) {
    crc ^= static_cast<std::uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1U)));
  }
  return ~crc;
}

void put(std::string& out, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

struct Entry {
  std::string name, data;
};

// A ZIP of stored entries, as torch.save writes it; with `zip64`, the central directory keeps
// sizes and offsets in ZIP64 extra fields and a ZIP64 end record follows.
std::string zip(const std::vector<Entry>& entries, bool zip64 = false) {
  std::string out, central;
  for (const Entry& e : entries) {
    const std::size_t local = out.size();
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, 0, 2);  // stored
    put(out, 0, 4);
    put(out, crc32_of(e.data), 4);
    put(out, e.data.size(), 4);
    put(out, e.data.size(), 4);
    put(out, e.name.size(), 2);
    put(out, 0, 2);
    out += e.name + e.data;
    put(central, 0x02014b50, 4);
    put(central, 45, 2);
    put(central, 45, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, crc32_of(e.data), 4);
    put(central, zip64 ? 0xFFFFFFFFU : e.data.size(), 4);
    put(central, zip64 ? 0xFFFFFFFFU : e.data.size(), 4);
    put(central, e.name.size(), 2);
    put(central, zip64 ? 28 : 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, zip64 ? 0xFFFFFFFFU : local, 4);
    central += e.name;
    if (zip64) {
      put(central, 1, 2);
      put(central, 24, 2);
      put(central, e.data.size(), 8);
      put(central, e.data.size(), 8);
      put(central, local, 8);
    }
  }
  const std::size_t cd_offset = out.size();
  out += central;
  if (zip64) {
    const std::size_t record = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, entries.size(), 8);
    put(out, entries.size(), 8);
    put(out, central.size(), 8);
    put(out, cd_offset, 8);
    put(out, 0x07064b50, 4);
    put(out, 0, 4);
    put(out, record, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, zip64 ? 0xFFFF : entries.size(), 2);
  put(out, zip64 ? 0xFFFF : entries.size(), 2);
  put(out, zip64 ? 0xFFFFFFFFU : central.size(), 4);
  put(out, zip64 ? 0xFFFFFFFFU : cd_offset, 4);
  put(out, 0, 2);
  return out;
}

// Pickle pieces, protocol 2.
std::string str(const std::string& s) {
  std::string out = "X";
  put(out, s.size(), 4);
  return out + s;
}
std::string integer(std::int64_t v) {
  std::string out;
  if (v >= INT32_MIN && v <= INT32_MAX) {
    out = "J";
    put(out, static_cast<std::uint32_t>(v), 4);
  } else {
    out = "\x8a\x08";
    put(out, static_cast<std::uint64_t>(v), 8);
  }
  return out;
}
std::string ints(const std::vector<std::int64_t>& v) {
  std::string out = "(";
  for (const std::int64_t x : v) out += integer(x);
  return out + "t";
}

// REDUCE(_rebuild_tensor_v2, (storage 'key' of `numel` floats, offset, sizes, strides, False, {}))
std::string tensor(std::int64_t numel, std::int64_t offset, const std::vector<std::int64_t>& sizes,
                   const std::vector<std::int64_t>& strides, const std::string& key = "0") {
  return "ctorch._utils\n_rebuild_tensor_v2\n((" + str("storage") + "ctorch\nFloatStorage\n" + str(key) +
         str("cpu") + integer(numel) + "tQ" + integer(offset) + ints(sizes) + ints(strides) +
         "\x89"
         "ccollections\nOrderedDict\n)RtR";
}

std::string floats(std::size_t n) {
  return std::string(n * 4, '\0');
}

std::string checkpoint(const std::string& pickle, const std::string& storage = floats(6)) {
  return zip({{"archive/data.pkl", pickle}, {"archive/data/0", storage}, {"archive/version", "3\n"}});
}

std::vector<std::byte> as_bytes(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

std::vector<NamedTensor> read(const std::string& file, std::map<std::string, std::string>* meta = nullptr) {
  const std::vector<std::byte> bytes = as_bytes(file);
  std::vector<NamedTensor> out;
  std::map<std::string, std::string> m;
  detail::OwnedBuffers owned;
  detail::read_pytorch("bad.pt", bytes, out, meta != nullptr ? *meta : m, owned);
  return out;
}

void expect_error(const std::string& file, const std::string& phrase) {
  try {
    (void)read(file);
    ADD_FAILURE() << "no error, expected: " << phrase;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.pt", 0), 0u) << message;
    EXPECT_NE(message.find(phrase), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

std::string dict_of(const std::string& key, const std::string& value) {
  return "\x80\x02}(" + str(key) + value + "u.";
}

// Regression (fuzz/pickle_fuzz.cpp): one list appended twice at each of 40 levels, through the
// memo, is a 298-byte pickle but 2^40 paths to flatten; the walk is bounded, not just its depth.
TEST(PyTorchBytes, SharedReferencesCannotExplodeTheWalk) {
  // pickle.dumps({"w": x}, protocol=2) with x = [] and then 40 times x = [x, x].
  const std::string pickle(
      "\x80\x02\x7d\x71\x00\x58\x01\x00\x00\x00\x77\x71\x01\x5d\x71\x02\x28\x5d\x71\x03\x28\x5d\x71\x04"
      "\x28\x5d\x71\x05\x28\x5d\x71\x06\x28\x5d\x71\x07\x28\x5d\x71\x08\x28\x5d\x71\x09\x28\x5d\x71\x0a"
      "\x28\x5d\x71\x0b\x28\x5d\x71\x0c\x28\x5d\x71\x0d\x28\x5d\x71\x0e\x28\x5d\x71\x0f\x28\x5d\x71\x10"
      "\x28\x5d\x71\x11\x28\x5d\x71\x12\x28\x5d\x71\x13\x28\x5d\x71\x14\x28\x5d\x71\x15\x28\x5d\x71\x16"
      "\x28\x5d\x71\x17\x28\x5d\x71\x18\x28\x5d\x71\x19\x28\x5d\x71\x1a\x28\x5d\x71\x1b\x28\x5d\x71\x1c"
      "\x28\x5d\x71\x1d\x28\x5d\x71\x1e\x28\x5d\x71\x1f\x28\x5d\x71\x20\x28\x5d\x71\x21\x28\x5d\x71\x22"
      "\x28\x5d\x71\x23\x28\x5d\x71\x24\x28\x5d\x71\x25\x28\x5d\x71\x26\x28\x5d\x71\x27\x28\x5d\x71\x28"
      "\x28\x5d\x71\x29\x28\x5d\x71\x2a\x68\x2a\x65\x68\x29\x65\x68\x28\x65\x68\x27\x65\x68\x26\x65\x68"
      "\x25\x65\x68\x24\x65\x68\x23\x65\x68\x22\x65\x68\x21\x65\x68\x20\x65\x68\x1f\x65\x68\x1e\x65\x68"
      "\x1d\x65\x68\x1c\x65\x68\x1b\x65\x68\x1a\x65\x68\x19\x65\x68\x18\x65\x68\x17\x65\x68\x16\x65\x68"
      "\x15\x65\x68\x14\x65\x68\x13\x65\x68\x12\x65\x68\x11\x65\x68\x10\x65\x68\x0f\x65\x68\x0e\x65\x68"
      "\x0d\x65\x68\x0c\x65\x68\x0b\x65\x68\x0a\x65\x68\x09\x65\x68\x08\x65\x68\x07\x65\x68\x06\x65\x68"
      "\x05\x65\x68\x04\x65\x68\x03\x65\x73\x2e",
      298);
  expect_error(zip({{"archive/data.pkl", pickle}, {"archive/version", "3\n"}}),
               "would visit more than 4000000 values");
}

TEST(PyTorchBytes, HandBuiltCheckpointReads) {
  std::string data(6 * 4, '\0');
  for (int i = 0; i < 6; ++i) {
    const float f = static_cast<float>(i) + 0.5F;
    std::memcpy(data.data() + i * 4, &f, 4);
  }
  const std::string pickle = dict_of("w", tensor(6, 1, {2, 2}, {1, 2}));
  for (const bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64);
    const std::string file =
        zip({{"archive/data.pkl", pickle}, {"archive/data/0", data}, {"archive/version", "3\n"}}, zip64);
    const std::vector<std::byte> bytes = as_bytes(file);
    ASSERT_TRUE(detail::is_pytorch_zip(bytes));
    std::vector<NamedTensor> out;
    std::map<std::string, std::string> meta;
    detail::OwnedBuffers owned;
    detail::read_pytorch("hand.pt", bytes, out, meta, owned);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].view.describe(), "f32[2, 2] strides [1, 2]");
    EXPECT_EQ(out[0].view.at({1, 1}), 4.5);  // element 1 + 1 + 2
  }
}

TEST(PyTorchBytes, LyingArchives) {
  const std::string good = checkpoint(dict_of("w", tensor(6, 0, {6}, {1})));
  ASSERT_EQ(read(good).size(), 1u);
  expect_error(good.substr(0, good.size() / 2), "no end-of-central-directory record");
  expect_error("PK\x03\x04", "too short");
  // The EOCD's central directory offset (its last 6..2 bytes) points past the directory.
  std::string bad_offset = good;
  bad_offset[bad_offset.size() - 6] = '\x7f';
  expect_error(bad_offset, "runs past its end-of-central-directory record");
  // More entries than the central directory can hold.
  std::string bad_count = good;
  bad_count[bad_count.size() - 12] = '\x7f';
  bad_count[bad_count.size() - 14] = '\x7f';
  expect_error(bad_count, "entries, more than its");
  // A storage entry whose central directory claims more bytes than lie before the directory.
  std::string lying_size = good;
  const std::size_t local_name = lying_size.find("archive/data/0");
  const std::size_t central_name = lying_size.find("archive/data/0", local_name + 1);  // in the directory
  ASSERT_NE(central_name, std::string::npos);
  for (int k = 0; k < 4; ++k) {
    lying_size[central_name - 46 + 20 + std::size_t(k)] = '\x7f';  // compressed size
    lying_size[central_name - 46 + 24 + std::size_t(k)] = '\x7f';  // uncompressed size
  }
  expect_error(lying_size, "runs into the central directory");
  // A local header offset that points at nothing.
  std::string bad_local = good;
  bad_local[central_name - 46 + 42] = '\x05';
  expect_error(bad_local, "no local header at offset");
  // Corrupt storage bytes: the CRC catches them.
  std::string flipped = good;
  flipped[flipped.find("archive/data/0") + 14] = '\x01';
  expect_error(flipped, "CRC-32 mismatch");
  expect_error(zip({{"archive/version", "3\n"}}), "no <archive>/data.pkl");
  expect_error(zip({{"archive/data.pkl", dict_of("w", tensor(6, 0, {6}, {1}))},
                    {"archive/data/0", floats(6)},
                    {"archive/byteorder", "big"}}),
               "byteorder is 'big'; tfdebug reads little-endian checkpoints");
  expect_error(zip({{"archive/data.pkl", "\x80\x02}."}, {"archive/data.pkl", "\x80\x02}."}}),
               "two ZIP entries");
}

TEST(PyTorchBytes, StorageTooSmallForTheView) {
  expect_error(checkpoint(dict_of("w", tensor(6, 0, {2, 4}, {4, 1}))),
               "reaches past its storage of 6 elements");
  expect_error(checkpoint(dict_of("w", tensor(6, 5, {2}, {1}))), "reaches past its storage");
  expect_error(checkpoint(dict_of("w", tensor(6, -1, {1}, {1}))), "reaches past its storage");
  expect_error(checkpoint(dict_of("w", tensor(6, 0, {2}, {-1}))), "reaches past its storage");
  expect_error(checkpoint(dict_of("w", tensor(6, 0, {2, 2}, {INT64_MAX, 1}))), "reaches past its storage");
  expect_error(checkpoint(dict_of("w", tensor(6, 0, {-2}, {1}))), "negative");
  // The storage entry must hold exactly numel elements.
  expect_error(checkpoint(dict_of("w", tensor(8, 0, {2}, {1}))), "but its entry has 24 bytes");
  expect_error(checkpoint(dict_of("w", tensor(6, 0, {2}, {1}, "9"))), "has no entry archive/data/9");
  expect_error(checkpoint(dict_of(
                   "w", tensor(6, 0, std::vector<std::int64_t>(9, 1), std::vector<std::int64_t>(9, 1)))),
               "9 dimensions");
  // An empty view may sit at the end of its storage.
  EXPECT_EQ(read(checkpoint(dict_of("w", tensor(6, 6, {0, 3}, {3, 1})))).at(0).view.numel(), 0);
}

TEST(PyTorchBytes, BadPickles) {
  expect_error(checkpoint("\x80\x02\xff."), "opcode 0xff is not one that torch.save writes");
  expect_error(checkpoint("\x80\x02" + std::string(2000, '(')), "MARK nesting deeper than 1000");
  expect_error(checkpoint(std::string("\x80\x02X\xf0\xff\xff\xff", 7) + "abc."),
               "runs past the end of the pickle");
  expect_error(checkpoint("\x80\x02h\x05."), "memo entry 5 was never stored");
  expect_error(checkpoint("\x80\x02}"), "ends without STOP");
  expect_error(checkpoint("\x80\x02R."), "stack underflow");
  expect_error(checkpoint("\x80\x02(}0."), "stack underflow");  // POP may not cross a MARK
  expect_error(checkpoint("\x80\x02\x8a\x09" + std::string(9, '\1') + "."), "does not fit in 64 bits");
  expect_error(checkpoint("\x80\x02" + str("\xff\xfe") + "."), "not valid UTF-8");
  expect_error(checkpoint("\x80\x02"
                          "ctorch\nComplexFloatStorage\n."),
               "a storage type tfdebug does not read");
  expect_error(checkpoint("\x80\x02"
                          "ctorch\nFloatStorage\n)R."),
               "is not callable");
  expect_error(checkpoint("\x80\x02" + str("x") + "Q."), "persistent id is not ('storage'");
  // A list appended to itself through the memo: a cycle, stopped by the depth limit.
  expect_error(checkpoint("\x80\x02]q\x00h\x00"
                          "a."s),
               "nested deeper than 64 levels (or is a cycle)");
  // One name reached twice.
  const std::string t = tensor(6, 0, {1}, {1});
  expect_error(checkpoint("\x80\x02}(" + str("a.b") + t + str("a") + "}(" + str("b") + t + "uu."),
               "two tensors are named 'a.b'");
}

// Note [Opaque objects]: beside a tensor, called through REDUCE and through STACK_GLOBAL: the
// tensor is still read, the calls are named and never run.
TEST(PyTorchBytes, CodeRunningGlobalsBesideATensor) {
  std::map<std::string, std::string> meta;
  const std::vector<NamedTensor> out =
      read(checkpoint("\x80\x02}(" + str("cmd") + "cos\nsystem\n"s + str("echo hi") + "\x85R" + str("eval") +
                      str("builtins") + str("eval") + "\x93" + str("1") + "\x85R" + str("w") +
                      tensor(6, 0, {}, {}) + "u."),
           &meta);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "w");
  EXPECT_EQ(meta.at("tfdebug.skipped_objects"), "builtins.eval, os.system");
}

TEST(PyTorchBytes, ScalarsGoToMetadata) {
  std::map<std::string, std::string> meta;
  const std::string pickle = "\x80\x02}(" + str("epoch") + integer(-3) + str("big") + integer(1LL << 40) +
                             str("lr") + "G\x3f\xe0\x00\x00\x00\x00\x00\x00"s + str("ok") + "\x88" +
                             str("none") + "N" + str("list") +
                             "](K\x01K\x02"
                             "e" +
                             str("w") + tensor(6, 0, {}, {}) + "u.";
  const std::vector<NamedTensor> out = read(checkpoint(pickle), &meta);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].view.describe(), "f32[]");
  EXPECT_EQ(meta.at("epoch"), "-3");
  EXPECT_EQ(meta.at("big"), "1099511627776");
  EXPECT_EQ(meta.at("lr"), "0.5");
  EXPECT_EQ(meta.at("ok"), "true");
  EXPECT_EQ(meta.at("list.1"), "2");
  EXPECT_EQ(meta.count("none"), 0u);
}

TEST(ZipArchive, DeflatedEntriesAreInflatedAndChecked) {
  // A one-entry archive holding "hello" deflated by zlib (raw deflate of "hello").
  const std::string deflated("\xcb\x48\xcd\xc9\xc9\x07\x00", 7);
  std::string file = zip({{"a.txt", deflated}});
  // Patch the method to 8 and the sizes/CRC to those of "hello" (central and local headers).
  const std::size_t central = file.find(std::string("\x50\x4b\x01\x02", 4));
  for (const std::size_t at : {std::size_t{0}, central}) {
    const std::size_t base = at == 0 ? 0 : at + 2;  // central fields sit 2 bytes later
    file[base + 8] = '\x08';
    std::string crc;
    put(crc, crc32_of("hello"), 4);
    file.replace(base + 14, 4, crc);
    file[base + 22] = '\x05';
  }
  const std::vector<std::byte> bytes = as_bytes(file);
  const detail::ZipArchive archive("x.zip", bytes);
  detail::OwnedBuffers owned;
  const std::span<const std::byte> data = archive.read(archive.entries().at(0), owned);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data.data()), data.size()), "hello");
  EXPECT_EQ(owned.size(), 1u);
  // Claiming 4 bytes: inflate produces more, and says so.
  file[central + 2 + 22] = '\x04';
  const std::vector<std::byte> lying = as_bytes(file);
  const detail::ZipArchive short_archive("x.zip", lying);
  try {
    (void)short_archive.read(short_archive.entries().at(0), owned);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inflates to more than its stated 4 bytes"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tfdebug::io
