// The model calls with the points made on a second thread (Note [Points beside the model]):
// the callbacks see the same rows in the same order with and without the worker, the model runs
// on the calling thread only, and an exception on either side propagates with no thread left.
#include "pipelined_batches.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// The threads of this process (Linux: one directory each under /proc/self/task).
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// f(x) = x0 + 2 x1, recording the thread of each call and throwing at call `throw_at` (1-based).
class RecordingModel : public testing::FunctionModel {
 public:
  explicit RecordingModel(std::int64_t throw_at = 0)
      : FunctionModel(
            2, 1, [](const std::vector<double>& v) { return std::vector<double>{v[0] + 2 * v[1]}; },
            [](const std::vector<double>&, std::int64_t) {
              return std::vector<double>{1, 2};
            }),
        throw_at_(throw_at) {}
  void forward(const TensorView& x, std::span<float> out) override {
    threads.push_back(std::this_thread::get_id());
    if (static_cast<std::int64_t>(threads.size()) == throw_at_) throw Error("the model failed at batch 3");
    FunctionModel::forward(x, out);
  }
  std::vector<std::thread::id> threads;

 private:
  std::int64_t throw_at_;
};

// What the callbacks saw, in order (made: how many times each row was made; each batch is made
// by one thread, the worker or the calling thread).
struct Trace {
  std::vector<std::int64_t> made;
  std::vector<std::pair<std::int64_t, std::int64_t>> prepared, answered;
  std::vector<double> outputs;
};

Trace run(ForwardModel& model, std::int64_t rows, std::int64_t max_batch, bool concurrent,
          bool* used_worker = nullptr) {
  Trace t;
  t.outputs.assign(static_cast<std::size_t>(rows), -1);
  t.made.assign(static_cast<std::size_t>(rows), 0);
  std::vector<double> answered_sum;
  detail::PipelinedBatches batches(model, max_batch);
  batches.forward(
      rows, concurrent,
      [&](std::int64_t i, std::span<float> point) {
        ++t.made[static_cast<std::size_t>(i)];
        point[0] = static_cast<float>(i);
        point[1] = 0.5f;
      },
      [&](std::int64_t begin, std::int64_t end) { t.prepared.emplace_back(begin, end); },
      [&](std::int64_t i, std::span<const float> out) { t.outputs[static_cast<std::size_t>(i)] = out[0]; },
      [&](std::int64_t begin, std::int64_t end) {
        // Every output of the batch is in when it is answered.
        for (std::int64_t i = begin; i < end; ++i) EXPECT_EQ(t.outputs[static_cast<std::size_t>(i)], i + 1.0);
        t.answered.emplace_back(begin, end);
      });
  EXPECT_EQ(batches.evaluations(), rows);
  if (used_worker != nullptr) *used_worker = batches.used_worker();
  return t;
}

TEST(PipelinedBatches, TheWorkerSeesWhatTheSerialPathSees) {
  RecordingModel serial_model, concurrent_model;
  bool used = false;
  const Trace serial = run(serial_model, 1000, 64, false, &used);
  EXPECT_FALSE(used);
  const Trace concurrent = run(concurrent_model, 1000, 64, true, &used);
  EXPECT_TRUE(used);
  EXPECT_EQ(serial.made, std::vector<std::int64_t>(1000, 1));  // every row once
  EXPECT_EQ(concurrent.made, serial.made);
  ASSERT_EQ(serial.prepared.size(), 16U);  // 15 batches of 64 and one of 40
  EXPECT_EQ(serial.prepared.back(), std::make_pair(std::int64_t{960}, std::int64_t{1000}));
  EXPECT_EQ(concurrent.prepared, serial.prepared);
  EXPECT_EQ(concurrent.answered, serial.prepared);
  EXPECT_EQ(serial.answered, serial.prepared);
  EXPECT_EQ(concurrent.outputs, serial.outputs);
  EXPECT_EQ(concurrent_model.calls, 16);
  EXPECT_EQ(concurrent_model.largest_batch, 64);
  // The model only ever runs on the calling thread.
  for (const std::thread::id id : concurrent_model.threads) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(PipelinedBatches, OneBatchStartsNoThread) {
  RecordingModel model;
  bool used = true;
  const Trace t = run(model, 64, 64, true, &used);
  EXPECT_FALSE(used);
  EXPECT_EQ(t.answered.size(), 1U);
}

TEST(PipelinedBatches, AModelThatThrowsAtBatchThreeStopsTheWorker) {
  const std::size_t before = thread_count();
  for (const bool concurrent : {true, false}) {
    RecordingModel model(3);
    try {
      run(model, 1000, 64, concurrent);
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "the model failed at batch 3");
    }
    EXPECT_EQ(model.threads.size(), 3U);  // no call after the failure
    EXPECT_EQ(thread_count(), before);    // the worker is joined
  }
}

TEST(PipelinedBatches, AWorkerThatThrowsStopsTheModel) {
  const std::size_t before = thread_count();
  RecordingModel model;
  detail::PipelinedBatches batches(model, 10);
  const auto nothing = [](std::int64_t, std::int64_t) {};
  EXPECT_THROW(batches.forward(
                   100, true,
                   [](std::int64_t i, std::span<float> point) {
                     if (i == 45) throw std::runtime_error("no point 45");
                     point[0] = point[1] = 0;
                   },
                   nothing, [](std::int64_t, std::span<const float>) {}, nothing),
               std::runtime_error);
  EXPECT_LE(model.threads.size(), 4U);  // batches 0-3 at most: batch 4 was never made
  EXPECT_EQ(thread_count(), before);
}

}  // namespace
}  // namespace tfdebug::interpret
