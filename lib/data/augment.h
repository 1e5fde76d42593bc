#pragma once
// Image augmentation for training batches (--augment): pad-and-random-crop, horizontal flip and cutout, on one
// channels-last (HWC) float image at a time.
//
// Every random choice is a pure function of (seed, pass, sample id, draw index), a SplitMix64 hash with no state
// and no std:: distribution, so the same sample in the same pass is augmented the same way on any trainer, in any
// layout, before or after a resume; a different pass draws afresh. Each kind of augmentation has its own draw
// indices, so turning one on or off does not change what the others draw.
//
// Applied in this order (as the seed's pipeline):
//   crop:P    pad P zero pixels on every side, then cut an H x W window at offset (dy, dx), each uniform in [0, 2P]
//   flip      mirror left-right with probability 1/2
//   cutout:S  set an S x S square to 0, its top-left corner uniform over the positions where it fits the image
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "data/shard.h"

namespace pstrain::data {

struct AugmentSpec {
  std::size_t crop_padding = 0;  // 0: no crop
  bool flip = false;
  std::size_t cutout = 0;  // side of the square; 0: no cutout

  bool enabled() const { return crop_padding > 0 || flip || cutout > 0; }
};

// "" or "none": off; otherwise a comma-separated list of crop:P, flip, cutout:S (each at most once), e.g.
// "crop:4,flip,cutout:8". Throws pstrain::Error(kUsage) naming --augment and the item at fault.
AugmentSpec parse_augment_spec(const std::string& text);
std::string to_string(const AugmentSpec& spec);  // the canonical text ("none" when off)

struct ImageShape {
  std::size_t height = 0;
  std::size_t width = 0;
  std::size_t channels = 0;
  std::size_t size() const { return height * width * channels; }
};

// The image shape of samples of shape {H, W} (one channel) or {H, W, C}. Throws pstrain::Error(kUsage) when
// `spec` is on and the samples are not images, or the crop padding or cutout does not fit them.
ImageShape check_augmentable(const AugmentSpec& spec, const ShardMeta& meta);

// The random choices for one image.
struct AugmentDraws {
  std::size_t crop_y = 0;  // offsets into the padded image, in [0, 2P]
  std::size_t crop_x = 0;
  bool flip = false;
  std::size_t cutout_y = 0;  // top-left corner of the square
  std::size_t cutout_x = 0;
};

// A uniform integer in [0, bound) (bound >= 1) for draw `draw` of `sample` in `pass` under `seed`.
std::uint64_t augment_draw(std::uint64_t seed, std::uint64_t pass, std::uint64_t sample, std::uint64_t draw,
                           std::uint64_t bound);
AugmentDraws draw_augmentation(const AugmentSpec& spec, const ImageShape& shape, std::uint64_t seed, std::uint64_t pass,
                               std::uint64_t sample);

// Writes the augmented `source` into `target` (both shape.size() floats, not overlapping).
void apply_augmentation(const AugmentSpec& spec, const ImageShape& shape, const AugmentDraws& draws,
                        std::span<const float> source, std::span<float> target);

// draw_augmentation then apply_augmentation.
void augment_image(const AugmentSpec& spec, const ImageShape& shape, std::uint64_t seed, std::uint64_t pass,
                   std::uint64_t sample, std::span<const float> source, std::span<float> target);

}  // namespace pstrain::data
