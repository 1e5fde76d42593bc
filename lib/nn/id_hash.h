#pragma once
// Raw 64-bit categorical ids to rows of a hashed table (embedding_bag): the table's size is a choice of the model
// (rows=R), not a property of the data, so ids of any range and any vocabulary share R rows. The servers that
// hold a table by rows resolve ids with the same function, so it is part of the model's meaning: changing it
// changes which row every id trains.
//
// row(id) = splitmix64(id + splitmix64(seed)) mod rows. splitmix64's finaliser is a bijection of 64-bit words
// with full avalanche, so two distinct ids never share a 64-bit hash: every collision comes from the reduction
// mod rows, and behaves as uniform hashing. For n distinct ids in R rows: expected rows in use R(1 - e^(-n/R)),
// expected colliding pairs n(n-1)/(2R), and an id shares its row with another with probability
// 1 - (1 - 1/R)^(n-1) ~ 1 - e^(-n/R) (n = R: 37% of rows stay empty and 63% of ids collide; n = R/10: 9.5% of
// ids collide). The modulo's bias is below rows / 2^64. Tables with different seeds collide on different pairs.
#include <cstdint>

namespace pstrain::nn {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The row of `id` in a table of `rows` rows hashed with `seed`; rows > 0.
constexpr std::uint64_t hashed_row(std::uint64_t id, std::uint64_t seed, std::uint64_t rows) {
  return splitmix64(id + splitmix64(seed)) % rows;
}

}  // namespace pstrain::nn
