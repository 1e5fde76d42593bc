#pragma once
// The Criteo Display Advertising format (Kaggle 2014, Terabyte 2015): one sample per line, tab-separated: the
// label (0 or 1), 13 integer features I1 ... I13, 26 categorical features C1 ... C26 as hexadecimal ids (Criteo's
// are 32-bit: 8 hex digits). Any feature may be empty. A line of 39 columns has no label (Criteo's own test file),
// for prediction. Integers may be negative (I2 is).
//
// Parsed as:
//  - dense feature j = log(1 + max(I_j, 0)), 0 when empty: the transform of the CTR literature (DLRM's
//    preprocessing, FuxiCTR, DeepCTR), which turns Criteo's heavy-tailed counts into values of order 1;
//  - categorical field C_k = a bag of the raw ids the column spells, read as 64-bit integers (never hashed, never
//    truncated): empty column = empty bag. An extension for multi-hot fields (the synthetic generator writes
//    them): several ids separated by ',' in one column; Criteo's own files never do. Up to 16 hex digits.
// A malformed line (wrong column count, a label other than 0/1, an integer that does not parse or overflows 64
// bits, a categorical value that is not hex) is an error naming the file, the line and the column, or, with
// skip_bad, is left out and counted.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/ctr/ctr_shard.h"
#include "data/ctr/hyperloglog.h"

namespace pstrain::data::ctr {

inline constexpr std::size_t kCriteoDense = 13;
inline constexpr std::size_t kCriteoFields = 26;
inline constexpr std::size_t kCriteoLabeledColumns = 1 + kCriteoDense + kCriteoFields;  // 40

// dataset "criteo" (or "synthetic-ctr"), I1 ... I13, C1 ... C26.
CtrLayout criteo_layout(const std::string& dataset);

// log(1 + max(x, 0)).
float criteo_dense_value(std::int64_t x);

struct BadLine {
  std::uint64_t line = 0;  // 1-based, in its file
  std::string reason;
};

// Lines of one block, parsed.
struct CriteoBlock {
  CtrColumns columns{kCriteoFields};
  std::vector<std::uint64_t> sample_lines;  // 0-based line index in the file of each sample
  std::uint64_t lines = 0;                  // lines in the block, bad ones included
  std::uint64_t bad_lines = 0;
  std::vector<BadLine> first_bad;     // the first few
  std::vector<HyperLogLog> distinct;  // per field: the ids of this block's samples
};

struct CriteoParseOptions {
  std::string file;     // for messages
  bool labeled = true;  // 40 columns; false: 39
  bool skip_bad = false;
  bool count_distinct = true;
};

// Parses the lines of `text` (each ends with '\n' but perhaps the last; a '\r' before it is dropped), the first
// being line `first_line` (0-based) of the file. Throws Error(kInputData) "FILE:LINE: ..." on a malformed line
// unless skip_bad.
CriteoBlock parse_criteo_block(std::string_view text, std::uint64_t first_line, const CriteoParseOptions& options);

// Whether a file whose first line is `line` has labels: 40 columns yes, 39 no; Error(kInputData) otherwise.
bool criteo_line_labeled(std::string_view line, const std::string& file);

}  // namespace pstrain::data::ctr
