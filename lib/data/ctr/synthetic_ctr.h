#pragma once
// Synthetic click logs in the Criteo format with a planted truth, so that a model's AUC can be compared with the
// best any model can reach on them. Line i is a fixed function of (seed, i) (counter-based hashing,
// core/counter_random.h): the same bits for the same seed whatever the thread count or the order lines are made in.
//
// Line i:
//  - 13 integer features: I_j = floor(exp(mu_j + sigma_j z)) - 1 with z standard normal, empty with probability
//    0.05 + 0.02 j; I2 (as Criteo's) is shifted by -3 in a tenth of lines, so negative values occur;
//  - 26 categorical fields with Criteo Kaggle's cardinalities (kSyntheticCardinalities, 3 to 10,131,227): rank
//    r ~ Zipf(1.1) over 1..cardinality, id = the low 32 bits of a hash of (seed, field, r), written as 8 hex
//    digits; some fields empty in part of the lines; C6, C14 and C24 multi-hot (0 to 5 ids, comma-separated);
//  - the click probability p = sigmoid(logit), logit = bias + sum_j a_j log(1 + max(I_j, 0))
//      + sum_f s_f mean_{id in bag f} w(seed, f, id)      (w uniform with variance 1, from a hash: no table)
//      + sum over the pairs (C1, C2), (C4, C11), (C3, C16) of <u(seed, a, id_a), u(seed, b, id_b)>
//                                                          (4 factors each, an FM-style interaction)
//    with s_f > 0 for every field, the two largest (C3, C12) among the strongest; the label is 1 with
//    probability p.
// The Bayes-optimal model scores a line by p itself: its AUC and log-loss on the test lines are the ceiling.
#include <array>
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

class SyntheticCtr {
 public:
  explicit SyntheticCtr(std::uint64_t seed);

  // Lines [first, first + count) as text, each ending in '\n'.
  std::string text(std::uint64_t first, std::uint64_t count) const;
  // Line i's click probability and label, without its text.
  SyntheticLine truth(std::uint64_t line) const;

 private:
  struct Draw;
  void draw(std::uint64_t line, Draw& out) const;

  std::uint64_t seed_;
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
