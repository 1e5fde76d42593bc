#include "data/ctr/movielens.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/parse_number.h"

namespace pstrain::data::ctr {

namespace fs = std::filesystem;

namespace {

enum MovieLensField : std::size_t { kUser = 0, kMovie = 1, kGenres = 2, kYear = 3 };

struct Movie {
  std::vector<std::uint64_t> genres;
  std::optional<int> year;
};

struct Rating {
  std::uint64_t user = 0, movie = 0;
  std::int64_t timestamp = 0;
  bool click = false;
};

[[noreturn]] void bad_line(const fs::path& path, std::uint64_t line, const std::string& problem) {
  throw Error(ExitCode::kInputData, cat(path.string(), ":", line, ": ", problem));
}

template <typename T>
T parse_field(const std::string& text, const fs::path& path, std::uint64_t line, const char* what) {
  const std::optional<T> value = pstrain::parse_number<T>(text);
  if (!value) bad_line(path, line, cat(what, " '", text, "' is not a number"));
  return *value;
}

// The lines of a file after its header, which must name `header` (quotes dropped).
template <typename OnLine>
void read_csv(const fs::path& path, const std::vector<std::string>& header, OnLine on_line) {
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat(path.string(), ": cannot open (MovieLens's file missing?)"));
  std::string line;
  if (!std::getline(in, line)) throw Error(ExitCode::kInputData, cat(path.string(), ": empty file (no lines)"));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (split_csv_line(line, path.string(), 1) != header) {
    std::string expected;
    for (const std::string& name : header) expected += cat(expected.empty() ? "" : ",", name);
    bad_line(path, 1, cat("header '", line, "' is not ", expected, " (not GroupLens's format?)"));
  }
  for (std::uint64_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv_line(line, path.string(), number);
    if (fields.size() != header.size()) {
      bad_line(path, number, cat("expected ", header.size(), " comma-separated fields, found ", fields.size()));
    }
    on_line(fields, number);
  }
  if (in.bad()) throw Error(ExitCode::kInputData, cat(path.string(), ": read error"));
}

std::unordered_map<std::uint64_t, Movie> read_movies(const fs::path& path) {
  std::unordered_map<std::uint64_t, Movie> movies;
  read_csv(path, {"movieId", "title", "genres"}, [&](const std::vector<std::string>& fields, std::uint64_t line) {
    const auto id = parse_field<std::uint64_t>(fields[0], path, line, "movieId");
    Movie movie;
    movie.year = title_year(fields[1]);
    std::string_view genres = fields[2];
    while (!genres.empty() && genres != "(no genres listed)") {
      const std::string_view genre = genres.substr(0, genres.find('|'));
      const auto known = std::find(kMovieLensGenres.begin(), kMovieLensGenres.end(), genre);
      if (known == kMovieLensGenres.end()) bad_line(path, line, cat("unknown genre '", genre, "'"));
      movie.genres.push_back(static_cast<std::uint64_t>(known - kMovieLensGenres.begin()) + 1);
      genres.remove_prefix(std::min(genres.size(), genre.size() + 1));
    }
    if (!movies.emplace(id, std::move(movie)).second) bad_line(path, line, cat("movieId ", id, " listed twice"));
  });
  return movies;
}

std::vector<Rating> read_ratings(const fs::path& path, const std::unordered_map<std::uint64_t, Movie>& movies) {
  std::vector<Rating> ratings;
  read_csv(path, {"userId", "movieId", "rating", "timestamp"},
           [&](const std::vector<std::string>& fields, std::uint64_t line) {
             Rating rating;
             rating.user = parse_field<std::uint64_t>(fields[0], path, line, "userId");
             rating.movie = parse_field<std::uint64_t>(fields[1], path, line, "movieId");
             const auto stars = parse_field<double>(fields[2], path, line, "rating");
             if (!(stars >= 0.5 && stars <= 5)) bad_line(path, line, cat("rating ", fields[2], " is not 0.5 to 5"));
             rating.click = stars >= 4;
             rating.timestamp = parse_field<std::int64_t>(fields[3], path, line, "timestamp");
             if (!movies.count(rating.movie)) {
               bad_line(path, line, cat("movieId ", rating.movie, " is not in movies.csv"));
             }
             ratings.push_back(rating);
           });
  if (ratings.empty()) throw Error(ExitCode::kInputData, cat(path.string(), ": no ratings"));
  return ratings;
}

void append_sample(CtrColumns& out, const Rating& rating, const Movie& movie) {
  out.values[kUser].push_back(rating.user);
  out.values[kMovie].push_back(rating.movie);
  out.values[kGenres].insert(out.values[kGenres].end(), movie.genres.begin(), movie.genres.end());
  if (movie.year) out.values[kYear].push_back(static_cast<std::uint64_t>(*movie.year));
  for (std::size_t f = 0; f < out.fields(); ++f) out.offsets[f].push_back(out.values[f].size());
  out.dense.push_back(movie.year ? static_cast<float>(*movie.year - 1900) / 100.0f : 0.0f);
  out.dense.push_back(movie.year ? 0.0f : 1.0f);
  out.labels.push_back(rating.click ? 1 : 0);
  ++out.samples;
}

// Marks each user's last round(fraction * n) ratings by time (ties: file order) as test.
std::vector<bool> test_ratings(const std::vector<Rating>& ratings, double fraction) {
  std::map<std::uint64_t, std::vector<std::size_t>> by_user;
  for (std::size_t i = 0; i < ratings.size(); ++i) by_user[ratings[i].user].push_back(i);
  std::vector<bool> test(ratings.size(), false);
  for (auto& [user, indices] : by_user) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](std::size_t a, std::size_t b) { return ratings[a].timestamp < ratings[b].timestamp; });
    const auto held = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(indices.size())));
    for (std::size_t k = indices.size() - held; k < indices.size(); ++k) test[indices[k]] = true;
  }
  return test;
}

}  // namespace

CtrLayout movielens_layout() {
  return {"movielens", {"movie_year", "year_missing"}, {"user", "movie", "genres", "year"}};
}

std::vector<std::string> split_csv_line(std::string_view line, const std::string& file, std::uint64_t line_number) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw Error(ExitCode::kInputData, cat(file, ":", line_number, ": a quote is not closed"));
  return fields;
}

std::optional<int> title_year(std::string_view title) {
  while (!title.empty() && title.back() == ' ') title.remove_suffix(1);
  if (title.size() < 6 || title.back() != ')' || title[title.size() - 6] != '(') return std::nullopt;
  int year = 0;
  const std::string_view digits = title.substr(title.size() - 5, 4);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + 4, year);
  if (error != std::errc() || end != digits.data() + 4) return std::nullopt;
  return year;
}

MovieLensSplits read_movielens(const fs::path& folder, double test_fraction) {
  const std::unordered_map<std::uint64_t, Movie> movies = read_movies(folder / "movies.csv");
  const std::vector<Rating> ratings = read_ratings(folder / "ratings.csv", movies);
  const std::vector<bool> test = test_ratings(ratings, test_fraction);
  MovieLensSplits splits;
  std::array<std::unordered_set<std::uint64_t>, 4> distinct;
  for (std::size_t i = 0; i < ratings.size(); ++i) {
    const Movie& movie = movies.at(ratings[i].movie);
    append_sample(test[i] ? splits.test : splits.train, ratings[i], movie);
    distinct[kUser].insert(ratings[i].user);
    distinct[kMovie].insert(ratings[i].movie);
    distinct[kGenres].insert(movie.genres.begin(), movie.genres.end());
    if (movie.year) distinct[kYear].insert(static_cast<std::uint64_t>(*movie.year));
  }
  splits.ratings = ratings.size();
  splits.users = distinct[kUser].size();
  splits.movies = movies.size();
  for (const auto& ids : distinct) splits.distinct.emplace_back(ids.size());
  return splits;
}

}  // namespace pstrain::data::ctr
