#pragma once
// What the sweep needs to know about pstrain's flags, asked of config::train_options() so the two never drift.
#include <string>
#include <utility>
#include <vector>

namespace pstrain::sweep {

using Flags = std::vector<std::pair<std::string, std::string>>;  // flag name (no "--") -> value, in order

// Throws Error(kUsage) "<where>: ..." when `flag` is not a pstrain flag or is owned by the sweep tool.
void check_flag_name(const std::string& flag, const std::string& where);

// Runs pstrain's own parser and validation on `flags` (with placeholder --data-dir/--output-dir), so a value
// pstrain would reject ("lr = fast", "mode = both") is reported with `where` before anything is launched.
void check_flag_values(const Flags& flags, const std::string& where);

// The number of passes these flags give (pstrain's default when absent): the run's last folder is pass-(P-1).
int passes_of(const Flags& flags);

}  // namespace pstrain::sweep
