// A checkpoint inspection (tfdebug::inspect::Inspection) in the formats other tools open: an
// Excel workbook, a CSV table, a TensorBoard run, an MLflow run. What `tfdebug inspect --xlsx,
// --csv, --tensorboard, --mlflow` write (docs/exports.md, "From a checkpoint").
//
//   tfdebug::inspect::Options options;
//   options.tensorflow_histograms = true;                      // for the TensorBoard histograms
//   const auto report = tfdebug::inspect::inspect({"model.safetensors"}, options);
//   tfdebug::write_inspection_xlsx("model.xlsx", report);
//   tfdebug::write_inspection_tensorboard("tb/model", report);
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tfdebug/inspect/inspection.hpp"

namespace tfdebug {

// Sheets Tensors, Layers (with a chart of RMS by layer) and Findings (rows coloured by severity).
void write_inspection_xlsx(const std::filesystem::path& path, const inspect::Inspection& inspection);
// One row per tensor: name,file,dtype,shape,params,mean,std,min,max,abs_max,zero,nan,pos_inf,neg_inf;
// numbers in shortest round-trip form, empty for NaN.
void write_inspection_csv(const std::filesystem::path& path, const inspect::Inspection& inspection);
// Per tensor a histogram of its values (from TensorReport::tensorflow_histogram: inspect with
// Options::tensorflow_histograms) and scalars std, abs_max, zero_fraction at step 0; the findings
// as Markdown text. Throws tfdebug::Error when the histograms were not counted.
void write_inspection_tensorboard(const std::filesystem::path& dir, const inspect::Inspection& inspection);
// A run of experiment "tfdebug inspect" in the MLflow file store `mlruns`: params (paths, tensors,
// parameters), metrics (finding counts at step 0; RMS and abs-max of each numbered layer with the
// layer as the step), the findings as tags, and `report_json` as the artifact report.json.
void write_inspection_mlflow(const std::filesystem::path& mlruns, const std::vector<std::string>& paths,
                             const inspect::Inspection& inspection, const std::string& report_json);

}  // namespace tfdebug
