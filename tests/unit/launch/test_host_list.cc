#include <gtest/gtest.h>

#include "launch/exit_codes.h"
#include "launch/host_list.h"

namespace pstrain::launch {
namespace {

TEST(HostList, ParsesHostSlotLinesSkippingBlankLinesAndComments) {
  const HostList hosts = parse_host_list("# from the scheduler\nnode-1:4\n\n  node2.example.org:2  \r\nnode_3:1");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0], (Host{"node-1", 4}));
  EXPECT_EQ(hosts[1], (Host{"node2.example.org", 2}));
  EXPECT_EQ(hosts[2], (Host{"node_3", 1}));
  EXPECT_EQ(total_slots(hosts), 7);
  EXPECT_EQ(describe(hosts), "node-1:4,node2.example.org:2,node_3:1");
}

TEST(HostList, EmptyOutputIsAnEmptyList) {
  EXPECT_TRUE(parse_host_list("").empty());
  EXPECT_TRUE(parse_host_list("\n# nothing usable now\n").empty());
  EXPECT_EQ(describe({}), "none");
}

// Each bad line names its number and what is wrong with it.
void expect_bad(const std::string& text, const std::string& want) {
  try {
    parse_host_list(text);
    FAIL() << "accepted '" << text << "'";
  } catch (const DriverError& error) {
    EXPECT_EQ(error.code(), DriverExit::kDiscoveryFailed);
    EXPECT_NE(std::string(error.what()).find(want), std::string::npos) << error.what();
  }
}

TEST(HostList, GarbageIsAnErrorNamingTheLine) {
  expect_bad("node1:4\nnode2\n", "line 2 'node2': no ':slots'");
  expect_bad("node1:four\n", "not a whole number");
  expect_bad("node1:4x\n", "not a whole number");
  expect_bad("node1:\n", "not a whole number");
  expect_bad("node1:0\n", "between 1 and 100000");
  expect_bad("node1:-2\n", "between 1 and 100000");
  expect_bad("no de:2\n", "not a host name");
  expect_bad(":2\n", "not a host name");
  expect_bad("<html>error</html>:3\n", "not a host name");
  expect_bad("a:1\nb:2\na:3\n", "listed host 'a' twice (line 3)");
}

}  // namespace
}  // namespace pstrain::launch
