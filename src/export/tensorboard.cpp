// The TensorBoard writer: add_* queue small items under a mutex (no allocation beyond the tag
// and payload); one background thread encodes them into TFRecords and writes whole batches
// with write(2), so a killed process leaves only complete records behind (plus at most one
// partial record at the end, which TensorBoard ignores).
#include "tfdebug/export/tensorboard.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "crc32c.hpp"
#include "tensorboard_events.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace detail {

void append_record(std::string& out, std::string_view data) {
  const std::uint64_t length = data.size();
  char header[12];
  std::memcpy(header, &length, 8);
  const std::uint32_t length_crc = masked_crc32c(crc32c(header, 8));
  std::memcpy(header + 8, &length_crc, 4);
  out.append(header, 12);
  out.append(data);
  const std::uint32_t data_crc = masked_crc32c(crc32c(data.data(), data.size()));
  out.append(reinterpret_cast<const char*>(&data_crc), 4);
}

namespace {

std::string event(double wall_time, std::int64_t step, const ProtoWriter& value) {
  ProtoWriter summary;
  summary.message(kSummaryValue, value);
  ProtoWriter e;
  e.fixed64(kEventWallTime, wall_time);
  if (step != 0) e.integer(kEventStep, step);
  e.message(kEventSummary, summary);
  return e.str();
}

// SummaryMetadata{plugin_data{plugin_name}}: the plugin's content is its empty version-0 message.
ProtoWriter plugin_metadata(std::string_view plugin) {
  ProtoWriter plugin_data;
  plugin_data.bytes(1, plugin);
  ProtoWriter metadata;
  metadata.message(1, plugin_data);
  return metadata;
}

}  // namespace

std::string file_version_event(double wall_time, std::string_view writer) {
  ProtoWriter e;
  e.fixed64(kEventWallTime, wall_time);
  e.bytes(kEventFileVersion, "brain.Event:2");
  if (!writer.empty()) {
    ProtoWriter source;
    source.bytes(1, writer);
    e.message(kEventSourceMetadata, source);
  }
  return e.str();
}

std::string scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value) {
  ProtoWriter v;
  v.bytes(kValueTag, tag);
  v.fixed32(kValueSimpleValue, value);
  return event(wall_time, step, v);
}

std::string histogram_event(double wall_time, std::int64_t step, std::string_view tag,
                            const Histogram& buckets, double min, double max, double num, double sum,
                            double sum_squares) {
  // Runs of empty buckets become one entry with the run's last limit (TensorBoard's encoding).
  std::vector<double> limits;
  std::vector<double> counts;
  for (std::size_t i = 0; i < buckets.counts.size();) {
    double limit = buckets.edges[i];
    const double count = static_cast<double>(buckets.counts[i]);
    ++i;
    if (count == 0) {
      while (i < buckets.counts.size() && buckets.counts[i] == 0) limit = buckets.edges[i++];
    }
    limits.push_back(limit);
    counts.push_back(count);
  }
  if (limits.empty()) {
    limits.push_back(DBL_MAX);
    counts.push_back(0);
  }
  ProtoWriter h;
  h.fixed64(1, min);
  h.fixed64(2, max);
  h.fixed64(3, num);
  h.fixed64(4, sum);
  h.fixed64(5, sum_squares);
  h.packed_doubles(6, limits);
  h.packed_doubles(7, counts);
  ProtoWriter v;
  v.bytes(kValueTag, tag);
  v.message(kValueHisto, h);
  return event(wall_time, step, v);
}

std::string text_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view text) {
  ProtoWriter tensor;
  tensor.integer(1, 7);              // dtype DT_STRING
  tensor.message(2, ProtoWriter{});  // tensor_shape: rank 0
  tensor.bytes(8, text);             // string_val
  ProtoWriter v;
  v.bytes(kValueTag, tag);
  v.message(kValueMetadata, plugin_metadata("text"));
  v.message(kValueTensor, tensor);
  return event(wall_time, step, v);
}

std::string image_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view png,
                        int width, int height, int channels) {
  ProtoWriter image;
  image.integer(1, height);
  image.integer(2, width);
  image.integer(3, channels);
  image.bytes(4, png);
  ProtoWriter v;
  v.bytes(kValueTag, tag);
  v.message(kValueImage, image);
  return event(wall_time, step, v);
}

}  // namespace detail

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A queued event: scalars stay unencoded until the writer thread (the common, hot case);
// everything else arrives encoded.
struct Item {
  std::string tag_or_event;
  double wall_time = 0;
  std::int64_t step = 0;
  float value = 0;
  bool encoded = false;
};

}  // namespace

struct TensorBoardWriter::State {
  TensorBoardOptions options;
  std::string path;
  int fd = -1;
  std::mutex mutex;
  std::condition_variable wake_writer;  // queue half full, flush requested, or closing
  std::condition_variable space;        // producers waiting for room; flush waiters
  std::vector<Item> queue;
  std::uint64_t queued = 0;   // items ever queued
  std::uint64_t written = 0;  // items ever written
  std::uint64_t flush_wanted = 0;
  bool closing = false;
  bool closed = false;
  std::string error;  // the writer thread's write error, reported by the next call
  std::thread thread;
  std::mutex projector_mutex;
  std::vector<std::string> projector_entries;  // add_embedding's, for projector_config.pbtxt

  void push(Item item) {
    std::unique_lock lock(mutex);
    if (closed) throw Error(path + ": the TensorBoard writer is closed");
    if (!error.empty()) throw Error(error);
    space.wait(lock, [&] { return queue.size() < options.queue_capacity || closing; });
    if (closing) throw Error(path + ": the TensorBoard writer was closed while this event waited");
    queue.push_back(std::move(item));
    ++queued;
    if (queue.size() == options.queue_capacity / 2) wake_writer.notify_one();
  }

  void write_all(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(path + ": cannot write: " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(n);
    }
  }

  void run() {
    std::vector<Item> batch;
    std::string bytes;
    std::unique_lock lock(mutex);
    while (true) {
      wake_writer.wait_for(lock, options.flush_interval, [&] {
        return closing || flush_wanted > written || queue.size() >= options.queue_capacity / 2;
      });
      batch.swap(queue);
      const bool stop = closing;
      lock.unlock();
      space.notify_all();
      bytes.clear();
      for (const Item& item : batch) {
        detail::append_record(bytes, item.encoded ? item.tag_or_event
                                                  : detail::scalar_event(item.wall_time, item.step,
                                                                         item.tag_or_event, item.value));
      }
      std::string failure;
      try {
        write_all(bytes);
      } catch (const Error& e) {
        failure = e.what();
      }
      lock.lock();
      written += batch.size();
      batch.clear();
      if (!failure.empty() && error.empty()) error = failure;
      space.notify_all();
      if (stop && queue.empty()) return;
    }
  }
};

TensorBoardWriter::TensorBoardWriter(const std::string& run_dir, TensorBoardOptions options)
    : state_(std::make_unique<State>()) {
  if (options.queue_capacity < 2) options.queue_capacity = 2;
  state_->options = options;
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) throw Error(run_dir + ": cannot create the run folder: " + ec.message());
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const auto seconds = static_cast<long long>(now_seconds());
  char name[400];
  std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%d.tfdebug", seconds, host,
                static_cast<int>(::getpid()));
  state_->path = (std::filesystem::path(run_dir) / name).string();
  state_->fd = ::open(state_->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (state_->fd < 0) throw Error(state_->path + ": cannot create: " + std::strerror(errno));
  std::string first;
  detail::append_record(first, detail::file_version_event(now_seconds(), "tfdebug"));
  state_->write_all(first);
  state_->thread = std::thread([s = state_.get()] { s->run(); });
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    close();
  } catch (const Error&) {  // a destructor cannot report a write error; close() does
  }
}

void TensorBoardWriter::add_scalar(std::string_view tag, double value, std::int64_t step) {
  state_->push({std::string(tag), now_seconds(), step, static_cast<float>(value), false});
}

void TensorBoardWriter::add_histogram(std::string_view tag, TensorView values, std::int64_t step) {
  StatsOptions exact;
  exact.exact = true;
  const Stats s = compute_stats(values, exact);
  const Histogram buckets = histogram_tensorflow(values);
  const double num = static_cast<double>(s.finite());
  const double sum = s.finite() > 0 ? s.mean * num : 0.0;
  const double squares = s.finite() > 0 ? s.l2 * s.l2 : 0.0;
  state_->push({detail::histogram_event(now_seconds(), step, tag, buckets, s.finite() > 0 ? s.min : 0.0,
                                        s.finite() > 0 ? s.max : 0.0, num, sum, squares),
                0, step, 0, true});
}

void TensorBoardWriter::add_histogram(std::string_view tag, std::span<const std::int64_t> counts, double min,
                                      double max, std::int64_t num, double sum, double sum_squares,
                                      std::int64_t step) {
  const std::vector<double>& limits = tensorflow_bucket_limits();
  if (counts.size() != limits.size()) {
    throw Error("add_histogram: " + std::string(tag) + ": expected " + std::to_string(limits.size()) +
                " TensorFlow bucket counts, got " + std::to_string(counts.size()));
  }
  Histogram buckets;
  buckets.edges = limits;
  buckets.counts.assign(counts.begin(), counts.end());
  state_->push({detail::histogram_event(now_seconds(), step, tag, buckets, num > 0 ? min : 0.0,
                                        num > 0 ? max : 0.0, static_cast<double>(num), sum, sum_squares),
                0, step, 0, true});
}

void TensorBoardWriter::add_text(std::string_view tag, std::string_view markdown, std::int64_t step) {
  state_->push({detail::text_event(now_seconds(), step, tag, markdown), 0, step, 0, true});
}

void TensorBoardWriter::add_image_png(std::string_view tag, std::span<const std::byte> png, int width,
                                      int height, int channels, std::int64_t step) {
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error("add_image_png: width and height must be positive and channels 1 to 4");
  }
  const std::string_view bytes(reinterpret_cast<const char*>(png.data()), png.size());
  state_->push(
      {detail::image_event(now_seconds(), step, tag, bytes, width, height, channels), 0, step, 0, true});
}

void TensorBoardWriter::add_graph(const ModelGraph& graph) {
  state_->push({detail::graph_event(now_seconds(), graph), 0, 0, 0, true});
}

void TensorBoardWriter::add_embedding(std::string_view tag, TensorView matrix,
                                      std::span<const std::string> labels, std::int64_t step) {
  const std::string run_dir = std::filesystem::path(state_->path).parent_path().string();
  std::string entry = detail::write_embedding(run_dir, tag, matrix, labels, step);
  std::lock_guard lock(state_->projector_mutex);
  state_->projector_entries.push_back(std::move(entry));
  detail::write_projector_config(run_dir, state_->projector_entries);
}

void TensorBoardWriter::flush() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (s.closed) return;
  const std::uint64_t target = s.queued;
  s.flush_wanted = std::max(s.flush_wanted, target);
  s.wake_writer.notify_one();
  s.space.wait(lock, [&] { return s.written >= target || !s.error.empty(); });
  if (!s.error.empty()) throw Error(s.error);
}

void TensorBoardWriter::close() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    if (s.closed) return;
    s.closing = true;
    s.closed = true;
  }
  s.wake_writer.notify_one();
  s.space.notify_all();
  if (s.thread.joinable()) s.thread.join();
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  if (!s.error.empty()) throw Error(s.error);
}

const std::string& TensorBoardWriter::path() const noexcept {
  return state_->path;
}

}  // namespace tfdebug
