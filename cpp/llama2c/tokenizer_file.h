// llama2.c's tokenizer file (`tokenizer.bin`, `tok512.bin`: what
// llama2.c's tokenizer.py exports from a SentencePiece model), read into a
// GGUF vocabulary the way llama.cpp's convert-llama2c-to-ggml reads it.
//
// File layout (little-endian):
//   u32 max_token_length  (the longest token text; not needed here)
//   per token, vocab_size times: f32 score | i32 length | `length` bytes of text
// The file carries no token count: it must end right after the model's
// vocab_size tokens, which is how a tokenizer is told to belong to a model.
//
// The texts are tokenizer.py's: SentencePiece's pieces with U+2581 turned back
// into spaces, and BOS and EOS written as "\n<s>\n" and "\n</s>\n". As llama.cpp's
// converter does, ids 0, 1 and 2 become "<unk>", "<s>" and "</s>" (unknown,
// control, control), an empty text is a control token, "<0xXX>" a byte token,
// anything else a normal one, and spaces turn into U+2581 again.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "llama2c/checkpoint.h"

namespace wllm {

struct Llama2cVocab {
  std::vector<std::string> texts;  // as GGUF's tokenizer.ggml.tokens
  std::vector<float> scores;
  std::vector<int32_t> types;      // llama.cpp's token types (1 normal, 2 unknown, 3 control, 6 byte)
};

// The vocabulary of `file` for a model of `vocab_size` tokens. kBadFile
// names the token and byte where the file ends early or lies about a
// length, or says the file holds more tokens than the model has.
Result<Llama2cVocab> read_llama2c_tokenizer(std::span<const uint8_t> file, int vocab_size);

// The names a checkpoint's tokenizer file usually has, to look for beside
// it: "tokenizer.bin" (the Llama 2 vocabulary) and "tok<vocab_size>.bin"
// (llama2.c's name for a vocabulary it trained).
std::vector<std::string> llama2c_tokenizer_names(const Llama2cConfig& c);

}  // namespace wllm
