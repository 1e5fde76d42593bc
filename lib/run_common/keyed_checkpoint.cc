#include "run_common/keyed_checkpoint.h"

#include <algorithm>
#include <limits>

#include "ps/keyed_rows.h"

namespace pstrain::run_common {

namespace {

// Appends one file's entries (their rows, state and sketch) to `into`, each entry's row its place there.
void append_state(ps::KeyedShardState& into, checkpoint::KeyedRowsState&& file) {
  const std::size_t first = into.entries.size();
  for (std::size_t k = 0; k < file.ids.size(); ++k) {
    into.entries.push_back({file.ids[k], static_cast<std::int64_t>(first + k), file.last_seen[k], file.counts[k]});
  }
  into.rows.insert(into.rows.end(), file.rows.begin(), file.rows.end());
  if (into.state.empty()) {
    for (auto& entry : file.state) into.state.emplace_back(entry.first, std::vector<float>());
  }
  for (std::size_t s = 0; s < file.state.size(); ++s) {
    into.state[s].second.insert(into.state[s].second.end(), file.state[s].second.begin(), file.state[s].second.end());
  }
  if (into.sketch.empty()) into.sketch.assign(file.sketch.size(), 0);
  for (std::size_t c = 0; c < std::min(into.sketch.size(), file.sketch.size()); ++c) {
    const unsigned sum = unsigned{into.sketch[c]} + file.sketch[c];
    into.sketch[c] = static_cast<std::uint16_t>(std::min<unsigned>(sum, std::numeric_limits<std::uint16_t>::max()));
  }
  into.counters.admitted += file.admitted;
  into.counters.evicted += file.evicted;
  into.counters.refused += file.refused;
  into.counters.sketch_sightings += file.sketch_sightings;  // summed as the counters are
}

// A sketch of `depth` rows of another width (another cap per server) folded or spread to `width` counters a
// row. Both widths are powers of two and an id's counter is its hash mod the width, so a narrower row's counter
// j takes the saturating sum of the wider one's counters j, j + width, ...; a wider row's counter j the narrower
// one's counter j mod its width. Either way no id's estimate falls: the sketch still never undercounts.
std::vector<std::uint16_t> refold_sketch(const std::vector<std::uint16_t>& sketch, std::uint32_t depth,
                                         std::uint64_t width) {
  const std::uint64_t old_width = sketch.size() / depth;
  if (old_width == width || sketch.empty()) return sketch;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(depth) * width, 0);
  for (std::uint32_t r = 0; r < depth; ++r) {
    const std::uint16_t* from = sketch.data() + r * old_width;
    std::uint16_t* to = out.data() + r * width;
    for (std::uint64_t j = 0; j < std::max(old_width, width); ++j) {
      std::uint16_t& target = to[j % width];
      const unsigned sum = unsigned{target} + from[j % old_width];
      target = old_width > width ? static_cast<std::uint16_t>(std::min<unsigned>(sum, 65535)) : from[j % old_width];
    }
  }
  return out;
}

}  // namespace

checkpoint::KeyedRowsState keyed_rows_to_save(const ps::KeyedShardState& state) {
  checkpoint::KeyedRowsState out;
  for (const ps::KeyedEntry& entry : state.entries) {
    out.ids.push_back(entry.id);
    out.last_seen.push_back(entry.last_seen);
    out.counts.push_back(entry.count);
  }
  out.rows = state.rows;
  out.state = state.state;
  out.sketch = state.sketch;
  out.held_rows = state.held_rows;
  for (const ps::KeyBucket& bucket : state.index) {
    out.index.push_back(bucket.id);
    out.index.push_back(bucket.row);
  }
  out.admitted = state.counters.admitted;
  out.evicted = state.counters.evicted;
  out.refused = state.counters.refused;
  out.sketch_sightings = state.counters.sketch_sightings;
  return out;
}

ps::KeyedShardState keyed_rows_to_resume(const std::filesystem::path& folder, const ps::TableSpec& table, int shard,
                                         int shards, const std::vector<std::string>& state_names) {
  const checkpoint::TableRowsSpec spec{table.name, table.rows, table.width};
  const int written = checkpoint::keyed_table_shards(folder, spec);
  const auto cap = static_cast<std::int64_t>(table.keys.rows_per_shard - 1);
  ps::KeyedShardState merged;
  if (written == shards) {
    checkpoint::KeyedRowsState file =
        checkpoint::read_keyed_table_rows(folder, spec, shard, written, state_names, [](std::int64_t) { return true; });
    const std::vector<std::int64_t> held_rows = file.held_rows;
    const std::vector<std::int64_t> index = file.index;
    append_state(merged, std::move(file));
    if (index.size() == 2 * ps::keyed_index_buckets(cap)) {  // the same cap too: resumed exactly as it was
      merged.held_rows = held_rows;
      for (std::size_t b = 0; b < index.size(); b += 2) merged.index.push_back({index[b], index[b + 1]});
      return merged;
    }
  } else {
    for (int old = 0; old < written; ++old) {
      append_state(merged,
                   checkpoint::read_keyed_table_rows(folder, spec, old, written, state_names, [&](std::int64_t id) {
                     return ps::key_owner(id, shards) == shard;
                   }));
    }
    if (shard != 0) merged.counters = {};  // the totals once, on server 0
  }
  std::sort(merged.entries.begin(), merged.entries.end(),
            [](const ps::KeyedEntry& a, const ps::KeyedEntry& b) { return a.id < b.id; });
  const ps::KeyedRowsLayout layout = ps::keyed_rows_layout(cap, table.keys.probe_bound);
  merged.sketch = refold_sketch(merged.sketch, layout.sketch_depth, layout.sketch_width);
  const std::size_t found = merged.entries.size();
  merged.entries =
      ps::deal_entries(merged.entries, shards, shard, static_cast<std::int64_t>(table.keys.rows_per_shard - 1));
  merged.counters.evicted += found - merged.entries.size();  // past a smaller cap: the least recently used go
  return merged;
}

}  // namespace pstrain::run_common
