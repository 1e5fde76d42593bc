#pragma once
// What a host-discovery script prints: one `host:slots` line per usable host (Horovod's format). Blank lines and
// lines starting with '#' are ignored; anything else that is not `name:positive-integer` is an error naming the
// line, so that a script printing garbage stops the driver instead of launching on nonsense.
#include <string>
#include <string_view>
#include <vector>

namespace pstrain::launch {

struct Host {
  std::string name;
  int slots = 0;
  bool operator==(const Host&) const = default;
};
using HostList = std::vector<Host>;  // in the order the script printed them

// Throws DriverError(kDiscoveryFailed) naming the first bad line (1-based) and what is wrong with it.
HostList parse_host_list(std::string_view text);

int total_slots(const HostList& hosts);
// "a:2,b:4": for messages and elastic.jsonl.
std::string describe(const HostList& hosts);
// The entry for `name`, or nullptr.
const Host* find_host(const HostList& hosts, const std::string& name);

}  // namespace pstrain::launch
