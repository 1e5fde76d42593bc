// pstrain-dryrun: a pstrain job's exchange, run under SimGrid's SMPI on a modeled cluster (built by the `smpi`
// preset; started by benchmarks/scale/pstrain-dryrun.sh, which also calibrates the profile and reads the log).
// Rank 0 prints the report: samples/s, the step breakdown, bytes in and out per server, memory per rank.
#include <mpi.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <vector>

#include "comm/layout.h"
#include "core/error.h"
#include "modes/traits.h"
#include "simulation/dryrun_ranks.h"

namespace po = boost::program_options;
using namespace pstrain;
using simulation::RankReport;

namespace {

struct Flags {
  simulation::DryRunJob job;
  std::string profile;
  int pservers = -1;
  int poll_us = 0;
  std::string mode;
};

Flags parse(int argc, char** argv) {
  Flags flags;
  po::options_description options("smpirun ... pstrain-dryrun --profile PROFILE [options]");
  options.add_options()("profile", po::value(&flags.profile)->required(),
                        "pstrain-calibrate's profile")("mode", po::value(&flags.mode)->default_value("sync"),
                                                       modes::mode_help()
                                                           .c_str())("num-pservers",
                                                                     po::value(&flags.pservers)->default_value(-1),
                                                                     "servers (ranks 0..P-1); -1: half the ranks")(
      "steps", po::value(&flags.job.steps)->default_value(50),
      "timed steps per trainer")("block-size", po::value(&flags.job.block_size)->default_value(8192),
                                 "parameter block size in floats")(
      "optimizer", po::value(&flags.job.optimizer)->default_value("sgd"),
      "sgd | momentum | adagrad | adam")("staleness", po::value(&flags.job.staleness)->default_value(3),
                                         "ssp: steps ahead of the slowest")(
      "poll-interval-us", po::value(&flags.poll_us)->default_value(0),
      "async, ssp: pause between polls")("overlap", po::value(&flags.job.overlap)->default_value(false),
                                         "async, ssp: pushes streamed during the backward pass")(
      "node-aggregation", po::value(&flags.job.node_aggregation)->default_value(false),
      "sync: the trainers of a host sum their gradients and one pushes (pstrain's --node-aggregation on)")(
      "geo-steps", po::value(&flags.job.steps_alone)->default_value(4),
      "geo: steps a trainer takes alone between meetings with the servers")(
      "warmup-steps", po::value(&flags.job.warmup_steps)->default_value(1),
      "untimed steps before the timed ones (start-up costs, such as the first collective's, paid once)");
  po::variables_map values;
  po::store(po::parse_command_line(argc, argv, options), values);
  po::notify(values);
  flags.job.profile = simulation::read_profile(flags.profile);
  flags.job.poll_interval = std::chrono::microseconds(flags.poll_us);
  flags.job.mode = modes::mode_named(flags.mode);
  if (flags.job.steps_alone < 1) throw Error(ExitCode::kUsage, "--geo-steps must be >= 1");
  if (flags.job.steps < 1) throw Error(ExitCode::kUsage, "--steps must be >= 1");
  if (flags.job.warmup_steps < 0) throw Error(ExitCode::kUsage, "--warmup-steps must be >= 0");
  return flags;
}

struct Summary {
  double mean(const std::vector<RankReport>& ranks, double RankReport::*field, bool servers) const {
    double sum = 0, count = 0;
    for (const RankReport& rank : ranks) {
      if ((rank.is_server != 0) != servers) continue;
      sum += rank.*field;
      count += 1;
    }
    return count ? sum / count : 0;
  }
  double max(const std::vector<RankReport>& ranks, double RankReport::*field, bool servers) const {
    double best = 0;
    for (const RankReport& rank : ranks)
      if ((rank.is_server != 0) == servers) best = std::max(best, rank.*field);
    return best;
  }
};

void print_report(const Flags& flags, const comm::WorldLayout& layout, const std::vector<RankReport>& ranks) {
  const Summary s;
  const double steps = static_cast<double>(flags.job.steps);
  const double elapsed = s.max(ranks, &RankReport::train_seconds, false);
  double samples = 0;
  for (const RankReport& rank : ranks) samples += rank.samples;
  std::printf(
      "dryrun model=%s mode=%s overlap=%d ranks=%d servers=%d trainers=%d batch=%zu steps=%lld "
      "warmup_steps=%lld parameters=%zu node_aggregation=%d\n",
      flags.job.profile.model.c_str(), modes::to_string(flags.job.mode).c_str(), flags.job.overlap ? 1 : 0,
      layout.world_size, layout.pservers, layout.trainers, flags.job.profile.batch,
      static_cast<long long>(flags.job.steps), static_cast<long long>(flags.job.warmup_steps),
      flags.job.profile.parameter_count(), flags.job.node_aggregation ? 1 : 0);
  std::printf("dryrun simulated_seconds=%.6f samples=%.0f samples_per_s=%.1f\n", elapsed, samples, samples / elapsed);
  const auto per_step = [&](double RankReport::*field) { return 1e3 * s.mean(ranks, field, false) / steps; };
  const double step_ms = 1e3 * s.mean(ranks, &RankReport::train_seconds, false) / steps;
  const double parts = per_step(&RankReport::compute_seconds) + per_step(&RankReport::push_seconds) +
                       per_step(&RankReport::sync_seconds) + per_step(&RankReport::pull_seconds) +
                       per_step(&RankReport::gate_seconds) + per_step(&RankReport::allreduce_seconds) +
                       per_step(&RankReport::update_seconds);
  std::printf(
      "dryrun step_ms=%.4f compute_ms=%.4f push_ms=%.4f sync_ms=%.4f pull_ms=%.4f gate_ms=%.4f "
      "allreduce_ms=%.4f update_ms=%.4f other_ms=%.4f staleness=%.2f\n",
      step_ms, per_step(&RankReport::compute_seconds), per_step(&RankReport::push_seconds),
      per_step(&RankReport::sync_seconds), per_step(&RankReport::pull_seconds), per_step(&RankReport::gate_seconds),
      per_step(&RankReport::allreduce_seconds), per_step(&RankReport::update_seconds), step_ms - parts,
      s.mean(ranks, &RankReport::mean_staleness, false));
  for (const simulation::ProfiledTable& table : flags.job.profile.tables) {
    if (layout.pservers == 0) break;  // all-reduce: the table is a dense parameter, as in pstrain
    // What the trainers fetch and push of the table's rows (and their ids): the servers' share of it is not in
    // their bytes_in/bytes_out below, which count the dense blocks.
    std::printf("dryrun table=%s rows=%llu width=%zu bytes_per_trainer_step=%.0f\n", table.parameter.c_str(),
                static_cast<unsigned long long>(table.rows), table.width,
                s.mean(ranks, &RankReport::table_bytes, false) / steps);
  }
  for (int rank = 0; rank < layout.pservers; ++rank) {
    const RankReport& server = ranks[rank];
    std::printf(
        "dryrun server=%d bytes_in=%.0f bytes_out=%.0f updates=%.0f busy_s=%.6f memory_bytes=%.0f push_slots=%.0f\n",
        rank, server.bytes_in, server.bytes_out, server.updates, server.busy_seconds, server.memory_bytes,
        server.push_slots);
  }
  std::printf("dryrun memory_server_bytes=%.0f memory_trainer_bytes=%.0f\n",
              s.max(ranks, &RankReport::memory_bytes, true), s.max(ranks, &RankReport::memory_bytes, false));
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  const Flags flags = parse(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const comm::WorldLayout layout =
      comm::make_layout(rank, size, flags.pservers, !modes::mode_traits(flags.job.mode).has_servers);
  const RankReport mine = simulation::run_dry_rank(flags.job, layout);
  static_assert(sizeof(RankReport) == RankReport::kFields * sizeof(double));
  std::vector<RankReport> all(rank == 0 ? size : 0);
  MPI_Gather(&mine, RankReport::kFields, MPI_DOUBLE, all.data(), RankReport::kFields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) print_report(flags, layout, all);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    run(argc, argv);
  } catch (const std::exception& error) {
    const auto* known = dynamic_cast<const Error*>(&error);
    std::fprintf(stderr, "pstrain-dryrun: error: %s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, known ? static_cast<int>(known->code()) : 1);
  }
  MPI_Finalize();
  return 0;
}
