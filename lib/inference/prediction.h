#pragma once
// What predict writes for each sample, from its logits (classes floats):
//   .npy  float32 [samples, classes]: the class probabilities (softmax), for a program to read, or the logits
//         themselves (--logits)
//   else  CSV text, a line per sample: sample,label,id1,p1,...,idK,pK (the K most probable classes, most probable
//         first; label empty when the input has none), and word1..wordK for a language model with a vocabulary
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pstrain::inference {

// softmax of one row, computed in double from the largest logit down (no overflow).
std::vector<float> softmax(std::span<const float> logits);

class PredictionTable {
 public:
  // `words` is the vocabulary (row r is id r) or empty; `top_k` at most `classes`.
  // `logits`: a .npy of the logits rather than the probabilities. `click`: a click model's one logit per sample
  // (loss=bce): the click probability, sigmoid(logit), float32 [samples] in a .npy, one column in a CSV.
  PredictionTable(bool npy, std::size_t classes, std::size_t top_k, std::vector<std::string> words, bool logits = false,
                  bool click = false);

  // Adds `count` samples' logits (count x classes, or count for a click model); labels are -1 where the input has
  // none.
  void add(std::span<const float> logits, std::span<const std::int32_t> labels, std::size_t count);
  // The file's bytes.
  std::string bytes() const;

 private:
  static std::string cat_k(std::size_t k);  // ",idK,pK"

  bool npy_;
  bool logits_;
  bool click_;
  std::size_t classes_;
  std::size_t top_k_;
  std::vector<std::string> words_;
  std::size_t samples_ = 0;
  std::vector<float> probabilities_;  // .npy (the logits with --logits)
  std::string csv_;
};

}  // namespace pstrain::inference
