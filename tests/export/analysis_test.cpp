// Analyses beside a run (tfdebug/export/analysis.hpp): records numbered and never overwritten, PNGs
// embedded byte for byte, read back into the run page's data, bounded, and hostile records left
// out with a note. The CLI's --run-dir and the pages in a browser: tests/html/analysis_page_test.sh.
#include "tfdebug/export/analysis.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/json_shape.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug {
namespace {

using nlohmann::json;

class AnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("tfdebug_analysis_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    RunConfig config;
    config.run_dir = dir_.string();
    Session session(config);
    Probe probe(session);
    probe.begin_step(0);
    probe.end_step(1.0);
    session.finish();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  json page_data() { return json::parse(run_report_data(dir_, options_)); }

  std::filesystem::path dir_;
  HtmlReportOptions options_;
};

const std::string kPng("\x89PNG\r\n\x1a\nabc", 11);

TEST_F(AnalysisTest, RecordsAreNumberedAndNeverOverwritten) {
  const Analysis a{
      .kind = "explain", .title = "ig", .result_json = R"({"method": "integrated-gradients"})", .images = {}};
  EXPECT_EQ(save_analysis(dir_, a).filename(), "0001-explain.json");
  EXPECT_EQ(
      save_analysis(dir_, {.kind = "attack", .title = "pgd", .result_json = "{}", .images = {}}).filename(),
      "0002-attack.json");
  // A record saved by another process as 0007: the next is 0008.
  write(dir_ / "analyses" / "0007-robust.json", "{}");
  EXPECT_EQ(save_analysis(dir_, a).filename(), "0008-explain.json");
}

TEST_F(AnalysisTest, ImagesAreEmbeddedByteForByte) {
  write(dir_ / "map.png", kPng);
  const Analysis a{
      .kind = "explain", .title = "cam", .result_json = R"({"shape": [8, 8]})", .images = {dir_ / "map.png"}};
  const json record = json::parse(std::ifstream(save_analysis(dir_, a)));
  EXPECT_EQ(record.at("format"), "tfdebug-analysis");
  EXPECT_EQ(record.at("version"), 1);
  EXPECT_EQ(record.at("images"), json::parse(R"([{"name": "map.png", "png": "iVBORw0KGgphYmM="}])"));
  EXPECT_EQ(record.at("result"), json::parse(R"({"shape": [8, 8]})"));
}

TEST_F(AnalysisTest, WhatCannotBeARecordIsRefused) {
  write(dir_ / "not.png", "GIF89a....");
  EXPECT_THROW(save_analysis(dir_, {.kind = "plot", .title = "t", .result_json = "{}", .images = {}}), Error);
  EXPECT_THROW(save_analysis(dir_, {.kind = "attack", .title = "t", .result_json = "[1, 2]", .images = {}}),
               Error);
  EXPECT_THROW(save_analysis(dir_, {.kind = "attack", .title = "t", .result_json = "{", .images = {}}),
               Error);
  EXPECT_THROW(save_analysis(
                   dir_, {.kind = "attack", .title = "t", .result_json = "{}", .images = {dir_ / "not.png"}}),
               Error);
  EXPECT_THROW(
      save_analysis(dir_,
                    {.kind = "attack", .title = "t", .result_json = "{}", .images = {dir_ / "none.png"}}),
      Error);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "analyses" / "0001-attack.json"));
}

TEST_F(AnalysisTest, TheRunPageHoldsTheNewestRecordsAndNotesTheRest) {
  for (int i = 0; i < 5; ++i)
    save_analysis(dir_,
                  {.kind = "attack", .title = "run " + std::to_string(i), .result_json = "{}", .images = {}});
  options_.max_analyses = 3;
  const json data = page_data();
  ASSERT_EQ(data.at("analyses").size(), 3u);
  EXPECT_EQ(data.at("analyses").at(0).at("title"), "run 2");
  EXPECT_EQ(data.at("analyses").at(2).at("title"), "run 4");
  EXPECT_EQ(data.at("analyses").at(2).at("file"), "0005-attack.json");
  ASSERT_EQ(data.at("analysis_notes").size(), 1u);
  EXPECT_NE(data.at("analysis_notes").at(0).get<std::string>().find("newest 3 of 5"), std::string::npos);
}

TEST_F(AnalysisTest, HostileRecordsAreLeftOutWithANote) {
  save_analysis(dir_, {.kind = "explain", .title = "good", .result_json = R"({"sum": 1})", .images = {}});
  const std::filesystem::path a = dir_ / "analyses";
  write(a / "0002-explain.json", std::string(100000, '['));
  write(a / "0003-explain.json",
        R"({"format": "tfdebug-analysis", "version": 2, "kind": "explain", "title": "t", "result": {}})");
  write(a / "0004-attack.json",
        R"({"format": "tfdebug-analysis", "version": 1, "kind": "attack", "title": "t", "result": {},
            "images": [{"name": "x", "png": "PHNjcmlwdD4="}]})");  // "<script>", not a PNG
  write(a / "0005-robust.json",
        R"({"format": "tfdebug-analysis", "version": 1, "kind": "robust", "title": "t", "result": 3})");
  write(a / "0006-explain.json", R"({"format": "other", "version": 1})");
  write(a / "notes.txt", "not a record: ignored");
  const json data = page_data();
  ASSERT_EQ(data.at("analyses").size(), 1u);
  EXPECT_EQ(data.at("analyses").at(0).at("title"), "good");
  EXPECT_EQ(data.at("analyses").at(0).at("result"), json::parse(R"({"sum": 1})"));
  const json& notes = data.at("analysis_notes");
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_NE(notes.at(0).get<std::string>().find("0002-explain.json: nested deeper than 32 levels (left out)"),
            std::string::npos);
  EXPECT_NE(notes.at(1).get<std::string>().find("field 'version': expected 1"), std::string::npos);
  EXPECT_NE(notes.at(2).get<std::string>().find("field 'images': expected PNGs in base64"),
            std::string::npos);
  EXPECT_NE(notes.at(3).get<std::string>().find("field 'result': expected an object"), std::string::npos);
  EXPECT_NE(notes.at(4).get<std::string>().find("field 'format'"), std::string::npos);
}

TEST_F(AnalysisTest, APageOfItsOwn) {
  const std::filesystem::path out = dir_ / "explain.html";
  const HtmlReportWritten w = write_analysis_html(
      {{.kind = "explain", .title = "ig of output 0", .result_json = R"({"method": "ig"})", .images = {}}},
      out);
  std::ifstream in(out);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(w.bytes, page.size());
  EXPECT_NE(page.find("<body data-kind=\"analysis\">"), std::string::npos);
  EXPECT_NE(page.find("<title>ig of output 0 — tfdebug</title>"), std::string::npos);
  EXPECT_NE(page.find(R"("result":{"method":"ig"})"), std::string::npos);
}

TEST(JsonShape, DepthAndKeysOutsideStrings) {
  EXPECT_EQ(json_shape("3").depth, 0u);
  EXPECT_EQ(json_shape("[1, [2, {\"a\": [3]}]]").depth, 4u);
  EXPECT_EQ(json_shape(R"({"a": 1, "b": {"c": 2}, "d": "[[[{:\"::"})").max_keys, 3u);
  EXPECT_EQ(json_shape(R"({"a": 1, "b": {"c": 2}, "d": "[[[{:\"::"})").depth, 2u);
  EXPECT_EQ(json_shape(R"(["\\", "]"])").depth, 1u);
}

}  // namespace
}  // namespace tfdebug
