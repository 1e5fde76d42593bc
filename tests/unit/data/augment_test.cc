// Augmentation: the geometry of crop, flip and cutout on small images against hand-written results, and the
// determinism of the draws in (seed, pass, sample).
#include "data/augment.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "core/error.h"

namespace pstrain::data {
namespace {

// A 3 x 3 one-channel image holding 1..9 row by row.
const ImageShape kSquare{3, 3, 1};
std::vector<float> counting(const ImageShape& shape) {
  std::vector<float> image(shape.size());
  std::iota(image.begin(), image.end(), 1.0f);
  return image;
}

std::vector<float> apply(const AugmentSpec& spec, const ImageShape& shape, const AugmentDraws& draws) {
  const std::vector<float> source = counting(shape);
  std::vector<float> target(shape.size(), -1.0f);
  apply_augmentation(spec, shape, draws, source, target);
  return target;
}

TEST(AugmentGeometry, NothingDrawnIsACopy) {
  EXPECT_EQ(apply({.crop_padding = 2, .flip = true}, kSquare, {.crop_y = 2, .crop_x = 2}), counting(kSquare));
}

TEST(AugmentGeometry, FlipMirrorsEachRow) {
  EXPECT_EQ(apply({.flip = true}, kSquare, {.flip = true}), (std::vector<float>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
}

TEST(AugmentGeometry, CropShiftsWithZeroPadding) {
  // Padding 1, window at (0, 2) of the padded 5 x 5: output (y, x) = input (y - 1, x + 1), zero outside.
  EXPECT_EQ(apply({.crop_padding = 1}, kSquare, {.crop_y = 0, .crop_x = 2}),
            (std::vector<float>{0, 0, 0, 2, 3, 0, 5, 6, 0}));
  // Window at (2, 0): output (y, x) = input (y + 1, x - 1).
  EXPECT_EQ(apply({.crop_padding = 1}, kSquare, {.crop_y = 2, .crop_x = 0}),
            (std::vector<float>{0, 4, 5, 0, 7, 8, 0, 0, 0}));
}

TEST(AugmentGeometry, CutoutZeroesTheSquare) {
  EXPECT_EQ(apply({.cutout = 2}, kSquare, {.cutout_y = 1, .cutout_x = 0}),
            (std::vector<float>{1, 2, 3, 0, 0, 6, 0, 0, 9}));
}

TEST(AugmentGeometry, CropThenFlipThenCutoutOnColourPixels) {
  // A 2 x 3 image with 2 channels: pixel p = y * 3 + x holds {10 p + 1, 10 p + 2}.
  const ImageShape shape{2, 3, 2};
  std::vector<float> source(shape.size());
  for (std::size_t pixel = 0; pixel < 6; ++pixel) {
    source[2 * pixel] = static_cast<float>(10 * pixel + 1);
    source[2 * pixel + 1] = static_cast<float>(10 * pixel + 2);
  }
  // Input pixels (first channel):  1 11 21 / 31 41 51.
  // Crop, padding 1, window (1, 2): C(y, x) = in(y, x + 1):        11 21 0 / 41 51 0
  // Flip:                           F(y, x) = C(y, 2 - x):         0 21 11 / 0 51 41
  // Cutout 1 at (1, 2):                                            0 21 11 / 0 51 0
  std::vector<float> target(shape.size(), -1.0f);
  apply_augmentation({.crop_padding = 1, .flip = true, .cutout = 1}, shape,
                     {.crop_y = 1, .crop_x = 2, .flip = true, .cutout_y = 1, .cutout_x = 2}, source, target);
  EXPECT_EQ(target, (std::vector<float>{0, 0, 21, 22, 11, 12, 0, 0, 51, 52, 0, 0}));
}

const AugmentSpec kAll{.crop_padding = 4, .flip = true, .cutout = 8};
const ImageShape kCifar{32, 32, 3};

std::vector<float> augmented(std::uint64_t seed, std::uint64_t pass, std::uint64_t sample) {
  const std::vector<float> source = counting(kCifar);
  std::vector<float> target(kCifar.size());
  augment_image(kAll, kCifar, seed, pass, sample, source, target);
  return target;
}

TEST(AugmentDraws, SameSeedPassAndSampleGiveTheSameImage) {
  EXPECT_EQ(augmented(7, 3, 12345), augmented(7, 3, 12345));
}

TEST(AugmentDraws, OtherPassesSamplesAndSeedsDrawAfresh) {
  // Each draw could coincide by chance (a 1/2 flip, 9 x 9 crops, 25 x 25 cutouts); over 20 samples none may.
  int same_across_passes = 0;
  int same_across_samples = 0;
  int same_across_seeds = 0;
  for (std::uint64_t sample = 0; sample < 20; ++sample) {
    same_across_passes += augmented(7, 3, sample) == augmented(7, 4, sample) ? 1 : 0;
    same_across_samples += augmented(7, 3, sample) == augmented(7, 3, sample + 100) ? 1 : 0;
    same_across_seeds += augmented(7, 3, sample) == augmented(8, 3, sample) ? 1 : 0;
  }
  EXPECT_EQ(same_across_passes, 0);
  EXPECT_EQ(same_across_samples, 0);
  EXPECT_EQ(same_across_seeds, 0);
}

TEST(AugmentDraws, CoverTheirRangesEvenly) {
  std::set<std::size_t> crops;
  std::set<std::size_t> cutouts;
  int flips = 0;
  constexpr int kSamples = 4000;
  for (std::uint64_t sample = 0; sample < kSamples; ++sample) {
    const AugmentDraws draws = draw_augmentation(kAll, kCifar, 1, 0, sample);
    ASSERT_LE(draws.crop_y, 8u);
    ASSERT_LE(draws.crop_x, 8u);
    ASSERT_LE(draws.cutout_y, 24u);
    ASSERT_LE(draws.cutout_x, 24u);
    crops.insert(draws.crop_y);
    cutouts.insert(draws.cutout_x);
    flips += draws.flip ? 1 : 0;
  }
  EXPECT_EQ(crops.size(), 9u);     // every offset in [0, 2P]
  EXPECT_EQ(cutouts.size(), 25u);  // every position where an 8 x 8 square fits 32 pixels
  EXPECT_GT(flips, kSamples * 45 / 100);
  EXPECT_LT(flips, kSamples * 55 / 100);
}

TEST(AugmentDraws, EachAugmentationDrawsTheSameWhateverElseIsOn) {
  for (std::uint64_t sample = 0; sample < 50; ++sample) {
    const AugmentDraws all = draw_augmentation(kAll, kCifar, 3, 1, sample);
    const AugmentDraws crop = draw_augmentation({.crop_padding = 4}, kCifar, 3, 1, sample);
    const AugmentDraws cutout = draw_augmentation({.cutout = 8}, kCifar, 3, 1, sample);
    EXPECT_EQ(all.crop_y, crop.crop_y);
    EXPECT_EQ(all.crop_x, crop.crop_x);
    EXPECT_EQ(all.cutout_y, cutout.cutout_y);
    EXPECT_EQ(all.cutout_x, cutout.cutout_x);
    EXPECT_FALSE(crop.flip);
  }
}

TEST(AugmentSpec, ParsesAndPrintsTheFlag) {
  const AugmentSpec spec = parse_augment_spec("crop:4,flip,cutout:8");
  EXPECT_EQ(spec.crop_padding, 4u);
  EXPECT_TRUE(spec.flip);
  EXPECT_EQ(spec.cutout, 8u);
  EXPECT_EQ(to_string(spec), "crop:4,flip,cutout:8");
  EXPECT_EQ(to_string(parse_augment_spec("cutout:2,crop:1")), "crop:1,cutout:2");
  EXPECT_FALSE(parse_augment_spec("none").enabled());
  EXPECT_FALSE(parse_augment_spec("").enabled());
  EXPECT_EQ(to_string(AugmentSpec{}), "none");
}

TEST(AugmentSpec, BadItemsAreUsageErrorsNamingThem) {
  for (const std::string bad :
       {"crop", "crop:0", "crop:x", "crop:4px", "rotate", "flip:1", "flip,flip", ",", "cutout:-3"}) {
    try {
      parse_augment_spec(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage) << bad;
      EXPECT_NE(std::string(error.what()).find("--augment"), std::string::npos) << error.what();
    }
  }
}

ShardMeta meta_of(std::vector<std::uint64_t> shape) {
  ShardMeta meta;
  meta.dataset = "test";
  meta.sample_shape = std::move(shape);
  return meta;
}

TEST(AugmentSpec, NeedsImagesItFits) {
  const ImageShape grey = check_augmentable(kAll, meta_of({28, 28}));
  EXPECT_EQ(grey.height, 28u);
  EXPECT_EQ(grey.channels, 1u);
  EXPECT_EQ(check_augmentable(kAll, meta_of({32, 32, 3})).channels, 3u);
  EXPECT_NO_THROW(check_augmentable(AugmentSpec{}, meta_of({784})));  // off: anything goes
  const auto expect_refused = [](const AugmentSpec& spec, std::vector<std::uint64_t> shape, const std::string& text) {
    try {
      check_augmentable(spec, meta_of(std::move(shape)));
      FAIL() << "accepted " << text;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
  };
  expect_refused({.flip = true}, {784}, "needs image samples");
  expect_refused({.flip = true}, {2, 3, 4, 5}, "needs image samples");
  expect_refused({.crop_padding = 28}, {28, 28}, "crop:28");
  expect_refused({.cutout = 29}, {28, 28}, "cutout:29");
}

}  // namespace
}  // namespace pstrain::data
