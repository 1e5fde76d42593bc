#include "data/ctr/line_blocks.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::data::ctr {

LineBlocks::LineBlocks(const std::filesystem::path& path, std::size_t block_bytes)
    : path_(path), reader_(path), block_bytes_(block_bytes) {}

bool LineBlocks::next(std::string& block) {
  block.swap(carry_);
  carry_.clear();
  while (!ended_) {
    const std::size_t had = block.size();
    block.resize(had + block_bytes_);
    const std::size_t got = reader_.read(block.data() + had, block_bytes_);
    block.resize(had + got);
    if (got < block_bytes_) {
      ended_ = true;
      if (reader_.cut_off()) {
        throw Error(ExitCode::kInputData,
                    cat(path_.string(),
                        ": truncated gzip data: the file ends inside its compressed stream, after line ",
                        lines_ + static_cast<std::uint64_t>(std::count(block.begin(), block.end(), '\n')),
                        " (an incomplete download?)"));
      }
      break;
    }
    const std::size_t last_newline = block.rfind('\n');
    if (last_newline != std::string::npos && last_newline >= had) {
      carry_.assign(block, last_newline + 1);
      block.resize(last_newline + 1);
      break;
    }
  }
  if (block.empty()) return false;
  lines_ += static_cast<std::uint64_t>(std::count(block.begin(), block.end(), '\n')) + (block.back() != '\n');
  return true;
}

std::uint64_t count_lines(const std::filesystem::path& path) {
  LineBlocks blocks(path, std::size_t{8} << 20);
  std::string block;
  while (blocks.next(block)) {
  }
  return blocks.lines();
}

}  // namespace pstrain::data::ctr
