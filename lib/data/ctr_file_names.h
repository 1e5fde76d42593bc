#pragma once
// The files a CTR conversion (data/ctr/ctr_shard.h) writes beside the shards, which the data folder's MANIFEST
// lists and pstrain-data's refusal to overwrite a conversion recognises (shard_manifest.cc, shard_folder.cc).
namespace pstrain::data {

inline constexpr const char* kCtrFieldsFileName = "ctr_fields.tsv";      // per field: distinct ids, bags
inline constexpr const char* kCtrReportFileName = "ctr_conversion.txt";  // inputs, split, transform, bad lines

}  // namespace pstrain::data
