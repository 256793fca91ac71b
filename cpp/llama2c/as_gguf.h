// A llama2.c checkpoint with its tokenizer, described as the GGUF file
// llama.cpp's convert-llama2c-to-ggml makes of them: the same metadata keys
// with the same types in the same order, the same tensor names, shapes and
// order. Three values differ, each to say what the checkpoint says:
//   - llama.context_length is the checkpoint's seq_len (the converter writes a
//     default of its own: 2048 in the version that made stories260K.gguf,
//     128 in llama.cpp v0.5.0);
//   - llama.rope.dimension_count is the head size (the converter caps it at
//     64; run.c rotates whole heads, and every tinyllamas head is <= 64);
//   - a shared classifier stays shared: no output.weight (the converter
//     writes a copy of token_embd; GGUF readers tie the two when it is absent).
#pragma once

#include "core/status.h"
#include "gguf/gguf_writer.h"
#include "llama2c/checkpoint.h"
#include "llama2c/tokenizer_file.h"

namespace wllm {

// Adds the metadata and the tensor infos (add_tensor_info: the data stays in
// the checkpoint) of checkpoint `c` with vocabulary `vocab` to `out`.
Status describe_llama2c_as_gguf(const Llama2cConfig& c, const Llama2cVocab& vocab, GgufWriter* out);

}  // namespace wllm
