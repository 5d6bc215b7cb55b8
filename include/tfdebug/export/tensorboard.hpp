// TensorBoard event files: `events.out.tfevents.<secs>.<host>.<pid>.tfdebug` in a run folder,
// readable by TensorBoard's scalar, histogram, text, image and graph dashboards and its
// embedding projector.
//
//   tfdebug::TensorBoardWriter tb("runs/exp1");
//   for (std::int64_t step = 0; step < 1000; ++step) {
//     tb.add_scalar("loss", loss, step);                 // ~tens of ns: queued
//     tb.add_histogram("weights/fc1", weight_view, step);  // computed here, written later
//   }
//   tb.add_text("findings", "**dead units** in `fc1`", 1000);
//   // the destructor (or close()) writes everything still queued
//
// Format (docs/exports.md): TFRecord framing (u64 length, masked CRC32C of the length, the
// serialized Event, masked CRC32C of the event), the first record an Event with file_version
// "brain.Event:2". Events are encoded and written by one background thread; add_* only queues
// (the queue is bounded: a producer far ahead of the disk waits). Records are written whole, so
// if the process dies, every record already written stays readable.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct TensorBoardOptions {
  // Queued events are written at least this often (and on flush(), close(), and when the queue
  // is half full).
  std::chrono::milliseconds flush_interval{1000};
  // Events that may wait in the queue; add_* blocks while it is full.
  std::size_t queue_capacity = std::size_t{1} << 20;
};

class TensorBoardWriter {
 public:
  // Creates `run_dir` (and parents) and a new event file in it; writes the file_version record.
  // Throws tfdebug::Error naming the path when it cannot.
  explicit TensorBoardWriter(const std::string& run_dir, TensorBoardOptions options = {});
  ~TensorBoardWriter();  // close()
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // A point of the `tag` curve (written as a float, TensorBoard's scalar type).
  void add_scalar(std::string_view tag, double value, std::int64_t step);
  // A histogram of the finite values of `values` in TensorFlow's default buckets, with min,
  // max, count, sum and sum of squares; computed on the calling thread (the view need not
  // outlive the call). NaN and Inf are not binned (TensorBoard cannot show them).
  void add_histogram(std::string_view tag, TensorView values, std::int64_t step);
  // A histogram counted already: `counts` per TensorFlow default bucket (aligned with
  // tensorflow_bucket_limits() of <tfdebug/core/histogram.hpp>, e.g. histogram_tensorflow's
  // counts or sums of them), with the summary of the finite values it counts. Throws
  // tfdebug::Error when counts has the wrong length.
  void add_histogram(std::string_view tag, std::span<const std::int64_t> counts, double min, double max,
                     std::int64_t num, double sum, double sum_squares, std::int64_t step);
  // Markdown text (TensorBoard's text dashboard).
  void add_text(std::string_view tag, std::string_view markdown, std::int64_t step);
  // An encoded PNG image of `width` x `height` with `channels` (1 grey, 2 grey+alpha, 3 RGB,
  // 4 RGBA).
  void add_image_png(std::string_view tag, std::span<const std::byte> png, int width, int height,
                     int channels, std::int64_t step);

  // The graph dashboard: `graph` (an ONNX file's, or a LibTorch forward pass traced by
  // tfdebug::torch::trace_graph) as a GraphDef in Event.graph_def. Nodes are named by module
  // scope ("blocks.0/attn/aten::linear_3") so that TensorBoard folds them by module; every node
  // carries "_output_shapes", weights are "Parameter" nodes and graph inputs "Input" nodes.
  void add_graph(const ModelGraph& graph);
  // The embedding projector: the rows of the 2-D `matrix` as points, with one label per row
  // (optional). Writes <run>/<step>/<tag>/tensors.tsv and metadata.tsv now and rewrites
  // <run>/projector_config.pbtxt to list every embedding added so far. Throws tfdebug::Error on a
  // matrix that is not 2-D, a label count that is not the row count, or a file it cannot write.
  void add_embedding(std::string_view tag, TensorView matrix, std::span<const std::string> labels = {},
                     std::int64_t step = 0);

  // Returns once everything added before the call is written to the file.
  void flush();
  // flush(), then stop the writer thread and close the file; later add_* calls throw.
  void close();

  const std::string& path() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfdebug
