// TensorBoard event files: the reference's byte-level test vectors, and files written by the
// writer read back by an independent reader (tests/export/read_tfevents.py: TensorBoard's field
// numbers, CRC32C from python3-crcmod).
#include "tfdebug/export/tensorboard.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crc32c.hpp"
#include "tensorboard_events.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"

namespace tfdebug {
namespace {

namespace fs = std::filesystem;

std::string hex(const std::string& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kDigits[(static_cast<unsigned char>(c) >> 4) & 0xF];
    out += kDigits[static_cast<unsigned char>(c) & 0xF];
  }
  return out;
}

TEST(Crc32c, CheckValueAndMask) {
  EXPECT_EQ(detail::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(detail::masked_crc32c(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(detail::masked_crc32c(detail::crc32c("", 0)), 0xA282EAD8u);
  // Lengths that exercise the 8-byte steps and the tail alike.
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('a' + i % 26);
  EXPECT_EQ(detail::crc32c(text.data(), text.size()), 0x474ED9BFu);  // python3-crcmod
}

// formats.md section 1, "Test vectors (checked by recomputation)".
TEST(TensorBoardEvents, ReferenceTestVectors) {
  std::string first;
  detail::append_record(first, detail::file_version_event(1.0, ""));
  EXPECT_EQ(hex(first), "1800000000000000a37f4b2209000000000000f03f1a0d627261696e2e4576656e743a3286bf577a");
  std::string scalar;
  detail::append_record(scalar, detail::scalar_event(1.0, 1, "loss", 0.5f));
  EXPECT_EQ(hex(scalar),
            "1a00000000000000129bd82d09000000000000f03f10012a0d0a0b0a046c6f7373150000003f27f95db1");
}

nlohmann::json read_back(const std::string& path) {
  const std::string command =
      "/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) + "/tests/export/read_tfevents.py '" + path + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error("the reader failed on " + path + ": " + out);
  return nlohmann::json::parse(out);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tfdebug_tb_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(TensorBoardWriter, IndependentReaderSeesEveryEvent) {
  const fs::path dir = fresh_dir("events");
  std::string path;
  const std::vector<float> values = {-2.0f, -0.5f, 0.0f, 0.25f, 3.0f, NAN};
  {
    TensorBoardWriter tb(dir.string());
    path = tb.path();
    EXPECT_NE(fs::path(path).filename().string().find("events.out.tfevents."), std::string::npos);
    for (int step = 0; step < 1000; ++step) tb.add_scalar("loss", 1.0 / (1 + step), step);
    tb.add_scalar("negative/step", -4.5, -3);
    tb.add_histogram("weights", TensorView(values.data(), DType::f32, {6}), 7);
    tb.add_text("findings", "**dead units** in `fc1`", 8);
    const std::vector<std::byte> png = {std::byte{0x89}, std::byte{'P'}, std::byte{'N'}, std::byte{'G'}};
    tb.add_image_png("sample", png, 2, 3, 3, 9);
  }
  const nlohmann::json j = read_back(path);
  EXPECT_FALSE(j["partial_tail"]);
  const auto& r = j["records"];
  ASSERT_EQ(r.size(), 1u + 1000u + 4u);
  EXPECT_EQ(r[0]["file_version"], "brain.Event:2");
  EXPECT_EQ(r[0]["writer"][0], "tfdebug");
  for (int step = 0; step < 1000; ++step) {
    const auto& e = r[static_cast<std::size_t>(1 + step)];
    EXPECT_EQ(e.value("step", 0), step);  // proto3 omits step 0
    EXPECT_EQ(e["values"][0]["tag"], "loss");
    EXPECT_EQ(e["values"][0]["simple_value"].get<double>(),
              static_cast<double>(static_cast<float>(1.0 / (1 + step))));
  }
  EXPECT_EQ(r[1001]["step"], -3);
  EXPECT_EQ(r[1001]["values"][0]["simple_value"], -4.5);
  const auto& h = r[1002]["values"][0]["histo"];
  EXPECT_EQ(r[1002]["step"], 7);
  EXPECT_EQ(h["min"], -2.0);
  EXPECT_EQ(h["max"], 3.0);
  EXPECT_EQ(h["num"], 5.0);  // the NaN is not binned
  EXPECT_EQ(h["sum"], 0.75);
  EXPECT_NEAR(h["sum_squares"].get<double>(), 4.0 + 0.25 + 0.0625 + 9.0, 1e-12);
  // The counts add up; each value lies below its bucket's limit and at or above the previous.
  const auto limits = h["bucket_limit"].get<std::vector<double>>();
  const auto counts = h["bucket"].get<std::vector<double>>();
  ASSERT_EQ(limits.size(), counts.size());
  double total = 0;
  for (double c : counts) total += c;
  EXPECT_EQ(total, 5.0);
  for (const double v : {-2.0, -0.5, 0.0, 0.25, 3.0}) {
    std::size_t i = 0;
    while (limits[i] <= v) ++i;
    EXPECT_GT(counts[i], 0) << v;
  }
  const auto& text = r[1003]["values"][0];
  EXPECT_EQ(text["plugin_name"], "text");
  EXPECT_EQ(text["tensor"]["dtype"], 7);
  EXPECT_EQ(text["tensor"]["string_val"][0], "**dead units** in `fc1`");
  const auto& image = r[1004]["values"][0]["image"];
  EXPECT_EQ(image["width"], 2);
  EXPECT_EQ(image["height"], 3);
  EXPECT_EQ(image["colorspace"], 3);
  EXPECT_EQ(image["png"], "89504e47");
  fs::remove_all(dir);
}

TEST(TensorBoardWriter, FlushMakesEventsReadable) {
  const fs::path dir = fresh_dir("flush");
  TensorBoardWriter tb(dir.string(), {std::chrono::hours(1), 1024});
  for (int i = 0; i < 10; ++i) tb.add_scalar("x", i, i);
  tb.flush();
  EXPECT_EQ(read_back(tb.path())["records"].size(), 11u);
  // A small queue forces the writer to drain while producers wait.
  for (int i = 0; i < 5000; ++i) tb.add_scalar("y", i, i);
  tb.close();
  EXPECT_EQ(read_back(tb.path())["records"].size(), 5011u);
  EXPECT_THROW(tb.add_scalar("z", 1, 1), Error);
  fs::remove_all(dir);
}

// A writer killed mid-run leaves only complete records (and at most one partial one at the end).
TEST(TensorBoardWriter, KilledProcessLeavesReadableRecords) {
  const fs::path dir = fresh_dir("killed");
  fs::create_directories(dir);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TensorBoardWriter tb(dir.string(), {std::chrono::milliseconds(1), 4096});
    for (std::int64_t step = 0;; ++step) {
      tb.add_scalar("loss", static_cast<double>(step), step);
      if (step % 100 == 0) {
        tb.flush();
        ::usleep(2000);  // keeps the file small enough to read back quickly
      }
    }
  }
  ::usleep(300 * 1000);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::vector<fs::path> files(fs::directory_iterator(dir), fs::directory_iterator{});
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json j = read_back(files[0].string());
  const auto& r = j["records"];
  ASSERT_GT(r.size(), 500u);  // it ran for a while
  for (std::size_t i = 1; i < r.size(); ++i)
    EXPECT_EQ(r[i].value("step", 0), static_cast<std::int64_t>(i - 1));
  fs::remove_all(dir);
}

TEST(TensorBoardWriter, UnwritableFolderIsAnError) {
  EXPECT_THROW(TensorBoardWriter("/proc/tfdebug-cannot-create"), Error);
}

}  // namespace
}  // namespace tfdebug
