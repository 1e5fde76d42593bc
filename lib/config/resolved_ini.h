#pragma once
// config.ini as a run resolved its flags: what `--config runs/a/config.ini` and a resume compare against must give
// the same run again. Some flags' defaults depend on others (a click preset's optimizer, learning rate, batch and
// widths; GEO's optimizer: resolve_train_config), so the parsed defaults ("optimizer = momentum" for a deepfm run)
// would, read back as given values, train another model; those are written as the run resolved them.
#include <string>

#include <boost/program_options.hpp>

#include "config/train_config.h"

namespace pstrain::config {

// to_ini(values) (core/options.h), with the flags whose default the run resolved from other flags written as the
// values `config` holds.
std::string resolved_ini(const boost::program_options::variables_map& values, const TrainConfig& config);

}  // namespace pstrain::config
