// Model calls in chunks, with the points made on a second thread while the model evaluates the
// previous chunk (Note [Points beside the model]). LIME's own work — drawing the samples, their
// kernel weights, the ridge's sums over the rows — needs the model's outputs only at the end.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret::detail {

// Note [Points beside the model]: with `concurrent`, a worker thread makes batch k + 1's points
// into the second of two buffers while the calling thread runs the model on batch k in the first
// (double buffering: memory is two batches, whatever the number of rows). The callbacks:
//
//   make(i, point)          writes point i (or make(begin, end, points) the batch's points at
//                           once, point i at points[(i - begin) * numel]); each batch made by
//                           one thread, the worker or (when the worker has not started it by
//                           the time the model needs it) the calling thread, so on a busy
//                           machine the model waits at most for a batch the worker has
//                           started, never for one it has not reached
//   prepared(begin, end)    work on the made points [begin, end), in batch order (LIME: after
//                           the last batch, the ridge's products of the rows)
//   use(i, outputs)         reads the model's outputs of point i   on the calling thread
//   answered(begin, end)    work that needs the outputs of [begin, end), in batch order (LIME:
//                           the sums with y)
//
// prepared and answered run on the worker as it gets to them; what it has not started when the
// model has answered the last batch, the calling thread does after joining it. Every callback
// sees each batch once, the batches in order for prepared and answered, so a method whose sums are
// made in these callbacks gets the same bits with or without the worker, whichever thread made
// which batch. The model is only ever called from the calling thread (a model may be tied to
// it). An exception from the model or a callback stops the worker, joins it and propagates;
// nothing is left running. Without `concurrent` (or with a single batch, where a thread would
// only cost its start) the same callbacks run in the same order on the calling thread.
class PipelinedBatches {
 public:
  PipelinedBatches(ForwardModel& model, std::int64_t max_batch) : model_(model), numel_(example_size(model)) {
    if (max_batch < 1) throw Error("max_batch must be at least 1, got " + std::to_string(max_batch));
    max_batch_ = max_batch;
    shape_ = model.input_shape();
    shape_.insert(shape_.begin(), 0);
  }

  std::int64_t evaluations() const { return evaluations_; }
  // Whether the last forward ran the worker thread.
  bool used_worker() const { return used_worker_; }

  template <class Make, class Prepared, class Use, class Answered>
  void forward(std::int64_t rows, bool concurrent, Make&& make, Prepared&& prepared, Use&& use,
               Answered&& answered) {
    const std::int64_t batches = (rows + max_batch_ - 1) / max_batch_;
    used_worker_ = concurrent && batches > 1;
    if (!used_worker_) {
      points_[0].resize(static_cast<std::size_t>(std::min(rows, max_batch_) * numel_));
      for (std::int64_t k = 0; k < batches; ++k) {
        fill(k, rows, points_[0], make);
        prepared(begin(k), end(k, rows));
        evaluate(k, rows, points_[0], use);
        answered(begin(k), end(k, rows));
      }
      return;
    }
    for (auto& p : points_) p.resize(static_cast<std::size_t>(max_batch_ * numel_));
    // Shared state, under `mutex`. Batch k's buffer is free once batch k - 2 is evaluated.
    std::mutex mutex;
    std::condition_variable_any changed;
    std::int64_t next_fill = 0;  // the first batch nobody has started making
    std::vector<char> made(static_cast<std::size_t>(batches), 0);
    std::int64_t evaluated = 0;      // batches the model has answered
    std::int64_t next_prepared = 0;  // the first batch `prepared` has not been started for
    std::int64_t next_answered = 0;  // likewise `answered`
    std::exception_ptr failure;      // the worker's
    bool worker_done = false;
    {
      // Declared last, so destroyed first: its destructor requests stop and joins before the
      // mutex and condition variable go away, on return and on an exception alike.
      std::jthread worker([&](std::stop_token stop) {
        try {
          for (;;) {
            enum class Task { fill, prepare, answer, none } task = Task::none;
            std::int64_t k = 0;
            {
              // The work that keeps the model fed first, then the sums, in batch order.
              std::unique_lock lock(mutex);
              changed.wait(lock, stop, [&] {
                if (stop.stop_requested()) return true;
                if (next_fill < batches && next_fill <= evaluated + 1) {
                  task = Task::fill;
                  k = next_fill++;
                } else if (next_prepared < batches && made[static_cast<std::size_t>(next_prepared)] != 0) {
                  task = Task::prepare;
                  k = next_prepared++;
                } else if (next_answered < evaluated) {
                  task = Task::answer;
                  k = next_answered++;
                }
                return task != Task::none || (next_prepared == batches && next_answered == batches);
              });
              if (task == Task::none) break;  // stopped, or nothing left
            }
            if (task == Task::fill) {
              fill(k, rows, points_[static_cast<std::size_t>(k % 2)], make);
              {
                const std::lock_guard lock(mutex);
                made[static_cast<std::size_t>(k)] = 1;
              }
              changed.notify_all();
            } else if (task == Task::prepare) {
              prepared(begin(k), end(k, rows));
            } else {
              answered(begin(k), end(k, rows));
            }
          }
        } catch (...) {
          failure = std::current_exception();
        }
        {
          const std::lock_guard lock(mutex);
          worker_done = true;
        }
        changed.notify_all();
      });
      for (std::int64_t k = 0; k < batches; ++k) {
        bool mine = false;  // nobody has started batch k: the calling thread makes it itself
        {
          std::unique_lock lock(mutex);
          if (next_fill == k) {
            next_fill = k + 1;
            mine = true;
          } else {
            changed.wait(lock, [&] { return made[static_cast<std::size_t>(k)] != 0 || worker_done; });
            if (made[static_cast<std::size_t>(k)] == 0) break;  // the worker failed: rethrown below
          }
        }
        if (mine) {
          fill(k, rows, points_[static_cast<std::size_t>(k % 2)], make);
          const std::lock_guard lock(mutex);
          made[static_cast<std::size_t>(k)] = 1;  // the worker hears of it after the model's call
        }
        evaluate(k, rows, points_[static_cast<std::size_t>(k % 2)], use);
        {
          const std::lock_guard lock(mutex);
          evaluated = k + 1;
        }
        changed.notify_all();
      }
      worker.request_stop();  // what the worker has not started, the calling thread does below
    }                         // joined here
    if (failure) std::rethrow_exception(failure);
    for (std::int64_t k = next_prepared; k < batches; ++k) prepared(begin(k), end(k, rows));
    for (std::int64_t k = next_answered; k < batches; ++k) answered(begin(k), end(k, rows));
  }

 private:
  std::int64_t begin(std::int64_t k) const { return k * max_batch_; }
  std::int64_t end(std::int64_t k, std::int64_t rows) const { return std::min(rows, (k + 1) * max_batch_); }

  // make(i, point) a point at a time, or make(begin, end, points) a batch at once.
  template <class Make>
  void fill(std::int64_t k, std::int64_t rows, std::vector<float>& points, Make& make) {
    if constexpr (std::is_invocable_v<Make&, std::int64_t, std::int64_t, std::span<float>>) {
      make(begin(k), end(k, rows),
           std::span<float>(points).first(static_cast<std::size_t>((end(k, rows) - begin(k)) * numel_)));
    } else {
      for (std::int64_t i = begin(k); i < end(k, rows); ++i)
        make(i, std::span<float>(points).subspan(static_cast<std::size_t>((i - begin(k)) * numel_),
                                                 static_cast<std::size_t>(numel_)));
    }
  }

  template <class Use>
  void evaluate(std::int64_t k, std::int64_t rows, std::vector<float>& points, Use& use) {
    const std::int64_t n = end(k, rows) - begin(k);
    const std::int64_t width = model_.output_size();
    outputs_.assign(static_cast<std::size_t>(n * width), 0.0f);
    shape_[0] = n;
    model_.forward(TensorView(points.data(), DType::f32, shape_), outputs_);
    evaluations_ += n;
    for (std::int64_t i = 0; i < n; ++i)
      use(begin(k) + i, std::span<const float>(outputs_).subspan(static_cast<std::size_t>(i * width),
                                                                 static_cast<std::size_t>(width)));
  }

  ForwardModel& model_;
  std::int64_t numel_ = 0;
  std::int64_t max_batch_ = 1;
  std::int64_t evaluations_ = 0;
  bool used_worker_ = false;
  std::vector<std::int64_t> shape_;
  std::vector<float> points_[2];
  std::vector<float> outputs_;
};

}  // namespace tfdebug::interpret::detail
