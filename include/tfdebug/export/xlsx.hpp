// Excel workbooks (.xlsx, through libxlsxwriter) of tables: numbers stay numbers, a bold frozen
// header row with an auto-filter on every sheet, rows coloured by severity, and line charts.
// Excel, LibreOffice and openpyxl open them.
//
// Note [Readable charts]
// A chart's value axis is logarithmic (base 10) when every finite value it plots is positive and
// the largest is at least 100 times the smallest: gradient norms spanning decades would otherwise
// be one line at the top and flat zeros. NaN and infinities, which Excel lacks, are blank cells
// filled red with a comment saying which ("NaN", "+inf", "-inf"; the first 1000 of a sheet), and
// the chart shows blanks as gaps, so a non-finite point is a break in its line, never a 0.
//
//   tfdebug::XlsxWorkbook book("report.xlsx");
//   auto& findings = book.add_sheet("Findings", {"severity", "rule", "tensor", "message"});
//   findings.add_row({"error", "nonfinite", "fc1.weight", "1 NaN"}, tfdebug::RowTone::error);
//   auto& layers = book.add_sheet("Layers", {"layer", "rms"});
//   layers.add_row({0, 0.021});
//   book.add_line_chart("Layers", 0, 1, "RMS by layer");   // x column 0, y column 1
//   book.close();                                          // writes the file
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tfdebug {

// One cell: empty, a number (written as a number, never as text), or text.
using XlsxCell = std::variant<std::monostate, double, std::int64_t, std::string>;

enum class RowTone { plain, info, warning, error };

class XlsxSheet {
 public:
  void add_row(std::vector<XlsxCell> cells, RowTone tone = RowTone::plain);
  const std::string& name() const noexcept { return name_; }
  std::size_t rows() const noexcept { return rows_.size(); }

 private:
  friend class XlsxWorkbook;
  std::string name_;
  std::vector<std::string> header_;
  std::vector<std::vector<XlsxCell>> rows_;
  std::vector<RowTone> tones_;
};

class XlsxWorkbook {
 public:
  explicit XlsxWorkbook(std::string path);
  ~XlsxWorkbook();
  XlsxWorkbook(const XlsxWorkbook&) = delete;
  XlsxWorkbook& operator=(const XlsxWorkbook&) = delete;

  // Sheet names must be unique, at most 31 characters, without []:*?/\ (Excel's rules).
  XlsxSheet& add_sheet(const std::string& name, std::vector<std::string> header);
  // A line chart of column `y` against column `x` of `sheet`, placed beside its table; the value
  // axis is named `y_title` (and says "log scale" when it is: Note [Readable charts]).
  void add_line_chart(const std::string& sheet, int x, int y, const std::string& title,
                      const std::string& y_title = "");
  // One series per column of `ys` (named after its header), with a legend.
  void add_line_chart(const std::string& sheet, int x, std::vector<int> ys, const std::string& title,
                      const std::string& y_title = "");
  // Writes the file. Throws tfdebug::Error naming the path when it cannot.
  void close();

 private:
  struct Chart {
    std::string sheet;
    int x;
    std::vector<int> ys;
    std::string title;
    std::string y_title;
  };
  std::string path_;
  std::vector<std::unique_ptr<XlsxSheet>> sheets_;
  std::vector<Chart> charts_;
  bool closed_ = false;
};

}  // namespace tfdebug
