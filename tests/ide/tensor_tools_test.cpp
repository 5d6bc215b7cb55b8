// The tensor tools of a stopped frame: numpy's basic indexing, the text of values, statistics
// and histograms, and .npy files (read back byte for byte; the console's CLI test loads them
// with numpy).
#include "tfdebug/ide/tensor_tools.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::ide {
namespace {

std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(TensorTools, SlicesLikeNumpy) {
  const std::vector<float> data = iota(24);
  const TensorView t(data.data(), DType::f32, {2, 3, 4});
  const TensorView row = slice(t, "[1, 2]");  // t[1, 2] = 20, 21, 22, 23
  ASSERT_EQ(row.rank(), 1);
  EXPECT_EQ(row.shape(0), 4);
  EXPECT_EQ(row.at({0}), 20.0);
  const TensorView cols = slice(t, "[:, -1, 1::2]");  // t[:, 2, [1, 3]]
  ASSERT_EQ(cols.rank(), 2);
  EXPECT_EQ(cols.shape(0), 2);
  EXPECT_EQ(cols.shape(1), 2);
  EXPECT_EQ(cols.at({0, 0}), 9.0);
  EXPECT_EQ(cols.at({0, 1}), 11.0);
  EXPECT_EQ(cols.at({1, 1}), 23.0);
  const TensorView clamped = slice(t, "[0, 1:100, -2:]");
  EXPECT_EQ(clamped.shape(0), 2);
  EXPECT_EQ(clamped.shape(1), 2);
  EXPECT_EQ(clamped.at({1, 0}), 10.0);
  EXPECT_EQ(slice(t, "[0, 2:1]").shape(0), 0);
  EXPECT_EQ(slice(t, "[]").rank(), 3);
  EXPECT_THROW(slice(t, "[2]"), Error);
  EXPECT_THROW(slice(t, "[0, 0, 0, 0]"), Error);
  EXPECT_THROW(slice(t, "[::-1]"), Error);
  EXPECT_THROW(slice(t, "[x]"), Error);
  EXPECT_THROW(slice(t, "0"), Error);
  EXPECT_EQ(split_index("blocks.0.fc.weight[0, :4]").name, "blocks.0.fc.weight");
  EXPECT_EQ(split_index("blocks.0.fc.weight[0, :4]").index, "[0, :4]");
  EXPECT_EQ(split_index("output").index, "");
}

TEST(TensorTools, ValuesStatsAndHistogramsAsText) {
  const std::vector<float> data = {1.0f, -2.0f, 0.5f, std::numeric_limits<float>::quiet_NaN(), 4.0f, 0.0f};
  const TensorView t(data.data(), DType::f32, {2, 3});
  EXPECT_EQ(values_text(t), "f32[2, 3] [[1, -2, 0.5], [nan, 4, 0]]");
  EXPECT_EQ(values_text(t, 4), "f32[2, 3] [[1, -2, 0.5], [nan, ...]]");
  const std::vector<float> long_row = iota(20);
  EXPECT_EQ(values_text(TensorView(long_row.data(), DType::f32, {20})),
            "f32[20] [0, 1, 2, 3, 4, 5, 6, 7, ..., 18, 19]");
  // The finite values' population std: sqrt(18.8 / 5).
  EXPECT_EQ(stats_text(compute_stats(t)),
            "f32 count 6  min -2  max 4  mean 0.7  std 1.9391  abs_max 4  negative 1  zero 1  nan 1  inf 0");
  const std::string h = histogram_text(t, 2, 10);
  // [-2, 1) holds -2, 0.5, 0; [1, 4] holds 1 and 4.
  EXPECT_EQ(h,
            "[         -2,           1)        3 ##########\n"
            "[          1,           4]        2 ######\n"
            "nan 1  +inf 0  -inf 0\n");
  EXPECT_THROW(histogram_text(t, 0), Error);
}

TEST(TensorTools, NpyFilesHoldTheHeaderNumpyReadsAndTheValuesInCOrder) {
  const std::vector<float> data = iota(6);
  const TensorView t(data.data(), DType::f32, {2, 3});
  const auto path = std::filesystem::temp_directory_path() / "tfdebug_ide_tools_test.npy";
  save_npy(t.transposed(0, 1), path);  // strided: saved in C order of the transposed view
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  ASSERT_EQ(bytes.size(), 128u + 6 * 4);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(std::uint8_t(bytes[8]) + 256 * std::uint8_t(bytes[9]), 118);
  EXPECT_EQ(bytes.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }");
  EXPECT_EQ(bytes[127], '\n');
  std::vector<float> values(6);
  std::memcpy(values.data(), bytes.data() + 128, 24);
  EXPECT_EQ(values, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(save_npy(t, "/nonexistent-dir/x.npy"), Error);
}

}  // namespace
}  // namespace tfdebug::ide
