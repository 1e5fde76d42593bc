#pragma once
// OUTPUT/provenance.json, "version everything" as the seed's sweep article asks: enough to tell later exactly
// what produced a run's results.
//   version           pstrain's version
//   git_commit        the commit the build was configured from ("unknown" outside a git checkout)
//   flags             every resolved flag (command line > environment > file), as strings
//   model             the model description (source and text) and its parameter count
//   data_fingerprint  the data folder and the CRC-32 of every shard file read
//   written_at        UTC time
#include <string>

#include "config/train_config.h"
#include "nn/model_plan.h"
#include "run_common/data_plan.h"

namespace pstrain::job {

// Rank 0, once the data and the model are planned. Error(kOutput) when the file cannot be written, Error(kInputData)
// when a shard cannot be read.
void write_provenance(const config::TrainConfig& config, const run_common::DataPlan& data, const nn::ModelPlan& model,
                      const std::string& resolved_ini);

}  // namespace pstrain::job
