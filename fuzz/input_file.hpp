// The run-directory readers take a path, not bytes: InputFile writes each fuzz input to one file
// of this process's own temporary folder (a per-process name, so that parallel jobs of one
// target do not read each other's inputs), and removes the folder when the process exits.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tfdebug_fuzz {

class InputFile {
 public:
  explicit InputFile(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / ("tfdebug-fuzz-" + std::to_string(::getpid()))),
        path_(dir_ / name) {
    std::filesystem::create_directories(path_.parent_path());
  }
  ~InputFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Replaces the file's contents with `data`; aborts when it cannot (a broken harness, not a find).
  const std::filesystem::path& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    if (file == nullptr) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
    if (std::fclose(file) != 0) std::abort();
    return path_;
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

}  // namespace tfdebug_fuzz
