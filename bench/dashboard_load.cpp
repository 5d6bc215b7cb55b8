// The live dashboard under load (docs/performance.md, "The live dashboard"), on loopback only,
// every loop bounded:
//
//   1. training: the demo model's step time with no dashboard and with a Dashboard sink that 100
//      SSE clients read while one more client is stalled (asks for the stream, never reads), in
//      rounds of three blocks of steps on the same model, off, on, off (Note [Bracketed rounds]),
//      with the two off blocks' A/A ratio beside it;
//   2. latency: 5,000 step events published at 1,000 a second to 100 clients and a stalled one:
//      the time from on_step to each client's parse of the event, p50/p99/max;
//   and, for both, whether every fast client received every event exactly once in order, how many
//   clients were dropped, and the process's resident memory.
//
//   OPENBLAS_NUM_THREADS=1 build/release/bench/dashboard_load [--rounds 10] [--steps 20] [--clients 100]
//                                                             [--events 5000] [--flush-ms 100]
//                                                             [--malloc fixed|default]
//
// glibc's heap thresholds are fixed before the model is made (Note [A fixed heap] in
// bench/torch_overhead.cpp): with its adaptive ones a block's step time could double or halve
// with the process's allocation history, whichever kind of block it was.
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/serve/dashboard.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double now_ns() {
  return double(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// CPU time of the calling thread and of the whole process, in ms.
double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
double process_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

int connect_to(int port, int receive_buffer) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(std::uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  const std::string request = "GET /events HTTP/1.1\r\nHost: localhost:" + std::to_string(port) +
                              "\r\nAccept: text/event-stream\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size())) std::exit(1);
  return fd;
}

// One reading client: parses "id: N" and the "step" of each event from the raw stream (each event
// is one chunk, written whole; a recv may split it, so only whole lines are parsed).
struct Reader {
  int fd = -1;
  std::uint64_t first_id = 0, last_id = 0;
  std::uint64_t events = 0;
  bool in_order = true;
  std::vector<double> latencies_ns;  // of step events whose send time is known
  const std::vector<std::atomic<double>>* sent = nullptr;
  std::atomic<bool> stop{false};
  std::thread thread;
  clockid_t cpu_clock{};

  void start(int port, const std::vector<std::atomic<double>>* send_times) {
    sent = send_times;
    fd = connect_to(port, 0);
    thread = std::thread([this] { loop(); });
    ::pthread_getcpuclockid(thread.native_handle(), &cpu_clock);
  }
  double cpu_ms() const {
    timespec t{};
    ::clock_gettime(cpu_clock, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
  }
  void loop() {
    std::string buffer;
    char chunk[65536];
    std::size_t at = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) {
        if (n == 0) return;
        continue;  // the 1 s timeout: look at stop
      }
      const double received = now_ns();
      buffer.append(chunk, std::size_t(n));
      std::size_t eol;
      while ((eol = buffer.find('\n', at)) != std::string::npos) {
        const char* line = buffer.data() + at;
        const std::size_t length = eol - at;
        if (length > 4 && std::strncmp(line, "id: ", 4) == 0) {
          const std::uint64_t id = std::strtoull(line + 4, nullptr, 10);
          if (events == 0) {
            first_id = id;
          } else if (id != last_id + 1) {
            in_order = false;
          }
          last_id = id;
          ++events;
        } else if (length > 6 && std::strncmp(line, "data: ", 6) == 0 && sent != nullptr) {
          const std::string_view data(line, length);
          const std::size_t kind = data.find("\"kind\":\"step\"");
          const std::size_t step = data.rfind("\"step\":");
          if (kind != std::string_view::npos && step != std::string_view::npos) {
            const long index = std::strtol(line + step + 7, nullptr, 10);
            if (index >= 0 && std::size_t(index) < sent->size()) {
              const double t = (*sent)[std::size_t(index)].load(std::memory_order_acquire);
              if (t > 0) latencies_ns.push_back(received - t);
            }
          }
        }
        at = eol + 1;
      }
      // Keep only the part of a line still to come: the clients' memory stays small, so the
      // process's resident memory is the server's.
      buffer.erase(0, at);
      at = 0;
    }
  }
  // Wakes the thread from recv (shutdown) and joins it.
  void finish() {
    stop = true;
    ::shutdown(fd, SHUT_RDWR);
    if (thread.joinable()) thread.join();
    ::close(fd);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double quantile(std::vector<double>& sorted, double q) {
  return sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, std::size_t(q * double(sorted.size())))];
}

// Waits (at most 10 s) until every reader saw event `last`.
void wait_for(std::vector<std::unique_ptr<Reader>>& readers, std::uint64_t last) {
  const auto until = Clock::now() + std::chrono::seconds(10);
  for (auto& r : readers)
    while (r->last_id < last && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Every reader: events first_id..last, each once, in order.
int complete_readers(const std::vector<std::unique_ptr<Reader>>& readers, std::uint64_t last) {
  int ok = 0;
  for (const auto& r : readers)
    if (r->in_order && r->last_id == last && r->events == last - r->first_id + 1) ++ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 10, steps = 20, clients = 100, events = 5000, rate = 1000, flush_ms = 100;
  bool fixed_heap = true;
  const auto usage = [] {
    std::fprintf(stderr,
                 "usage: dashboard_load [--rounds N] [--steps N] [--clients N] [--events N] [--flush-ms MS]\n"
                 "                      [--malloc fixed|default]\n"
                 "  defaults: 10 rounds of off, on, off blocks of 20 steps, 100 clients (and one stalled), "
                 "5000 events\n"
                 "  at 1000/s, flush interval 100 ms (0: a write per event), glibc's heap thresholds fixed\n"
                 "  (bench/torch_overhead.cpp, Note [A fixed heap]; default: glibc's adaptive ones)\n");
    return 2;
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage();  // --help, or a flag without its value
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--rounds") {
      rounds = value;
    } else if (flag == "--steps") {
      steps = value;
    } else if (flag == "--clients") {
      clients = value;
    } else if (flag == "--events") {
      events = value;
    } else if (flag == "--flush-ms") {
      flush_ms = value;  // DashboardOptions::flush_interval; 0: a write per event
    } else if (flag == "--malloc" &&
               (std::strcmp(argv[i + 1], "fixed") == 0 || std::strcmp(argv[i + 1], "default") == 0)) {
      fixed_heap = std::strcmp(argv[i + 1], "fixed") == 0;
    } else {
      return usage();
    }
  }
  if (rounds < 1 || steps < 2 || clients < 0 || events < 1 || flush_ms < 0) {
    std::fprintf(stderr,
                 "dashboard_load: --rounds, --steps and --events must be positive, --clients at least 0\n");
    return 2;
  }
  if (fixed_heap) {  // bench/torch_overhead.cpp, Note [A fixed heap]: the same for both kinds of block
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  }
  const long rss_start = rss_kib();

  // 1. Training: one model, blocks of steps with and without the dashboard, alternating.
  std::vector<double> ratios, same_ratios, off_ms, on_ms;
  // CPU per step: the training thread's, and every other thread's (the Session's queue, the
  // dashboard's and the clients' threads), each block from its first step until its events were
  // read. Unlike the step's wall time, these do not depend on what else the machine runs.
  std::vector<double> train_cpu[2], other_cpu[2], reader_cpu[2];
  std::uint64_t training_dropped = 0;
  int training_complete = 0;
  long rss_training = 0;
  {
    tfdebug::serve::DashboardOptions options;
    options.port = 0;
    options.flush_interval = std::chrono::milliseconds(flush_ms);
    options.log = [](const std::string&) {};
    auto dashboard = tfdebug::serve::Dashboard::start(options);
    const int stalled = connect_to(dashboard->port(), 4096);
    std::vector<std::unique_ptr<Reader>> readers;
    for (int c = 0; c < clients; ++c) {
      readers.push_back(std::make_unique<Reader>());
      readers.back()->start(dashboard->port(), nullptr);
    }
    while (dashboard->stats().clients < std::size_t(clients + 1))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tfdebug::demo::DemoConfig config;
    config.steps = std::int64_t(rounds + 1) * 3 * steps;
    tfdebug::demo::DemoTrainer trainer(config);
    std::int64_t step = 0;
    const auto block = [&](bool on) {
      tfdebug::RunConfig run;
      run.tier = tfdebug::Tier::diagnose;  // as tfdebug demo runs
      tfdebug::Session session(run);
      if (on) session.add_sink(dashboard);
      std::vector<double> times;
      const auto readers_cpu = [&] {
        double sum = 0;
        for (const auto& r : readers) sum += r->cpu_ms();
        return sum;
      };
      const double thread0 = thread_cpu_ms(), process0 = process_cpu_ms(), readers0 = readers_cpu();
      {
        auto debug = tfdebug::torch::attach(session, trainer.model());
        for (int s = 0; s < steps; ++s, ++step) {
          const auto start = Clock::now();
          debug.step(step, [&] { return trainer.train_step(); });
          if (s >= 2)
            times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        }
      }
      session.finish();
      // The clients read the run's end event before the next block starts timing.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const double train = thread_cpu_ms() - thread0, all = process_cpu_ms() - process0,
                   read = readers_cpu() - readers0;
      train_cpu[on].push_back(train / steps);
      other_cpu[on].push_back((all - train - read) / steps);
      reader_cpu[on].push_back(read / steps);
      return median(times);
    };
    block(false);  // warm-up: LibTorch's first steps, the allocator, the page of each client
    block(true);
    // Note [Bracketed rounds]: each round is off, on, off; the on block is held against the mean
    // of the two around it, which cancels a drift of the machine's speed that is linear over the
    // round (a neighbour's load rising or falling), where a pair only cancels a constant one. The
    // two off blocks against each other are the A/A ratio: what the estimator reads where there
    // is nothing to find, the resolution to hold the on ratio against.
    for (int r = 0; r < rounds; ++r) {
      const double before = block(false);
      const double on = block(true);
      const double after = block(false);
      const double off = 0.5 * (before + after);
      off_ms.push_back(off);
      on_ms.push_back(on);
      ratios.push_back(on / off);
      // Alternately first over last and last over first, so that a steady trend within rounds
      // does not read as a bias of the A/A ratio.
      same_ratios.push_back(r % 2 == 0 ? after / before : before / after);
    }
    const std::uint64_t last = dashboard->stats().events;
    wait_for(readers, last);
    training_complete = complete_readers(readers, last);
    training_dropped = dashboard->stats().dropped_clients;
    rss_training = rss_kib();
    for (auto& r : readers) r->finish();
    ::close(stalled);
  }

  // 2. Latency: synthetic step events at `rate` a second.
  std::vector<double> latencies;
  int latency_complete = 0;
  std::uint64_t latency_dropped = 0;
  long rss_latency = 0, rss_half = 0;
  {
    tfdebug::serve::DashboardOptions options;
    options.port = 0;
    options.flush_interval = std::chrono::milliseconds(flush_ms);
    options.log = [](const std::string&) {};
    auto dashboard = tfdebug::serve::Dashboard::start(options);
    std::vector<std::atomic<double>> sent(static_cast<std::size_t>(events));
    const int stalled = connect_to(dashboard->port(), 4096);
    std::vector<std::unique_ptr<Reader>> readers;
    for (int c = 0; c < clients; ++c) {
      readers.push_back(std::make_unique<Reader>());
      readers.back()->start(dashboard->port(), &sent);
    }
    while (dashboard->stats().clients < std::size_t(clients + 1))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto begin = Clock::now();
    for (int i = 0; i < events; ++i) {
      std::this_thread::sleep_until(begin + std::chrono::microseconds(std::int64_t(i) * 1000000 / rate));
      tfdebug::StepMetrics m;
      m.step = i;
      m.loss = 1.0 / (1.0 + i);
      tfdebug::ModuleMetrics module;
      module.module = "blocks.0.mlp";
      module.grad_norm = 0.01 * i;
      m.modules.push_back(module);
      sent[std::size_t(i)].store(now_ns(), std::memory_order_release);
      dashboard->on_step(m);
      if (i == events / 2) rss_half = rss_kib();
    }
    const std::uint64_t last = dashboard->stats().events;
    wait_for(readers, last);
    latency_complete = complete_readers(readers, last);
    latency_dropped = dashboard->stats().dropped_clients;
    rss_latency = rss_kib();
    for (auto& r : readers) {
      r->finish();
      latencies.insert(latencies.end(), r->latencies_ns.begin(), r->latencies_ns.end());
    }
    ::close(stalled);
  }
  std::sort(latencies.begin(), latencies.end());
  std::vector<double> sorted_ratios = ratios;
  std::sort(sorted_ratios.begin(), sorted_ratios.end());
  std::vector<double> sorted_same = same_ratios;
  std::sort(sorted_same.begin(), sorted_same.end());

  std::printf("dashboard_load: %d clients + 1 stalled, loopback, flush interval %d ms\n", clients, flush_ms);
  std::printf("training (demo model, diagnose, %d rounds of off, on, off blocks of %d steps):\n", rounds,
              steps);
  std::printf("  step: %.2f ms without the dashboard, %.2f ms with it (medians of the rounds)\n",
              median(off_ms), median(on_ms));
  std::printf("  ratio with/without: median %.3fx (range %.3f-%.3f); interquartile %.3f-%.3f\n",
              median(ratios), sorted_ratios.front(), sorted_ratios.back(), quantile(sorted_ratios, 0.25),
              quantile(sorted_ratios, 0.75));
  std::printf("  A/A, without/without: median %.3fx (range %.3f-%.3f); interquartile %.3f-%.3f\n",
              median(same_ratios), sorted_same.front(), sorted_same.back(), quantile(sorted_same, 0.25),
              quantile(sorted_same, 0.75));
  std::printf(
      "  CPU per step (medians of the blocks), without / with: training thread %.3f / %.3f ms; the "
      "server's threads %.3f / %.3f ms; the %d reading clients %.3f / %.3f ms\n",
      median(train_cpu[0]), median(train_cpu[1]), median(other_cpu[0]), median(other_cpu[1]), clients,
      median(reader_cpu[0]), median(reader_cpu[1]));
  std::printf("  fast clients with every event once, in order: %d of %d; clients dropped: %llu\n",
              training_complete, clients, static_cast<unsigned long long>(training_dropped));
  std::printf("latency (%d step events at %d/s):\n", events, rate);
  std::printf("  on_step to client parse: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%zu samples)\n",
              quantile(latencies, 0.5) / 1e6, quantile(latencies, 0.99) / 1e6,
              (latencies.empty() ? 0 : latencies.back()) / 1e6, latencies.size());
  std::printf("  fast clients with every event once, in order: %d of %d; clients dropped: %llu\n",
              latency_complete, clients, static_cast<unsigned long long>(latency_dropped));
  std::printf(
      "resident memory: %ld MiB at start, %ld MiB after training, %ld MiB half-way through the latency run, "
      "%ld MiB at its end\n",
      rss_start / 1024, rss_training / 1024, rss_half / 1024, rss_latency / 1024);
  return training_complete == clients && latency_complete == clients ? 0 : 1;
}
