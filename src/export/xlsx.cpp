// The workbook is kept as plain tables until close(), then written in one go with
// libxlsxwriter: sizes of columns follow their contents, non-finite numbers become marked blank
// cells and charts pick their axis scale (Note [Readable charts] in xlsx.hpp).
#include "tfdebug/export/xlsx.hpp"

#include <xlsxwriter.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

constexpr double kMaxColumnWidth = 60;
constexpr int kMaxNonfiniteComments = 1000;  // per sheet; past it the red fill alone marks them
constexpr double kLogAxisSpan = 100;         // largest / smallest value that makes an axis log

const char* nonfinite_name(double value) {
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "+inf" : "-inf";
}

// Whether a chart of these columns reads better on a log axis (Note [Readable charts]).
bool wants_log_axis(const std::vector<std::vector<XlsxCell>>& rows, const std::vector<int>& columns) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& cells : rows) {
    for (const int c : columns) {
      if (static_cast<std::size_t>(c) >= cells.size()) continue;
      double v = 0;
      if (const auto* d = std::get_if<double>(&cells[static_cast<std::size_t>(c)])) {
        v = *d;
      } else if (const auto* i = std::get_if<std::int64_t>(&cells[static_cast<std::size_t>(c)])) {
        v = static_cast<double>(*i);
      } else {
        continue;
      }
      if (!std::isfinite(v)) continue;
      if (v <= 0) return false;  // a log axis cannot show it
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  return any && hi >= kLogAxisSpan * lo;
}

std::string column_letters(int column) {
  std::string s;
  for (int c = column + 1; c > 0; c = (c - 1) / 26)
    s.insert(s.begin(), static_cast<char>('A' + (c - 1) % 26));
  return s;
}

std::string quoted(const std::string& sheet) {
  std::string s = "'";
  for (const char c : sheet) {
    s.push_back(c);
    if (c == '\'') s.push_back(c);  // a quote inside a quoted sheet name is doubled
  }
  s.push_back('\'');
  return s;
}

// "='Sheet'!$B$2:$B$9": rows 2..last of one column.
std::string column_range(const std::string& sheet, int column, std::size_t last_row) {
  const std::string letters = column_letters(column);
  std::string r = "=";
  r.append(quoted(sheet));
  r.append("!$").append(letters).append("$2:$").append(letters).append("$");
  r.append(std::to_string(last_row));
  return r;
}

double text_width(const XlsxCell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return static_cast<double>(s->size());
  if (std::holds_alternative<std::monostate>(cell)) return 0;
  return 12;
}

}  // namespace

void XlsxSheet::add_row(std::vector<XlsxCell> cells, RowTone tone) {
  rows_.push_back(std::move(cells));
  tones_.push_back(tone);
}

XlsxWorkbook::XlsxWorkbook(std::string path) : path_(std::move(path)) {}

XlsxWorkbook::~XlsxWorkbook() = default;

XlsxSheet& XlsxWorkbook::add_sheet(const std::string& name, std::vector<std::string> header) {
  if (name.empty() || name.size() > 31 || name.find_first_of("[]:*?/\\") != std::string::npos) {
    throw Error("sheet name '" + name + "' is not allowed in Excel (1-31 characters, none of []:*?/\\)");
  }
  for (const auto& s : sheets_) {
    if (s->name_ == name) throw Error("two sheets are named '" + name + "'");
  }
  auto sheet = std::make_unique<XlsxSheet>();
  sheet->name_ = name;
  sheet->header_ = std::move(header);
  sheets_.push_back(std::move(sheet));
  return *sheets_.back();
}

void XlsxWorkbook::add_line_chart(const std::string& sheet, int x, int y, const std::string& title,
                                  const std::string& y_title) {
  charts_.push_back({sheet, x, {y}, title, y_title});
}

void XlsxWorkbook::add_line_chart(const std::string& sheet, int x, std::vector<int> ys,
                                  const std::string& title, const std::string& y_title) {
  charts_.push_back({sheet, x, std::move(ys), title, y_title});
}

void XlsxWorkbook::close() {
  if (closed_) return;
  closed_ = true;
  lxw_workbook* book = workbook_new(path_.c_str());
  if (book == nullptr) throw Error(path_ + ": cannot create the workbook");
  lxw_format* bold = workbook_add_format(book);
  format_set_bold(bold);
  format_set_bottom(bold, LXW_BORDER_THIN);
  lxw_format* tones[4] = {nullptr, workbook_add_format(book), workbook_add_format(book),
                          workbook_add_format(book)};
  format_set_bg_color(tones[1], 0xDDEBF7);  // info: light blue
  format_set_bg_color(tones[2], 0xFFEB9C);  // warning: amber
  format_set_bg_color(tones[3], 0xFFC7CE);  // error: red
  lxw_format* nonfinite = workbook_add_format(book);
  format_set_bg_color(nonfinite, 0xFF7C80);  // stronger than an error row, so it shows inside one
  for (const auto& sheet : sheets_) {
    lxw_worksheet* ws = workbook_add_worksheet(book, sheet->name_.c_str());
    const auto columns = static_cast<int>(sheet->header_.size());
    int comments = 0;
    std::vector<double> widths(static_cast<std::size_t>(columns), 8);
    for (int c = 0; c < columns; ++c) {
      const std::string& h = sheet->header_[static_cast<std::size_t>(c)];
      worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c), h.c_str(), bold);
      widths[static_cast<std::size_t>(c)] =
          std::max(widths[static_cast<std::size_t>(c)], static_cast<double>(h.size()) + 2);
    }
    for (std::size_t r = 0; r < sheet->rows_.size(); ++r) {
      lxw_format* format = tones[static_cast<int>(sheet->tones_[r])];
      const auto row = static_cast<lxw_row_t>(r + 1);
      const auto& cells = sheet->rows_[r];
      for (int c = 0; c < columns; ++c) {
        const auto col = static_cast<lxw_col_t>(c);
        const XlsxCell empty;
        const XlsxCell& cell =
            static_cast<std::size_t>(c) < cells.size() ? cells[static_cast<std::size_t>(c)] : empty;
        if (const auto* d = std::get_if<double>(&cell)) {
          // Excel has no NaN or infinity: such a cell stays blank, marked (Note [Readable charts]).
          if (std::isfinite(*d)) {
            worksheet_write_number(ws, row, col, *d, format);
          } else {
            worksheet_write_blank(ws, row, col, nonfinite);
            if (comments < kMaxNonfiniteComments) {
              worksheet_write_comment(ws, row, col, nonfinite_name(*d));
              ++comments;
            }
          }
        } else if (const auto* i = std::get_if<std::int64_t>(&cell)) {
          worksheet_write_number(ws, row, col, static_cast<double>(*i), format);
        } else if (const auto* s = std::get_if<std::string>(&cell)) {
          worksheet_write_string(ws, row, col, s->c_str(), format);
        } else {
          worksheet_write_blank(ws, row, col, format);
        }
        widths[static_cast<std::size_t>(c)] =
            std::max(widths[static_cast<std::size_t>(c)], text_width(cell) + 2);
      }
    }
    for (int c = 0; c < columns; ++c) {
      worksheet_set_column(ws, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c),
                           std::min(kMaxColumnWidth, widths[static_cast<std::size_t>(c)]), nullptr);
    }
    worksheet_freeze_panes(ws, 1, 0);
    if (columns > 0) {
      worksheet_autofilter(ws, 0, 0, static_cast<lxw_row_t>(sheet->rows_.size()),
                           static_cast<lxw_col_t>(columns - 1));
    }
    for (const Chart& chart : charts_) {
      if (chart.sheet != sheet->name_ || sheet->rows_.empty()) continue;
      lxw_chart* c = workbook_add_chart(book, LXW_CHART_LINE);
      const std::string x = column_range(sheet->name_, chart.x, sheet->rows_.size() + 1);
      for (const int column : chart.ys) {
        const std::string y = column_range(sheet->name_, column, sheet->rows_.size() + 1);
        lxw_chart_series* series = chart_add_series(c, x.c_str(), y.c_str());
        chart_series_set_name(series, sheet->header_[static_cast<std::size_t>(column)].c_str());
      }
      chart_title_set_name(c, chart.title.c_str());
      chart_axis_set_name(c->x_axis, sheet->header_[static_cast<std::size_t>(chart.x)].c_str());
      chart_show_blanks_as(c, LXW_CHART_BLANKS_AS_GAP);
      const bool log = wants_log_axis(sheet->rows_, chart.ys);
      if (log) chart_axis_set_log_base(c->y_axis, 10);
      const std::string y_title =
          log ? (chart.y_title.empty() ? std::string("log scale") : chart.y_title + " (log scale)")
              : chart.y_title;
      if (!y_title.empty()) chart_axis_set_name(c->y_axis, y_title.c_str());
      chart_legend_set_position(c, chart.ys.size() > 1 ? LXW_CHART_LEGEND_RIGHT : LXW_CHART_LEGEND_NONE);
      worksheet_insert_chart(ws, 1, static_cast<lxw_col_t>(columns + 1), c);
    }
  }
  std::set<std::string> known;
  for (const auto& s : sheets_) known.insert(s->name_);
  for (const Chart& chart : charts_) {
    if (!known.contains(chart.sheet)) {
      workbook_close(book);
      throw Error(path_ + ": a chart refers to sheet '" + chart.sheet +
                  "', which the workbook does not have");
    }
  }
  const lxw_error status = workbook_close(book);
  if (status != LXW_NO_ERROR) throw Error(path_ + ": cannot write the workbook: " + lxw_strerror(status));
}

}  // namespace tfdebug
