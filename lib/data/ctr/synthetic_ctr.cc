#include "data/ctr/synthetic_ctr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::data::ctr {

namespace {

constexpr std::size_t kDense = 13, kFields = 26, kMaxBag = 5, kFactors = 4;
// Below this |1 - S| the rank's inverse CDF is taken at its limit S = 1 (log-uniform), where the power form divides
// by zero.
constexpr double kLogUniformBelow = 1e-6;
constexpr double kBias = -2.6;  // about 18% clicks (seed 1, 10M lines: 18.4%; Criteo Kaggle: 25.6%)
constexpr double kSqrt3 = 1.7320508075688772;
// Salts that keep the hash streams of ids, weights, factors, transient ranks and their ids apart.
constexpr std::uint64_t kIdSalt = 0x1d5, kWeightSalt = 0x3e1, kFactorSalt = 0x7f3, kTransientSalt = 0x9b7,
                        kNewIdSalt = 0xa4d;

constexpr std::array<bool, kFields> kMultiHot = [] {
  std::array<bool, kFields> multi{};
  multi[5] = multi[13] = multi[23] = true;  // C6, C14, C24
  return multi;
}();
// Probability of an empty column, as Criteo's sparse columns (C19, C20, C22, C25, C26 are mostly empty there).
constexpr std::array<double, kFields> kEmpty{0, 0, 0.05, 0.05, 0, 0,   0,   0,    0,   0, 0,    0.05, 0,
                                             0, 0, 0.05, 0,    0, 0.3, 0.3, 0.05, 0.3, 0, 0.05, 0.3,  0.3};
// Strength s_f of each field's weights: every field carries signal; C1, C3, C9, C12, C17 twice the rest.
constexpr std::array<double, kFields> kScale{0.5,  0.25, 0.5,  0.25, 0.25, 0.25, 0.25, 0.25, 0.5,
                                             0.25, 0.25, 0.5,  0.25, 0.25, 0.25, 0.25, 0.5,  0.25,
                                             0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25};
constexpr std::array<std::pair<std::size_t, std::size_t>, 3> kPairs{{{0, 1}, {3, 10}, {2, 15}}};

double uniform(std::uint64_t key, std::uint64_t index) {
  return static_cast<double>(combine_key(key, index) >> 11) * 0x1p-53;
}

// Uniform with mean 0 and variance `scale` squared, from a hash of (salt, field, id, k).
double centered(std::uint64_t seed, std::uint64_t salt, std::size_t field, std::uint64_t id, std::uint64_t k,
                double scale) {
  const std::uint64_t key = combine_key(combine_key(combine_key(seed, salt), field), id);
  return (2 * uniform(key, k) - 1) * kSqrt3 * scale;
}

constexpr std::string_view kHexDigits = "0123456789abcdef";

void put_hex(std::string& out, std::uint64_t id) {
  for (int shift = 28; shift >= 0; shift -= 4) out += kHexDigits[(id >> shift) & 0xf];
}

}  // namespace

struct SyntheticCtr::Draw {
  std::array<std::int64_t, kDense> dense{};
  std::array<bool, kDense> dense_missing{};
  std::array<std::array<std::uint64_t, kMaxBag>, kFields> ids{};
  std::array<std::size_t, kFields> bag{};
  double probability = 0;
  int label = 0;
};

SyntheticCtr::SyntheticCtr(std::uint64_t seed, SyntheticCtrOptions options) : seed_(seed), options_(options) {
  if (!(options_.zipf_exponent > 0 && options_.zipf_exponent <= 10)) {
    throw Error(ExitCode::kUsage, cat("the Zipf exponent must be in (0, 10], got ", options_.zipf_exponent));
  }
  if (!(options_.new_id_share > 0 && options_.new_id_share <= 1)) {
    throw Error(ExitCode::kUsage, cat("the share of transient ranks must be in (0, 1], got ", options_.new_id_share));
  }
  for (std::size_t f = 0; f < kFields; ++f) {
    const auto card = static_cast<double>(kSyntheticCardinalities[f]);
    span_[f] = std::pow(card + 1, 1 - options_.zipf_exponent) - 1;
  }
}

std::uint64_t SyntheticCtr::draw_rank(std::size_t field, double u) const {
  // The inverse CDF of the density x^-S on [1, cardinality + 1], floored: rank r has the mass of [r, r + 1).
  const double a = 1 - options_.zipf_exponent;
  const auto card = static_cast<double>(kSyntheticCardinalities[field]);
  const double x =
      std::abs(a) < kLogUniformBelow ? std::exp(u * std::log(card + 1)) : std::pow(1 + u * span_[field], 1 / a);
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(x), 1, kSyntheticCardinalities[field]);
}

bool SyntheticCtr::transient(std::size_t field, std::uint64_t rank) const {
  if (options_.new_ids_every == 0) return false;
  return uniform(combine_key(combine_key(seed_ ^ kTransientSalt, field), rank), 0) < options_.new_id_share;
}

std::uint64_t SyntheticCtr::id(std::size_t field, std::uint64_t rank, std::uint64_t line) const {
  if (!transient(field, rank)) return mix64(combine_key(combine_key(seed_ ^ kIdSalt, field), rank)) & 0xffffffffu;
  // Each transient rank starts its generations at its own phase, so that about 1/N of them change at any line.
  const std::uint64_t every = options_.new_ids_every;
  const std::uint64_t phase = combine_key(combine_key(combine_key(seed_ ^ kTransientSalt, field), rank), 1) % every;
  const std::uint64_t generation = (line + phase) / every;
  return mix64(combine_key(combine_key(combine_key(seed_ ^ kNewIdSalt, field), rank), generation)) & 0xffffffffu;
}

void SyntheticCtr::draw(std::uint64_t line, Draw& out) const {
  const std::uint64_t key = combine_key(seed_, line);
  std::uint64_t k = 0;
  double logit = kBias;
  for (std::size_t j = 0; j < kDense; ++j) {
    out.dense_missing[j] = uniform(key, k++) < 0.05 + 0.02 * static_cast<double>(j);
    const double u1 = std::max(uniform(key, k++), 1e-300), u2 = uniform(key, k++);
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    const double mu = 0.5 + 0.25 * static_cast<double>(j), sigma = 0.8 + 0.1 * static_cast<double>(j % 4);
    std::int64_t x = static_cast<std::int64_t>(std::floor(std::exp(std::min(mu + sigma * z, 40.0)))) - 1;
    if (j == 1 && uniform(key, k++) < 0.1) x -= 3;  // I2 is negative at times, as Criteo's
    out.dense[j] = x;
    const double effect = (static_cast<double>(j % 3) - 1) * 0.12 + 0.04;
    if (!out.dense_missing[j]) logit += effect * std::log1p(static_cast<double>(std::max<std::int64_t>(x, 0)));
  }
  for (std::size_t f = 0; f < kFields; ++f) {
    const double u = uniform(key, k++);
    out.bag[f] = kMultiHot[f] ? static_cast<std::size_t>(u * (kMaxBag + 1)) : (u < kEmpty[f] ? 0 : 1);
    double weights = 0;
    for (std::size_t b = 0; b < out.bag[f]; ++b) {
      out.ids[f][b] = id(f, draw_rank(f, uniform(key, k++)), line);
      weights += centered(seed_, kWeightSalt, f, out.ids[f][b], 0, 1);
    }
    if (out.bag[f] > 0) logit += kScale[f] * weights / static_cast<double>(out.bag[f]);
  }
  for (const auto& [a, b] : kPairs) {
    if (out.bag[a] == 0 || out.bag[b] == 0) continue;
    for (std::uint64_t factor = 0; factor < kFactors; ++factor) {
      logit += centered(seed_, kFactorSalt, a, out.ids[a][0], factor, 0.5) *
               centered(seed_, kFactorSalt, b, out.ids[b][0], factor, 0.5);
    }
  }
  out.probability = 1 / (1 + std::exp(-logit));
  out.label = uniform(key, k++) < out.probability ? 1 : 0;
}

std::string SyntheticCtr::text(std::uint64_t first, std::uint64_t count) const {
  std::string out;
  out.reserve(count * 240);
  Draw line;
  char number[24];
  for (std::uint64_t i = first; i < first + count; ++i) {
    draw(i, line);
    out += static_cast<char>('0' + line.label);
    for (std::size_t j = 0; j < kDense; ++j) {
      out += '\t';
      if (line.dense_missing[j]) continue;
      const auto end = std::to_chars(number, number + sizeof number, line.dense[j]).ptr;
      out.append(number, end);
    }
    for (std::size_t f = 0; f < kFields; ++f) {
      out += '\t';
      for (std::size_t b = 0; b < line.bag[f]; ++b) {
        if (b > 0) out += ',';
        put_hex(out, line.ids[f][b]);
      }
    }
    out += '\n';
  }
  return out;
}

SyntheticLine SyntheticCtr::truth(std::uint64_t line) const {
  Draw draw_out;
  draw(line, draw_out);
  return {draw_out.probability, draw_out.label};
}

BayesMetrics bayes_metrics(const SyntheticCtr& generator, std::uint64_t first, std::uint64_t last) {
  std::vector<std::pair<double, int>> scored;
  scored.reserve(last - first);
  double clicks = 0;
  for (std::uint64_t i = first; i < last; ++i) {
    const SyntheticLine line = generator.truth(i);
    scored.emplace_back(line.probability, line.label);
    clicks += line.label;
  }
  BayesMetrics metrics;
  metrics.lines = last - first;
  metrics.click_rate = clicks / static_cast<double>(std::max<std::uint64_t>(metrics.lines, 1));
  metrics.logloss = mean_logloss(scored);
  metrics.auc = exact_auc(std::move(scored));
  return metrics;
}

double exact_auc(std::vector<std::pair<double, int>> scored) {
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double negatives_below = 0, numerator = 0, positives = 0;
  for (std::size_t begin = 0; begin < scored.size();) {
    std::size_t end = begin;
    double group_positives = 0, group_negatives = 0;
    for (; end < scored.size() && scored[end].first == scored[begin].first; ++end) {
      (scored[end].second == 1 ? group_positives : group_negatives) += 1;
    }
    numerator += group_positives * (negatives_below + 0.5 * group_negatives);
    negatives_below += group_negatives;
    positives += group_positives;
    begin = end;
  }
  if (positives == 0 || negatives_below == 0) {
    throw Error(ExitCode::kInputData, "AUC needs at least one positive and one negative label");
  }
  return numerator / (positives * negatives_below);
}

double mean_logloss(const std::vector<std::pair<double, int>>& scored) {
  double sum = 0;
  for (const auto& [p, y] : scored) {
    const double clamped = std::clamp(p, 1e-15, 1 - 1e-15);
    sum -= y == 1 ? std::log(clamped) : std::log(1 - clamped);
  }
  return scored.empty() ? 0 : sum / static_cast<double>(scored.size());
}

}  // namespace pstrain::data::ctr
