// The HTML report's data and page (tfdebug/export/html_report.hpp): script-safe JSON, hostile
// names that stay text, repeated blocks folded, the bounds on rows, tree nodes and points, and
// one-line errors for bad run directories. The page in a real browser: tests/html/.
#include "tfdebug/export/html_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug {
namespace {

using nlohmann::json;

inspect::TensorReport tensor(const std::string& name, std::vector<std::int64_t> shape, double scale = 1) {
  inspect::TensorReport t;
  t.name = name;
  t.dtype = "f32";
  t.shape = std::move(shape);
  t.stats.count = 1;
  for (const std::int64_t d : t.shape) t.stats.count *= d;
  t.stats.min = -scale;
  t.stats.max = scale;
  t.stats.abs_max = scale;
  return t;
}

Finding finding_on(const std::string& tensor_name, Severity severity) {
  Finding f;
  f.rule = "nonfinite";
  f.severity = severity;
  f.op = tensor_name;
  f.module = tensor_name.substr(0, tensor_name.rfind('.'));
  f.message = "3 NaN";
  return f;
}

// The JSON island of a page, parsed.
json island(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"tfdebug-data\">";
  const std::size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  const std::size_t start = from + open.size();
  const std::size_t end = page.find("</script>", start);
  return json::parse(page.substr(start, end - start));
}

const json* child(const json& node, const std::string& name, bool folded = false) {
  for (const json& c : node.at("c"))
    if (c.at("n") == name && c.contains("r") == folded) return &c;
  return nullptr;
}

TEST(HtmlReport, ScriptSafeJsonEscapesWhatEndsAScriptOrALine) {
  EXPECT_EQ(script_safe_json("{\"a\":\"</script>&<!--\xe2\x80\xa8\xe2\x80\xa9\"}"),
            "{\"a\":\"\\u003c/script\\u003e\\u0026\\u003c!--\\u2028\\u2029\"}");
  // Other UTF-8 stays as it is.
  EXPECT_EQ(script_safe_json("\"\xe2\x80\x94\""), "\"\xe2\x80\x94\"");
  const json back = json::parse(script_safe_json(json({{"k", "</script>\xe2\x80\xa8"}}).dump()));
  EXPECT_EQ(back.at("k"), "</script>\xe2\x80\xa8");
}

TEST(HtmlReport, AHostileTensorNameStaysDataInThePage) {
  inspect::Inspection inspection;
  const std::string name = "head.</script><script>alert(1)</script>\xe2\x80\xa8.weight";
  inspection.tensors.push_back(tensor(name, {2, 2}));
  inspection.tensors.push_back(tensor("bad.\xff\xfe.bias", {2}));  // not UTF-8
  inspection.tensors_in_files = 2;
  inspection.files.push_back({"model.safetensors", "safetensors"});
  const std::string page = html_page("checkpoint", "<b>x</b>", inspection_report_data(inspection, {}));
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("<title>&lt;b&gt;x&lt;/b&gt; — tfdebug</title>"), std::string::npos);
  // Exactly two elements end: the data island and the page's script.
  std::size_t ends = 0;
  for (std::size_t at = page.find("</script"); at != std::string::npos; at = page.find("</script", at + 1))
    ++ends;
  EXPECT_EQ(ends, 2u);
  const json data = island(page);
  EXPECT_EQ(data.at("rows").at(0).at(0), name);
  EXPECT_EQ(data.at("rows").at(1).at(0), "bad.\xef\xbf\xbd\xef\xbf\xbd.bias");  // U+FFFD
}

TEST(HtmlReport, RepeatedBlocksFoldAndACopyWithAFindingShowsOnItsOwn) {
  inspect::Inspection inspection;
  inspection.tensors.push_back(tensor("embed.weight", {8, 4}));
  for (int l = 0; l < 12; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    inspection.tensors.push_back(tensor(p + "attn.weight", {4, 4}));
    // layers.6's mlp has another shape: it breaks the run of copies.
    inspection.tensors.push_back(tensor(p + "mlp.weight", {l == 6 ? 8 : 4, 4}));
  }
  inspection.findings.push_back(finding_on("layers.3.attn.weight", Severity::error));
  const json data = json::parse(inspection_report_data(inspection, {}));
  const json& root = data.at("tree");
  EXPECT_EQ(root.at("p"), 32 + 11 * 32 + 48);
  const json* layers = child(root, "layers");
  ASSERT_NE(layers, nullptr);
  ASSERT_EQ(layers->at("c").size(), 4u);  // 0-5, 3 again (its finding), 6, 7-11
  const json& first = layers->at("c").at(0);
  EXPECT_EQ(first.at("n"), "0");
  EXPECT_EQ(first.at("r"), 6);
  EXPECT_EQ(first.at("last"), "5");
  EXPECT_EQ(first.at("t"), 12);  // tensors over all six copies
  EXPECT_EQ(first.at("p"), 6 * 32);
  EXPECT_EQ(first.at("f"), json::array({1, 0, 0}));
  EXPECT_EQ(first.at("copies").size(), 6u);
  EXPECT_EQ(first.at("copies").at(3), json::array({"3", 32, 0, 1, 0}));
  // Under the fold: the first copy's structure, with its own totals.
  EXPECT_EQ(first.at("c").size(), 2u);
  EXPECT_EQ(first.at("c").at(0).at("n"), "attn");
  const json* three = child(*layers, "3");
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(three->at("f"), json::array({1, 0, 0}));
  const json* six = child(*layers, "6");
  ASSERT_NE(six, nullptr);
  EXPECT_EQ(six->at("p"), 48);
  const json* rest = child(*layers, "7", true);
  ASSERT_NE(rest, nullptr);
  EXPECT_EQ(rest->at("r"), 5);
  EXPECT_EQ(rest->at("last"), "11");
}

TEST(HtmlReport, TheTableKeepsFindingsFirstWithinItsBound) {
  inspect::Inspection inspection;
  for (int i = 0; i < 5000; ++i)
    inspection.tensors.push_back(tensor("t." + std::to_string(i) + ".w", {i % 50 + 1}));
  inspection.findings.push_back(finding_on("t.4000.w", Severity::warning));
  HtmlReportOptions options;
  options.max_tensor_rows = 100;
  HtmlReportWritten written;
  const json data = json::parse(inspection_report_data(inspection, options, &written));
  EXPECT_EQ(written.tensor_rows, 100u);
  ASSERT_EQ(data.at("rows").size(), 100u);
  bool has_finding = false;
  for (const json& row : data.at("rows")) {
    if (row.at(15) == 4000) has_finding = row.at(13) == 1;             // worst severity: warning
    EXPECT_TRUE(row.at(15) == 4000 || row.at(3).get<double>() >= 49);  // then the largest (50 and 49 values)
  }
  EXPECT_TRUE(has_finding);
  EXPECT_EQ(data.at("findings").at(0).at("tensor"), 4000);
}

TEST(HtmlReport, TheTreeIsCutAtADepthThatFitsItsBudget) {
  inspect::Inspection inspection;
  // 40 distinct top modules with 30 distinct children each: 1 + 40 + 1200 nodes unfolded.
  for (int a = 0; a < 40; ++a)
    for (int b = 0; b < 30; ++b)
      inspection.tensors.push_back(tensor(
          std::string("m").append(std::to_string(a)).append(".s").append(std::to_string(b)), {a + 1, b + 1}));
  HtmlReportOptions options;
  options.max_tree_nodes = 100;
  HtmlReportWritten written;
  const json data = json::parse(inspection_report_data(inspection, options, &written));
  EXPECT_EQ(written.tree_nodes, 41u);
  EXPECT_EQ(data.at("tree").at("c").at(0).at("h"), 30);
  EXPECT_EQ(data.at("tree").at("t"), 1200);
}

class HtmlRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tfdebug_html_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // 10 steps of one layer; loss = step + 1, NaN at `nan_step`.
  void write_run(int nan_step) {
    RunConfig config;
    config.run_dir = dir_.string();
    Session session(config);
    session.add_sink(std::make_shared<JsonlMetricsSink>(dir_ / "metrics.jsonl"));
    Probe probe(session);
    std::vector<float> w(16, 0.5f), g(16, 0.01f);
    for (int step = 0; step < 10; ++step) {
      probe.begin_step(step);
      probe.observe_parameter("fc.weight", TensorView(w.data(), DType::f32, {4, 4}));
      probe.observe_gradient("fc.weight", TensorView(g.data(), DType::f32, {4, 4}));
      probe.end_step(step == nan_step ? std::nan("") : step + 1.0);
    }
    session.finish();
  }
  std::filesystem::path dir_;
};

TEST_F(HtmlRunTest, LongRunsAreShownInBucketsThatKeepTheirNaN) {
  write_run(8);
  HtmlReportOptions options;
  options.max_steps = 4;
  HtmlReportWritten written;
  const json data = json::parse(run_report_data(dir_, options, &written));
  EXPECT_EQ(written.step_bucket, 3u);
  EXPECT_EQ(written.steps_shown, 4u);
  const json& m = data.at("metrics");
  EXPECT_EQ(m.at("steps"), json::array({0, 3, 6, 9}));
  EXPECT_EQ(m.at("loss"), json::array({2.0, 5.0, "NaN", 10.0}));  // 7, 8 and NaN: NaN
  EXPECT_EQ(m.at("module_steps"), json::array({0, 3, 6, 9}));     // never finer than the loss
  EXPECT_EQ(m.at("modules"), json::array({"fc"}));
  EXPECT_NEAR(m.at("grad_norm").at(0).at(0).get<double>(), 0.04, 1e-8);  // sqrt(16 * 0.01^2), f32
}

TEST_F(HtmlRunTest, PerModuleSeriesHaveTheirOwnCoarserBound) {
  write_run(-1);
  HtmlReportOptions options;
  options.max_module_steps = 2;
  HtmlReportWritten written;
  const json m = json::parse(run_report_data(dir_, options, &written)).at("metrics");
  EXPECT_EQ(written.step_bucket, 1u);
  EXPECT_EQ(written.module_step_bucket, 5u);
  EXPECT_EQ(m.at("steps").size(), 10u);
  EXPECT_EQ(m.at("module_steps"), json::array({0, 5}));
  ASSERT_EQ(m.at("grad_norm").at(0).size(), 2u);
  EXPECT_EQ(m.at("grad_norm").at(0).at(0), 0.04);  // rounded to 6 significant digits
}

TEST_F(HtmlRunTest, APageIsWrittenForARunWithoutMetrics) {
  write_run(-1);
  std::filesystem::remove(dir_ / "metrics.jsonl");
  const std::filesystem::path out = dir_ / "report.html";
  const HtmlReportWritten written = write_run_html(dir_, out);
  EXPECT_EQ(written.bytes, std::filesystem::file_size(out));
  std::ifstream in(out);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json data = island(page);
  EXPECT_TRUE(data.at("metrics").is_null());
  EXPECT_EQ(data.at("run").at("steps"), 10);
}

TEST_F(HtmlRunTest, BadRunDirectoriesAreOneLineErrorsNamingTheFile) {
  try {
    write_run_html(dir_ / "missing", dir_ / "x.html");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing: not a folder: expected a run directory"),
              std::string::npos);
  }
  write_run(5);  // a NaN loss: a divergence error, and so a flight recorder dump
  ASSERT_TRUE(std::filesystem::exists(dir_ / "flight_recorder.json"));
  std::ofstream(dir_ / "flight_recorder.json") << R"({"trigger": {"rule": 3}, "steps": []})";
  try {
    run_report_data(dir_, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("flight_recorder.json: not a flight recorder dump"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  std::ofstream(dir_ / "flight_recorder.json") << "{\"steps\": [";
  EXPECT_THROW(run_report_data(dir_, {}), Error);
  std::filesystem::remove(dir_ / "flight_recorder.json");
  std::ofstream(dir_ / "profile.json") << R"({"format": "something else"})";
  try {
    run_report_data(dir_, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("profile.json: field 'format': expected \"tfdebug-profile\""),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tfdebug
