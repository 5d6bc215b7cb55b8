// The ONNX reader against python3-onnx: fixtures it wrote (tests/io/make_onnx_fixtures.py, with
// the expected values in expected.json), every model of libonnx-testdata (testdata.json), and
// hand-built malformed protobuf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io {
namespace {

std::string fixture(const std::string& name) {
  return test_support::fixture("onnx/" + name);
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

const NamedTensor* find(const ModelFile& m, const std::string& name) {
  for (const auto& t : m.tensors()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Every element in row-major order, as double (the views here are contiguous).
std::vector<double> values(const TensorView& v) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < v.numel(); ++i) out.push_back(load_as_double(v.data(), v.dtype(), i));
  return out;
}

void expect_matches_python(const std::string& fixture_name) {
  SCOPED_TRACE(fixture_name);
  const nlohmann::json expected = load_json(fixture("expected.json")).at(fixture_name);
  const ModelFile m = ModelFile::open(fixture(fixture_name));
  EXPECT_EQ(m.format(), "onnx");
  ASSERT_EQ(m.tensors().size(), expected.at("tensors").size());
  EXPECT_EQ(m.metadata().at("onnx.skipped_tensors"), std::to_string(expected.at("skipped").get<int>()));
  for (const nlohmann::json& e : expected.at("tensors")) {
    const std::string name = e.at("name");
    SCOPED_TRACE(name);
    const NamedTensor* t = find(m, name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(dtype_name(t->view.dtype()), e.at("dtype").get<std::string>());
    const std::vector<std::int64_t> shape(t->view.shape().begin(), t->view.shape().end());
    EXPECT_EQ(shape, e.at("shape").get<std::vector<std::int64_t>>());
    const std::vector<double> got = values(t->view);
    ASSERT_EQ(got.size(), e.at("values").size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const nlohmann::json& want = e.at("values")[i];
      if (want.is_string()) {  // "nan", "inf", "-inf": JSON has no such numbers
        EXPECT_EQ(std::isnan(got[i]) ? "nan"
                  : got[i] > 0       ? "inf"
                                     : "-inf",
                  want.get<std::string>())
            << "element " << i;
      } else {
        EXPECT_EQ(got[i], want.get<double>()) << "element " << i;
      }
    }
  }
}

TEST(Onnx, EveryDtypeAndEncodingMatchesPython) {
  expect_matches_python("dtypes.onnx");
  const ModelFile m = ModelFile::open(fixture("dtypes.onnx"));
  // raw_data is read in place: the view points into the mapped file.
  EXPECT_EQ(find(m, "raw.f32")->view.describe(), "f32[2, 3]");
  EXPECT_TRUE(std::isnan(find(m, "raw.f32")->view.at({1, 2})));
  EXPECT_EQ(find(m, "typed.f16")->view.at({2}), 65504.0);  // int32_data holds the f16 bits
  EXPECT_EQ(find(m, "typed.int64_data")->view.at({2}), std::ldexp(1.0, 62));
  EXPECT_EQ(find(m, "typed.bf16")->view.at({1}), -8.0);  // and the bf16 bits
  EXPECT_EQ(find(m, "const.int")->view.rank(), 0);
  EXPECT_EQ(find(m, "raw.empty")->view.numel(), 0);
  EXPECT_EQ(find(m, "text"), nullptr);  // a STRING tensor: skipped, counted
  EXPECT_EQ(m.metadata().at("onnx.skipped_tensors"), "2");
  EXPECT_EQ(m.metadata().at("onnx.skipped_tensor_types"), "STRING 2");
}

TEST(Onnx, MetadataAndGraph) {
  const ModelFile m = ModelFile::open(fixture("dtypes.onnx"));
  EXPECT_EQ(m.metadata().at("author"), "tfdebug tests");
  EXPECT_EQ(m.metadata().at("purpose"), "dtypes");
  EXPECT_EQ(m.metadata().at("onnx.producer_name"), "make_onnx_fixtures");
  EXPECT_EQ(m.metadata().at("onnx.producer_version"), "1.0");
  EXPECT_EQ(m.metadata().at("onnx.opset_import"), "ai.onnx=14");
  const ModelGraph* g = m.graph();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->ir_version, load_json(fixture("expected.json"))["dtypes.onnx"]["ir_version"].get<int>());
  EXPECT_EQ(g->name, "dtypes");
  ASSERT_EQ(g->opsets.size(), 1u);
  EXPECT_EQ(g->opsets[0].domain, "");
  EXPECT_EQ(g->opsets[0].version, 14);
  EXPECT_EQ(g->nodes.size(), load_json(fixture("expected.json"))["dtypes.onnx"]["nodes"].get<std::size_t>());
  EXPECT_EQ(g->nodes.front().op_type, "Constant");
  EXPECT_EQ(g->nodes.back().op_type, "Identity");
  EXPECT_EQ(g->nodes.back().inputs, std::vector<std::string>{"text"});
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0].name, "x");
  EXPECT_EQ(g->inputs[0].elem_type, 1);
  ASSERT_EQ(g->inputs[0].dims.size(), 2u);
  EXPECT_EQ(std::get<std::string>(g->inputs[0].dims[0]), "batch");
  EXPECT_EQ(std::get<std::int64_t>(g->inputs[0].dims[1]), 3);
  EXPECT_EQ(g->outputs.size(), 27u);  // 21 initializers and 6 Constant outputs
  EXPECT_EQ(g->outputs[0].name, "raw.f32_out");
  EXPECT_EQ(g->outputs[0].dims.size(), 2u);
  // Formats without a graph have none.
  EXPECT_EQ(ModelFile().graph(), nullptr);
}

TEST(Onnx, ExternalDataIsMappedOnceInPlace) {
  expect_matches_python("external/model.onnx");
  const ModelFile m = ModelFile::open(fixture("external/model.onnx"));
  // Both tensors in model.data point into the same mapping, at their offsets' distance.
  const auto* weight = static_cast<const std::byte*>(find(m, "ext.weight")->view.data());
  const auto* ids = static_cast<const std::byte*>(find(m, "ext.ids")->view.data());
  const std::ptrdiff_t distance = ids - weight;
  EXPECT_TRUE(distance == 16 * 8 * 4 || distance == -10 * 8) << distance;
  // A folder of the model and its data file opens the model and passes over model.data.
  const ModelFile folder = ModelFile::open(fixture("external"));
  EXPECT_EQ(folder.tensors().size(), 3u);
  EXPECT_EQ(folder.format(), "onnx");
}

TEST(Onnx, ConstantsAndInitializersOfSubgraphs) {
  expect_matches_python("control_flow.onnx");
  const ModelFile m = ModelFile::open(fixture("control_flow.onnx"));
  EXPECT_NE(find(m, "deep.c"), nullptr);  // Loop body → If → then_branch → Constant
  EXPECT_NE(find(m, "body.init"), nullptr);
  const ModelGraph* g = m.graph();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->subgraph_nodes, 1 + 2 + 4 + 1 + 1);  // If branches, Loop body, its If's branches
}

// Every model.onnx of libonnx-testdata loads, with the tensors python3-onnx finds.
TEST(Onnx, EveryConformanceModelMatchesPython) {
  const nlohmann::json summary = load_json(fixture("testdata.json"));
  const std::string root = summary.at("root");
  std::size_t models = 0;
  for (const auto& [name, want] : summary.at("models").items()) {
    SCOPED_TRACE(name);
    ModelFile m;
    try {
      m = ModelFile::open(root + "/" + name);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    std::int64_t params = 0;
    double sum = 0;
    for (const NamedTensor& t : m.tensors()) {
      params += t.view.numel();
      for (const double v : values(t.view)) {
        if (std::isfinite(v)) sum += v;
      }
    }
    EXPECT_EQ(m.tensors().size(), want.at("tensors").get<std::size_t>());
    EXPECT_EQ(params, want.at("params").get<std::int64_t>());
    EXPECT_EQ(m.metadata().at("onnx.skipped_tensors"), std::to_string(want.at("skipped").get<int>()));
    EXPECT_NEAR(sum, want.at("sum").get<double>(), 1e-9 * (1 + want.at("abs_sum").get<double>()));
    ASSERT_NE(m.graph(), nullptr);
    EXPECT_EQ(m.graph()->nodes.size(), want.at("nodes").get<std::size_t>());
    EXPECT_EQ(m.graph()->inputs.size(), want.at("inputs").get<std::size_t>());
    EXPECT_EQ(m.graph()->outputs.size(), want.at("outputs").get<std::size_t>());
    ++models;
  }
  EXPECT_GE(models, 1000u);
}

// --- Hand-built protobuf ---------------------------------------------------------------------

class Proto {
 public:
  Proto& varint(std::uint32_t field, std::uint64_t v) {
    key(field, 0);
    put_varint(v);
    return *this;
  }
  Proto& bytes(std::uint32_t field, const std::string& s) {
    key(field, 2);
    put_varint(s.size());
    out_ += s;
    return *this;
  }
  Proto& message(std::uint32_t field, const Proto& p) { return bytes(field, p.str()); }
  Proto& raw(const std::string& s) {
    out_ += s;
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  void key(std::uint32_t field, std::uint32_t wire) { put_varint((std::uint64_t{field} << 3) | wire); }
  void put_varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  std::string out_;
};

// A model whose graph holds `tensor` as its one initializer.
std::string model_with(const Proto& tensor) {
  return Proto().varint(1, 8).bytes(2, "test").message(7, Proto().message(5, tensor)).str();
}

Proto f32_tensor(std::vector<std::int64_t> dims, std::size_t raw_bytes) {
  Proto t;
  for (const std::int64_t d : dims) t.varint(1, static_cast<std::uint64_t>(d));
  return t.varint(2, 1).bytes(8, "w").bytes(9, std::string(raw_bytes, '\0'));
}

struct Read {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  detail::OwnedBuffers owned;
  ModelGraph graph;
};

// An external file "w.data" of 64 bytes; every other name is missing.
const std::string kExternalFile(64, '\x01');

std::string error_of(const std::string& bytes) {
  Read r;
  const detail::ExternalData external = [](const std::string& location) -> std::span<const std::byte> {
    if (location != "w.data") throw Error(location + ": no such file");
    return std::as_bytes(std::span(kExternalFile));
  };
  try {
    detail::read_onnx("bad.onnx", std::as_bytes(std::span(bytes)), external, r.tensors, r.metadata, r.owned,
                      r.graph);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_ERROR(bytes, text)                                \
  do {                                                           \
    const std::string message = error_of(bytes);                 \
    EXPECT_NE(message.find(text), std::string::npos) << message; \
    EXPECT_EQ(message.rfind("bad.onnx: ", 0), 0u) << message;    \
  } while (false)

Proto external_tensor(const std::string& location, const std::string& offset, const std::string& length) {
  Proto t = Proto().varint(1, 4).varint(2, 1).bytes(8, "w");
  t.message(13, Proto().bytes(1, "location").bytes(2, location));
  if (!offset.empty()) t.message(13, Proto().bytes(1, "offset").bytes(2, offset));
  if (!length.empty()) t.message(13, Proto().bytes(1, "length").bytes(2, length));
  return t.varint(14, 1);
}

TEST(Onnx, HandBuiltModelReads) {
  EXPECT_EQ(error_of(model_with(f32_tensor({2, 3}, 24))), "no error");
  EXPECT_EQ(error_of(model_with(external_tensor("w.data", "32", "16"))), "no error");
  EXPECT_EQ(error_of(model_with(external_tensor("./w.data", "48", ""))), "no error");  // length: the rest
  // Packed and unpacked float_data mix, as protobuf allows.
  Proto t = Proto()
                .varint(1, 3)
                .varint(2, 1)
                .bytes(8, "w")
                .bytes(4, std::string(8, '\0'))
                .raw(std::string("\x25\0\0\x80\x3f", 5));
  Read r;
  const std::string bytes = model_with(t);
  detail::read_onnx("ok.onnx", std::as_bytes(std::span(bytes)), {}, r.tensors, r.metadata, r.owned, r.graph);
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].view.at({2}), 1.0);
  EXPECT_EQ(r.metadata.at("onnx.ir_version"), "8");
}

TEST(Onnx, MalformedProtobuf) {
  const std::string good = model_with(f32_tensor({2, 3}, 24));
  EXPECT_ERROR(good.substr(0, 1), "ModelProto: field 1: the varint is truncated");
  EXPECT_ERROR(good.substr(0, good.size() - 5), "claims");  // graph length past the end
  EXPECT_ERROR(Proto().varint(1, 8).raw("\x3a\xff\xff\xff\xff\x0f").str(),
               "field 7 claims 4294967295 bytes, but its message has 0 left");
  EXPECT_ERROR(Proto().raw(std::string(11, '\xff')).str(), "varint");
  EXPECT_ERROR(Proto().varint(1, 8).raw("\x0b").str(), "wire type 3");
  EXPECT_ERROR(Proto().bytes(1, "x").str(),
               "ir_version (field 1) has wire type length-delimited, expected varint");
  EXPECT_ERROR(Proto().raw(std::string(1, '\0')).str(), "invalid field number 0");
}

// Found by fuzz/onnx_fuzz.cpp: an error inside an attribute read a dangling name of the message
// (the reader kept a reference to a temporary string). Run under the debug preset's ASan.
TEST(Onnx, ErrorInsideAnAttributeNamesIt) {
  const Proto node = Proto().bytes(4, "If").raw(
      "\x2a\x04\x0a\x05"
      "ab");  // name claims 5 bytes, has 2
  EXPECT_ERROR(
      Proto().varint(1, 8).message(7, Proto().message(1, node)).str(),
      "bad.onnx: graph.node[0] '' (If).attribute: field 1 claims 5 bytes, but its message has 2 left");
}

TEST(Onnx, LyingTensors) {
  EXPECT_ERROR(model_with(f32_tensor({2, 3}, 20)), "raw_data has 20 bytes, but FLOAT [2, 3] needs 24 bytes");
  EXPECT_ERROR(model_with(f32_tensor({-1}, 0)), "dims[0] is -1");
  EXPECT_ERROR(model_with(f32_tensor({1LL << 40, 1LL << 40}, 0)), "overflows");
  EXPECT_ERROR(model_with(f32_tensor({1, 1, 1, 1, 1, 1, 1, 1, 1}, 4)), "more than 8 dims");
  EXPECT_ERROR(model_with(Proto().varint(1, 3).varint(2, 1).bytes(8, "w")),
               "needs 3 values, but float_data holds 0");
  EXPECT_ERROR(model_with(Proto().varint(1, 2).varint(2, 1).bytes(4, std::string(12, '\0'))),
               "needs 2 values, but float_data holds 3");
  EXPECT_ERROR(model_with(Proto().varint(1, 1).varint(2, 1).bytes(4, std::string(3, '\0'))),
               "not a whole number of 4-byte values");
  EXPECT_ERROR(model_with(Proto().varint(1, 1).varint(2, 7).bytes(7, "\x80")), "packed varint is truncated");
  EXPECT_ERROR(model_with(Proto().varint(2, 99)), "data_type 99 is not an ONNX tensor type");
  EXPECT_ERROR(model_with(Proto().varint(1, 1).varint(2, 1).varint(14, 2)), "data_location 2");
}

TEST(Onnx, LyingExternalData) {
  EXPECT_ERROR(model_with(external_tensor("../w.data", "0", "16")), "must be a relative path inside");
  EXPECT_ERROR(model_with(external_tensor("sub/../../w.data", "0", "16")), "must be a relative path inside");
  EXPECT_ERROR(model_with(external_tensor("/etc/passwd", "0", "16")), "must be a relative path inside");
  EXPECT_ERROR(model_with(external_tensor("w.data", "65", "16")),
               "offset 65 is past the end of w.data (64 bytes)");
  EXPECT_ERROR(model_with(external_tensor("w.data", "60", "16")), "runs past the end of w.data");
  EXPECT_ERROR(model_with(external_tensor("w.data", "0", "12")),
               "has 12 bytes, but FLOAT [4] needs 16 bytes");
  EXPECT_ERROR(model_with(external_tensor("w.data", "-1", "16")), "not a non-negative decimal");
  EXPECT_ERROR(model_with(external_tensor("w.data", "9999999999999999999", "16")), "past the end");
  EXPECT_ERROR(model_with(external_tensor("w.data", "99999999999999999999", "16")),
               "not a non-negative decimal");
  EXPECT_ERROR(model_with(external_tensor("other.data", "0", "16")), "other.data: no such file");
  EXPECT_ERROR(model_with(external_tensor("", "0", "16")), "external data without a location");
}

TEST(Onnx, DeepNestingIsRefused) {
  // If → then_branch → If → ... 40 levels.
  Proto graph = Proto().message(5, f32_tensor({1}, 4));
  for (int i = 0; i < 40; ++i) {
    const Proto attribute = Proto().bytes(1, "then_branch").varint(20, 5).message(6, graph);
    graph = Proto().message(1, Proto().bytes(4, "If").message(5, attribute));
  }
  EXPECT_ERROR(Proto().varint(1, 8).message(7, graph).str(), "nested more than 32 deep");
}

TEST(Onnx, SniffingByContent) {
  const std::string model = model_with(f32_tensor({2}, 8));
  const auto bytes = [](const std::string& s) { return std::as_bytes(std::span(s)); };
  EXPECT_EQ(detail::sniff(bytes(model)), detail::Format::onnx);
  // A truncated model is not taken for ONNX by the sniffer, but still looks like one, so
  // ModelFile reports the reader's error rather than "unknown format".
  const std::string truncated = model.substr(0, model.size() - 2);
  EXPECT_EQ(detail::sniff(bytes(truncated)), detail::Format::unknown);
  EXPECT_TRUE(detail::starts_like_onnx(bytes(truncated)));
  // A safetensors header whose length starts 08 07 12 ...: still safetensors.
  std::string st = std::string("\x08\x07\x12\x00\x00\x00\x00\x00", 8) + "{\"a\":1}";
  EXPECT_EQ(detail::sniff(bytes(st)), detail::Format::safetensors);
  EXPECT_EQ(detail::sniff(bytes(std::string("\x93NUMPY\x01\x00", 8))), detail::Format::npy);
}

// Protobuf has no magic number: the sniffer must not take other files for ONNX. Every numpy
// fixture, and the serialized TensorProtos next to each conformance model, are not ModelProtos.
TEST(Onnx, SnifferLeavesOtherFilesAlone) {
  const auto sniff_file = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return std::pair(detail::sniff(std::as_bytes(std::span(bytes))),
                     detail::starts_like_onnx(std::as_bytes(std::span(bytes))));
  };
  const std::filesystem::path fixtures = std::filesystem::path(fixture("")).parent_path().parent_path();
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(fixtures)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".safetensors" && ext != ".npy" && ext != ".npz" && ext != ".pb" && ext != ".data") continue;
    const auto [format, starts] = sniff_file(entry.path());
    EXPECT_NE(format, detail::Format::onnx) << entry.path();
    EXPECT_FALSE(starts) << entry.path();
    ++checked;
  }
  const std::string root = load_json(fixture("testdata.json")).at("root");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".pb") continue;
    const auto [format, starts] = sniff_file(entry.path());
    EXPECT_NE(format, detail::Format::onnx) << entry.path();
    EXPECT_FALSE(starts) << entry.path();
    ++checked;
  }
  EXPECT_GT(checked, 2000u);
}

TEST(Onnx, DamagedFileNamesTheProblem) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "tfdebug_onnx_truncated.onnx";
  const std::string model = model_with(f32_tensor({4}, 16));
  std::ofstream(path, std::ios::binary) << model.substr(0, model.size() - 3);
  try {
    (void)ModelFile::open(path.string());
    ADD_FAILURE() << "a truncated model opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": ModelProto: field 7 claims 27 bytes, but its message has 24 left");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfdebug::io
