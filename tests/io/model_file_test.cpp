#include "tfdebug/io/model_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug::io {
namespace {

using test_support::find;
using test_support::fixture;

TEST(ModelFile, SafetensorsWrittenByNumpy) {
  const ModelFile m = ModelFile::open(fixture("model.safetensors"));
  EXPECT_EQ(m.format(), "safetensors");
  EXPECT_EQ(m.tensors().size(), 9u);
  EXPECT_EQ(m.metadata().at("format"), "pt");
  const NamedTensor& q = find(m, "layers.0.attn.q.weight");
  EXPECT_EQ(q.view.dtype(), DType::f32);
  EXPECT_EQ(q.view.describe(), "f32[8, 8]");
  EXPECT_TRUE(std::isnan(q.view.at({2, 3})));
  EXPECT_EQ(find(m, "step").view.at(std::span<const std::int64_t>{}), 1234.0);
  EXPECT_EQ(find(m, "layers.0.mlp.fc1.weight").view.dtype(), DType::bf16);
  EXPECT_EQ(find(m, "layers.1.mlp.up.weight").view.dtype(), DType::f16);
  // Cross-format: the same values saved by numpy as .npy read back identically.
  const ModelFile npy = ModelFile::open(fixture("embed.npy"));
  const TensorView a = find(m, "embed.weight").view;
  const TensorView b = npy.tensors().at(0).view;
  ASSERT_EQ(a.numel(), b.numel());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.numel()) * 4), 0);
  const Stats s = compute_stats(a);
  EXPECT_EQ(s.zero, 16);  // two dead rows of 8
}

TEST(ModelFile, ShardedCheckpointThroughItsIndex) {
  const ModelFile m = ModelFile::open(fixture("sharded/model.safetensors.index.json"));
  EXPECT_EQ(m.tensors().size(), 3u);
  EXPECT_EQ(m.files().size(), 2u);
  EXPECT_EQ(m.metadata().at("total_size"), "100");
  const ModelFile folder = ModelFile::open(fixture("sharded"));
  EXPECT_EQ(folder.tensors().size(), 3u);
}

TEST(ModelFile, NpyEveryLayout) {
  for (const char* name :
       {"c_f4.npy", "fortran_f8.npy", "big_endian_f4.npy", "half.npy", "v2_f4.npy", "v3_f4.npy"}) {
    SCOPED_TRACE(name);
    const ModelFile m = ModelFile::open(fixture(name));
    ASSERT_EQ(m.tensors().size(), 1u);
    const TensorView v = m.tensors()[0].view;
    ASSERT_EQ(v.rank(), 2);
    EXPECT_EQ(v.shape(0), 3);
    EXPECT_EQ(v.shape(1), 4);
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(v.at({i, j}), static_cast<double>(i * 4 + j) - 5.5);
    }
  }
  // Views point into the ModelFile's mapped files: keep it alive while using them.
  const ModelFile fortran = ModelFile::open(fixture("fortran_f8.npy"));
  EXPECT_FALSE(fortran.tensors()[0].view.is_contiguous());
  const ModelFile scalar = ModelFile::open(fixture("scalar_i8.npy"));
  EXPECT_EQ(scalar.tensors()[0].view.at(std::span<const std::int64_t>{}), -7.0);
  const ModelFile flags = ModelFile::open(fixture("flags.npy"));
  EXPECT_EQ(flags.tensors()[0].view.dtype(), DType::boolean);
  EXPECT_EQ(compute_stats(flags.tensors()[0].view).zero, 1);
}

void expect_error(const std::string& path, const std::string& phrase) {
  try {
    (void)ModelFile::open(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(phrase), std::string::npos) << message;
  }
}

TEST(ModelFile, NpzStoredAndDeflated) {
  const ModelFile stored = ModelFile::open(fixture("archive.npz"));
  EXPECT_EQ(stored.format(), "npz");
  ASSERT_EQ(stored.tensors().size(), 1u);
  EXPECT_EQ(stored.tensors()[0].name, "a");
  EXPECT_EQ(stored.tensors()[0].view.at({2, 3}), 11 - 5.5);
  const ModelFile deflated = ModelFile::open(fixture("compressed.npz"));
  ASSERT_EQ(deflated.tensors().size(), 3u);
  for (const auto& t : deflated.tensors()) {
    SCOPED_TRACE(t.name);
    EXPECT_TRUE(t.name == "w" || t.name == "b" || t.name == "arr_0");
    EXPECT_EQ(t.view.at({1, 2}), 6 - 5.5);  // f4, big-endian f8 and f2 alike
  }
}

TEST(ModelFile, RefusesWhatItCannotReadSafely) {
  expect_error(fixture("objects.npy"), "object array");
  expect_error(fixture("record.npy"), "structured");
  expect_error(fixture("corrupt.npz"), "corrupt.npz:");
  expect_error(fixture("no-such-file.safetensors"), "no such file");
}

// Hand-built safetensors bytes: u64 header length, the header, the data.
std::vector<std::byte> safetensors(const std::string& header, std::size_t data_bytes,
                                   std::uint64_t claimed = 0) {
  std::vector<std::byte> out(8 + header.size() + data_bytes);
  const std::uint64_t n = claimed != 0 ? claimed : header.size();
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

void expect_safetensors_error(const std::vector<std::byte>& bytes, const std::string& phrase) {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> meta;
  try {
    detail::read_safetensors("bad.safetensors", bytes, tensors, meta);
    ADD_FAILURE() << "no error, expected: " << phrase;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << message;
    EXPECT_NE(message.find(phrase), std::string::npos) << message;
  }
}

TEST(Safetensors, LyingHeaders) {
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  {
    std::vector<NamedTensor> tensors;
    std::map<std::string, std::string> meta;
    detail::read_safetensors("ok.safetensors", safetensors(ok, 8), tensors, meta);
    EXPECT_EQ(tensors.size(), 1u);
  }
  expect_safetensors_error(std::vector<std::byte>(5), "truncated");
  expect_safetensors_error(safetensors(ok, 8, 1ull << 40), "exceeds the format's limit");
  expect_safetensors_error(safetensors(ok, 8, 4096), "runs past the end of the file");
  expect_safetensors_error(safetensors(R"({"w":)", 0), "not valid JSON");
  expect_safetensors_error(safetensors("[1,2]", 0), "must be a JSON object");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                       R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                       8),
                           "names 'w' twice");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
                           "past the end of the data");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                           "need 12");
  expect_safetensors_error(safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                       12),
                           "overlaps");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
                           "gap of 4 bytes");
  expect_safetensors_error(safetensors(ok, 12), "4 bytes follow the last tensor");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],)"
                                       R"("data_offsets":[0,8]}})",
                                       8),
                           "overflows");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", 8),
                           "dtype 'C64'");
  expect_safetensors_error(safetensors(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
                           "non-negative integer");
  expect_safetensors_error(safetensors("{\"\xff\xfe\":{}}", 0), "not valid JSON");
  expect_safetensors_error(safetensors(R"({"__metadata__":{"k":1}})", 0), "must be a string");
}

void expect_npy_error(const std::string& bytes_text, const std::string& phrase) {
  std::vector<std::byte> bytes(bytes_text.size());
  std::memcpy(bytes.data(), bytes_text.data(), bytes_text.size());
  std::vector<NamedTensor> tensors;
  detail::OwnedBuffers owned;
  try {
    detail::read_npy("bad.npy", "bad", bytes, tensors, owned);
    ADD_FAILURE() << "no error, expected: " << phrase;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
}

std::string npy(const std::string& dict, std::size_t data_bytes, char version = 1) {
  std::string out = "\x93NUMPY";
  out += version;
  out += '\0';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out += std::string(data_bytes, '\0');
  return out;
}

TEST(Npy, LyingHeaders) {
  expect_npy_error("NUMPY-not", "no \\x93NUMPY magic");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, 9), "version 9");
  std::string truncated = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  truncated[8] = '\x7f';
  truncated[9] = '\x7f';
  expect_npy_error(truncated, "runs past the end");
  expect_npy_error(npy("{'descr': '<f4', 'shape': (2,), }", 8), "must have the keys");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8), "need 12 data bytes");
  expect_npy_error(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8),
                   "not a dtype tfdebug reads");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8),
                   "overflows");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 8),
                   "overflow");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8), "True or False");
  expect_npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8),
                   "unexpected key");
}

TEST(Npy, EmptyFortranArrayWithHugeDimsReadsAsEmpty) {
  // Found by npy_fuzz: a zero dim makes numel 0, the others are huge; their product as
  // Fortran strides overflowed int64.
  const std::string bytes =
      npy("{'descr': '>f8', 'fortran_order': True, 'shape': (0, 333333333, 3333, 333333333333, 33333), }", 0);
  std::vector<std::byte> raw(bytes.size());
  std::memcpy(raw.data(), bytes.data(), bytes.size());
  std::vector<NamedTensor> tensors;
  detail::OwnedBuffers owned;
  detail::read_npy("empty.npy", "empty", raw, tensors, owned);
  ASSERT_EQ(tensors.size(), 1U);
  EXPECT_EQ(tensors[0].view.numel(), 0);
  EXPECT_EQ(tensors[0].view.shape().size(), 5U);
}

}  // namespace
}  // namespace tfdebug::io
