#include "data/ctr/ctr_fields.h"

#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "data/ctr_file_names.h"

namespace pstrain::data::ctr {

std::vector<std::uint64_t> read_distinct_ids(const std::filesystem::path& data_dir,
                                             const std::vector<std::string>& fields) {
  const std::filesystem::path path = data_dir / kCtrFieldsFileName;
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat(path.string(), ": cannot open it (convert the data again)"));
  std::map<std::string, std::uint64_t> distinct;
  std::string line;
  std::getline(in, line);  // the header
  for (int number = 2; std::getline(in, line); ++number) {
    std::istringstream columns(line);
    std::string name, count;
    std::getline(columns, name, '\t');
    std::getline(columns, count, '\t');
    const std::optional<std::uint64_t> value = parse_number<std::uint64_t>(count);
    if (name.empty() || !value) {
      throw Error(ExitCode::kInputData, cat(path.string(), ":", number,
                                            ": expected a field's name and its distinct "
                                            "ids, tab-separated"));
    }
    distinct[name] = *value;
  }
  std::vector<std::uint64_t> counts;
  for (const std::string& field : fields) {
    const auto found = distinct.find(field);
    if (found == distinct.end()) throw Error(ExitCode::kInputData, cat(path.string(), ": no line for field ", field));
    counts.push_back(found->second);
  }
  return counts;
}

}  // namespace pstrain::data::ctr
