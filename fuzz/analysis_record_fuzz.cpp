// libFuzzer: a saved analysis (RUN_DIR/analyses/NNNN-KIND.json, tfdebug/export/analysis.hpp) read
// back for a run's HTML page, on arbitrary bytes. The reader never throws: a record it keeps has a
// known kind, an object result and PNG images in base64; one it refuses is left out with exactly
// one note, one line.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "html_data.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tfdebug_fuzz::InputFile input("analyses/0001-explain.json");
  const auto& path = input.write(data, size);
  const std::filesystem::path run_dir = path.parent_path().parent_path();
  nlohmann::json notes = nlohmann::json::array();
  const nlohmann::json records = tfdebug::detail::html_analyses(run_dir, 20, notes);
  if (records.size() + notes.size() != 1) std::abort();
  for (const nlohmann::json& note : notes) {
    if (!note.is_string() || note.get<std::string>().find('\n') != std::string::npos) std::abort();
  }
  for (const nlohmann::json& r : records) {
    const std::string kind = r.at("kind").get<std::string>();
    if (kind != "explain" && kind != "attack" && kind != "robust") std::abort();
    if (!r.at("result").is_object() || !r.at("images").is_array()) std::abort();
    for (const nlohmann::json& image : r.at("images")) {
      const std::string& png = image.at("png").get_ref<const std::string&>();
      if (png.rfind("iVBORw0KGg", 0) != 0) std::abort();  // base64 of PNG's signature (its first 60 bits)
      if (png.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") !=
          std::string::npos)
        std::abort();
    }
  }
  return 0;
}
