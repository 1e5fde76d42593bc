#include "run_common/table_layout.h"

#include <filesystem>
#include <limits>
#include <string>

#include "core/error.h"
#include "data/ctr/ctr_fields.h"
#include "optim/optimizer.h"

namespace pstrain::run_common {

namespace {

bool tables_go_by_rows(const JobContext& job) {
  if (job.layout.pservers == 0 || job.layout.world_size == 1) return false;
  return job.config.table_exchange != "dense" && job.mode().has_servers;
}

// How many batches' rows a trainer holds at once: its batch's, or, where it steps alone between meetings (--mode
// geo), those of every batch since the last meeting, whose changes it pushes at the next (ps/table_client.h).
std::size_t batches_held(const JobContext& job) {
  return job.mode().trainers_step_alone ? static_cast<std::size_t>(job.config.steps_alone) : 1;
}

// All-reduce: every trainer holds the tables whole and sums their whole gradient every step, so tables of the
// size the servers hold by rows are refused there, naming the modes that take them.
void check_replicated_tables(const JobContext& job) {
  if (job.mode().has_servers || job.layout.trainers < 2) return;
  std::uint64_t floats = 0;
  for (const nn::ParameterInfo& parameter : job.model.parameters) {
    if (parameter.row_table) floats += parameter.size;
  }
  if (floats <= kLargestReplicatedTableFloats) return;
  throw Error(ExitCode::kUsage,
              cat("--mode ", modes::to_string(job.config.mode), ": the model's tables hold ", floats, " floats (",
                  floats * sizeof(float) >> 20,
                  " MiB), which every trainer would hold whole and all-reduce densely "
                  "every step; this mode takes tables of up to ",
                  kLargestReplicatedTableFloats * sizeof(float) >> 20,
                  " MiB in all. Train it with --mode sync, async or ssp, whose servers hold the tables by rows"));
}

// Row-wise Adagrad is a rule for the rows the servers hold (optim/row_optimizer.h): a run that holds its tables
// whole, a model without tables, or a mode whose trainers move the rows themselves has no rows for it, and is told
// what does.
void check_row_wise_optimizer(const JobContext& job, const ps::TablePlan& tables) {
  const bool servers_update_rows = !tables.empty() && !job.mode().trainers_step_alone;
  if (job.config.optimizer.kind != optim::kRowwiseAdagrad || servers_update_rows) return;
  const std::string mode = cat("--mode ", modes::to_string(job.config.mode));
  const std::string why = job.layout.world_size == 1 ? std::string("a run on one rank holds the tables whole")
                          : job.layout.pservers == 0 ? cat(mode, " holds the tables whole on every trainer")
                          : job.config.table_exchange == "dense"
                              ? std::string("--table-exchange dense ships the tables whole")
                          : tables.empty() ? std::string("the model has no table the servers can hold by rows")
                                           : cat(mode, "'s trainers move the rows they hold between meetings by SGD");
  throw Error(ExitCode::kUsage, cat("--optimizer ", optim::kRowwiseAdagrad,
                                    " keeps one accumulator per row of the tables the servers hold by rows, and ", why,
                                    ": use --optimizer adagrad, or --mode sync, async or ssp with servers"));
}

// Why this run's tables cannot be keyed (--table-keys exact keys the tables the servers hold by rows).
std::string why_no_keyed_tables(const JobContext& job) {
  if (job.layout.world_size == 1) return "a run on one rank holds its tables whole";
  if (job.layout.pservers == 0) return "this run has no servers";
  if (job.config.table_exchange == "dense") return "--table-exchange dense ships the tables whole";
  return "the model has no table the servers hold by rows";
}

// The distinct ids of a table's fields as the data folder records them (ctr_fields.tsv), or none known (the
// largest count): a cap of at least these holds any batch's ids.
std::uint64_t distinct_ids(const JobContext& job, const ps::TableSpec& table) {
  const auto& fields = job.data.meta.categorical;
  if (!fields || !std::filesystem::exists(job.config.data_dir / "ctr_fields.tsv")) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  const std::vector<std::uint64_t> distinct = data::ctr::read_distinct_ids(job.config.data_dir, fields->field_names);
  std::uint64_t sum = 0;
  for (const std::size_t field : table.fields) sum += distinct.at(field);
  return sum;
}

// --table-keys exact: every table keyed by the raw id, its --table-rows (its `rows`) the cap on rows it holds,
// dealt over the servers (a share each, plus the default row). Refuses a table of single ids and a cap that one
// batch's lookups could pass.
ps::TablePlan key_tables(const JobContext& job, const ps::TablePlan& hashed, std::size_t batch) {
  if (hashed.empty()) {
    throw Error(ExitCode::kUsage, cat("--table-keys exact keys the tables the servers hold by rows, and ",
                                      why_no_keyed_tables(job), ": run it with servers (--num-pservers) and trainers"));
  }
  const auto servers = static_cast<std::uint64_t>(job.layout.pservers);
  std::vector<ps::TableSpec> tables;
  for (std::size_t t = 0; t < hashed.size(); ++t) {
    ps::TableSpec table = hashed.table(t);
    if (!table.reads_bags()) {
      throw Error(ExitCode::kUsage, cat("--table-keys exact keys tables of categorical ids (embedding_bag: dlrm, "
                                        "deepfm); table ",
                                        table.name, " reads the data's features as row numbers"));
    }
    // The servers meet every trainer's sightings of a sync step at once (one push's in async): a meeting never
    // evicts a row seen in it, so a cap below its ids would refuse some of them every step.
    const std::uint64_t pushes =
        job.mode().server_loop == modes::ServerLoop::kCommonSteps ? static_cast<std::uint64_t>(job.layout.trainers) : 1;
    const std::uint64_t lookups = pushes * batch * table.ids_per_sample;
    if (table.rows < lookups && table.rows < distinct_ids(job, table)) {
      throw Error(ExitCode::kUsage,
                  cat("--table-keys exact: table ", table.name, " may hold ", table.rows,
                      " rows (--table-rows, or the model file's rows=), fewer than the distinct ids one meeting of "
                      "the servers can see (",
                      pushes, " pushes x ", batch, " samples x ", table.ids_per_sample, " ids = ", lookups,
                      "): raise --table-rows or lower --batch-size"));
    }
    std::size_t parameter = 0;
    while (job.model.parameters.at(parameter).name != table.name) ++parameter;
    const config::TableKeys& keys = job.config.table_keys;
    table.keys = {(table.rows + servers - 1) / servers + 1,
                  job.model.parameter_init.at(parameter).limit,
                  keys.admit_after,
                  keys.admit_probability,
                  keys.ttl_steps,
                  job.config.seed};
    tables.push_back(std::move(table));
  }
  return ps::TablePlan(std::move(tables), job.layout.pservers, batch);
}

}  // namespace

ps::TablePlan plan_row_tables(const JobContext& job) {
  check_replicated_tables(job);
  ps::TablePlan tables;
  if (tables_go_by_rows(job)) {
    const auto rule =
        job.config.table_exchange == "auto" ? ps::ComputedIdTables::kStayDense : ps::ComputedIdTables::kRefuse;
    const auto& fields = job.data.meta.categorical;
    const std::span<const std::uint64_t> longest_bags =
        fields ? std::span(fields->max_bag) : std::span<const std::uint64_t>();
    tables = ps::plan_model_tables(job.model, job.layout.pservers, job.config.batch_size * batches_held(job),
                                   longest_bags, rule, "use --table-exchange dense");
  }
  if (job.config.table_keys.exact) tables = key_tables(job, tables, job.config.batch_size * batches_held(job));
  check_row_wise_optimizer(job, tables);
  return tables;
}

ps::ShardPlan server_blocks(const JobContext& job) {
  std::vector<std::size_t> sizes;
  for (const nn::ParameterInfo& parameter : job.model.parameters) sizes.push_back(parameter.size);
  return ps::ShardPlan(sizes, job.layout.pservers, job.config.block_size, ps::held_by_rows(job.model, job.tables));
}

std::vector<ps::RowCache> row_caches(const JobContext& job, std::size_t max_batch) {
  return ps::row_caches(job.tables, job.dense_count, max_batch * batches_held(job));
}

nn::ModelPlan trainer_model_plan(const JobContext& job, std::size_t max_batch) {
  nn::ModelPlan plan = ps::cut_model_plan(job.model, job.tables, max_batch * batches_held(job));
  if (job.tables.empty()) return plan;
  const ps::RowCache last = row_caches(job, max_batch).back();  // placed after job.dense_count
  PSTRAIN_ASSERT(plan.parameter_count == last.offset + last.rows * job.tables.table(job.tables.size() - 1).width,
                 "the trainer's model has ", plan.parameter_count, " floats, the job's dense layout ", job.dense_count,
                 " and the row caches disagree");
  return plan;
}

}  // namespace pstrain::run_common
