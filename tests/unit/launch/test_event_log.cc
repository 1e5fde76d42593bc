// elastic.jsonl's records (lib/launch/event_log.h): the layout of a world whose split pstrain chooses.
#include <gtest/gtest.h>

#include "launch/event_log.h"

namespace pstrain::launch {
namespace {

TEST(EventLog, LayoutIsNullUntilTheJobNamesTheSplitPstrainChose) {
  World world = plan_world({{"a", 2}, {"b", 2}}, 4, {});
  EventRecord record;
  record.event = "launch";
  record.world = &world;
  const nlohmann::json unknown = to_json(record);
  EXPECT_EQ(unknown["ranks"], 4);
  EXPECT_TRUE(unknown["layout"].is_null()) << unknown.dump();
  world.layout = Layout{1, 3};  // what the driver takes from the job's start line
  const nlohmann::json known = to_json(record);
  EXPECT_EQ(known["layout"], (nlohmann::json{{"pservers", 1}, {"trainers", 3}})) << known.dump();
}

}  // namespace
}  // namespace pstrain::launch
