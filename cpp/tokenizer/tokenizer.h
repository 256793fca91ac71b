// Tokenizers read from GGUF metadata, producing exactly llama.cpp's ids
// (src/llama-vocab.cpp at the version node-llama-cpp 3.22.1 bundles):
//   tokenizer.ggml.model = "llama": SentencePiece-style BPE over token
//     scores, spaces as U+2581, byte fallback <0xXX>;
//   tokenizer.ggml.model = "gpt2":  byte-level BPE over tokenizer.ggml.merges,
//     after the pre-tokenizer named by tokenizer.ggml.pre (pretokenizers.h);
//   tokenizer.ggml.model = "bert":  WordPiece after BERT's normaliser (wpm.cpp);
//   tokenizer.ggml.model = "t5":    Unigram (SentencePiece's Viterbi) after
//     its precompiled charsmap (ugm.cpp).
//   tokenizer.ggml.model = "gemma4": BPE over merges on UTF-8 text with
//     spaces as U+2581, split only at newlines, byte fallback <0xXX>.
// Control, user-defined and unknown tokens are cut out of the text first
// (llama.cpp's tokenizer_st_partition): user-defined ones always, control
// and unknown ones only with parse_special.
//
// A Tokenizer is immutable after from_gguf() and cheap to copy (shared
// state); encode() and the other methods are safe to call from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

struct TokenizerData;  // tokenizer_data.h

class Tokenizer {
 public:
  // Copies what it needs from `file`. Errors (kBadFile / kUnsupported) name
  // the key and the numbers: a missing token list, scores or token types
  // whose count differs from the token count, a duplicate token, a BOS, EOS,
  // EOT, EOM or unknown-token id out of range, a merge naming an unknown
  // token, an unsupported tokenizer model or pre-tokenizer.
  static Result<Tokenizer> from_gguf(const GgufFile& file);

  int32_t n_vocab() const;
  int32_t bos() const;  // -1 when absent
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t pad() const;
  int32_t sep() const;
  bool add_bos() const;  // tokenizer.ggml.add_bos_token, or the model's default
  bool add_eos() const;
  bool add_sep() const;  // a query and a document are joined by SEP (reranking)
  // "llama", "gpt2", "bert", "t5" or "gemma4", and the pre-tokenizer name ("default"
  // when absent, "gemma4" for gemma4).
  std::string_view model() const;
  std::string_view pre() const;

  // eos, eot, eom and llama.cpp's other end-of-generation tokens (<|im_end|>,
  // <|endoftext|>, <end_of_turn>, fim pad/repo/sep, ... found by their text).
  bool is_end_of_generation(int32_t id) const;
  // Control and unknown tokens: piece() renders them as "".
  bool is_control(int32_t id) const;

  // Token ids for `text` (any bytes; invalid UTF-8 is handled like llama.cpp:
  // U+FFFD for BPE and Unigram, dropped by WordPiece, byte tokens for SPM).
  // add_special adds BOS/EOS as the add_bos/add_eos flags say (WordPiece:
  // always [CLS] and [SEP]); parse_special turns control-token text such as
  // "<|endoftext|>" into that token.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes of a token as llama.cpp's token_to_piece(id, special=false):
  // control and unknown tokens give "", byte tokens their byte, U+2581 a
  // space (SPM, gemma4), GPT-2 byte characters their raw bytes (BPE). May be a part
  // of a UTF-8 character. "" for an id out of range.
  std::string piece(int32_t id) const;
  // The same bytes as a view (valid while the Tokenizer, or a copy, lives).
  std::string_view piece_view(int32_t id) const;
  // Concatenation of piece(id) for every id. (llama.cpp's detokenize also
  // drops the first leading space of SPM text and, for some BPE models,
  // "cleans" spaces before punctuation; this does neither, so that
  // decode(a) + decode(b) == decode(a + b) and streaming agrees with it.)
  std::string decode(const std::vector<int32_t>& ids) const;
  // The vocabulary string as stored in the file ("" out of range).
  std::string_view token_text(int32_t id) const;

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerData> data) : data_(std::move(data)) {}
  std::shared_ptr<const TokenizerData> data_;
};

// Turns a stream of token ids into text that never splits a UTF-8 character:
// bytes of an incomplete character are held until it completes. Ill-formed
// bytes (e.g. a lone byte token 0xFF) come out as U+FFFD, so every string
// appended is well-formed UTF-8. One per generation.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok) : tok_(tok) { pending_.reserve(64); }

  // Appends to *out the text that token `id` completes.
  void push(int32_t id, std::string* out);
  // End of stream: appends what is held, an incomplete character as U+FFFD.
  void finish(std::string* out);

 private:
  void drain(bool final, std::string* out);
  const Tokenizer& tok_;
  std::string pending_;  // bytes of a character not yet complete (at most 3 between calls)
};

}  // namespace wllm
