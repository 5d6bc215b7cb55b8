#include "tfdebug/ide/breakpoint.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tfdebug/core/error.hpp"
#include "words.hpp"

namespace tfdebug::ide {

namespace {

constexpr std::array<std::string_view, 14> kStatistics = {
    "min",   "max", "mean", "std",       "abs_max", "l1",       "l2",
    "count", "nan", "inf",  "nonfinite", "zero",    "negative", "positive"};
constexpr std::array<std::string_view, 6> kRelations = {"<=", ">=", "==", "!=", "<", ">"};

double statistic_of(const Stats& s, std::string_view name) {
  if (name == "min") return s.min;
  if (name == "max") return s.max;
  if (name == "mean") return s.mean;
  if (name == "std") return s.std;
  if (name == "abs_max") return s.abs_max;
  if (name == "l1") return s.l1;
  if (name == "l2") return s.l2;
  if (name == "count") return double(s.count);
  if (name == "nan") return double(s.nan);
  if (name == "inf") return double(s.pos_inf + s.neg_inf);
  if (name == "nonfinite") return double(s.nonfinite());
  if (name == "zero") return double(s.zero);
  if (name == "negative") return double(s.negative);
  return double(s.positive);  // parse_condition admits nothing else
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string statistic_list() {
  std::string list;
  for (std::string_view s : kStatistics) {
    if (!list.empty()) list += ", ";
    list += s;
  }
  return list;
}

// "abs_max>1e4" or "abs_max > 1e4": statistic, relation, number.
Comparison parse_comparison(std::string_view text) {
  std::size_t at = std::string_view::npos;
  std::string_view relation;
  for (std::string_view r : kRelations) {
    const std::size_t found = text.find(r);
    if (found != std::string_view::npos && (at == std::string_view::npos || found < at)) {
      at = found;
      relation = r;
    }
  }
  if (at == std::string_view::npos)
    throw Error("condition '" + std::string(text) +
                "': expected STATISTIC RELATION NUMBER, e.g. abs_max > 1e4");
  Comparison c;
  c.statistic = std::string(detail::trim(text.substr(0, at)));
  c.relation = std::string(relation);
  const std::string_view number = detail::trim(text.substr(at + relation.size()));
  bool known = false;
  for (std::string_view s : kStatistics) known = known || s == c.statistic;
  if (!known)
    throw Error("condition: unknown statistic '" + c.statistic + "'; expected one of " + statistic_list());
  const std::optional<double> value = detail::parse_number(number);
  if (!value || !std::isfinite(*value))
    throw Error("condition: expected a finite number after '" + c.statistic + " " + c.relation + "', got '" +
                std::string(number) + "'");
  c.value = *value;
  return c;
}

}  // namespace

bool Condition::holds(const Stats& stats) const {
  for (const Comparison& c : all) {
    const double v = statistic_of(stats, c.statistic);
    bool ok = false;
    if (c.relation == "<")
      ok = v < c.value;
    else if (c.relation == "<=")
      ok = v <= c.value;
    else if (c.relation == ">")
      ok = v > c.value;
    else if (c.relation == ">=")
      ok = v >= c.value;
    else if (c.relation == "==")
      ok = v == c.value;
    else
      ok = v != c.value;
    if (!ok) return false;
  }
  return true;
}

bool Condition::needs_moments() const {
  for (const Comparison& c : all) {
    if (c.statistic != "nan" && c.statistic != "inf" && c.statistic != "nonfinite" && c.statistic != "count")
      return true;
  }
  return false;
}

std::string Condition::text() const {
  std::string out;
  for (const Comparison& c : all) {
    if (!out.empty()) out += " and ";
    out += c.statistic + " " + c.relation + " " + number_text(c.value);
  }
  return out;
}

Condition parse_condition(std::string_view text) {
  Condition condition;
  std::string_view rest = detail::trim(text);
  if (rest.empty()) throw Error("condition: empty; expected e.g. abs_max > 1e4, nan > 0 or std < 1e-6");
  while (!rest.empty()) {
    const std::size_t sep = rest.find(" and ");
    condition.all.push_back(parse_comparison(detail::trim(rest.substr(0, sep))));
    rest = sep == std::string_view::npos ? std::string_view{} : detail::trim(rest.substr(sep + 5));
  }
  return condition;
}

std::string_view break_kind_name(BreakKind kind) noexcept {
  switch (kind) {
    case BreakKind::op:
      return "op";
    case BreakKind::module:
      return "module";
    case BreakKind::phase:
      return "phase";
    case BreakKind::step:
      return "step";
    case BreakKind::nonfinite:
      return "nonfinite";
    case BreakKind::finding:
      return "finding";
    case BreakKind::any:
      return "any";
  }
  return "any";
}

std::string Breakpoint::text() const {
  std::string out;
  switch (kind) {
    case BreakKind::op:
      out = "op " + pattern;
      break;
    case BreakKind::module:
      out = "module " + pattern + (at_exit ? " exit" : "");
      break;
    case BreakKind::phase:
      out = "phase";
      break;
    case BreakKind::step:
      out = "step " + std::to_string(step);
      break;
    case BreakKind::nonfinite:
      out = nan && inf ? "nonfinite" : nan ? "nan" : "inf";
      break;
    case BreakKind::finding:
      out = "finding";
      if (!pattern.empty()) out.append(" ").append(pattern);
      break;
    case BreakKind::any:
      out = "any op";
      break;
  }
  if (phase) {
    out += ' ';
    out += phase_name(*phase);
  }
  if (condition) out += " if " + condition->text();
  if (ignore > 0) out += " ignore " + std::to_string(ignore);
  if (thread == kAnyThread) out += " thread any";
  if (thread > 0) out += " thread " + std::to_string(thread);
  if (once) out += " once";
  if (!enabled) out += " (disabled)";
  return out;
}

namespace {

// "any" or a thread number (1 the first thread that observed).
int parse_thread(std::string_view word) {
  if (word == "any") return Breakpoint::kAnyThread;
  const auto n = detail::parse_integer(word);
  if (!n || *n < 1 || *n > 1000000)
    throw Error("break: thread expects a thread number (1, 2, ...) or 'any', got '" + std::string(word) +
                "'");
  return static_cast<int>(*n);
}

}  // namespace

Breakpoint parse_breakpoint(std::string_view text) {
  Breakpoint b;
  std::string_view rest = detail::trim(text);
  // The condition runs to the end of the text, after the place and the options.
  const std::size_t cond_at = rest.starts_with("if ") ? 0 : rest.find(" if ");
  std::string_view place = rest;
  if (cond_at != std::string_view::npos) {
    const std::size_t body = cond_at == 0 ? 3 : cond_at + 4;
    std::string_view tail = detail::trim(rest.substr(body));
    // Options may follow the condition too: "if nan > 0 once", "if std < 1e-6 ignore 3".
    std::vector<std::string_view> tail_words = detail::split_words(tail);
    while (!tail_words.empty()) {
      if (tail_words.back() == "once") {
        b.once = true;
        tail_words.pop_back();
      } else if (tail_words.size() >= 2 && tail_words[tail_words.size() - 2] == "thread") {
        b.thread = parse_thread(tail_words.back());
        tail_words.resize(tail_words.size() - 2);
      } else if (tail_words.size() >= 2 && tail_words[tail_words.size() - 2] == "ignore") {
        const auto n = detail::parse_integer(tail_words.back());
        if (!n || *n < 0)
          throw Error("break: ignore expects a count >= 0, got '" + std::string(tail_words.back()) + "'");
        b.ignore = *n;
        tail_words.resize(tail_words.size() - 2);
      } else {
        break;
      }
    }
    if (tail_words.empty()) throw Error("break: 'if' needs a condition, e.g. if abs_max > 1e4");
    const std::string_view first = tail_words.front(), last = tail_words.back();
    b.condition = parse_condition(tail.substr(std::size_t(first.data() - tail.data()),
                                              std::size_t(last.data() + last.size() - first.data())));
    place = detail::trim(rest.substr(0, cond_at));
  }
  std::vector<std::string_view> words = detail::split_words(place);
  // Options after the place.
  std::vector<std::string_view> head;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (w == "once") {
      b.once = true;
    } else if (w == "ignore") {
      const auto n = i + 1 < words.size() ? detail::parse_integer(words[i + 1]) : std::nullopt;
      if (!n || *n < 0) throw Error("break: ignore expects a count >= 0");
      b.ignore = *n;
      ++i;
    } else if (w == "thread") {
      if (i + 1 == words.size()) throw Error("break: thread expects a thread number (1, 2, ...) or 'any'");
      b.thread = parse_thread(words[++i]);
    } else if (w == "exit") {
      b.at_exit = true;
    } else if (w == "entry") {
      b.at_exit = false;
    } else if (!head.empty() && parse_phase(w) && head.front() != "phase") {
      b.phase = parse_phase(w);
    } else {
      head.push_back(w);
    }
  }
  if (head.empty()) {
    if (!b.condition)
      throw Error("break: expected a place (op, module, phase, step, nan, inf, finding) or 'if CONDITION'");
    b.kind = BreakKind::any;
  } else {
    const std::string_view what = head[0];
    const auto argument = [&](std::string_view name) {
      if (head.size() != 2) throw Error("break " + std::string(what) + ": expected one " + std::string(name));
      return std::string(head[1]);
    };
    if (what == "op") {
      b.kind = BreakKind::op;
      b.pattern = argument("op name or glob, e.g. aten::log*");
    } else if (what == "module") {
      b.kind = BreakKind::module;
      b.pattern = argument("module path or glob, e.g. blocks.1.mlp");
    } else if (what == "phase") {
      b.kind = BreakKind::phase;
      const std::string name = argument("phase: forward, backward or optimizer");
      b.phase = parse_phase(name);
      if (!b.phase) throw Error("break phase: expected forward, backward or optimizer, got '" + name + "'");
    } else if (what == "step") {
      b.kind = BreakKind::step;
      const std::string n = argument("step number");
      const auto step = detail::parse_integer(n);
      if (!step || *step < 0) throw Error("break step: expected a step number >= 0, got '" + n + "'");
      b.step = *step;
    } else if (what == "nan" || what == "inf" || what == "nonfinite") {
      if (head.size() != 1) throw Error("break " + std::string(what) + ": takes no argument");
      b.kind = BreakKind::nonfinite;
      b.nan = what != "inf";
      b.inf = what != "nan";
    } else if (what == "finding") {
      if (head.size() > 2) throw Error("break finding: expected at most one rule name or glob");
      b.kind = BreakKind::finding;
      b.pattern = head.size() == 2 ? std::string(head[1]) : std::string();
    } else if (head.size() == 1) {
      b.kind = what.find("::") != std::string_view::npos ? BreakKind::op : BreakKind::module;
      b.pattern = std::string(what);
    } else {
      throw Error("break: unknown place '" + std::string(what) +
                  "'; expected op, module, phase, step, nan, inf, nonfinite, finding or if");
    }
  }
  if (b.at_exit && b.kind != BreakKind::module)
    throw Error("break: 'exit' applies to module breakpoints only");
  return b;
}

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
  // Iterative matching with one backtrack point for the last '*'.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace tfdebug::ide
