// Fuzzes the tokenizers on arbitrary bytes, with every vocabulary the engine
// supports from ../shared/models (SPM and byte-level BPE with each
// pre-tokenizer), loaded once.
//
// Input: byte 0 picks the vocabulary, byte 1 the flags (bit 0 add_special,
// bit 1 parse_special), the rest is the text. The text is encoded, decoded
// and stream-decoded, and its bytes are also read as token ids (3 bytes each,
// some outside the vocabulary) and decoded both ways. Checked besides the
// sanitizers:
//  - encode is deterministic and gives ids inside the vocabulary;
//  - StreamDecoder emits only well-formed UTF-8 and, in all, exactly decode()
//    with ill-formed bytes replaced (so streaming never loses or adds text);
//  - decode(encode(text)) gives the text back where llama.cpp's tokenizers
//    are lossless: parse_special off, no special or user-defined token in the
//    result, and every byte has a token; SPM then adds its space prefix and
//    turns U+2581 into a space (so: text without U+2581, and valid UTF-8 or
//    without spaces — an invalid lead byte can swallow a space's U+2581 into
//    byte tokens); byte-level BPE reads invalid UTF-8 as U+FFFD.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace {

constexpr int64_t kTokenTypeUserDefined = 4;  // tokenizer.ggml.token_type

struct Vocab {
  std::string name;
  std::unique_ptr<wllm::Tokenizer> tok;
  std::vector<uint8_t> special;  // [n_vocab] control, unknown or user-defined
  bool spm = false;
  bool add_space_prefix = false;
  bool every_byte_has_a_token = false;
};

std::vector<Vocab>* vocabs = nullptr;

void check(bool ok, const Vocab& v, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tokenizer_fuzz (%s): %s\n", v.name.c_str(), what);
    std::abort();
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The vocabulary in `path`, or nothing when the engine does not support it.
bool load(const std::filesystem::path& path, Vocab* v) {
  const std::string bytes = read_file(path);
  auto file = wllm::GgufFile::parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  if (!file.ok()) return false;
  auto tok = wllm::Tokenizer::from_gguf(*file);
  if (!tok.ok()) return false;
  v->name = path.filename().string();
  v->tok = std::make_unique<wllm::Tokenizer>(std::move(*tok));
  const int32_t n = v->tok->n_vocab();
  v->special.assign(n, 0);
  const auto types = file->get_array("tokenizer.ggml.token_type");
  for (int32_t id = 0; id < n; ++id) {
    const bool user_defined = types.ok() && (*types)->int_at(id) == kTokenTypeUserDefined;
    v->special[id] = v->tok->is_control(id) || user_defined;
  }
  v->spm = v->tok->model() == "llama";
  v->add_space_prefix = file->get_bool_or("tokenizer.ggml.add_space_prefix", v->spm).value();
  std::unordered_set<std::string_view> texts;
  for (int32_t id = 0; id < n; ++id) texts.insert(v->tok->token_text(id));
  v->every_byte_has_a_token = true;
  for (int b = 0; b < 256; ++b) {
    std::string text;
    if (v->spm) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      text = hex;
    } else {
      wllm::append_utf8(wllm::unicode::gpt2_byte_to_cpt(static_cast<uint8_t>(b)), &text);
    }
    if (!texts.count(text)) v->every_byte_has_a_token = false;
  }
  return true;
}

// Decodes `ids` with a StreamDecoder, one token at a time, and checks it
// against decode().
void check_stream(const Vocab& v, const std::vector<int32_t>& ids) {
  wllm::StreamDecoder decoder(*v.tok);
  std::string streamed, piece;
  for (int32_t id : ids) {
    piece.clear();
    decoder.push(id, &piece);
    check(wllm::is_valid_utf8(piece), v, "a streamed piece is not well-formed UTF-8");
    streamed += piece;
  }
  piece.clear();
  decoder.finish(&piece);
  check(wllm::is_valid_utf8(piece), v, "the end of the stream is not well-formed UTF-8");
  streamed += piece;
  std::string expected;
  wllm::append_sanitized_utf8(v.tok->decode(ids), &expected);
  check(streamed == expected, v, "the streamed text differs from decode()");
}

bool lossless_input(const Vocab& v, std::string_view text) {
  if (!v.every_byte_has_a_token) return false;
  if (!v.spm) return true;
  if (text.find("\xE2\x96\x81") != std::string_view::npos) return false;
  return wllm::is_valid_utf8(text) || text.find(' ') == std::string_view::npos;
}

std::string expected_round_trip(const Vocab& v, std::string_view text) {
  std::string out;
  if (v.spm) {
    if (v.add_space_prefix && !text.empty()) out = " ";
    out += text;
  } else {
    std::vector<uint32_t> cpts;
    wllm::decode_utf8_lenient(text, &cpts);
    for (uint32_t c : cpts) wllm::append_utf8(c, &out);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocabs = new std::vector<Vocab>();
  const std::filesystem::path models = WLLM_SHARED_MODELS;
  std::vector<std::filesystem::path> paths = {models / "stories260K.gguf"};
  for (const auto& entry : std::filesystem::directory_iterator(models / "vocab")) paths.push_back(entry.path());
  std::sort(paths.begin() + 1, paths.end());  // a stable index for byte 0
  for (const auto& path : paths) {
    Vocab v;
    if (load(path, &v)) vocabs->push_back(std::move(v));
  }
  std::fprintf(stderr, "tokenizer_fuzz: %zu vocabularies:", vocabs->size());
  for (const Vocab& v : *vocabs) std::fprintf(stderr, " %s", v.name.c_str());
  std::fprintf(stderr, "\n");
  if (vocabs->size() < 2) {
    std::fprintf(stderr, "tokenizer_fuzz: the vocabularies in %s are missing\n", WLLM_SHARED_MODELS);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Vocab& v = (*vocabs)[data[0] % vocabs->size()];
  const bool add_special = data[1] & 1, parse_special = data[1] & 2;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const int32_t n_vocab = v.tok->n_vocab();

  const std::vector<int32_t> ids = v.tok->encode(text, add_special, parse_special);
  check(ids == v.tok->encode(text, add_special, parse_special), v, "encode is not deterministic");
  bool any_special = false;
  for (int32_t id : ids) {
    check(id >= 0 && id < n_vocab, v, "encode gave an id outside the vocabulary");
    any_special |= v.special[id] != 0;
  }
  check_stream(v, ids);
  if (!add_special && !parse_special && !any_special && lossless_input(v, text)) {
    check(v.tok->decode(ids) == expected_round_trip(v, text), v, "decode(encode(text)) is not the text");
  }

  // The bytes as ids, a few outside the vocabulary on either side.
  std::vector<int32_t> raw_ids;
  for (size_t i = 0; i + 3 <= text.size(); i += 3) {
    const uint32_t x = static_cast<uint8_t>(text[i]) | static_cast<uint8_t>(text[i + 1]) << 8 |
                       static_cast<uint32_t>(static_cast<uint8_t>(text[i + 2])) << 16;
    raw_ids.push_back(static_cast<int32_t>(x % (static_cast<uint32_t>(n_vocab) + 16)) - 8);
  }
  check_stream(v, raw_ids);
  for (int32_t id : raw_ids) {
    check(v.tok->piece(id) == v.tok->piece_view(id), v, "piece() and piece_view() differ");
    if (id < 0 || id >= n_vocab) {
      check(v.tok->piece_view(id).empty() && v.tok->token_text(id).empty() && !v.tok->is_control(id) &&
                !v.tok->is_end_of_generation(id),
            v, "an id outside the vocabulary has a text or a kind");
    }
  }
  return 0;
}
