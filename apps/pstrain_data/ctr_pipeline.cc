#include "ctr_pipeline.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "core/error.h"
#include "data/ctr/criteo.h"
#include "data/ctr/line_blocks.h"

namespace pstrain_data {

namespace fs = std::filesystem;
namespace ctr = pstrain::data::ctr;
using pstrain::cat;

namespace {

class FileStream : public TextStream {
 public:
  FileStream(const fs::path& path, std::size_t block_bytes) : path_(path), blocks_(path, block_bytes) {}
  std::optional<TextJob> next() override {
    auto text = std::make_shared<std::string>();
    const std::uint64_t first = blocks_.lines();
    if (!blocks_.next(*text)) return std::nullopt;
    return TextJob{first, [text] { return std::move(*text); }};
  }
  std::string name() const override { return path_.string(); }

 private:
  fs::path path_;
  ctr::LineBlocks blocks_;
};

struct Done {
  std::string text;
  ctr::CriteoBlock block;
};

ctr::Split split_of(const StreamPlan& plan, const LineOrderSplit& split, std::uint64_t line) {
  if (plan.fixed) return *plan.fixed;
  const std::uint64_t global = plan.global_base + line;
  return global < split.valid_begin  ? ctr::Split::kTrain
         : global < split.test_begin ? ctr::Split::kValid
                                     : ctr::Split::kTest;
}

// Hands one parsed block to the writer, as runs of samples bound for the same split.
void route(const StreamPlan& plan, const LineOrderSplit& split, const ctr::CriteoBlock& block,
           ctr::CtrFolderWriter& writer) {
  const std::size_t samples = block.columns.samples;
  for (std::size_t begin = 0; begin < samples;) {
    const ctr::Split where = split_of(plan, split, block.sample_lines[begin]);
    std::size_t end = begin + 1;
    while (end < samples && split_of(plan, split, block.sample_lines[end]) == where) ++end;
    writer.append(where, block.columns, begin, end - begin);
    begin = end;
  }
}

void account(const StreamPlan& plan, const Done& done, PipelineResult& result) {
  const ctr::CriteoBlock& block = done.block;
  result.lines += block.lines;
  result.bad_lines += block.bad_lines;
  for (const ctr::BadLine& bad : block.first_bad) {
    if (result.first_bad.size() < 5)
      result.first_bad.push_back(cat(plan.stream->name(), ":", bad.line, ": ", bad.reason));
  }
  for (std::size_t f = 0; f < result.fields.size(); ++f) {
    result.fields[f].add(block.columns, f, false);
    if (f < block.distinct.size()) result.fields[f].distinct.merge(block.distinct[f]);
  }
}

// Makes and parses one round of jobs at once, job 0 on this thread; the blocks in job order.
std::vector<Done> parse_round(const std::vector<TextJob>& jobs, const ctr::CriteoParseOptions& parse,
                              const PipelineOptions& options) {
  const auto work = [&](const TextJob& job) {
    Done done{job.make_text(), {}};
    if (options.parse) done.block = ctr::parse_criteo_block(done.text, job.first_line, parse);
    return done;
  };
  std::vector<std::future<Done>> others;
  for (std::size_t i = 1; i < jobs.size(); ++i) others.push_back(std::async(std::launch::async, work, jobs[i]));
  std::vector<Done> done;
  done.push_back(work(jobs[0]));
  for (std::future<Done>& other : others) done.push_back(other.get());  // rethrows a worker's error
  return done;
}

void run_stream(StreamPlan& plan, const LineOrderSplit& split, ctr::CtrFolderWriter* writer,
                const PipelineOptions& options, PipelineResult& result) {
  ctr::CriteoParseOptions parse;
  parse.file = plan.stream->name();
  parse.labeled = plan.labeled;
  parse.skip_bad = options.skip_bad;
  parse.count_distinct = options.count_distinct;
  // Round k's blocks are written (on_text, the shards) on their own thread while round k + 1 is read and parsed;
  // only that thread touches `writer` and `result` until it is joined.
  std::future<void> writing;
  for (;;) {
    std::vector<TextJob> jobs;
    while (jobs.size() < options.threads) {
      std::optional<TextJob> job = plan.stream->next();
      if (!job) break;
      jobs.push_back(std::move(*job));
    }
    if (jobs.empty()) break;
    auto done = std::make_shared<std::vector<Done>>(parse_round(jobs, parse, options));
    if (writing.valid()) writing.get();  // rethrows the writer's error
    writing = std::async(std::launch::async, [&plan, &split, writer, &options, &result, done] {
      for (const Done& one : *done) {
        if (options.on_text) options.on_text(one.text);
        if (!options.parse) continue;
        account(plan, one, result);
        if (writer != nullptr) route(plan, split, one.block, *writer);
      }
    });
  }
  if (writing.valid()) writing.get();
}

}  // namespace

std::unique_ptr<TextStream> file_stream(const fs::path& path, std::size_t block_bytes) {
  return std::make_unique<FileStream>(path, block_bytes);
}

PipelineResult run_ctr_pipeline(std::vector<StreamPlan>& streams, const LineOrderSplit& split,
                                ctr::CtrFolderWriter* writer, const PipelineOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PipelineResult result;
  result.fields.resize(ctr::kCriteoFields);
  for (StreamPlan& plan : streams) {
    if (writer != nullptr && plan.fixed && !plan.labeled) writer->set_unlabeled(*plan.fixed);
    run_stream(plan, split, writer, options, result);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::size_t ctr_threads(std::size_t requested) {
  if (requested > 0) return requested;
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
}

}  // namespace pstrain_data
