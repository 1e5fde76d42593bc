#include "train/trainer_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "checkpoint/pass_folder.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/counter_random.h"
#include "core/files.h"
#include "core/log.h"
#include "data/augment.h"
#include "report/event_writer.h"
#include "report/progress_line.h"
#include "train/metrics.h"
#include "train/model_factory.h"
#include "train/model_state.h"

namespace pstrain::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Per-pass numbers one trainer measured; summed (or maxed) over trainers at the end of the pass.
struct PassTotals {
  double loss_sum = 0;
  double samples = 0;
  double correct = 0;
  double compute_seconds = 0;
  double push_seconds = 0;
  double sync_seconds = 0;
  double pull_seconds = 0;
  double gate_seconds = 0;  // ssp
  double allreduce_seconds = 0;
  double update_seconds = 0;  // allreduce: the trainer's optimizer
  double copy_seconds = 0;    // device <-> host copies of gradients and parameters (GPU trainers)
  double steps = 0;
  double lead_count = 0;    // ssp: clock leads recorded, their sum and (reduced separately) their maximum
  double lead_sum = 0;
};

// Per pass, over all trainers: samples never trained or trained more than once (both 0 when the data plan and
// the dispatcher are right), and chunks each trainer took (dynamic dispatch).
struct Coverage {
  std::int64_t missing = 0;
  std::int64_t repeated = 0;
  std::vector<std::int64_t> chunks_per_trainer;
};

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
};

Evaluation evaluate(nn::Model& model, const data::Samples& test, std::size_t batch_size) {
  const std::size_t width = test.meta.sample_size();
  const std::size_t count = test.labels.size();
  double loss_sum = 0;
  std::size_t correct = 0;
  for (std::size_t start = 0; start < count; start += batch_size) {
    const std::size_t n = std::min(batch_size, count - start);
    const nn::BatchResult result =
        model.evaluate_batch({test.features.data() + start * width, n * width}, {test.labels.data() + start, n}, n);
    loss_sum += result.loss_sum;
    correct += result.correct;
  }
  return {loss_sum / static_cast<double>(count), static_cast<double>(correct) / static_cast<double>(count)};
}

// The learning rate the schedule gives after `global_step` steps of the lead trainer (async: every trainer's
// push is an update, about as many as the lead's steps times the trainers).
double learning_rate(const JobContext& job, std::int64_t global_step) {
  const bool one_update_per_step = job.sync() || job.layout.pservers == 0;
  const std::int64_t updates = one_update_per_step ? global_step : global_step * job.layout.trainers;
  return optim::scheduled_learning_rate(job.config.optimizer, static_cast<std::uint64_t>(std::max<std::int64_t>(updates, 1)));
}

// Copies samples into one contiguous batch; with --augment each image is augmented on the way, by a pure function
// of (seed, pass, sample id), so a resumed or re-laid-out run sees exactly the same images.
class BatchAssembler {
 public:
  BatchAssembler(const data::Samples& samples, std::size_t batch_size, const data::AugmentSpec& augment,
                 std::uint64_t seed)
      : samples_(samples),
        width_(samples.meta.sample_size()),
        augment_(augment),
        shape_(data::check_augmentable(augment, samples.meta)),
        seed_(seed),
        features_(batch_size * width_),
        labels_(batch_size) {}

  // Copies samples order[first, first + n) into one contiguous batch; `ids` maps a local sample to its id.
  void assemble(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t n,
                const std::vector<std::uint64_t>& ids, int pass) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t sample = order[first + i];
      const float* source = samples_.features.data() + sample * width_;
      float* target = features_.data() + i * width_;
      if (augment_.enabled()) {
        data::augment_image(augment_, shape_, seed_, static_cast<std::uint64_t>(pass), ids[sample], {source, width_},
                            {target, width_});
      } else {
        std::memcpy(target, source, width_ * sizeof(float));
      }
      labels_[i] = samples_.labels[sample];
    }
  }
  std::span<const float> features(std::size_t n) const { return {features_.data(), n * width_}; }
  std::span<const std::int32_t> labels(std::size_t n) const { return {labels_.data(), n}; }

 private:
  const data::Samples& samples_;
  std::size_t width_;
  data::AugmentSpec augment_;
  data::ImageShape shape_;
  std::uint64_t seed_;
  std::vector<float> features_;
  std::vector<std::int32_t> labels_;
};

// OUTPUT/pass-NNNNN/parameters.h5: the parameters, and the non-trainable state after them under its own names
// ("bn1.running_mean"), so that a pass folder is the whole model.
void write_pass_folder(const JobContext& job, int pass, std::span<const float> parameters,
                       std::span<const float> state) {
  std::vector<nn::ParameterInfo> layout = job.model.parameters;
  std::vector<float> flat;
  if (!state.empty()) {
    for (nn::ParameterInfo info : job.model.state) {
      info.offset += job.model.parameter_count;
      layout.push_back(std::move(info));
    }
    flat.assign(parameters.begin(), parameters.end());
    flat.insert(flat.end(), state.begin(), state.end());
    parameters = flat;
  }
  checkpoint::write_pass_folder(job.config.output_dir, pass, layout, parameters, !job.config.resume.empty());
}

// `samples_before` counts the samples of this pass trained before the checkpoint the run resumed from, so that
// samples + samples_before_resume is the pass's whole sample count.
void report_pass(const JobContext& job, int pass, const PassTotals& totals, double pass_seconds,
                 const ps::StalenessStats& staleness, const Evaluation& evaluation, std::int64_t samples_before,
                 double lead_max, const Coverage& coverage, report::EventWriter* board, std::int64_t global_step) {
  const double steps = std::max(totals.steps, 1.0);
  const double train_loss = totals.loss_sum / std::max(totals.samples, 1.0);
  const double samples_per_sec = totals.samples / std::max(pass_seconds, 1e-9);
  const int trainers = job.layout.trainers;
  // Per-step times are averaged over trainers and steps.
  const auto per_step = [&](double seconds) { return seconds / steps; };
  log_info("pass ", pass, ": train_loss ", train_loss, " train_accuracy ", totals.correct / std::max(totals.samples, 1.0),
           " test_loss ", evaluation.loss, " test_accuracy ", evaluation.accuracy, " samples/s ",
           static_cast<long long>(samples_per_sec), " elapsed ", job.elapsed_seconds(), "s",
           job.layout.pservers > 0 ? cat(" | per step: compute ", per_step(totals.compute_seconds) * 1e3,
                                         " ms push ", per_step(totals.push_seconds) * 1e3, " ms barrier ",
                                         per_step(totals.sync_seconds) * 1e3, " ms pull ",
                                         per_step(totals.pull_seconds) * 1e3, " ms | staleness mean ",
                                         staleness.mean(), " max ", staleness.max)
           : job.config.mode == Mode::kAllreduce && trainers > 1
               ? cat(" | per step: compute ", per_step(totals.compute_seconds) * 1e3, " ms all-reduce ",
                     per_step(totals.allreduce_seconds) * 1e3, " ms update ", per_step(totals.update_seconds) * 1e3,
                     " ms")
               : std::string());
  JsonLine line;
  line.add("pass", std::int64_t{pass})
      .add("train_loss", train_loss)
      .add("train_accuracy", totals.correct / std::max(totals.samples, 1.0))
      .add("test_loss", evaluation.loss)
      .add("test_accuracy", evaluation.accuracy)
      .add("samples_per_sec", samples_per_sec)
      .add("pass_seconds", pass_seconds)
      .add("elapsed_s", job.elapsed_seconds())
      .add("mode", job.layout.world_size == 1 ? std::string("local") : to_string(job.config.mode))
      .add("device", job.config.device)
      .add("model", job.config.model)
      .add("trainers", std::int64_t{trainers})
      .add("pservers", std::int64_t{job.layout.pservers})
      .add("batch_size", static_cast<std::int64_t>(job.config.batch_size))
      .add("samples", static_cast<std::int64_t>(totals.samples))
      .add("samples_before_resume", samples_before)
      .add("steps_per_trainer", totals.steps / trainers)
      .add("compute_s_per_step", per_step(totals.compute_seconds))
      .add("push_s_per_step", per_step(totals.push_seconds))
      .add("barrier_s_per_step", per_step(totals.sync_seconds))
      .add("pull_s_per_step", per_step(totals.pull_seconds))
      .add("allreduce_s_per_step", per_step(totals.allreduce_seconds))
      .add("update_s_per_step", per_step(totals.update_seconds))
      .add("copy_s_per_step", per_step(totals.copy_seconds))
      .add("staleness_mean", staleness.mean())
      .add("staleness_p50", staleness.percentile(0.5))
      .add("staleness_p95", staleness.percentile(0.95))
      .add("staleness_max", staleness.max)
      .add("samples_missing", coverage.missing)
      .add("samples_repeated", coverage.repeated)
      .add("dispatch", std::string(job.config.dynamic_dispatch ? "dynamic" : "static"))
      .add_array("chunks_per_trainer", coverage.chunks_per_trainer)
      .add("ssp_bound", static_cast<std::int64_t>(job.config.mode == Mode::kSsp ? job.config.staleness : -1))
      .add("ssp_lead_mean", totals.lead_count > 0 ? totals.lead_sum / totals.lead_count : 0.0)
      .add("ssp_lead_max", lead_max)
      .add("ssp_gate_s_per_step", per_step(totals.gate_seconds))
      .add_array("staleness_histogram",
                 std::vector<std::int64_t>(staleness.histogram.begin(),
                                           staleness.histogram.begin() + std::min<std::int64_t>(staleness.max + 1,
                                                                                                 ps::StalenessStats::kBuckets)));
  append_line_durably(job.config.output_dir / "metrics.jsonl", line.str());
  if (board != nullptr) {  // the main figures again, for TensorBoard, at step = pass
    board->write_scalars(pass, {{"pass/train_loss", train_loss},
                                {"pass/test_loss", evaluation.loss},
                                {"pass/train_accuracy", totals.correct / std::max(totals.samples, 1.0)},
                                {"pass/test_accuracy", evaluation.accuracy},
                                {"pass/samples_per_sec", samples_per_sec},
                                {"pass/pass_seconds", pass_seconds},
                                {"pass/compute_s_per_step", per_step(totals.compute_seconds)},
                                {"pass/push_s_per_step", per_step(totals.push_seconds)},
                                {"pass/barrier_s_per_step", per_step(totals.sync_seconds)},
                                {"pass/pull_s_per_step", per_step(totals.pull_seconds)},
                                {"pass/allreduce_s_per_step", per_step(totals.allreduce_seconds)},
                                {"pass/update_s_per_step", per_step(totals.update_seconds)},
                                {"pass/copy_s_per_step", per_step(totals.copy_seconds)},
                                {"pass/ssp_gate_s_per_step", per_step(totals.gate_seconds)},
                                {"pass/staleness_mean", staleness.mean()},
                                {"pass/staleness_p95", static_cast<double>(staleness.percentile(0.95))},
                                {"pass/staleness_max", static_cast<double>(staleness.max)},
                                {"pass/learning_rate", learning_rate(job, global_step)}});
  }
}

}  // namespace

bool run_trainer(const JobContext& job, compute::Backend& backend, nn::Model& model, ps::ParameterExchange& exchange, MPI_Comm trainers,
                 const data::Samples& samples, const std::optional<data::Samples>& test, const Progress& progress,
                 const CheckpointSupport& checkpoints, const DataDispatch& dispatch) {
  const TrainConfig& config = job.config;
  const int trainer = job.layout.trainer_index;
  const std::size_t sample_count = samples.labels.size();

  // The vectors the exchange works on. On a host backend they are the model's own buffers (no copy per
  // step); otherwise host mirrors copied to and from the device, in the backend's staging memory (page-locked
  // on a GPU: the copies run at full speed and the one-sided push/pull reads and writes them directly).
  const bool in_place = !model.host_parameters().empty();
  const std::size_t mirror_size = in_place ? 0 : model.parameter_count();
  const compute::StagingBuffer<float> parameter_mirror(backend, mirror_size);
  const compute::StagingBuffer<float> gradient_mirror(backend, mirror_size);
  const std::vector<float> no_gradient(model.parameter_count(), 0.0f);  // a sync step without samples
  const std::span<float> parameters = in_place ? model.host_parameters() : parameter_mirror.span();
  const std::span<const float> gradient = in_place ? model.host_gradients() : gradient_mirror.span();
  const auto publish_parameters = [&] {
    if (in_place) return;
    model.set_parameters(parameters);
    // From staging memory the copy may still be in flight, and the exchange writes `parameters` next (a pull
    // at the end of the pass). Nothing is lost by waiting: the next batch needs these parameters anyway.
    backend.synchronize();
  };
  exchange.start(parameters);
  publish_parameters();
  BatchAssembler batch(samples, config.batch_size, config.augment, config.seed);
  // TensorBoard: the lead trainer writes what it reports (every pass, and every --log-every-steps steps).
  std::optional<report::EventWriter> board;
  if (config.tensorboard && job.layout.is_lead_trainer()) board.emplace(config.output_dir / "tensorboard");
  report::ProgressLine progress_line(job.layout.is_lead_trainer() ? config.progress_every_s : 0.0);

  // Sample ids of this trainer's samples (its shards in index order, as load_trainer_samples concatenates them),
  // and which of them are done in the pass in progress: the part of a checkpoint this trainer owns.
  std::vector<std::uint64_t> sample_ids;
  for (const std::size_t shard : job.data.trainer_shards[trainer]) {
    for (std::uint64_t sample = 0; sample < job.data.shard_samples[shard]; ++sample) {
      sample_ids.push_back(progress.samples().id(shard, sample));
    }
  }
  PSTRAIN_ASSERT(sample_ids.size() == sample_count, sample_ids.size(), " ids for ", sample_count, " samples");
  std::vector<std::uint8_t> consumed = progress.consumed_in_first_pass();

  ModelStateAverage model_state(model, trainers);
  // A checkpoint of the state after `step_in_pass` steps of `pass` (collective with the servers in sync mode).
  const auto save = [&](int pass, std::int64_t step_in_pass, std::int64_t global_step) {
    model_state.average();
    std::optional<ps::SliceState> slice;
    optim::Optimizer* optimizer = exchange.own_optimizer();  // local and all-reduce trainers hold the whole state
    if (optimizer != nullptr && job.layout.world_rank < checkpoints.plan->shards()) {  // ... one of them gives it
      slice.emplace();
      slice->parameters.assign(parameters.begin(), parameters.end());
      for (const auto& [name, values] : optimizer->state()) slice->optimizer.emplace_back(name, *values);
      slice->optimizer_steps = optimizer->steps_taken();
    }
    std::vector<std::uint8_t> mine(consumed.size(), 0);  // only this trainer's own samples
    for (const std::uint64_t id : sample_ids) mine[id] = consumed[id];
    checkpoint::TrainingState state;
    state.pass = pass;
    state.step_in_pass = step_in_pass;
    state.global_step = global_step;
    state.seed = config.seed;
    checkpoints.writer->save(*checkpoints.plan, slice ? &*slice : nullptr, mine, state,
                             job.layout.is_lead_trainer() ? model_state.state() : std::span<const float>());
  };

  // After an async checkpoint: the request as rank 0 (server 0) saw it once every trainer had quiesced, so that
  // everyone agrees on "stop"; then rank 0 clears it and nobody goes on before that.
  const auto finish_async_checkpoint = [] {
    const comm::Watchdog::Wait wait("the end of an async checkpoint");
    std::int64_t agreed = 0;
    MPI_CHECK(MPI_Bcast(&agreed, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    return static_cast<int>(agreed);
  };

  std::int64_t global_step = progress.first_global_step();
  for (int pass = progress.first_pass(); pass < config.passes; ++pass) {
    const auto pass_start = Clock::now();
    // Dynamic dispatch shares one order among all trainers (-1: the stream of no particular trainer).
    std::vector<std::uint32_t> order =
        pass_order(sample_count, config.seed, pass, dispatch.take_chunk ? -1 : trainer, config.shuffle);
    if (pass == progress.first_pass()) {  // resumed mid-pass: what is left, in the pass's own order
      std::erase_if(order, [&](std::uint32_t local) { return consumed[sample_ids[local]] != 0; });
    }
    const std::size_t to_train = order.size();
    const std::int64_t steps_before = pass == progress.first_pass() ? progress.steps_done_in_first_pass() : 0;
    // Where the next batch comes from. Static: `steps` batches of this trainer's own order (sync: every trainer
    // takes the same count, some batches maybe empty). Dynamic: chunks of one order shared by all trainers, taken
    // from the dispatcher until it runs dry, so a slow trainer simply takes fewer.
    const bool dynamic = dispatch.take_chunk != nullptr;
    const std::int64_t steps = dynamic ? -1 : progress.steps(trainer, pass);
    const std::size_t chunks = (to_train + config.chunk_size - 1) / config.chunk_size;
    std::size_t chunk_end = 0;
    std::size_t position = 0;
    std::int64_t chunks_taken = 0;
    const auto next_batch = [&](std::int64_t step, std::size_t& first, std::size_t& n) {
      if (!dynamic) {
        if (step >= steps) return false;
        first = std::min(to_train, static_cast<std::size_t>(step) * config.batch_size);
        n = std::min(config.batch_size, to_train - first);
        return true;
      }
      if (position == chunk_end) {
        const std::int64_t ticket = dispatch.take_chunk();
        if (ticket < 0 || static_cast<std::size_t>(ticket) >= chunks) return false;
        ++chunks_taken;
        position = static_cast<std::size_t>(ticket) * config.chunk_size;
        chunk_end = std::min(to_train, position + config.chunk_size);
      }
      first = position;
      n = std::min(config.batch_size, chunk_end - position);
      position += n;
      return true;
    };
    std::vector<std::uint8_t> trained(dynamic || job.layout.trainers > 1 ? consumed.size() : 0, 0);
    exchange.timers() = {};
    exchange.staleness() = {};
    exchange.clock_lead() = {};
    PassTotals totals;
    int flags = 0;
    std::size_t first = 0;
    std::size_t n = 0;
    std::int64_t step = 0;
    int stop_request = 0;  // async: a checkpoint joined while waiting at the end of the pass asked to stop
    if (checkpoints.writer && checkpoints.asynchronous) {
      exchange.set_checkpoint_handler([&] {
        exchange.quiesce();
        save(pass, steps_before + step, global_step);
        stop_request |= finish_async_checkpoint() & ps::kStopAfterCheckpoint;
        return stop_request != 0;
      });
    }
    for (; next_batch(step, first, n); ++step) {
      const auto compute_start = Clock::now();
      if (n > 0) {
        batch.assemble(order, first, n, sample_ids, pass);
        // Random layers (dropout) draw from (seed, global step, trainer): a resumed step draws what it drew before.
        model.set_step_key(pstrain::combine_key(pstrain::combine_key(config.seed, static_cast<std::uint64_t>(global_step)),
                                                static_cast<std::uint64_t>(trainer)));
        const nn::BatchResult result = model.train_batch(batch.features(n), batch.labels(n), n);
        if (!std::isfinite(result.loss_sum)) {
          throw Error(ExitCode::kDiverged,
                      cat("training diverged: the loss became ", result.loss_sum, " at pass ", pass, " step ", step,
                          " on trainer ", trainer, " (lower --lr, or check the data)"));
        }
        totals.loss_sum += result.loss_sum;
        totals.correct += static_cast<double>(result.correct);
        totals.samples += static_cast<double>(n);
        for (std::size_t i = 0; i < n; ++i) consumed[sample_ids[order[first + i]]] = 1;
        if (!trained.empty()) {
          for (std::size_t i = 0; i < n; ++i) trained[sample_ids[order[first + i]]] = 1;
        }
      }
      totals.compute_seconds += seconds_since(compute_start);
      flags = checkpoints.writer ? checkpoints.writer->local_flags() : 0;
      const bool combined = exchange.combine_in_place(n, flags);  // all-reduce: the average is in the model now
      const bool has_gradient = n > 0 || combined;
      if (has_gradient && !in_place) {
        const auto copy_start = Clock::now();
        model.get_gradients(gradient_mirror.span());
        totals.copy_seconds += seconds_since(copy_start);
      }
      exchange.step(has_gradient ? gradient : std::span<const float>(no_gradient), n, parameters, flags);
      if (config.test_perturb_replica_step == global_step && trainer == job.layout.trainers - 1) {
        parameters[0] = std::nextafter(parameters[0], 1e30f);  // one ulp: a replica that drifted
      }
      if (!in_place) {
        const auto copy_start = Clock::now();
        publish_parameters();
        totals.copy_seconds += seconds_since(copy_start);
      }
      if (config.test_slow_factor > 1 && config.test_slow_trainer == trainer) {  // the whole step, F times as long
        std::this_thread::sleep_for(std::chrono::duration<double>((config.test_slow_factor - 1) * seconds_since(compute_start)));
      }
      ++global_step;
      if (global_step == progress.first_global_step() + 1 && job.layout.is_lead_trainer()) {
        log_info("first step done ", job.elapsed_seconds(), " s after start",
                 progress.first_global_step() > 0 ? " (resumed)" : "");
      }
      if (const auto line = progress_line.after_step(
              {pass, config.passes, step + 1, steps, totals.samples, seconds_since(pass_start)})) {
        log_info(*line);
      }
      if (config.log_every_steps > 0 && (step + 1) % static_cast<std::int64_t>(config.log_every_steps) == 0) {
        log_info("pass ", pass, " step ", step + 1, "/", steps, " loss ", totals.loss_sum / std::max(totals.samples, 1.0));
        if (board) {  // this trainer's figures so far in the pass, at step = its global step
          const double done = static_cast<double>(step + 1);
          const ps::ExchangeTimers& timers = exchange.timers();
          board->write_scalars(global_step, {{"step/train_loss", totals.loss_sum / std::max(totals.samples, 1.0)},
                                             {"step/train_accuracy", totals.correct / std::max(totals.samples, 1.0)},
                                             {"step/trainer_samples_per_sec", totals.samples / seconds_since(pass_start)},
                                             {"step/compute_s_per_step", totals.compute_seconds / done},
                                             {"step/push_s_per_step", timers.push_seconds / done},
                                             {"step/barrier_s_per_step", timers.sync_seconds / done},
                                             {"step/pull_s_per_step", timers.pull_seconds / done},
                                             {"step/allreduce_s_per_step", timers.allreduce_seconds / done},
                                             {"step/update_s_per_step", timers.update_seconds / done},
                                             {"step/copy_s_per_step", totals.copy_seconds / done},
                                             {"step/ssp_gate_s_per_step", timers.gate_seconds / done},
                                             {"step/staleness_mean", exchange.staleness().mean()},
                                             {"step/learning_rate", learning_rate(job, global_step)}});
        }
      }
      if (config.test_step_delay_ms > 0 && (config.test_slow_trainer < 0 || config.test_slow_trainer == trainer)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(config.test_step_delay_ms));
      }
      if (checkpoints.writer && checkpoints.asynchronous) {
        const int request = exchange.checkpoint_request(
            checkpoints.writer->async_wish(global_step, job.layout.is_lead_trainer()));
        if (request != 0) {
          exchange.quiesce();
          save(pass, steps_before + step + 1, global_step);
          if (finish_async_checkpoint() & ps::kStopAfterCheckpoint) return false;
        }
        continue;
      }
      // Mid-pass checkpoints; the last step of a pass is covered by the end-of-pass checkpoint below.
      if (checkpoints.writer && step + 1 < steps && checkpoints.writer->due(global_step, flags)) {
        save(pass, steps_before + step + 1, global_step);
        if (flags & ps::kStopAfterCheckpoint) return false;
      }
    }
    exchange.finish_pass(parameters);
    publish_parameters();
    model_state.average();
    if (stop_request) return false;
    if (dynamic) {  // every trainer is past its last ticket (finish_pass ends with a barrier): rewind the dispatcher
      if (job.layout.is_lead_trainer()) dispatch.reset();
      MPI_CHECK(MPI_Barrier(trainers));
    }
    const double pass_seconds_local = seconds_since(pass_start);
    totals.steps = static_cast<double>(step);
    // Sample accounting: how often each sample of the pass was trained, over all trainers.
    std::int64_t missing = 0;
    std::int64_t repeated = 0;
    if (!trained.empty()) {
      std::vector<std::uint8_t> counts(job.layout.is_lead_trainer() ? trained.size() : 0);
      MPI_CHECK(MPI_Reduce(trained.data(), counts.data(), static_cast<int>(trained.size()), MPI_UINT8_T, MPI_SUM, 0,
                           trainers));
      const auto& before = progress.consumed_in_first_pass();
      for (std::size_t id = 0; id < counts.size(); ++id) {
        const int expected = pass == progress.first_pass() && before[id] ? 0 : 1;
        missing += counts[id] < expected ? 1 : 0;
        repeated += counts[id] > expected ? 1 : 0;
      }
    }
    std::vector<std::int64_t> chunks_per_trainer(job.layout.is_lead_trainer() ? job.layout.trainers : 0);
    MPI_CHECK(MPI_Gather(&chunks_taken, 1, MPI_INT64_T, chunks_per_trainer.data(), 1, MPI_INT64_T, 0, trainers));
    totals.push_seconds = exchange.timers().push_seconds;
    totals.sync_seconds = exchange.timers().sync_seconds;
    totals.pull_seconds = exchange.timers().pull_seconds;
    totals.gate_seconds = exchange.timers().gate_seconds;
    totals.allreduce_seconds = exchange.timers().allreduce_seconds;
    totals.update_seconds = exchange.timers().update_seconds;
    totals.lead_count = static_cast<double>(exchange.clock_lead().count);
    totals.lead_sum = static_cast<double>(exchange.clock_lead().sum);
    const double my_lead_max = static_cast<double>(exchange.clock_lead().max);
    double lead_max = 0;

    // Agree on the pass's numbers: sums over trainers, the slowest trainer's time, the merged staleness.
    std::optional<comm::Watchdog::Wait> wait(std::in_place, "the end-of-pass agreement of the trainers");
    PassTotals sum;
    double pass_seconds = 0;
    ps::StalenessStats staleness;
    constexpr int kFields = sizeof(PassTotals) / sizeof(double);
    MPI_CHECK(MPI_Reduce(&totals, &sum, kFields, MPI_DOUBLE, MPI_SUM, 0, trainers));
    MPI_CHECK(MPI_Reduce(&pass_seconds_local, &pass_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, trainers));
    MPI_CHECK(MPI_Reduce(&my_lead_max, &lead_max, 1, MPI_DOUBLE, MPI_MAX, 0, trainers));
    const ps::StalenessStats& mine = exchange.staleness();
    MPI_CHECK(MPI_Reduce(mine.histogram.data(), staleness.histogram.data(), ps::StalenessStats::kBuckets, MPI_INT64_T,
                         MPI_SUM, 0, trainers));
    MPI_CHECK(MPI_Reduce(&mine.count, &staleness.count, 1, MPI_INT64_T, MPI_SUM, 0, trainers));
    MPI_CHECK(MPI_Reduce(&mine.sum, &staleness.sum, 1, MPI_INT64_T, MPI_SUM, 0, trainers));
    MPI_CHECK(MPI_Reduce(&mine.max, &staleness.max, 1, MPI_INT64_T, MPI_MAX, 0, trainers));

    wait.reset();
    if (job.layout.is_lead_trainer()) {
      const Evaluation evaluation = evaluate(model, *test, evaluation_batch_size(job));
      if (!std::isfinite(evaluation.loss)) {
        throw Error(ExitCode::kDiverged, cat("training diverged: the test loss is ", evaluation.loss, " after pass ",
                                             pass, " (lower --lr)"));
      }
      write_pass_folder(job, pass, parameters, model_state.state());
      const auto& before = progress.consumed_in_first_pass();
      report_pass(job, pass, sum, pass_seconds, staleness, evaluation,
                  pass == progress.first_pass() ? std::count(before.begin(), before.end(), 1) : 0, lead_max,
                  {missing, repeated, chunks_per_trainer}, board ? &*board : nullptr, global_step);
    }
    // The end-of-pass checkpoint of async runs: asked for by the lead before the meeting, so everyone sees it.
    if (checkpoints.writer && checkpoints.asynchronous && job.layout.is_lead_trainer()) {
      exchange.checkpoint_request(ps::kCheckpointNow | checkpoints.writer->async_wish(global_step, false));
    }
    // Nobody starts the next pass's clock while the lead is still evaluating and writing.
    {
      const comm::Watchdog::Wait waiting_for_lead("the end of the pass (the lead trainer evaluates)");
      MPI_CHECK(MPI_Barrier(trainers));
    }
    if (checkpoints.writer) {
      std::ranges::fill(consumed, 0);
      if (checkpoints.asynchronous) exchange.quiesce();
      save(pass + 1, 0, global_step);
      if (checkpoints.asynchronous) flags = finish_async_checkpoint();
      if (flags & ps::kStopAfterCheckpoint) return pass + 1 >= config.passes;
    }
  }
  exchange.finish();
  return true;
}

}  // namespace pstrain::train
