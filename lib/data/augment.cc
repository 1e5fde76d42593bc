#include "data/augment.h"

#include <algorithm>
#include <sstream>

#include "core/counter_random.h"
#include "core/error.h"
#include "core/parse_number.h"

namespace pstrain::data {

namespace {

// Draw indices: one per choice, fixed, so that each augmentation draws the same whatever else is on.
enum Draw : std::uint64_t { kCropY = 0, kCropX = 1, kFlip = 2, kCutoutY = 3, kCutoutX = 4 };

std::size_t parse_size(const std::string& item, const std::string& value, const std::string& text) {
  const std::optional<long long> number = parse_number<long long>(value);
  if (!number || *number <= 0) {
    throw Error(ExitCode::kUsage, cat("--augment '", text, "': '", item,
                                      "' needs a positive whole number of pixels, "
                                      "e.g. crop:4 or cutout:8"));
  }
  return static_cast<std::size_t>(*number);
}

}  // namespace

AugmentSpec parse_augment_spec(const std::string& text) {
  AugmentSpec spec;
  if (text.empty() || text == "none") return spec;
  bool seen_crop = false;
  bool seen_flip = false;
  bool seen_cutout = false;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : item.substr(colon + 1);
    bool* seen = nullptr;
    if (name == "crop") {
      seen = &seen_crop;
      spec.crop_padding = parse_size(item, value, text);
    } else if (name == "cutout") {
      seen = &seen_cutout;
      spec.cutout = parse_size(item, value, text);
    } else if (name == "flip" && colon == std::string::npos) {
      seen = &seen_flip;
      spec.flip = true;
    } else {
      throw Error(ExitCode::kUsage, cat("--augment '", text, "': unknown item '", item,
                                        "' (expected crop:P, flip, cutout:S separated by commas, or none)"));
    }
    if (*seen) throw Error(ExitCode::kUsage, cat("--augment '", text, "': '", name, "' given twice"));
    *seen = true;
  }
  if (!spec.enabled()) throw Error(ExitCode::kUsage, cat("--augment '", text, "': nothing to do"));
  return spec;
}

std::string to_string(const AugmentSpec& spec) {
  if (!spec.enabled()) return "none";
  std::string text;
  const auto add = [&](const std::string& item) { text += (text.empty() ? "" : ",") + item; };
  if (spec.crop_padding > 0) add(cat("crop:", spec.crop_padding));
  if (spec.flip) add("flip");
  if (spec.cutout > 0) add(cat("cutout:", spec.cutout));
  return text;
}

ImageShape check_augmentable(const AugmentSpec& spec, const ShardMeta& meta) {
  const auto& shape = meta.sample_shape;
  const bool image = (shape.size() == 2 || shape.size() == 3) &&
                     std::all_of(shape.begin(), shape.end(), [](std::uint64_t d) { return d > 0; });
  if (!image) {
    if (!spec.enabled()) return {};
    throw Error(ExitCode::kUsage, cat("--augment ", to_string(spec),
                                      " needs image samples (height x width, or height "
                                      "x width x channels); the ",
                                      meta.dataset.empty() ? "training" : meta.dataset, " samples have shape ",
                                      shape_text(shape), ": leave --augment out for these data"));
  }
  const ImageShape result{shape[0], shape[1], shape.size() == 3 ? shape[2] : 1};
  const std::size_t side = std::min(result.height, result.width);
  if (spec.crop_padding >= side) {
    throw Error(ExitCode::kUsage, cat("--augment crop:", spec.crop_padding, " pads by at least the image's side (",
                                      shape_text(shape), "): use a padding below ", side));
  }
  if (spec.cutout > side) {
    throw Error(ExitCode::kUsage, cat("--augment cutout:", spec.cutout, " is larger than the images (",
                                      shape_text(shape), "): use at most ", side));
  }
  return result;
}

std::uint64_t augment_draw(std::uint64_t seed, std::uint64_t pass, std::uint64_t sample, std::uint64_t draw,
                           std::uint64_t bound) {
  PSTRAIN_ASSERT(bound >= 1, "draw bound ", bound);
  const std::uint64_t hash = mix64(mix64(mix64(mix64(seed ^ 0x61756d656e74ULL) ^ pass) ^ sample) ^ draw);
  // Lemire's multiply-shift: the high half of hash * bound is uniform in [0, bound) up to a bias of bound / 2^64.
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(hash) * bound) >> 64);
}

AugmentDraws draw_augmentation(const AugmentSpec& spec, const ImageShape& shape, std::uint64_t seed, std::uint64_t pass,
                               std::uint64_t sample) {
  AugmentDraws draws;
  if (spec.crop_padding > 0) {
    draws.crop_y = augment_draw(seed, pass, sample, kCropY, 2 * spec.crop_padding + 1);
    draws.crop_x = augment_draw(seed, pass, sample, kCropX, 2 * spec.crop_padding + 1);
  }
  if (spec.flip) draws.flip = augment_draw(seed, pass, sample, kFlip, 2) == 1;
  if (spec.cutout > 0) {
    draws.cutout_y = augment_draw(seed, pass, sample, kCutoutY, shape.height - spec.cutout + 1);
    draws.cutout_x = augment_draw(seed, pass, sample, kCutoutX, shape.width - spec.cutout + 1);
  }
  return draws;
}

void apply_augmentation(const AugmentSpec& spec, const ImageShape& shape, const AugmentDraws& draws,
                        std::span<const float> source, std::span<float> target) {
  PSTRAIN_ASSERT(source.size() == shape.size() && target.size() == shape.size(), "augmenting ", source.size(),
                 " floats into ", target.size(), " for an image of ", shape.size());
  const auto height = static_cast<std::ptrdiff_t>(shape.height);
  const auto width = static_cast<std::ptrdiff_t>(shape.width);
  const std::size_t channels = shape.channels;
  const auto padding = static_cast<std::ptrdiff_t>(spec.crop_padding);
  const std::size_t cutout = spec.cutout;
  for (std::ptrdiff_t y = 0; y < height; ++y) {
    // Cropped image C(y, x) = source(y + crop_y - P, x + crop_x - P), zero outside; flipped F(y, x) = C(y, W-1-x).
    const std::ptrdiff_t source_y = y + static_cast<std::ptrdiff_t>(draws.crop_y) - padding;
    const bool cut_row = cutout > 0 && static_cast<std::size_t>(y) >= draws.cutout_y &&
                         static_cast<std::size_t>(y) < draws.cutout_y + cutout;
    for (std::ptrdiff_t x = 0; x < width; ++x) {
      float* out = target.data() + (static_cast<std::size_t>(y * width + x)) * channels;
      const bool cut = cut_row && static_cast<std::size_t>(x) >= draws.cutout_x &&
                       static_cast<std::size_t>(x) < draws.cutout_x + cutout;
      const std::ptrdiff_t cropped_x = draws.flip ? width - 1 - x : x;
      const std::ptrdiff_t source_x = cropped_x + static_cast<std::ptrdiff_t>(draws.crop_x) - padding;
      if (cut || source_y < 0 || source_y >= height || source_x < 0 || source_x >= width) {
        std::fill_n(out, channels, 0.0f);
      } else {
        std::copy_n(source.data() + static_cast<std::size_t>(source_y * width + source_x) * channels, channels, out);
      }
    }
  }
}

void augment_image(const AugmentSpec& spec, const ImageShape& shape, std::uint64_t seed, std::uint64_t pass,
                   std::uint64_t sample, std::span<const float> source, std::span<float> target) {
  apply_augmentation(spec, shape, draw_augmentation(spec, shape, seed, pass, sample), source, target);
}

}  // namespace pstrain::data
