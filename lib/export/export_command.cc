// pstrain export --onnx FILE PASS_FOLDER: a pass folder's model as an ONNX file (onnx_export.h); pstrain export
// --changed-rows FILE --since OLD PASS_FOLDER: the rows of its keyed tables changed since OLD (changed_rows.h).
#include "export/export_command.h"

#include <iostream>

#include "core/error.h"
#include "export/changed_rows.h"
#include "export/onnx_export.h"
#include "inference/command_line.h"

namespace pstrain::exporting {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: pstrain export --onnx FILE PASS_FOLDER [--external-data-above BYTES]\n"
    "       pstrain export --changed-rows FILE.h5 --since OLD_PASS_FOLDER PASS_FOLDER\n"
    "Writes a pass folder's model as an ONNX model (opset 13): input \"input\" (NCHW float images, float vectors,\n"
    "int64 word ids, a click model's dense features) and, per embedding_bag layer L, \"L.rows\" (int64 hashed\n"
    "rows) or, for a table keyed by the raw id, \"L.ids\" (int64 raw ids; docs/using-a-model.md); outputs\n"
    "\"logits\" and \"probabilities\". Weights past BYTES (default 2 GB, under protobuf's 2 GiB) go, largest\n"
    "first, to ONNX external data in FILE.data. The pass folder names its model (model.txt, model.ini); older\n"
    "ones need --data-dir and --model or --model-file.\n"
    "--changed-rows writes, per table keyed by the raw id (--table-keys exact), the ids whose row is new or\n"
    "changed since the earlier pass folder OLD of the same run, with their rows, and the ids evicted since (HDF5,\n"
    "docs/using-a-model.md): the update of a serving system that holds OLD's tables.";

po::options_description export_options() {
  po::options_description flags("options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("onnx", po::value<std::string>()->value_name("FILE"), "the ONNX file to write (must not exist)")
      ("changed-rows", po::value<std::string>()->value_name("FILE"),
       "the keyed tables' rows changed since --since, as HDF5 (must not exist)")
      ("since", po::value<std::string>()->value_name("PASS"), "with --changed-rows: the earlier pass folder")
      ("external-data-above", po::value<long long>()->value_name("BYTES"),
       "weights the .onnx holds inline at most; the largest past it go to FILE.data (default 2000000000)")
      ("data-dir", po::value<std::string>()->value_name("DIR"), "older pass folders only: the data, for the sample shape");
  // clang-format on
  flags.add(inference::model_choice_options());
  return flags;
}

ExportOptions export_options_of(const po::variables_map& values) {
  ExportOptions options;
  if (values.count("external-data-above")) {
    const long long bytes = values["external-data-above"].as<long long>();
    if (bytes < 0) throw Error(ExitCode::kUsage, cat("--external-data-above must be >= 0 (got ", bytes, ")"));
    options.external_data_above = static_cast<std::uint64_t>(bytes);
  }
  return options;
}

// --changed-rows FILE --since OLD PASS_FOLDER.
int export_changed_rows(const po::variables_map& values) {
  if (values.count("onnx")) throw Error(ExitCode::kUsage, "give --onnx or --changed-rows, not both");
  if (!values.count("since")) {
    throw Error(ExitCode::kUsage, "--changed-rows needs --since OLD_PASS_FOLDER, the earlier pass folder");
  }
  if (!values.count("pass-folder")) throw Error(ExitCode::kUsage, "missing PASS_FOLDER (see pstrain export --help)");
  const fs::path target = values["changed-rows"].as<std::string>();
  const fs::path since = values["since"].as<std::string>();
  const fs::path pass_dir = values["pass-folder"].as<std::string>();
  inference::check_new_output("--changed-rows", target);
  const std::vector<TableDelta> deltas = changed_rows(since, pass_dir);
  write_changed_rows(target, deltas, since, pass_dir);
  std::cout << "pstrain export: " << since.string() << " -> " << pass_dir.string() << " changed rows -> "
            << target.string() << " (";
  for (std::size_t t = 0; t < deltas.size(); ++t) {
    std::cout << (t == 0 ? "" : "; ") << deltas[t].name << ": " << deltas[t].changed_ids.size() << " new or changed, "
              << deltas[t].removed_ids.size() << " removed";
  }
  std::cout << ")" << std::endl;
  return 0;
}

}  // namespace

int run_export(int argc, char** argv) {
  const po::options_description flags = export_options();
  const auto values = inference::parse_command(argc, argv, kUsage, flags, "pass-folder");
  if (!values) return 0;
  if (values->count("changed-rows")) return export_changed_rows(*values);
  if (values->count("since")) throw Error(ExitCode::kUsage, "--since goes with --changed-rows");
  if (!built_with_onnx()) {
    throw Error(ExitCode::kUsage, "this pstrain was built without ONNX (install libonnx-dev and rebuild)");
  }
  if (!values->count("onnx")) throw Error(ExitCode::kUsage, "pstrain export needs --onnx FILE (see --help)");
  if (!values->count("pass-folder")) throw Error(ExitCode::kUsage, "missing PASS_FOLDER (see pstrain export --help)");
  const fs::path target = (*values)["onnx"].as<std::string>();
  const fs::path pass_dir = (*values)["pass-folder"].as<std::string>();
  inference::check_new_output("--onnx", target);
  std::optional<data::ShardMeta> meta;
  if (values->count("data-dir"))
    meta = data::read_shard_meta(data::test_shard_path((*values)["data-dir"].as<std::string>()));
  const inference::SavedModel model =
      inference::load_saved_model(pass_dir, inference::resolve_model_choice(*values), meta ? &*meta : nullptr);
  const ExportSummary summary = write_onnx_model(model, target, export_options_of(*values));
  std::cout << "pstrain export: " << pass_dir.string() << " -> " << target.string() << " (ONNX opset " << kOnnxOpset
            << ", " << model.plan.nodes.size() << " layers, " << model.plan.parameter_count << " parameters";
  if (summary.tensors > 0) {
    std::cout << "; " << summary.tensors << " tensor(s), " << summary.bytes << " bytes, as external data in "
              << summary.external_data.string();
  }
  std::cout << ")" << std::endl;
  return 0;
}

}  // namespace pstrain::exporting
