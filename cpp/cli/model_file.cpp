#include "cli/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/file_io.h"

namespace wllm::cli {

Result<std::string> read_file(const std::string& path) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return Status::error(ErrorCode::kIo, "cannot open '%s'", path.c_str());
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) return Status::error(ErrorCode::kIo, "cannot read '%s'", path.c_str());
  return data;
}
namespace {

constexpr uint64_t kFirstPrefix = 1 << 20;  // most headers fit in 1 MiB

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Result<File> open_file(const std::string& path, uint64_t* size) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::error(ErrorCode::kIo, "cannot open '%s': %s", path.c_str(), std::strerror(errno));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) {
    return Status::error(ErrorCode::kIo, "cannot seek in '%s': %s", path.c_str(), std::strerror(errno));
  }
  const long long end = ftello(f.get());
  if (end < 0) return Status::error(ErrorCode::kIo, "cannot size '%s': %s", path.c_str(), std::strerror(errno));
  *size = static_cast<uint64_t>(end);
  return f;
}

Status read_at(std::FILE* f, uint64_t offset, uint8_t* dst, uint64_t n, const std::string& path) {
  if (fseeko(f, static_cast<off_t>(offset), SEEK_SET) != 0) {
    return Status::error(ErrorCode::kIo, "cannot seek in '%s': %s", path.c_str(), std::strerror(errno));
  }
  if (!read_fully(f, dst, static_cast<size_t>(n))) {
    return Status::error(ErrorCode::kIo, "reading %llu bytes at byte %llu of '%s' failed",
                         static_cast<unsigned long long>(n), static_cast<unsigned long long>(offset), path.c_str());
  }
  return {};
}

// Calls parse(prefix, size, &needed) with ever longer prefixes of the file
// until it stops asking for more.
template <typename Parse>
Status parse_with_growing_prefix(std::FILE* f, uint64_t size, const std::string& path, Parse&& parse) {
  std::vector<uint8_t> prefix;
  uint64_t want = std::min(size, kFirstPrefix);
  for (;;) {
    const uint64_t have = prefix.size();
    prefix.resize(want);
    WLLM_RETURN_IF_ERROR(read_at(f, have, prefix.data() + have, want - have, path));
    uint64_t needed = 0;
    Status s = parse(std::span<const uint8_t>(prefix), size, &needed);
    if (s.code() != ErrorCode::kNeedMoreData) return s;
    if (needed <= want) return Status::error(ErrorCode::kInternal, "header parser asked for no more bytes");
    want = needed;
  }
}

}  // namespace

Result<GgufFile> read_gguf_header(const std::string& path) {
  uint64_t size = 0;
  WLLM_ASSIGN_OR_RETURN(File f, open_file(path, &size));
  std::unique_ptr<GgufFile> out;
  Status s = parse_with_growing_prefix(f.get(), size, path, [&](std::span<const uint8_t> p, uint64_t n, uint64_t* need) {
    Result<GgufFile> r = GgufFile::parse_header(p, n, need);
    if (!r.ok()) return r.status();
    out = std::make_unique<GgufFile>(std::move(r).value());
    return Status();
  });
  if (!s.ok()) return s.with_context(path);
  return std::move(*out);
}

Status load_model(const std::string& path, const LoadOptions& options, Engine* engine) {
  uint64_t size = 0;
  WLLM_ASSIGN_OR_RETURN(File f, open_file(path, &size));
  Status s = parse_with_growing_prefix(f.get(), size, path, [&](std::span<const uint8_t> p, uint64_t n, uint64_t* need) {
    return engine->begin_load(p, n, options, need);
  });
  if (!s.ok()) return s.with_context(path);
  WLLM_RETURN_IF_ERROR(read_at(f.get(), engine->data_offset(), engine->data_destination(), engine->data_size(), path));
  return engine->finish_load().with_context(path);
}

}  // namespace wllm::cli

#include "cli/args.h"

namespace wllm::cli {

Result<LoadOptions> load_options_from(const Args& args) {
  LoadOptions o;
  WLLM_ASSIGN_OR_RETURN(const int64_t threads, args.get_int({"-t", "--threads"}, 0));
  WLLM_ASSIGN_OR_RETURN(const int64_t ctx, args.get_int({"-c", "--ctx"}, 0));
  if (threads < 0 || threads > 256) return Status::error(ErrorCode::kInvalidArgument, "--threads must be 1 to 256");
  if (ctx < 0 || ctx > (1 << 24)) {
    return Status::error(ErrorCode::kInvalidArgument, "--ctx must be between 1 and 16777216 (0: the model's default)");
  }
  o.n_threads = static_cast<int>(threads);
  o.n_ctx = static_cast<int>(ctx);
  return o;
}

}  // namespace wllm::cli
