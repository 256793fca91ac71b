// Internal: the immutable state behind a Tokenizer, shared by the loader
// (vocab.cpp), the encoders (spm.cpp, bpe.cpp, wpm.cpp, ugm.cpp,
// special_tokens.cpp) and decoding (tokenizer.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizer/pretokenizers.h"

namespace wllm {

// Token attributes, as llama.cpp's llama_token_attr (include/llama.h).
enum TokenAttr : uint16_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,
  kAttrUserDefined = 1 << 4,
  kAttrByte = 1 << 5,
  kAttrLstrip = 1 << 7,  // eat whitespace left of this special token
  kAttrRstrip = 1 << 8,  // eat whitespace right of it
};

// SentencePiece BPE ("llama"), byte-level BPE ("gpt2"), WordPiece ("bert"),
// Unigram ("t5").
enum class TokenizerKind : uint8_t { kSpm, kBpe, kWpm, kUgm };

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string_view, int32_t, StringViewHash, std::equal_to<>>;

struct BpeMerge {
  int32_t rank;    // position in tokenizer.ggml.merges: lower merges first
  int32_t result;  // id of the merged text, -1 if it is not a token
};

// Trie over the texts of the special tokens, to find which of them occur in a
// text in one pass (the partition then only looks for those).
struct SpecialTrie {
  struct Node {
    int32_t special_index = -1;  // index into TokenizerData::specials ending here
  };
  std::vector<Node> nodes;                          // [0] is the root
  std::unordered_map<uint64_t, int32_t> edges;      // (node << 8 | byte) -> child
  int32_t child(int32_t node, uint8_t byte) const {
    const auto it = edges.find((static_cast<uint64_t>(node) << 8) | byte);
    return it == edges.end() ? -1 : it->second;
  }
  // Adds `text`, its last node marked with `index`.
  void insert(std::string_view text, int32_t index);
};

// Unigram state, taken from the token attributes as the file gives them
// (llama.cpp builds its matcher before the special-token passes add to them).
struct UgmData {
  std::vector<uint8_t> matchable;  // [n_vocab] 1: normal, user-defined or unused (what the Viterbi may use)
  size_t max_piece_bytes = 0;      // longest matchable text
  double unknown_score = 0;        // the lowest normal score minus 10
  SpecialTrie user_defined;        // texts of the user-defined tokens, kept whole by the normaliser
  std::vector<uint32_t> charsmap_xcda;  // precompiled_charsmap: its double array
  std::string charsmap_strings;         // and its NUL-terminated replacements
  bool remove_extra_whitespaces = false;
};

struct TokenizerData {
  TokenizerKind kind = TokenizerKind::kSpm;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre_name;    // tokenizer.ggml.pre ("default" when absent)
  const PreTokenizer* pre = nullptr;  // BPE only

  // Vocabulary: texts concatenated, token i is text_pool[text_offsets[i], text_offsets[i+1]).
  std::string text_pool;
  std::vector<uint32_t> text_offsets;  // [n_vocab + 1]
  std::vector<float> scores;           // [n_vocab] SPM merge priority
  std::vector<uint16_t> attrs;         // [n_vocab] TokenAttr bits
  TokenMap text_to_id;                 // views into text_pool

  // piece(id) for every id, concatenated like the texts.
  std::string piece_pool;
  std::vector<uint32_t> piece_offsets;  // [n_vocab + 1]

  // BPE: (left id << 32 | right id) -> merge.
  std::unordered_map<uint64_t, BpeMerge> merges;
  // SPM: token for each byte (<0xXX>, else the one-byte text), -1 if none;
  // SentencePiece-style BPE (gemma4): <0xXX> only.
  int32_t byte_tokens[256] = {};

  // Control, user-defined and unknown tokens, longest text first (ties by id),
  // the order llama.cpp's tokenizer_st_partition tries them in.
  std::vector<int32_t> specials;
  SpecialTrie special_trie;

  // WordPiece: the longest token text (bytes), and BERT's normaliser.
  size_t max_token_len = 0;
  bool lowercase = true;
  bool strip_accents = true;
  UgmData ugm;

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;           // a pair of texts (reranking) is joined with SEP
  bool add_space_prefix = false;  // SPM: prepend ' ' to text after BOS/specials
  bool ignore_merges = false;     // BPE: a word that is a token is taken whole
  std::vector<uint8_t> is_eog;    // [n_vocab]

  int32_t n_vocab() const { return static_cast<int32_t>(attrs.size()); }
  std::string_view text(int32_t id) const {
    return std::string_view(text_pool).substr(text_offsets[id], text_offsets[id + 1] - text_offsets[id]);
  }
  std::string_view piece(int32_t id) const {
    return std::string_view(piece_pool).substr(piece_offsets[id], piece_offsets[id + 1] - piece_offsets[id]);
  }
  int32_t find(std::string_view text) const {
    const auto it = text_to_id.find(text);
    return it == text_to_id.end() ? -1 : it->second;
  }
};

// A piece of the input after special-token partitioning: raw text
// [offset, offset + length) of the input, or a special token.
struct Fragment {
  int32_t token;  // -1 for raw text
  size_t offset;
  size_t length;
};

// llama.cpp's tokenizer_st_partition: cuts the special tokens out of `text`.
void partition_specials(const TokenizerData& d, std::string_view text, bool parse_special,
                        std::vector<Fragment>* out);

// Encoders: append the ids of the partitioned `text` to *out (special-token
// fragments as themselves, raw fragments through the model's algorithm).
void spm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out);
void bpe_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out);
void wpm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out);
void ugm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out);

// Reads tokenizer.ggml.precompiled_charsmap (ugm.cpp): a 4-byte length, the
// double array, the replacement strings. Empty: no charsmap.
Status parse_ugm_charsmap(const std::vector<uint8_t>& bytes, UgmData* u);

}  // namespace wllm
