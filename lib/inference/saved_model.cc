#include "inference/saved_model.h"

#include "checkpoint/pass_folder.h"
#include "core/error.h"
#include "core/join_numbers.h"
#include "nn/model_spec.h"

namespace pstrain::inference {

namespace fs = std::filesystem;

namespace {

// model.txt and model.ini, or the flags' model for a folder written before pass folders named theirs.
checkpoint::PassModel find_model(const fs::path& pass_dir, const ModelChoice& choice, const data::ShardMeta* data) {
  if (auto saved = checkpoint::read_pass_model(pass_dir)) return *saved;
  if (data == nullptr) {
    throw Error(ExitCode::kUsage, cat(pass_dir.string(), " does not name its model (no ", checkpoint::kModelInfoFile,
                                      ": written before pass folders did); give --data-dir and --model or "
                                      "--model-file"));
  }
  checkpoint::PassModel model;
  model.info.input = nn::model_input_shape(data->sample_shape);
  model.info.classes = data->num_classes;
  model.info.dataset = data->dataset;
  model.info.tokens = data->tokens.has_value();
  model.info.vocab_size = data->tokens ? data->tokens->vocab_size : 0;
  if (choice.model_file) {
    model.description = nn::read_model_file(*choice.model_file).text;
    model.info.source = choice.model_file->string();
  } else if (choice.preset) {
    nn::PresetOptions options = *choice.preset;
    options.classes = data->num_classes;
    options.vocab = model.info.vocab_size;
    model.description = nn::preset_text(options);
    model.info.source = "preset " + options.name;
  } else {
    throw Error(ExitCode::kUsage, cat(pass_dir.string(), " does not name its model (no ", checkpoint::kModelInfoFile,
                                      ": written before pass folders did); give --model or --model-file as the "
                                      "run that wrote it did"));
  }
  return model;
}

}  // namespace

void check_pass_folder(const fs::path& pass_dir) {
  std::error_code error;
  if (!fs::is_directory(pass_dir, error)) {
    throw Error(ExitCode::kInputData, cat(pass_dir.string(), ": no such pass folder"));
  }
  checkpoint::verify_pass_folder(pass_dir);
}

SavedModel load_saved_plan(const fs::path& pass_dir, const ModelChoice& choice, const data::ShardMeta* data) {
  check_pass_folder(pass_dir);
  checkpoint::PassModel found = find_model(pass_dir, choice, data);
  SavedModel model;
  model.pass_dir = pass_dir;
  model.info = found.info;
  const std::string source = fs::exists(pass_dir / checkpoint::kModelTextFile)
                                 ? (pass_dir / checkpoint::kModelTextFile).string()
                                 : found.info.source;
  model.plan = nn::plan_model(nn::parse_model_text(found.description, source), model.info.input, model.info.classes);
  model.keyed = plan_keyed_tables(model.plan, pass_dir);
  return model;
}

SavedModel load_saved_model(const fs::path& pass_dir, const ModelChoice& choice, const data::ShardMeta* data) {
  SavedModel model = load_saved_plan(pass_dir, choice, data);
  model.parameters = checkpoint::read_pass_parameters(pass_dir, model.plan.parameters, model.plan.parameter_count,
                                                      checkpoint::KeyedTables::kRead);
  model.state = checkpoint::read_pass_state(pass_dir, model.plan.state, model.plan.state_count);
  return model;
}

void check_data_fits(const SavedModel& model, const data::ShardMeta& data, const std::string& data_name) {
  const nn::Shape shape = nn::model_input_shape(data.sample_shape);
  if (shape != model.plan.input) {
    throw Error(ExitCode::kInputData,
                cat(data_name, " holds samples of shape ", join_numbers(data.sample_shape, "x"), "; the model of ",
                    model.pass_dir.string(), " reads samples of shape ", join_numbers(model.plan.input, "x")));
  }
  if (data.num_classes != model.plan.classes) {
    throw Error(ExitCode::kInputData, cat(data_name, " has ", data.num_classes, " classes; the model of ",
                                          model.pass_dir.string(), " predicts ", model.plan.classes));
  }
  const std::size_t fields = data.categorical ? data.categorical->field_names.size() : 0;
  if (model.plan.categorical_fields > fields) {
    throw Error(ExitCode::kInputData, cat(data_name, " holds ", fields, " categorical field(s); the model of ",
                                          model.pass_dir.string(), " reads ", model.plan.categorical_fields));
  }
  const std::uint32_t vocab = data.tokens ? data.tokens->vocab_size : 0;
  if (data.tokens.has_value() != model.info.tokens || vocab != model.info.vocab_size) {
    throw Error(ExitCode::kInputData,
                cat(data_name,
                    data.tokens ? cat(" holds ids of a vocabulary of ", vocab) : std::string(" holds no ids"),
                    "; the model of ", model.pass_dir.string(), " was trained on ",
                    model.info.tokens ? cat("ids of a vocabulary of ", model.info.vocab_size) : std::string("no ids")));
  }
}

}  // namespace pstrain::inference
