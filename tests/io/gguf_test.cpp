// GGUF: files written by tests/io/gguf_writer.py (an independent writer), values checked against
// what its numpy decoders produce; bad input from hand-built byte strings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io {
namespace {

using test_support::find;
using test_support::fixture;

TEST(Gguf, MetadataOfEveryValueType) {
  const ModelFile m = ModelFile::open(fixture("quantized.gguf"));
  EXPECT_EQ(m.format(), "gguf");
  const auto& meta = m.metadata();
  EXPECT_EQ(meta.at("gguf.version"), "3");
  EXPECT_EQ(meta.at("general.architecture"), "llama");
  EXPECT_EQ(meta.at("test.u8"), "200");
  EXPECT_EQ(meta.at("test.i8"), "-100");
  EXPECT_EQ(meta.at("test.u16"), "60000");
  EXPECT_EQ(meta.at("test.i16"), "-30000");
  EXPECT_EQ(meta.at("test.i32"), "-2000000000");
  EXPECT_EQ(meta.at("test.f32"), "0.5");
  EXPECT_EQ(meta.at("test.bool"), "true");
  EXPECT_EQ(meta.at("test.u64"), "9223372036854775813");
  EXPECT_EQ(meta.at("test.i64"), "-4611686018427387904");
  EXPECT_EQ(meta.at("test.f64"), "0.1");
  EXPECT_EQ(meta.at("test.ids"), "[1, -2, 3]");
  EXPECT_EQ(meta.at("test.tokens"), "[tok0, tok1, tok2, tok3, tok4, tok5, tok6, tok7, ... (20 string)]");
  EXPECT_EQ(meta.at("tfdebug.undecoded"), "other.iq2_xxs (IQ2_XXS)");
  EXPECT_EQ(m.tensors().size(), 13u);
}

// Every block format decodes to exactly the values numpy decodes from the same bytes.
TEST(Gguf, QuantisedTensorsDecodeLikeTheIndependentDecoder) {
  const ModelFile m = ModelFile::open(fixture("quantized.gguf"));
  for (const char* name : {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"}) {
    const std::string tensor = std::string("quant.") + name;
    const NamedTensor& t = find(m, tensor);
    ASSERT_TRUE(t.quantized.has_value()) << tensor;
    EXPECT_EQ(t.dtype_name(), name);
    const ModelFile expected = ModelFile::open(fixture("gguf_expected/" + tensor + ".npy"));
    const TensorView e = expected.tensors().at(0).view;
    ASSERT_TRUE(std::equal(t.shape().begin(), t.shape().end(), e.shape().begin(), e.shape().end())) << tensor;
    std::vector<float> decoded(static_cast<std::size_t>(t.numel()));
    dequantize(t.quantized->format, t.quantized->data, t.quantized->blocks(), decoded.data());
    ASSERT_EQ(std::memcmp(decoded.data(), e.data(), decoded.size() * 4), 0) << tensor;
    // The streaming statistics equal the statistics of the decoded values.
    const Stats a = compute_stats(*t.quantized);
    const Stats b = compute_stats(e);
    EXPECT_EQ(a.count, b.count) << tensor;
    EXPECT_EQ(a.zero, b.zero) << tensor;
    EXPECT_EQ(a.min, b.min) << tensor;
    EXPECT_EQ(a.max, b.max) << tensor;
    EXPECT_EQ(a.mean, b.mean) << tensor;
    EXPECT_EQ(a.std, b.std) << tensor;
  }
  // q4_0's all-zero first block (d = 0) decodes to zeros.
  const NamedTensor& q = find(m, "quant.q4_0");
  std::vector<float> block(32);
  dequantize(q.quantized->format, q.quantized->data, 1, block.data());
  for (float v : block) EXPECT_EQ(v, 0.0f);
}

TEST(Gguf, PlainTensorsAreViewsInNumpyOrder) {
  const ModelFile m = ModelFile::open(fixture("quantized.gguf"));
  for (const char* name : {"plain.f32", "plain.f16", "plain.bf16", "plain.f64", "plain.i32"}) {
    const NamedTensor& t = find(m, name);
    ASSERT_FALSE(t.quantized.has_value());
    const ModelFile expected = ModelFile::open(fixture(std::string("gguf_expected/") + name + ".npy"));
    const TensorView e = expected.tensors().at(0).view;
    ASSERT_EQ(t.view.describe().substr(t.view.describe().find('[')),
              e.describe().substr(e.describe().find('[')));
    if (std::string(name) == "plain.bf16") {  // .npy has no bf16: compared by value
      EXPECT_EQ(t.view.dtype(), DType::bf16);
      for (std::int64_t i = 0; i < e.numel(); ++i) EXPECT_EQ(t.view.at({i}), e.at({i}));
      continue;
    }
    EXPECT_EQ(t.view.dtype(), e.dtype()) << name;
    EXPECT_EQ(std::memcmp(t.view.data(), e.data(), static_cast<std::size_t>(e.numel()) * e.element_size()),
              0);
  }
  EXPECT_EQ(find(m, "plain.f32").view.describe(), "f32[3, 5]");  // ne = {5, 3} in the file
}

TEST(Gguf, ExportOfTheSafetensorsModel) {
  const ModelFile g = ModelFile::open(fixture("model.gguf"));
  const ModelFile s = ModelFile::open(fixture("model.safetensors"));
  EXPECT_EQ(g.metadata().at("general.alignment"), "64");
  ASSERT_EQ(g.tensors().size(), s.tensors().size());
  const TensorView gq = find(g, "layers.0.attn.q.weight").view;
  EXPECT_EQ(gq.dtype(), DType::f16);
  EXPECT_TRUE(std::isnan(gq.at({2, 3})));
  EXPECT_EQ(gq.at({5, 0}), INFINITY);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(gq.data()) % 64,
            reinterpret_cast<std::uintptr_t>(g.tensors().front().view.data()) % 64);
}

TEST(Gguf, VersionTwo) {
  const ModelFile m = ModelFile::open(fixture("v2.gguf"));
  EXPECT_EQ(m.metadata().at("gguf.version"), "2");
  ASSERT_EQ(m.tensors().size(), 1u);
  EXPECT_EQ(m.tensors()[0].view.describe(), "f32[2, 3]");
  EXPECT_EQ(m.tensors()[0].view.at({1, 2}), 5.0);
}

// --- bad input ------------------------------------------------------------------------------

struct Bytes {
  std::vector<std::byte> b;
  Bytes& raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::byte*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Bytes& u32(std::uint32_t v) { return raw(&v, 4); }
  Bytes& u64(std::uint64_t v) { return raw(&v, 8); }
  Bytes& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  Bytes& pad(std::size_t alignment) {
    while (b.size() % alignment) b.push_back(std::byte{0});
    return *this;
  }
};

Bytes header(std::uint64_t tensors, std::uint64_t kvs, std::uint32_t version = 3) {
  Bytes h;
  h.raw("GGUF", 4).u32(version).u64(tensors).u64(kvs);
  return h;
}

std::string error_of(const Bytes& bytes) {
  std::vector<NamedTensor> out;
  std::map<std::string, std::string> meta;
  try {
    detail::read_gguf("bad.gguf", bytes.b, out, meta);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void expect_error(const Bytes& bytes, const std::string& phrase) {
  const std::string message = error_of(bytes);
  EXPECT_EQ(message.rfind("bad.gguf: ", 0), 0u) << message;
  EXPECT_NE(message.find(phrase), std::string::npos) << message;
}

// One f32 tensor [2] at offset 0 with `n_dims` dims, type `type`, plus its data.
Bytes one_tensor(std::uint32_t type = 0, std::uint64_t dim = 2, std::uint64_t offset = 0,
                 std::size_t data = 8) {
  Bytes b = header(1, 0);
  b.str("w").u32(1).u64(dim).u32(type).u64(offset).pad(32);
  b.b.resize(b.b.size() + data);
  return b;
}

TEST(GgufBadInput, EachProblemIsNamed) {
  EXPECT_EQ(error_of(one_tensor()), "no error");
  expect_error(Bytes().raw("GGUF", 4), "truncated");
  expect_error(header(0, 0, 1), "GGUF version 1");
  expect_error(header(0, 0, 0x03000000), "big-endian");
  expect_error(header(0, 1ull << 60), "key/values, more than the file can hold");
  expect_error(header(1ull << 60, 0), "tensors, more than the file can hold");
  // A key whose string length runs past the end.
  Bytes long_key = header(0, 1);
  long_key.u64(1000).raw("abc", 3).u64(0).u64(0);
  expect_error(long_key, "truncated in key 0");
  Bytes absurd_key = header(0, 1);
  absurd_key.u64(1ull << 62);
  expect_error(absurd_key, "claims");
  Bytes nested = header(0, 1);
  nested.str("a").u32(9).u32(9).u64(1);
  expect_error(nested, "nested arrays");
  Bytes huge_array = header(0, 1);
  huge_array.str("a").u32(9).u32(10).u64(1ull << 40);
  expect_error(huge_array, "more than the");
  Bytes bad_type = header(0, 1);
  bad_type.str("a").u32(13);
  expect_error(bad_type, "value type 13");
  Bytes twice = header(0, 2);
  twice.str("a").u32(0).raw("\x01", 1).str("a").u32(0).raw("\x01", 1);
  expect_error(twice, "'a' appears twice");
  Bytes alignment = header(0, 1);
  alignment.str("general.alignment").u32(4).u32(24);
  expect_error(alignment, "power of two");
  Bytes alignment_type = header(0, 1);
  alignment_type.str("general.alignment").u32(10).u64(32);
  expect_error(alignment_type, "must be a uint32");
  expect_error(one_tensor(0, 2, 0, 4), "needs bytes [0, 8) of the data, which has 4");
  expect_error(one_tensor(0, 2, 7), "not a multiple of the alignment");
  expect_error(one_tensor(77), "ggml type 77");
  expect_error(one_tensor(2, 33, 0, 64), "multiple of 32");
  expect_error(one_tensor(0, 1ull << 62, 0, 8), "w");  // numel * 4 overflows or exceeds the data
  Bytes five_dims = header(1, 0);
  five_dims.str("w").u32(5).u64(0).u64(0).u64(0);
  expect_error(five_dims, "at most 4");
  Bytes overlap = header(2, 0);
  overlap.str("a").u32(1).u64(8).u32(0).u64(0).str("b").u32(1).u64(8).u32(0).u64(0).pad(32);
  overlap.b.resize(overlap.b.size() + 32);
  expect_error(overlap, "overlap");
  Bytes duplicate = header(2, 0);
  duplicate.str("a").u32(1).u64(8).u32(0).u64(0).str("a").u32(1).u64(8).u32(0).u64(32).pad(32);
  duplicate.b.resize(duplicate.b.size() + 64);
  expect_error(duplicate, "'a' appears twice");
}

}  // namespace
}  // namespace tfdebug::io
