#pragma once
// Deterministic parameter initialisation. Every rank must draw bit-identical parameters from the same seed on
// any platform, so std:: distributions (whose algorithms are implementation-defined) are not used: raw
// std::mt19937_64 output (fully specified by the standard) is turned into floats here, with exact arithmetic.
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>

#include "compute/backend.h"

namespace pstrain::nn {

// The top 24 bits of one engine output as a float in [0, 1): 24 bits fit a float's significand, so the
// conversion is exact.
float unit_float(std::uint64_t raw_bits);

// Half-width a of the U(-a, a) weight distribution for a layer: Kaiming-uniform sqrt(6 / fan_in) for relu
// (it zeroes half its inputs), Glorot/Xavier sqrt(6 / (fan_in + fan_out)) for tanh and sigmoid.
float init_limit(compute::Activation activation, std::size_t fan_in, std::size_t fan_out);

// A layer's `init=` attribute for its weights: "kaiming" (the relu rule above) or "glorot" (the tanh/sigmoid
// rule), as a uniform InitRule limit.
float named_init_limit(const std::string& rule, std::size_t fan_in, std::size_t fan_out);

// Fills `out` with U(-limit, limit), consuming exactly one engine output per element.
void fill_uniform(std::mt19937_64& engine, float limit, std::span<float> out);

// The counter-based generator's key for the tensor `name` ("embed.weight") of a model initialised from `seed`.
std::uint64_t counter_init_key(std::uint64_t seed, std::string_view name);
// Fills `out` with elements first_index, first_index + 1, ... of the tensor whose key is `key`: U(-limit, limit)
// from counter_uniform(key, element), with fill_uniform's arithmetic. Any range gives the values of the whole.
void fill_counter_uniform(std::uint64_t key, float limit, std::uint64_t first_index, std::span<float> out);

}  // namespace pstrain::nn
