#pragma once
// Synthetic click logs in the Criteo format with a planted truth, so that a model's AUC can be compared with the
// best any model can reach on them. Line i is a fixed function of (seed, i, options) (counter-based hashing,
// core/counter_random.h): the same bits for the same seed and options whatever the thread count or the order lines
// are made in.
//
// Line i:
//  - 13 integer features: I_j = floor(exp(mu_j + sigma_j z)) - 1 with z standard normal, empty with probability
//    0.05 + 0.02 j; I2 (as Criteo's) is shifted by -3 in a tenth of lines, so negative values occur;
//  - 26 categorical fields with Criteo Kaggle's cardinalities (kSyntheticCardinalities, 3 to 10,131,227): rank
//    r ~ Zipf(S) over 1..cardinality (S = 1.1 unless options say otherwise; a smaller S is flatter: more distinct
//    ids per line), id = the low 32 bits of a hash of (seed, field, r), written as 8 hex digits; some fields empty
//    in part of the lines; C6, C14 and C24 multi-hot (0 to 5 ids, comma-separated);
//  - optionally a growing id space (new_ids_every N > 0): a share Q of each field's ranks, chosen by a hash of
//    (seed, field, r), is transient: its id is a hash of (seed, field, r, g), generation g = floor((i + phase) / N)
//    with phase = a hash of (seed, field, r) mod N, so a transient rank changes id every N lines and about 1/N of
//    them change at any line (smooth churn, not all at once); the other ranks keep their one id;
//  - the click probability p = sigmoid(logit), logit = bias + sum_j a_j log(1 + max(I_j, 0))
//      + sum_f s_f mean_{id in bag f} w(seed, f, id)      (w uniform with variance 1, from a hash: no table)
//      + sum over the pairs (C1, C2), (C4, C11), (C3, C16) of <u(seed, a, id_a), u(seed, b, id_b)>
//                                                          (4 factors each, an FM-style interaction)
//    with s_f > 0 for every field, the two largest (C3, C12) among the strongest; the label is 1 with
//    probability p. Weights and factors are functions of the id: a new id brings new ones, learned afresh.
// The Bayes-optimal model scores a line by p itself: its AUC and log-loss on the test lines are the ceiling.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::data::ctr {

// Criteo Kaggle's distinct values per categorical field C1 ... C26.
inline constexpr std::array<std::uint64_t, 26> kSyntheticCardinalities{1460,  583,   10131227, 2202608, 305,  24,
                                                                       12517, 633,   3,        93145,   5683, 8351593,
                                                                       3194,  27,    14992,    5461306, 10,   5652,
                                                                       2173,  4,     7046547,  18,      15,   286181,
                                                                       105,   142572};

struct SyntheticLine {
  double probability = 0;  // of a click
  int label = 0;
};

// The generator's parameters beyond the seed. The defaults give the lines of the first version, bit for bit.
struct SyntheticCtrOptions {
  double zipf_exponent = 1.1;       // S, 0 < S <= 10: P(rank r) falls as r^-S
  std::uint64_t new_ids_every = 0;  // N lines between a transient rank's ids; 0: every rank keeps its id
  double new_id_share = 0.5;        // Q, 0 < Q <= 1: the share of each field's ranks that are transient
};

class SyntheticCtr {
 public:
  // Throws Error(kUsage) naming the option when one is out of its range.
  explicit SyntheticCtr(std::uint64_t seed, SyntheticCtrOptions options = {});

  // Lines [first, first + count) as text, each ending in '\n'.
  std::string text(std::uint64_t first, std::uint64_t count) const;
  // Line i's click probability and label, without its text.
  SyntheticLine truth(std::uint64_t line) const;

  // Whether rank `rank` (1-based) of field `field` (0-based) is transient: always false without new_ids_every.
  bool transient(std::size_t field, std::uint64_t rank) const;
  // The id that rank `rank` of field `field` has at line `line` (the line matters only for transient ranks).
  std::uint64_t id(std::size_t field, std::uint64_t rank, std::uint64_t line) const;

 private:
  struct Draw;
  void draw(std::uint64_t line, Draw& out) const;
  std::uint64_t draw_rank(std::size_t field, double u) const;

  std::uint64_t seed_;
  SyntheticCtrOptions options_;
  std::array<double, 26> span_{};  // per field: (cardinality + 1)^(1 - S) - 1, the inverse CDF's scale
};

// The Bayes-optimal model's metrics on lines [first, last).
struct BayesMetrics {
  double auc = 0, logloss = 0, click_rate = 0;
  std::uint64_t lines = 0;
};
BayesMetrics bayes_metrics(const SyntheticCtr& generator, std::uint64_t first, std::uint64_t last);

// Exact ROC AUC: the probability that a random positive scores above a random negative, ties counted half
// (sorting by score). Throws Error(kInputData) when there is no positive or no negative.
double exact_auc(std::vector<std::pair<double, int>> scored);
// Mean of -(y log p + (1 - y) log(1 - p)), p clamped to [1e-15, 1 - 1e-15].
double mean_logloss(const std::vector<std::pair<double, int>>& scored);

}  // namespace pstrain::data::ctr
