#include "llama2c/tokenizer_file.h"

#include <cctype>
#include <cstring>

namespace wllm {
namespace {

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6;
// The ids llama.cpp's converter gives these roles (UNKNOWN_TOKEN_ID, ...).
constexpr int kUnkId = 0, kBosId = 1, kEosId = 2;

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// "<0x" and a hex digit: what the converter's sscanf("<0x%02hhX>") matches.
bool is_byte_token(const std::string& text) {
  return text.size() > 3 && text.compare(0, 3, "<0x") == 0 && std::isxdigit(static_cast<unsigned char>(text[3]));
}

std::string spaces_to_u2581(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == ' ') out += "\xe2\x96\x81";
    else out += c;
  }
  return out;
}

}  // namespace

Result<Llama2cVocab> read_llama2c_tokenizer(std::span<const uint8_t> file, int vocab_size) {
  uint64_t pos = 0;
  const auto read = [&](void* dst, uint64_t n, int token, const char* what) -> Status {
    if (n > file.size() - pos) {
      return Status::error(ErrorCode::kBadFile,
                           "llama2.c tokenizer: the file ends at byte %zu, in the %s of token %d of %d (is it this "
                           "model's tokenizer?)",
                           file.size(), what, token, vocab_size);
    }
    std::memcpy(dst, file.data() + pos, n);
    pos += n;
    return {};
  };
  uint32_t max_token_length = 0;
  WLLM_RETURN_IF_ERROR(read(&max_token_length, 4, 0, "header"));

  // Each token takes at least 8 bytes: bound the count before reserving.
  if (uint64_t(vocab_size) > (file.size() - pos) / 8) {
    return Status::error(ErrorCode::kBadFile,
                         "llama2.c tokenizer: %zu bytes cannot hold the model's %d tokens (is it this model's tokenizer?)",
                         file.size(), vocab_size);
  }
  Llama2cVocab vocab;
  vocab.texts.reserve(vocab_size);
  vocab.scores.reserve(vocab_size);
  vocab.types.reserve(vocab_size);
  for (int id = 0; id < vocab_size; ++id) {
    float score = 0;
    int32_t length = 0;
    WLLM_RETURN_IF_ERROR(read(&score, 4, id, "score"));
    WLLM_RETURN_IF_ERROR(read(&length, 4, id, "length"));
    if (length < 0 || uint64_t(length) > file.size() - pos) {
      return Status::error(ErrorCode::kBadFile,
                           "llama2.c tokenizer: token %d at byte %llu has a length of %d, but %llu bytes are left", id,
                           ull(pos - 4), length, ull(file.size() - pos));
    }
    std::string text(reinterpret_cast<const char*>(file.data() + pos), length);
    pos += length;
    int32_t type = kNormal;
    if (id == kUnkId) {
      text = "<unk>";
      type = kUnknown;
    } else if (id == kBosId || id == kEosId) {
      text = id == kBosId ? "<s>" : "</s>";
      type = kControl;
    } else if (text.empty()) {
      type = kControl;
    } else if (is_byte_token(text)) {
      type = kByte;
    }
    vocab.texts.push_back(spaces_to_u2581(text));
    vocab.scores.push_back(score);
    vocab.types.push_back(type);
  }
  if (pos != file.size()) {
    return Status::error(ErrorCode::kBadFile,
                         "llama2.c tokenizer: %llu bytes follow the model's %d tokens (a tokenizer for a larger "
                         "vocabulary?)",
                         ull(file.size() - pos), vocab_size);
  }
  return vocab;
}

std::vector<std::string> llama2c_tokenizer_names(const Llama2cConfig& c) {
  return {"tokenizer.bin", "tok" + std::to_string(c.vocab_size) + ".bin"};
}

}  // namespace wllm
