// Private: TensorBoard Event encoding (field numbers from tensorboard's event.proto and
// summary.proto, ../shared/reference/formats.md section 1) and TFRecord framing. Pure functions,
// so that tests can compare bytes with the reference's test vectors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protobuf.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::detail {

// Event fields.
inline constexpr std::uint32_t kEventWallTime = 1;     // double
inline constexpr std::uint32_t kEventStep = 2;         // int64
inline constexpr std::uint32_t kEventFileVersion = 3;  // string
inline constexpr std::uint32_t kEventGraphDef = 4;     // bytes: a serialized GraphDef
inline constexpr std::uint32_t kEventSummary = 5;      // Summary
inline constexpr std::uint32_t kEventSourceMetadata = 10;
// Summary.value (repeated Value); Value fields.
inline constexpr std::uint32_t kSummaryValue = 1;
inline constexpr std::uint32_t kValueTag = 1;
inline constexpr std::uint32_t kValueSimpleValue = 2;  // float
inline constexpr std::uint32_t kValueImage = 4;
inline constexpr std::uint32_t kValueHisto = 5;
inline constexpr std::uint32_t kValueTensor = 8;
inline constexpr std::uint32_t kValueMetadata = 9;

// The TFRecord around one serialized record: length, masked CRC of the length, data, masked
// CRC of the data. Appends to `out`.
void append_record(std::string& out, std::string_view data);

// Event{wall_time, file_version "brain.Event:2", source_metadata{writer}} (no source_metadata
// when `writer` is empty).
std::string file_version_event(double wall_time, std::string_view writer);
// Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value);
// Event with a HistogramProto (min, max, num, sum, sum_squares, bucket_limit, bucket): TF's
// default buckets, runs of empty buckets merged into one entry carrying the run's last limit.
std::string histogram_event(double wall_time, std::int64_t step, std::string_view tag,
                            const Histogram& buckets, double min, double max, double num, double sum,
                            double sum_squares);
// Event with a DT_STRING scalar tensor and the "text" plugin.
std::string text_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view text);
// Event with a Summary.Image (height, width, colorspace, encoded PNG).
std::string image_event(double wall_time, std::int64_t step, std::string_view tag, std::string_view png,
                        int width, int height, int channels);

// tensorboard_graph.cpp: a GraphDef of `graph` (nodes named by module scope, "_output_shapes"
// on every node, traced ops' arguments as attrs; weights are "Parameter" nodes, graph inputs
// "Input" nodes) and the Event{wall_time, graph_def} that carries it.
std::string graph_def(const ModelGraph& graph);
std::string graph_event(double wall_time, const ModelGraph& graph);
// Writes <run_dir>/<step, 5 digits>/<tag>/tensors.tsv (and metadata.tsv when `labels` are given);
// returns the projector config's `embeddings { ... }` entry for it.
std::string write_embedding(const std::string& run_dir, std::string_view tag, TensorView matrix,
                            std::span<const std::string> labels, std::int64_t step);
// <run_dir>/projector_config.pbtxt with these entries.
void write_projector_config(const std::string& run_dir, const std::vector<std::string>& entries);

}  // namespace tfdebug::detail
