#include "cli/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "cli/args.h"
#include "core/file_io.h"
#include "gguf/gguf_split.h"

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
constexpr uint64_t kMaxTokenizerBytes = 256ull << 20;  // a tokenizer file is a few MB

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

Result<std::shared_ptr<ModelFiles>> ModelFiles::open(const std::string& path, const std::string& tokenizer_path) {
  auto files = std::shared_ptr<ModelFiles>(new ModelFiles());
  WLLM_RETURN_IF_ERROR(files->add_file(path));
  if (!tokenizer_path.empty()) WLLM_RETURN_IF_ERROR(files->read_tokenizer(tokenizer_path));
  return files;
}

ModelFiles::~ModelFiles() {
  for (OpenFile& f : files_) std::fclose(f.f);
}

Status ModelFiles::add_file(const std::string& path) {
  uint64_t size = 0;
  WLLM_ASSIGN_OR_RETURN(File f, open_file(path, &size));
  files_.push_back({path, f.release(), size, {}});
  return grow_prefix(static_cast<int>(files_.size()) - 1, std::min(size, kFirstPrefix));
}

Status ModelFiles::grow_prefix(int file, uint64_t bytes) {
  OpenFile& f = files_[file];
  const uint64_t have = f.prefix.size();
  if (bytes <= have || bytes > f.size) {
    return Status::error(ErrorCode::kInternal, "'%s': a header parser asked for %llu bytes of %llu, having %llu",
                         f.path.c_str(), static_cast<unsigned long long>(bytes),
                         static_cast<unsigned long long>(f.size), static_cast<unsigned long long>(have));
  }
  f.prefix.resize(bytes);
  return read_at(f.f, have, f.prefix.data() + have, bytes - have, f.path);
}

Status ModelFiles::open_split_files(int count) {
  const std::string first = files_[0].path;  // a copy: add_file grows files_
  if (files_.size() != 1) return Status::error(ErrorCode::kInternal, "split files asked for twice");
  for (int i = 1; i < count; ++i) {
    const std::string name = split_sibling_name(first, i, count);
    if (name.empty()) {
      return Status::error(ErrorCode::kInvalidArgument,
                           "'%s' is the first of %d files of a split model, but its name does not end in "
                           "'%s', so the others cannot be found",
                           first.c_str(), count, split_file_name("", 0, count).c_str());
    }
    Status s = add_file(name);
    if (!s.ok()) return s.with_context(str_printf("file %d of the split model", i + 1));
  }
  return {};
}

std::vector<std::string> ModelFiles::tokenizers_beside(const std::vector<std::string>& names) const {
  const std::filesystem::path folder = std::filesystem::path(files_[0].path).parent_path();
  std::vector<std::string> found;
  for (const std::string& name : names) {
    std::error_code ec;
    const std::filesystem::path candidate = folder / name;
    if (std::filesystem::is_regular_file(candidate, ec)) found.push_back(candidate.string());
  }
  return found;
}

Status ModelFiles::read_tokenizer(const std::string& path) {
  uint64_t size = 0;
  WLLM_ASSIGN_OR_RETURN(File f, open_file(path, &size));
  if (size > kMaxTokenizerBytes) {
    return Status::error(ErrorCode::kInvalidArgument, "'%s' has %llu bytes: too large for a tokenizer file", path.c_str(),
                         static_cast<unsigned long long>(size));
  }
  tokenizer_.resize(size);
  WLLM_RETURN_IF_ERROR(read_at(f.get(), 0, tokenizer_.data(), size, path));
  tokenizer_path_ = path;
  return {};
}

Status ModelFiles::parse_headers(const Parse& parse) {
  std::vector<std::string> candidates;  // tokenizer files found beside the checkpoint, tried in turn
  size_t next_candidate = 0;
  Status missing;                       // the checkpoint's complaint without one
  std::string rejected;                 // why the candidates did not fit
  for (;;) {
    std::vector<FilePrefix> prefixes;
    for (const OpenFile& f : files_) prefixes.push_back({f.prefix, f.size});
    LayoutNeeds needs;
    Status s = parse(prefixes, tokenizer_, &needs);
    if (s.code() == ErrorCode::kNeedMoreData) {
      WLLM_RETURN_IF_ERROR(needs.files > 0 ? open_split_files(needs.files) : grow_prefix(needs.file, needs.bytes));
      continue;
    }
    if (s.ok()) return s;
    if (tokenizer_.empty() && !needs.tokenizer_files.empty()) {
      missing = s;
      candidates = tokenizers_beside(needs.tokenizer_files);
    } else if (needs.tokenizer_rejected && next_candidate > 0) {
      rejected += "; " + tokenizer_path_ + " does not fit: " + s.message();
    } else {
      return s.with_context(needs.tokenizer_rejected ? tokenizer_path_ : files_[0].path);
    }
    if (next_candidate == candidates.size()) {
      return Status(missing.code(), missing.message() + rejected).with_context(files_[0].path);
    }
    WLLM_RETURN_IF_ERROR(read_tokenizer(candidates[next_candidate++]));
  }
}

Result<ModelLayout> ModelFiles::layout() {
  std::unique_ptr<ModelLayout> out;
  WLLM_RETURN_IF_ERROR(parse_headers([&](std::span<const FilePrefix> p, std::span<const uint8_t> tok, LayoutNeeds* n) {
    Result<ModelLayout> r = read_model_layout(p, tok, n);
    if (!r.ok()) return r.status();
    out = std::make_unique<ModelLayout>(std::move(r).value());
    return Status();
  }));
  return std::move(*out);
}

Status ModelFiles::read(int file, uint64_t offset, uint8_t* dst, uint64_t n) {
  return read_at(files_[file].f, offset, dst, n, files_[file].path);
}

Status ModelFiles::copy_tensor(const ModelLayout& layout, const GgufTensorInfo& t, GgufSink& out) {
  WLLM_ASSIGN_OR_RETURN(const TensorSource src, tensor_source(layout, t));
  std::vector<uint8_t> buf(std::min<uint64_t>(t.n_bytes, 8 << 20));
  for (uint64_t done = 0; done < t.n_bytes;) {
    const uint64_t k = std::min<uint64_t>(buf.size(), t.n_bytes - done);
    WLLM_RETURN_IF_ERROR(read(src.file, src.offset + done, buf.data(), k));
    WLLM_RETURN_IF_ERROR(out.write(buf.data(), static_cast<size_t>(k)));
    done += k;
  }
  return {};
}

Status load_model(const std::string& path, const std::string& tokenizer_path, const LoadOptions& options,
                  Engine* engine) {
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files, ModelFiles::open(path, tokenizer_path));
  WLLM_RETURN_IF_ERROR(files->parse_headers([&](std::span<const FilePrefix> p, std::span<const uint8_t> tok,
                                                LayoutNeeds* n) {
    LoadOptions o = options;
    o.tokenizer = tok;
    return engine->begin_load(p, o, n);
  }));
  for (const DataRange& r : engine->data_ranges()) {
    WLLM_RETURN_IF_ERROR(files->read(r.file, r.file_offset, engine->data_destination() + r.arena_offset, r.size));
  }
  return engine->finish_load().with_context(path);
}

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
