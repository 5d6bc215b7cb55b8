// Readable workbook charts (Note [Readable charts] in include/tfdebug/export/xlsx.hpp), read back
// by openpyxl (tests/export/read_xlsx_charts.py): log value axes where values span decades, the
// top modules rather than every module as a line, non-finite cells blank, red and commented.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tfdebug/export/xlsx.hpp"
#include "tfdebug/export/xlsx_sink.hpp"
#include "tfdebug/session/run_summary.hpp"
#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_charts(const fs::path& book) {
  const std::string command = "/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) +
                              "/tests/export/read_xlsx_charts.py '" + book.string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) throw std::runtime_error("openpyxl could not read " + book.string() + ": " + out);
  return nlohmann::json::parse(out);
}

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tfdebug_xlsx_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::remove(dir / name);
  return dir / name;
}

std::string module_name(int i) {
  return "layers." + std::string(i < 10 ? "0" : "") + std::to_string(i);
}

// 20 modules over 6 steps: module i's gradient norm is 10^(i/4 - 3) * (1 + step / 10), five
// decades from first to last; layers.00 is NaN at step 3 and layers.01 +inf at step 4. The update
// ratio is 0.5 + 0.01 i + 0.001 step (within a decade).
fs::path run_book() {
  fs::path path = fresh("run.xlsx");
  XlsxSink sink(path.string(), std::vector<std::pair<std::string, std::string>>{});
  for (int step = 0; step < 6; ++step) {
    StepMetrics m;
    m.step = step;
    m.loss = step == 2 ? std::nan("") : 2.0 / (1 + step);
    for (int i = 0; i < 20; ++i) {
      ModuleMetrics module;
      module.module = module_name(i);
      module.grad_norm = std::pow(10.0, i / 4.0 - 3) * (1 + step / 10.0);
      if (i == 0 && step == 3) module.grad_norm = std::nan("");
      if (i == 1 && step == 4) module.grad_norm = INFINITY;
      module.update_ratio = 0.5 + 0.01 * i + 0.001 * step;
      m.modules.push_back(module);
    }
    sink.on_step(m);
  }
  sink.on_run_end(RunSummary{});
  return path;
}

TEST(XlsxCharts, GradientsChartIsLogWithTheTopModulesAndNonfiniteFirst) {
  const nlohmann::json book = read_charts(run_book());
  const nlohmann::json& charts = book["Gradients"]["charts"];
  ASSERT_EQ(charts.size(), 1u);
  const nlohmann::json& chart = charts[0];
  EXPECT_EQ(chart["y_log_base"], 10.0);
  EXPECT_EQ(chart["y_title"], "gradient norm (log scale)");
  EXPECT_EQ(chart["blanks"], "gap");
  EXPECT_EQ(chart["title"], "Gradient norm by module: the 8 largest of 20 modules (all in the table)");
  // layers.00 and layers.01 (non-finite) and the six largest, layers.14..19, in column order:
  // columns B, C and P..U of the 21-column table (step is A).
  std::vector<std::string> values;
  for (const auto& s : chart["series"]) values.push_back(s["values"]);
  const std::vector<std::string> expected = {
      "'Gradients'!$B$2:$B$7", "'Gradients'!$C$2:$C$7", "'Gradients'!$P$2:$P$7", "'Gradients'!$Q$2:$Q$7",
      "'Gradients'!$R$2:$R$7", "'Gradients'!$S$2:$S$7", "'Gradients'!$T$2:$T$7", "'Gradients'!$U$2:$U$7"};
  EXPECT_EQ(values, expected);
  EXPECT_EQ(chart["series"][0]["name"], "layers.00");
  EXPECT_EQ(chart["series"][7]["name"], "layers.19");
}

TEST(XlsxCharts, NonfiniteCellsAreBlankRedAndSayWhichValue) {
  const nlohmann::json book = read_charts(run_book());
  const nlohmann::json& marked = book["Gradients"]["marked"];
  ASSERT_EQ(marked.size(), 2u);
  EXPECT_EQ(marked[0]["cell"], "B5");  // step 3 is row 5
  EXPECT_TRUE(marked[0]["value"].is_null());
  EXPECT_EQ(marked[0]["comment"], "NaN");
  EXPECT_EQ(marked[0]["fill"], "FFFF7C80");
  EXPECT_EQ(marked[1]["cell"], "C6");
  EXPECT_EQ(marked[1]["comment"], "+inf");
  const nlohmann::json& loss = book["Loss"];
  ASSERT_EQ(loss["marked"].size(), 1u);
  EXPECT_EQ(loss["marked"][0]["cell"], "B4");
  EXPECT_EQ(loss["marked"][0]["comment"], "NaN");
  EXPECT_EQ(loss["charts"][0]["blanks"], "gap");
}

TEST(XlsxCharts, ValuesWithinADecadeKeepALinearAxis) {
  const nlohmann::json book = read_charts(run_book());
  const nlohmann::json& chart = book["Update ratio"]["charts"][0];
  EXPECT_TRUE(chart["y_log_base"].is_null());
  EXPECT_EQ(chart["y_title"], "update / weight norm");
  EXPECT_EQ(chart["series"].size(), 8u);
  // The loss (2 down to 1/3) stays linear too.
  EXPECT_TRUE(book["Loss"]["charts"][0]["y_log_base"].is_null());
}

TEST(XlsxCharts, ANonPositiveValueKeepsTheAxisLinear) {
  const fs::path path = fresh("signed.xlsx");
  XlsxWorkbook book(path.string());
  XlsxSheet& sheet = book.add_sheet("Values", {"x", "y"});
  sheet.add_row({std::int64_t{0}, 0.001});
  sheet.add_row({std::int64_t{1}, 1000.0});
  sheet.add_row({std::int64_t{2}, -1.0});
  book.add_line_chart("Values", 0, 1, "Signed", "y");
  XlsxSheet& positive = book.add_sheet("Positive", {"x", "y"});
  positive.add_row({std::int64_t{0}, 1.0});
  positive.add_row({std::int64_t{1}, 100.0});  // exactly two decades: log
  book.add_line_chart("Positive", 0, 1, "Positive");
  book.close();
  const nlohmann::json read = read_charts(path);
  EXPECT_TRUE(read["Values"]["charts"][0]["y_log_base"].is_null());
  EXPECT_EQ(read["Positive"]["charts"][0]["y_log_base"], 10.0);
  EXPECT_EQ(read["Positive"]["charts"][0]["y_title"], "log scale");
}

}  // namespace
}  // namespace tfdebug
