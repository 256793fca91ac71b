#include "engine/model_layout.h"

#include <algorithm>
#include <cstring>

#include "gguf/gguf_split.h"
#include "gguf/gguf_writer.h"
#include "llama2c/as_gguf.h"
#include "llama2c/checkpoint.h"
#include "llama2c/tokenizer_file.h"

namespace wllm {
namespace {

bool starts_with(std::span<const uint8_t> bytes, const char (&magic)[5]) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), magic, 4) == 0;
}

// kNeedMoreData asking for `bytes` of files[file].
Status need_prefix(LayoutNeeds* needs, int file, uint64_t bytes) {
  if (needs) {
    needs->file = file;
    needs->bytes = bytes;
  }
  return Status::error(ErrorCode::kNeedMoreData, "file %d: the header continues past its first %llu bytes", file + 1,
                       static_cast<unsigned long long>(bytes));
}

Result<GgufFile> parse_gguf(const FilePrefix& f, int index, LayoutNeeds* needs) {
  uint64_t needed = 0;
  Result<GgufFile> file = GgufFile::parse_header(f.bytes, f.size, &needed);
  if (file.status().code() == ErrorCode::kNeedMoreData) return need_prefix(needs, index, needed);
  return file;
}

// One range per file, its whole data section, at the joined offsets.
ModelLayout whole_sections(GgufFile file, std::span<const GgufFile> parts, std::span<const uint64_t> starts,
                           ModelFormat format) {
  ModelLayout out;
  out.format = format;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].data_size() == 0) continue;
    out.ranges.push_back({static_cast<int>(i), parts[i].data_offset(), parts[i].data_size(), starts[i]});
  }
  out.file = std::move(file);
  return out;
}

Result<ModelLayout> gguf_layout(std::span<const FilePrefix> files, std::span<const uint8_t> tokenizer,
                                LayoutNeeds* needs) {
  WLLM_ASSIGN_OR_RETURN(GgufFile first, parse_gguf(files[0], 0, needs));
  if (!tokenizer.empty()) {
    return Status::error(ErrorCode::kInvalidArgument,
                         "a tokenizer file is for llama2.c checkpoints; this GGUF model has its own tokenizer");
  }
  WLLM_ASSIGN_OR_RETURN(const int count, split_count(first));
  if (count == 1) {
    if (files.size() > 1) {
      return Status::error(ErrorCode::kInvalidArgument, "%zu files were given for a model that is one GGUF file",
                           files.size());
    }
    const uint64_t start = 0;
    return whole_sections(first, {&first, 1}, {&start, 1}, ModelFormat::kGguf);
  }
  if (files.size() < static_cast<size_t>(count)) {
    if (needs) needs->files = count;
    return Status::error(ErrorCode::kNeedMoreData, "the model is split into %d files", count);
  }
  if (files.size() > static_cast<size_t>(count)) {
    return Status::error(ErrorCode::kInvalidArgument, "%zu files were given for a model split into %d", files.size(),
                         count);
  }
  std::vector<GgufFile> parts{std::move(first)};
  for (int i = 1; i < count; ++i) {
    Result<GgufFile> part = parse_gguf(files[i], i, needs);
    if (!part.ok()) {
      if (part.status().code() == ErrorCode::kNeedMoreData) return part.status();
      return part.status().with_context(str_printf("file %d of the split model", i + 1));
    }
    parts.push_back(std::move(part).value());
  }
  WLLM_ASSIGN_OR_RETURN(JoinedSplit joined, join_split_files(parts));
  return whole_sections(std::move(joined.file), parts, joined.data_starts, ModelFormat::kSplitGguf);
}

Result<ModelLayout> llama2c_layout(std::span<const FilePrefix> files, std::span<const uint8_t> tokenizer,
                                   LayoutNeeds* needs) {
  const FilePrefix& f = files[0];
  Result<Llama2cConfig> config = parse_llama2c_header(f.bytes);
  if (!config.ok()) {
    return Status::error(ErrorCode::kBadFile,
                         "not a GGUF file (the first 4 bytes are not 'GGUF') nor a llama2.c checkpoint (%s)",
                         config.status().message().c_str());
  }
  const Llama2cConfig& c = *config;
  WLLM_RETURN_IF_ERROR(check_llama2c_checkpoint(c, f.size));
  if (files.size() > 1) {
    return Status::error(ErrorCode::kInvalidArgument, "%zu files were given for a llama2.c checkpoint", files.size());
  }
  if (tokenizer.empty()) {
    if (needs) needs->tokenizer_files = llama2c_tokenizer_names(c);
    return Status::error(ErrorCode::kInvalidArgument,
                         "a llama2.c checkpoint needs its tokenizer file (llama2.c's tokenizer.bin, or tok%d.bin for "
                         "its %d tokens); none was given or found beside it",
                         c.vocab_size, c.vocab_size);
  }
  Result<Llama2cVocab> vocab = read_llama2c_tokenizer(tokenizer, c.vocab_size);
  if (!vocab.ok()) {
    if (needs) needs->tokenizer_rejected = true;
    return vocab.status();
  }
  GgufWriter writer;
  WLLM_RETURN_IF_ERROR(describe_llama2c_as_gguf(c, *vocab, &writer));
  const std::vector<uint8_t> header = writer.header_to_memory();
  Result<GgufFile> file = GgufFile::parse_header(header, writer.file_size());
  if (!file.ok()) return file.status().with_context("the llama2.c checkpoint as GGUF");

  ModelLayout out;
  out.format = ModelFormat::kLlama2c;
  const std::vector<Llama2cTensor> tensors = llama2c_tensors(c);
  for (size_t i = 0; i < tensors.size(); ++i) {
    out.ranges.push_back({0, tensors[i].file_offset, tensors[i].n_bytes, file->tensors()[i].offset});
  }
  std::sort(out.ranges.begin(), out.ranges.end(),
            [](const DataRange& a, const DataRange& b) { return a.file_offset < b.file_offset; });
  out.file = std::move(file).value();
  return out;
}

}  // namespace

Result<ModelLayout> read_model_layout(std::span<const FilePrefix> files, std::span<const uint8_t> tokenizer,
                                      LayoutNeeds* needs) {
  if (files.empty()) return Status::error(ErrorCode::kInvalidArgument, "no model file was given");
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].bytes.size() > files[i].size) {
      return Status::error(ErrorCode::kInvalidArgument, "file %zu: a prefix of %zu bytes is longer than the file (%llu)",
                           i + 1, files[i].bytes.size(), static_cast<unsigned long long>(files[i].size));
    }
  }
  const FilePrefix& first = files[0];
  // The first bytes tell the format; a file too short for either is GGUF's to report.
  const uint64_t sniff = std::min(first.size, kLlama2cHeaderBytes);
  if (first.bytes.size() < sniff) return need_prefix(needs, 0, sniff);
  if (starts_with(first.bytes, "GGUF") || first.size < kLlama2cHeaderBytes) return gguf_layout(files, tokenizer, needs);
  if (starts_with(first.bytes, "24ka")) {  // export.py's magic 0x616b3432 ("ak42"), little-endian
    return Status::error(ErrorCode::kUnsupported,
                         "a llama2.c checkpoint of export.py's --version 1 or 2 format: only the legacy format (run.c's, "
                         "export.py's default --version 0) is supported");
  }
  return llama2c_layout(files, tokenizer, needs);
}

Result<TensorSource> tensor_source(const ModelLayout& layout, const GgufTensorInfo& t) {
  for (const DataRange& r : layout.ranges) {
    const uint64_t at = t.offset - r.arena_offset;  // where in the range, if it is in it
    if (t.offset >= r.arena_offset && at < r.size && t.n_bytes <= r.size - at) {
      return TensorSource{r.file, r.file_offset + at};
    }
  }
  return Status::error(ErrorCode::kInternal, "tensor '%.*s' lies in none of the model's files", int(t.name.size()),
                       t.name.data());
}

}  // namespace wllm
