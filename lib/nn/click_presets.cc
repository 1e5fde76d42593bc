#include "nn/click_presets.h"

#include <sstream>

#include "core/error.h"

namespace pstrain::nn {

namespace {

// "prefix0,prefix1,...": the names of one layer per field.
std::string per_field(const std::string& prefix, std::size_t fields) {
  std::string names;
  for (std::size_t i = 0; i < fields; ++i) names += cat(i == 0 ? "" : ",", prefix, i);
  return names;
}

void check_click_options(const PresetOptions& options, std::size_t least_fields) {
  const std::string name = options.name;
  if (options.field_rows.size() < least_fields) {
    throw Error(ExitCode::kUsage, cat("--model ", name, " needs CTR data with at least ", least_fields,
                                      " categorical field(s) (pstrain-data criteo | movielens | synthetic-ctr)"));
  }
  if (options.embedding_dim == 0) throw Error(ExitCode::kUsage, "--embedding-dim must be at least 1");
  for (const std::size_t rows : options.field_rows) {
    if (rows == 0) throw Error(ExitCode::kUsage, cat("--model ", name, ": every table needs at least one row"));
  }
}

// Tables start near zero, U(-0.01, 0.01), as DeepFM's N(0, 0.01): on synthetic-ctr data (200k lines, one pass)
// test AUC 0.721 against 0.706 at embedding_bag's default 1/sqrt(dim) for DLRM, 0.726 against 0.657 for DeepFM,
// whose FM term sums the products of 325 pairs of fields.
constexpr const char* kTableLimit = "0.01";

// One embedding_bag per field: NAME<i> field=<i> rows=<field_rows[i]> dim=DIM (seed: the field, plus `seed_base`).
void tables(std::ostream& out, const PresetOptions& options, const std::string& prefix, std::size_t dim,
            std::size_t seed_base) {
  for (std::size_t i = 0; i < options.field_rows.size(); ++i) {
    out << prefix << i << " embedding_bag field=" << i << " rows=" << options.field_rows[i] << " dim=" << dim
        << " seed=" << seed_base + i << " limit=" << kTableLimit << "\n";
  }
}

// Dense layers of `widths`, each followed by relu, the first reading `input`; returns the last layer's name.
std::string relu_mlp(std::ostream& out, const std::string& prefix, const std::vector<std::size_t>& widths,
                     const std::string& input) {
  std::string last = input;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const std::string name = cat(prefix, i + 1);
    out << name << " dense units=" << widths[i] << " inputs=" << last << "\n" << name << "_relu relu\n";
    last = name + "_relu";
  }
  return last;
}

}  // namespace

std::size_t click_table_rows(std::uint64_t distinct_ids) {
  constexpr std::uint64_t kFewest = 16, kMost = std::uint64_t{1} << 22;
  std::uint64_t rows = kFewest;
  while (rows < 2 * distinct_ids && rows < kMost) rows *= 2;
  return static_cast<std::size_t>(rows);
}

std::string dlrm_text(const PresetOptions& options) {
  check_click_options(options, 1);
  if (options.dense_features == 0) {
    throw Error(ExitCode::kUsage,
                "--model dlrm reads dense features into its bottom MLP, and the data have none "
                "(use --model deepfm)");
  }
  const std::size_t fields = options.field_rows.size();
  std::ostringstream out;
  out << "# preset dlrm: Naumov et al. 2019; " << fields << " fields, dim " << options.embedding_dim << "\n";
  std::vector<std::size_t> bottom = options.bottom_hidden;
  bottom.push_back(options.embedding_dim);
  const std::string bottom_out = relu_mlp(out, "bottom", bottom, "input");
  tables(out, options, "table", options.embedding_dim, 0);
  out << "interaction dot_interaction inputs=" << bottom_out << "," << per_field("table", fields) << "\n";
  const std::string top_out = relu_mlp(out, "top", options.hidden, "interaction");
  out << "logit dense units=1 inputs=" << top_out << " loss=bce\n";
  return out.str();
}

std::string deepfm_text(const PresetOptions& options) {
  check_click_options(options, 2);
  const std::size_t fields = options.field_rows.size();
  std::ostringstream out;
  out << "# preset deepfm: Guo et al. 2017; " << fields << " fields, dim " << options.embedding_dim << "\n";
  // Seeds apart from the vector tables', so a weight and a vector of one id collide with different ids.
  tables(out, options, "weight", 1, 1000);
  out << "linear add inputs=" << per_field("weight", fields) << "\n";
  tables(out, options, "vector", options.embedding_dim, 0);
  out << "fm_term fm inputs=" << per_field("vector", fields) << "\n";
  const std::string deep_in =
      options.dense_features > 0 ? "input," + per_field("vector", fields) : per_field("vector", fields);
  out << "deep_in concat inputs=" << deep_in << "\n";
  const std::string deep_out = relu_mlp(out, "deep", options.hidden, "deep_in");
  out << "deep dense units=1 inputs=" << deep_out << "\n";
  out << "logit add inputs=linear,fm_term,deep loss=bce\n";
  return out.str();
}

}  // namespace pstrain::nn
