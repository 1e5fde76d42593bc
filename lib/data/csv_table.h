#pragma once
// Reader for labelled samples in CSV: one sample per line, comma-separated numbers, one column of them an integer
// class label and the others the features. The first line is a header when any of its fields is not a number
// (then the label column may be named). Blank lines are skipped; a line with another field count, a feature that is
// not a finite number, or a label that is not a whole number >= 0 is refused with FILE:LINE.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::data {

struct CsvSamples {
  std::size_t feature_count = 0;     // columns minus the label column
  std::vector<float> features;       // row-major, feature_count per sample, as written (no scaling)
  std::vector<std::int32_t> labels;  // one per sample
  std::vector<std::string> header;   // the header's fields, empty when the file has none
  std::size_t label_index = 0;       // which column held the label (0-based)
};

// `label_column`: "last" (the default), "first", a column's 0-based index, or a name from the header.
// Throws Error(kInputData) naming FILE:LINE for bad content, Error(kUsage) for a label column the file lacks.
CsvSamples read_csv_samples(const std::filesystem::path& path, const std::string& label_column = "last");

}  // namespace pstrain::data
