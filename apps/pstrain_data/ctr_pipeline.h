#pragma once
// The streaming conversion that pstrain-data criteo and synthetic-ctr share: text in the Criteo format, block by
// block (a few MB of whole lines), parsed on several threads, routed in line order to the train, valid and test
// shards. Memory is bounded by 2 x `threads` blocks whatever the input's size; the shards' content does not depend on
// the thread count (blocks are parsed apart and written in order).
//
// Protocol of one round: the main thread takes up to `threads` jobs from the stream (a file's next blocks, read
// serially; or the generator's next line ranges) and runs them at once (job 0 on itself); a writer thread then
// hands each block, in job order, to on_text and the shards, while the main thread goes on with the next round.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/ctr/ctr_folder_writer.h"

namespace pstrain_data {

// A block of lines to produce: line first_line (0-based, in its stream) onwards, made by make_text (on a worker).
struct TextJob {
  std::uint64_t first_line = 0;
  std::function<std::string()> make_text;
};

// One input: its jobs in order (next() is called on the main thread only).
class TextStream {
 public:
  virtual ~TextStream() = default;
  virtual std::optional<TextJob> next() = 0;
  virtual std::string name() const = 0;  // the file, as messages name it
};

// A .txt or .gz file, read in blocks of `block_bytes`.
std::unique_ptr<TextStream> file_stream(const std::filesystem::path& path, std::size_t block_bytes);

struct StreamPlan {
  std::unique_ptr<TextStream> stream;
  bool labeled = true;
  std::optional<pstrain::data::ctr::Split> fixed;  // every line to this split (--test-input, --valid-input)
  std::uint64_t global_base = 0;                   // otherwise: lines of the main inputs before this one
};

// The split of the main inputs by line order: global line index < valid_begin: train; < test_begin: valid;
// the rest: test.
struct LineOrderSplit {
  std::uint64_t valid_begin = 0, test_begin = 0;
};

struct PipelineOptions {
  std::size_t threads = 1;
  bool skip_bad = false;
  bool count_distinct = true;
  bool parse = true;                                // false: only on_text (synthetic-ctr --text-output alone)
  std::function<void(const std::string&)> on_text;  // each block's text, in order
};

struct PipelineResult {
  std::uint64_t lines = 0, bad_lines = 0;
  std::vector<std::string> first_bad;  // "FILE:LINE: reason"
  std::vector<pstrain::data::ctr::FieldStats> fields;
  double seconds = 0;
};

PipelineResult run_ctr_pipeline(std::vector<StreamPlan>& streams, const LineOrderSplit& split,
                                pstrain::data::ctr::CtrFolderWriter* writer, const PipelineOptions& options);

// The thread count to use: `requested`, or the machine's cores (at most 16) when 0.
std::size_t ctr_threads(std::size_t requested);

}  // namespace pstrain_data
