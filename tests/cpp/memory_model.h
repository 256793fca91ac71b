// Loads a model whose files are in memory through the engine's streaming
// API, as the wasm worker does (worker/model-loader.js): short prefixes of
// the files it has, grown as begin_load asks, the other files of a split
// model when it asks for them, then the data ranges copied into the arena.
// Used by the C++ tests and the loader fuzz target.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/engine.h"

namespace wllm::testing {

// `files`: every file of the model, in order (a split model's first is
// offered alone until the engine asks for the rest). Prefixes start at
// `first_prefix` bytes.
inline Status load_files(Engine* e, const std::vector<std::span<const uint8_t>>& files, LoadOptions options,
                         uint64_t first_prefix = 64) {
  if (files.empty()) return Status::error(ErrorCode::kInvalidArgument, "no files");
  std::vector<uint64_t> prefix{std::min<uint64_t>(first_prefix, files[0].size())};
  for (;;) {
    std::vector<FilePrefix> given;
    for (size_t i = 0; i < prefix.size(); ++i) given.push_back({files[i].first(prefix[i]), files[i].size()});
    LayoutNeeds needs;
    const Status s = e->begin_load(given, options, &needs);
    if (s.code() != ErrorCode::kNeedMoreData) {
      WLLM_RETURN_IF_ERROR(s);
      break;
    }
    if (needs.files > 0) {
      if (needs.files <= static_cast<int>(prefix.size())) {
        return Status::error(ErrorCode::kInternal, "asked for %d files, having %zu", needs.files, prefix.size());
      }
      if (needs.files > static_cast<int>(files.size())) {
        return Status::error(ErrorCode::kIo, "the model is split into %d files; %zu are here", needs.files,
                             files.size());
      }
      for (int i = static_cast<int>(prefix.size()); i < needs.files; ++i) {
        prefix.push_back(std::min<uint64_t>(first_prefix, files[i].size()));
      }
      continue;
    }
    const int f = needs.file;
    if (f < 0 || f >= static_cast<int>(prefix.size()) || needs.bytes <= prefix[f] || needs.bytes > files[f].size()) {
      return Status::error(ErrorCode::kInternal, "asked for %llu bytes of file %d, which has %zu (prefix %llu)",
                           static_cast<unsigned long long>(needs.bytes), f + 1,
                           f >= 0 && f < static_cast<int>(files.size()) ? files[f].size() : 0,
                           static_cast<unsigned long long>(f >= 0 && f < static_cast<int>(prefix.size()) ? prefix[f] : 0));
    }
    prefix[f] = needs.bytes;
  }
  for (const DataRange& r : e->data_ranges()) {
    const std::span<const uint8_t> file = files[r.file];
    if (r.file_offset > file.size() || r.size > file.size() - r.file_offset) {
      return Status::error(ErrorCode::kInternal, "a data range passes the end of file %d", r.file + 1);
    }
    std::copy(file.begin() + r.file_offset, file.begin() + r.file_offset + r.size, e->data_destination() + r.arena_offset);
  }
  return e->finish_load();
}

}  // namespace wllm::testing
