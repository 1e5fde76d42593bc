#pragma once
// GroupLens's MovieLens ratings (ml-latest-small and its kin: ratings.csv userId,movieId,rating,timestamp;
// movies.csv movieId,title,genres with titles quoted where they hold commas, genres separated by '|') as CTR
// samples, one per rating:
//  - fields: user (the userId), movie (the movieId), genres (a multi-hot bag: each genre's 1-based place in
//    kMovieLensGenres; "(no genres listed)" is an empty bag), year (the year in the title's "(YYYY)", an empty bag
//    when the title has none);
//  - dense features: movie_year = (year - 1900) / 100 (0 without a year), year_missing (1 without a year);
//  - label: rating >= 4 (a "click").
// Split without leaking a user's future into training: each user's last round(test_fraction * n) of their n
// ratings by time (ties: file order) are test, the rest train.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/ctr/ctr_shard.h"

namespace pstrain::data::ctr {

// The genres GroupLens lists in ml-latest's README, in that order: genre id = place + 1.
inline constexpr std::array<std::string_view, 19> kMovieLensGenres{"Action",   "Adventure", "Animation",   "Children",
                                                                   "Comedy",   "Crime",     "Documentary", "Drama",
                                                                   "Fantasy",  "Film-Noir", "Horror",      "IMAX",
                                                                   "Musical",  "Mystery",   "Romance",     "Sci-Fi",
                                                                   "Thriller", "War",       "Western"};

CtrLayout movielens_layout();

struct MovieLensSplits {
  CtrColumns train{4}, test{4};
  std::uint64_t ratings = 0, users = 0, movies = 0;
  std::vector<std::optional<std::uint64_t>> distinct;  // exact distinct ids per field, over all ratings
};

// Reads FOLDER/ratings.csv and FOLDER/movies.csv. Throws Error(kInputData) naming the file and line of anything
// malformed (a column count, a number, a rating outside 0.5-5, an unknown genre, a movie rated but not listed).
MovieLensSplits read_movielens(const std::filesystem::path& folder, double test_fraction);

// The fields of one CSV line, with RFC 4180 quotes ("a, b" and "" for a quote inside). Throws
// Error(kInputData) "FILE:LINE: ..." for an unterminated quote.
std::vector<std::string> split_csv_line(std::string_view line, const std::string& file, std::uint64_t line_number);

// The year of a title ending in "(YYYY)", trailing spaces allowed.
std::optional<int> title_year(std::string_view title);

}  // namespace pstrain::data::ctr
