#include "cli/state_file_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/file_io.h"

namespace wllm::cli {

Result<bool> load_state_file(const std::string& path, Engine* engine) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    if (errno == ENOENT) return false;
    return Status::error(ErrorCode::kIo, "cannot open '%s': %s", path.c_str(), std::strerror(errno));
  }
  Status s;
  long long size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = ftello(f);
  if (size < 0 || std::fseek(f, 0, SEEK_SET) != 0) {
    s = Status::error(ErrorCode::kIo, "cannot size '%s': %s", path.c_str(), std::strerror(errno));
  }
  if (s.ok()) {
    Result<StateReader> reader = engine->load_state(static_cast<uint64_t>(size));
    s = reader.status();
    std::vector<uint8_t> chunk(1 << 20);
    for (long long left = size; s.ok() && left > 0;) {
      const size_t n = static_cast<size_t>(std::min<long long>(left, static_cast<long long>(chunk.size())));
      if (!read_fully(f, chunk.data(), n)) {
        s = Status::error(ErrorCode::kIo, "reading '%s' failed", path.c_str());
        break;
      }
      s = reader->write(std::span<const uint8_t>(chunk.data(), n));
      left -= static_cast<long long>(n);
    }
    if (s.ok()) s = reader->finish();
  }
  std::fclose(f);
  if (!s.ok()) return s.with_context(path);
  return true;
}

Status save_state_file(const std::string& path, Engine* engine) {
  WLLM_ASSIGN_OR_RETURN(const StateWriter state, engine->save_state());
  const std::string temporary = path + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f) return Status::error(ErrorCode::kIo, "cannot create '%s': %s", temporary.c_str(), std::strerror(errno));
  bool written = true;
  for (const std::span<const uint8_t> piece : state.pieces()) {
    written = written && write_fully(f, piece.data(), piece.size());
  }
  written = std::fclose(f) == 0 && written;
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return Status::error(ErrorCode::kIo, "cannot write '%s': %s", path.c_str(), std::strerror(errno));
  }
  return {};
}

}  // namespace wllm::cli
