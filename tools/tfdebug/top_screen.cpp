#include "top_screen.hpp"

#include <curses.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <csignal>

namespace tfdebug::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) {
  g_stop = 1;
}

enum : short { kPairBad = 1, kPairWarn = 2 };

// initscr in the constructor, endwin in the destructor: the terminal is given back on every way
// out, an exception included.
class CursesSession {
 public:
  CursesSession() {
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(kPairBad, COLOR_RED, -1);
      init_pair(kPairWarn, COLOR_YELLOW, -1);
    }
  }
  ~CursesSession() { endwin(); }
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;
};

attr_t attributes(Tone tone) {
  const bool colour = has_colors();
  switch (tone) {
    case Tone::bad:
      return (colour ? COLOR_PAIR(kPairBad) : 0) | A_BOLD;
    case Tone::warn:
      return colour ? COLOR_PAIR(kPairWarn) : A_BOLD;
    case Tone::good:
      return A_NORMAL;
    case Tone::dim:
      return A_DIM;
    case Tone::bold:
      return A_BOLD;
    case Tone::plain:
      return A_NORMAL;
  }
  return A_NORMAL;
}

void draw(const RunFollower& run, const TopViewOptions& base) {
  TopViewOptions options = base;
  options.width = COLS;
  options.height = LINES;
  erase();
  const auto lines = top_view(run, RunFollower::Clock::now(), options);
  for (std::size_t row = 0; row < lines.size() && static_cast<int>(row) < LINES; ++row) {
    const attr_t a = attributes(lines[row].tone);
    attron(a);
    mvaddstr(static_cast<int>(row), 0, lines[row].text.c_str());
    attroff(a);
  }
  refresh();
}

}  // namespace

void run_top_screen(RunFollower& run, TopViewOptions options) {
  g_stop = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);

  // ncursesw takes multibyte text (the braille, blocks and box drawing) in the locale's encoding,
  // and only once the program has adopted the locale of its environment.
  std::setlocale(LC_ALL, "");
  const CursesSession session;
  const auto interval = std::chrono::duration_cast<RunFollower::Clock::duration>(
      std::chrono::duration<double>(options.interval_s));
  auto next_poll = RunFollower::Clock::now();
  while (g_stop == 0) {
    const auto now = RunFollower::Clock::now();
    if (now >= next_poll) {
      run.poll(now);
      next_poll = now + interval;
      draw(run, options);  // every refresh: the step rate and idle time move without new steps
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_poll - RunFollower::Clock::now());
    timeout(static_cast<int>(std::clamp<long long>(wait.count(), 1, 1000)));
    const int key = getch();
    if (key == 'q' || key == 'Q') break;
    if (key == KEY_RESIZE) draw(run, options);
  }
}

}  // namespace tfdebug::cli
