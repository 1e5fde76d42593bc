// lib/export/changed_rows.h: the change between two keyed tables, by a merge of their keys: new ids and ids whose
// row changed in any bit (with their new rows), ids removed, the new default row; applied to the old table it
// gives the new one exactly. And a keyed table's ONNX form: its raw ids through ai.onnx.ml's LabelEncoder.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/error.h"
#include "export/changed_rows.h"
#include "export/onnx_export.h"
#include "nn/model_spec.h"

namespace pstrain::exporting {
namespace {

// Applies `delta` to the table (keys, rows with the default row first) and returns it in the same form.
std::pair<std::vector<std::int64_t>, std::vector<float>> apply(const TableDelta& delta,
                                                               const std::vector<std::int64_t>& keys,
                                                               const std::vector<float>& rows) {
  const std::size_t w = delta.width;
  std::map<std::int64_t, std::vector<float>> table;
  for (std::size_t k = 0; k < keys.size(); ++k)
    table[keys[k]].assign(rows.begin() + (k + 1) * w, rows.begin() + (k + 2) * w);
  for (const std::int64_t id : delta.removed_ids) EXPECT_EQ(table.erase(id), 1u) << id;
  for (std::size_t i = 0; i < delta.changed_ids.size(); ++i) {
    table[delta.changed_ids[i]].assign(delta.changed_rows.begin() + i * w, delta.changed_rows.begin() + (i + 1) * w);
  }
  std::pair<std::vector<std::int64_t>, std::vector<float>> result{{}, delta.default_row};
  for (const auto& [id, row] : table) {
    result.first.push_back(id);
    result.second.insert(result.second.end(), row.begin(), row.end());
  }
  return result;
}

TEST(ChangedRows, NewChangedAndRemovedIdsApplyToTheNewTableExactly) {
  const std::vector<std::int64_t> old_keys = {-7, 2, 5, 9};
  const std::vector<float> old_rows = {0, 0, 1, 1, 2, 2, 5, 5, 9, 9};
  // 2 removed, 5 the same, -7 changed in its last bit only (-0.0 vs 0.0 too), 9 changed, 4 and 11 new.
  const std::vector<std::int64_t> new_keys = {-7, 4, 5, 9, 11};
  const std::vector<float> new_rows = {0, 0, 1, std::nextafter(1.0f, 2.0f), 4, 4, 5, 5, 9, -0.0f, 11, 11};
  const TableDelta delta = table_delta("t.weight", 2, {old_keys, old_rows}, {new_keys, new_rows});
  EXPECT_EQ(delta.changed_ids, (std::vector<std::int64_t>{-7, 4, 9, 11}));
  EXPECT_EQ(delta.removed_ids, (std::vector<std::int64_t>{2}));
  const auto [keys, rows] = apply(delta, old_keys, old_rows);
  EXPECT_EQ(keys, new_keys);
  ASSERT_EQ(rows.size(), new_rows.size());
  EXPECT_EQ(std::memcmp(rows.data(), new_rows.data(), rows.size() * sizeof(float)), 0);
  // Nothing held before, or nothing held now.
  const std::vector<float> only_default = {0, 0};
  const KeyedTableRows empty{{}, only_default};
  EXPECT_EQ(table_delta("t", 2, empty, {new_keys, new_rows}).changed_ids, new_keys);
  EXPECT_EQ(table_delta("t", 2, {new_keys, new_rows}, empty).removed_ids, new_keys);
  EXPECT_TRUE(table_delta("t", 2, {new_keys, new_rows}, {new_keys, new_rows}).changed_ids.empty());
}

TEST(OnnxExport, AKeyedTableMapsRawIdsToItsRowsWithALabelEncoder) {
  inference::SavedModel model;
  model.pass_dir = "pass-00000";
  model.info.input = {3};
  model.info.classes = 2;
  model.plan = nn::plan_model(nn::parse_model_text("e embedding_bag fields=0,1 rows=1000 dim=2 pooling=mean\nf "
                                                   "flatten\no dense units=1 loss=bce\n",
                                                   "test"),
                              {3}, 2);
  model.plan.parameters[0].shape = {4, 2};  // as plan_keyed_tables leaves it: 3 keys and the default row
  model.plan.parameters[0].size = 8;
  model.plan.nodes[0].plan.parameters[0].shape = {4, 2};
  model.plan.parameters[1].offset = 8;
  model.plan.parameters[2].offset = 12;
  model.plan.parameter_count = 13;
  model.parameters.assign(13, 1.0f);
  model.keyed.push_back({"e.weight", 0, {-5, 3, 1000}});
  ONNX_NAMESPACE::ModelProto onnx;
  ASSERT_TRUE(onnx.ParseFromString(onnx_model_bytes(model)));
  ASSERT_EQ(onnx.opset_import_size(), 2);
  EXPECT_EQ(onnx.opset_import(1).domain(), "ai.onnx.ml");
  EXPECT_EQ(onnx.graph().input(0).name(), "e.ids");
  const ONNX_NAMESPACE::NodeProto& encoder = onnx.graph().node(0);
  ASSERT_EQ(encoder.op_type(), "LabelEncoder");
  EXPECT_EQ(encoder.domain(), "ai.onnx.ml");
  std::map<std::string, std::vector<std::int64_t>> lists;
  for (const auto& attribute : encoder.attribute()) {
    lists[attribute.name()] = attribute.ints_size() > 0
                                  ? std::vector<std::int64_t>(attribute.ints().begin(), attribute.ints().end())
                                  : std::vector<std::int64_t>{attribute.i()};
  }
  const std::int64_t pad = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(lists["keys_int64s"], (std::vector<std::int64_t>{-5, 3, 1000, pad}));
  EXPECT_EQ(lists["values_int64s"], (std::vector<std::int64_t>{1, 2, 3, 4}));  // the pad: a zero row after the table
  EXPECT_EQ(lists["default_int64"], (std::vector<std::int64_t>{0}));
  for (const auto& tensor : onnx.graph().initializer()) {
    if (tensor.name() == "e.weight") {
      EXPECT_EQ(tensor.dims(0), 5);  // the default row, 3 keys' rows, the pad row
    }
  }
  EXPECT_NE(onnx.metadata_props(0).value().find("keys=exact"), std::string::npos) << onnx.metadata_props(0).value();
  // A table holding the pad id cannot be exported.
  model.keyed[0].keys = {pad, 3, 1000};
  EXPECT_THROW(onnx_model_bytes(model), Error);
}

}  // namespace
}  // namespace pstrain::exporting
