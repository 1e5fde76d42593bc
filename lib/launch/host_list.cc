#include "launch/host_list.h"

#include <charconv>

#include "core/error.h"
#include "launch/exit_codes.h"

namespace pstrain::launch {

namespace {

// Host names as DNS and Open MPI's hostfiles accept them: letters, digits, '.', '-', '_'.
bool valid_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

Host parse_line(std::string_view line, int number) {
  const auto fail = [&](const std::string& why) {
    const std::string shown(line.substr(0, 80));
    return DriverError(DriverExit::kDiscoveryFailed,
                       cat("host discovery printed a bad line ", number, " '", shown, "': ", why,
                           " (expected one 'host:slots' line per host, e.g. 'node1:4')"));
  };
  const auto colon = line.rfind(':');
  if (colon == std::string_view::npos) throw fail("no ':slots'");
  const std::string_view name = line.substr(0, colon);
  const std::string_view slots_text = line.substr(colon + 1);
  if (!valid_host_name(name)) throw fail("not a host name");
  int slots = 0;
  const auto [end, error] = std::from_chars(slots_text.data(), slots_text.data() + slots_text.size(), slots);
  if (error != std::errc() || end != slots_text.data() + slots_text.size() || slots_text.empty()) {
    throw fail("slots is not a whole number");
  }
  if (slots < 1 || slots > 100000) throw fail("slots must be between 1 and 100000");
  return {std::string(name), slots};
}

}  // namespace

HostList parse_host_list(std::string_view text) {
  HostList hosts;
  int number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    Host host = parse_line(line, number);
    if (find_host(hosts, host.name) != nullptr) {
      throw DriverError(DriverExit::kDiscoveryFailed,
                        cat("host discovery listed host '", host.name, "' twice (line ", number, ")"));
    }
    hosts.push_back(std::move(host));
  }
  return hosts;
}

int total_slots(const HostList& hosts) {
  int total = 0;
  for (const Host& host : hosts) total += host.slots;
  return total;
}

std::string describe(const HostList& hosts) {
  std::string text;
  for (const Host& host : hosts) text += cat(text.empty() ? "" : ",", host.name, ":", host.slots);
  return text.empty() ? "none" : text;
}

const Host* find_host(const HostList& hosts, const std::string& name) {
  for (const Host& host : hosts) {
    if (host.name == name) return &host;
  }
  return nullptr;
}

}  // namespace pstrain::launch
