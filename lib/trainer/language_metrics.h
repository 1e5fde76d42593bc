#pragma once
// The figures of a language model (a model trained on token shards, data/README.md): perplexity per pass, the
// exponential of the mean loss per predicted word, for train, validation and test (train_perplexity,
// valid_perplexity, test_perplexity in metrics.jsonl), and the pass with the best validation perplexity, which
// OUTPUT/best-valid points to (Bengio et al. 2003 select by validation, as does the bar).
#include <filesystem>
#include <optional>

#include "report/metrics.h"
#include "run_common/data_plan.h"

namespace pstrain::trainer {

// Whether the job trains on token shards.
bool is_language_model(const run_common::DataPlan& data);

// Adds the perplexities to a metrics line (the validation one where there is a validation shard).
void add_perplexities(report::JsonLine& line, double train_loss, std::optional<double> valid_loss, double test_loss);

// The lead trainer, after writing pass `pass`'s folder and metrics line: when its validation perplexity is the
// lowest so far in OUTPUT/metrics.jsonl (this run's passes, also before a resume), points OUTPUT/best-valid
// at pass-NNNNN (replaced atomically) and returns true. Throws Error(kOutput) when the link cannot be written.
bool keep_best_valid(const std::filesystem::path& output, int pass, double valid_loss);

}  // namespace pstrain::trainer
