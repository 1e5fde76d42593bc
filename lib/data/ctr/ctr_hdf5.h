#pragma once
// Internal to lib/data/ctr: the names inside a CTR shard (layout in ctr_shard.h) and the attribute helpers its
// writer and reader share.
#include <H5Cpp.h>

#include <string>
#include <vector>

namespace pstrain::data::ctr::names {

inline constexpr const char* kDense = "dense";
inline constexpr const char* kLabels = "labels";
inline constexpr const char* kIds = "ids";
inline constexpr const char* kValues = "values";
inline constexpr const char* kOffsets = "offsets";
inline constexpr const char* kAttrVersion = "ctr_format_version";
inline constexpr const char* kAttrDataset = "dataset";
inline constexpr const char* kAttrSource = "source";
inline constexpr const char* kAttrSampleCount = "sample_count";
inline constexpr const char* kAttrDenseNames = "dense_names";
inline constexpr const char* kAttrFieldNames = "field_names";
inline constexpr const char* kAttrLabeled = "labeled";
inline constexpr const char* kAttrMaxBag = "max_bag";

inline std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

inline std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  if (joined.empty()) return names;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = joined.find(',', begin);
    names.push_back(joined.substr(begin, comma - begin));
    if (comma == std::string::npos) return names;
    begin = comma + 1;
  }
}

inline std::string ids_path(const std::string& field, const char* what) {
  return std::string(kIds) + "/" + field + "/" + what;
}

}  // namespace pstrain::data::ctr::names
