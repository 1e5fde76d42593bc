// MovieLens: CSV quoting, years from titles, and the real ml-latest-small (../shared/data/movielens-small): every
// rating becomes one sample, each user's last 10% by time are test, and no test rating is older than a train
// rating of the same user.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "data/ctr/movielens.h"
#include "test_files.h"

namespace pstrain::data::ctr {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

TEST(MovieLens, CsvQuotesHoldCommasAndQuotes) {
  EXPECT_EQ(split_csv_line(R"csv(7789,"11'09""01 - September 11 (2002)","Drama")csv", "m.csv", 2),
            (std::vector<std::string>{"7789", "11'09\"01 - September 11 (2002)", "Drama"}));
  EXPECT_EQ(split_csv_line("1,\"Hello, World (1999)\",", "m.csv", 2),
            (std::vector<std::string>{"1", "Hello, World (1999)", ""}));
  expect_error([] { split_csv_line("1,\"open", "m.csv", 9); }, ExitCode::kInputData, {"m.csv:9:", "quote"});
}

TEST(MovieLens, YearComesFromTheTitlesEnd) {
  EXPECT_EQ(title_year("Toy Story (1995)"), 1995);
  EXPECT_EQ(title_year("Babylon 5 "), std::nullopt);
  EXPECT_EQ(title_year("NA"), std::nullopt);
  EXPECT_EQ(title_year("1984 (1984) "), 1984);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(MovieLens, BadInputIsNamedByFileAndLine) {
  TempDir dir;
  write_text(dir / "movies.csv", "movieId,title,genres\n1,A (2000),Drama\n2,B,Cartoon\n");
  write_text(dir / "ratings.csv", "userId,movieId,rating,timestamp\n1,1,4,10\n");
  expect_error([&] { read_movielens(dir.path(), 0.1); }, ExitCode::kInputData,
               {"movies.csv:3:", "unknown genre 'Cartoon'"});
  write_text(dir / "movies.csv", "movieId,title,genres\n1,A (2000),Drama\n");
  write_text(dir / "ratings.csv", "userId,movieId,rating,timestamp\n1,1,4,10\n1,2,3,11\n");
  expect_error([&] { read_movielens(dir.path(), 0.1); }, ExitCode::kInputData,
               {"ratings.csv:3:", "movieId 2 is not in movies.csv"});
  write_text(dir / "ratings.csv", "userId,movieId,rating,timestamp\n1,1,four,10\n");
  expect_error([&] { read_movielens(dir.path(), 0.1); }, ExitCode::kInputData, {"ratings.csv:2:", "'four'"});
  write_text(dir / "ratings.csv", "userId,movieId,rating,timestamp\n1,1,7,10\n");
  expect_error([&] { read_movielens(dir.path(), 0.1); }, ExitCode::kInputData, {"ratings.csv:2:", "not 0.5 to 5"});
}

struct RatingRow {
  std::uint64_t user, movie;
  double stars;
  std::int64_t time;
};

// ratings.csv read independently of the code under test (it has no quotes).
std::vector<RatingRow> plain_ratings(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<RatingRow> rows;
  while (std::getline(in, line)) {
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    RatingRow row{};
    fields >> row.user >> row.movie >> row.stars >> row.time;
    rows.push_back(row);
  }
  return rows;
}

TEST(MovieLens, RealDataSplitsEachUsersLastTenthByTime) {
  const fs::path folder = PSTRAIN_MOVIELENS_DIR;
  if (!fs::exists(folder / "ratings.csv")) GTEST_SKIP() << folder << " is not there";
  const MovieLensSplits splits = read_movielens(folder, 0.1);
  EXPECT_EQ(splits.ratings, 100004u);
  EXPECT_EQ(splits.users, 671u);
  EXPECT_EQ(splits.movies, 9066u);
  EXPECT_EQ(splits.train.samples + splits.test.samples, 100004u);

  const std::vector<RatingRow> rows = plain_ratings(folder / "ratings.csv");
  std::map<std::pair<std::uint64_t, std::uint64_t>, const RatingRow*> by_key;
  std::map<std::uint64_t, std::uint64_t> per_user;
  for (const RatingRow& row : rows) {
    by_key[{row.user, row.movie}] = &row;
    ++per_user[row.user];
  }
  std::map<std::uint64_t, std::int64_t> latest_train, earliest_test;
  std::map<std::uint64_t, std::uint64_t> test_per_user;
  std::uint64_t clicks = 0, expected_clicks = 0;
  for (const auto* split : {&splits.train, &splits.test}) {
    for (std::size_t s = 0; s < split->samples; ++s) {
      const std::uint64_t user = split->values[0][s], movie = split->values[1][s];  // one id per bag
      const RatingRow& row = *by_key.at({user, movie});
      EXPECT_EQ(split->labels[s], row.stars >= 4 ? 1 : 0);
      clicks += static_cast<std::uint64_t>(split->labels[s]);
      if (split == &splits.test) {
        ++test_per_user[user];
        earliest_test.try_emplace(user, row.time);
        earliest_test[user] = std::min(earliest_test[user], row.time);
      } else {
        latest_train[user] = std::max(latest_train[user], row.time);
      }
    }
  }
  for (const RatingRow& row : rows) expected_clicks += row.stars >= 4;
  EXPECT_EQ(clicks, expected_clicks);
  for (const auto& [user, count] : per_user) {
    EXPECT_EQ(test_per_user[user], static_cast<std::uint64_t>(std::llround(0.1 * static_cast<double>(count))));
    if (test_per_user[user] > 0) {
      EXPECT_LE(latest_train[user], earliest_test[user]) << "user " << user;
    }
  }
  // Toy Story (1995), movie 1: genres Adventure|Animation|Children|Comedy|Fantasy -> 2, 3, 4, 5, 9; year 1995.
  for (std::size_t s = 0; s < splits.train.samples; ++s) {
    if (splits.train.values[1][s] != 1) continue;
    const auto& offsets = splits.train.offsets[2];
    EXPECT_EQ(std::vector<std::uint64_t>(splits.train.values[2].begin() + static_cast<std::ptrdiff_t>(offsets[s]),
                                         splits.train.values[2].begin() + static_cast<std::ptrdiff_t>(offsets[s + 1])),
              (std::vector<std::uint64_t>{2, 3, 4, 5, 9}));
    EXPECT_FLOAT_EQ(splits.train.dense[2 * s], 0.95f);
    break;
  }
  EXPECT_EQ(splits.distinct[0], 671u);
  EXPECT_EQ(splits.distinct[2], 19u);
}

}  // namespace
}  // namespace pstrain::data::ctr
