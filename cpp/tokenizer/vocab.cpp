// Tokenizer::from_gguf: reads the tokenizer.ggml.* metadata and derives what
// llama.cpp's llama_vocab::impl::load (src/llama-vocab.cpp) derives from it:
// default special ids per model, token attributes (including the ones it
// guesses from token text: EOT/EOM/FIM/EOG tokens become control tokens), the
// end-of-generation set, the special-token order and per-model strip flags.
// The GGUF key strings of the tokenizer live here and nowhere else.
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdarg>
#include <cstring>
#include <initializer_list>
#include <memory>

#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_data.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace wllm {

namespace {

constexpr const char* kKeyModel = "tokenizer.ggml.model";
constexpr const char* kKeyPre = "tokenizer.ggml.pre";
constexpr const char* kKeyTokens = "tokenizer.ggml.tokens";
constexpr const char* kKeyScores = "tokenizer.ggml.scores";
constexpr const char* kKeyTokenType = "tokenizer.ggml.token_type";
constexpr const char* kKeyMerges = "tokenizer.ggml.merges";
constexpr const char* kKeyAddBos = "tokenizer.ggml.add_bos_token";
constexpr const char* kKeyAddEos = "tokenizer.ggml.add_eos_token";
constexpr const char* kKeyAddSep = "tokenizer.ggml.add_sep_token";
constexpr const char* kKeyLowercase = "tokenizer.ggml.normalizer.lowercase";
constexpr const char* kKeyStripAccents = "tokenizer.ggml.normalizer.strip_accents";
constexpr const char* kKeyRemoveExtraSpaces = "tokenizer.ggml.remove_extra_whitespaces";
constexpr const char* kKeyCharsmap = "tokenizer.ggml.precompiled_charsmap";
constexpr const char* kKeyAddSpacePrefix = "tokenizer.ggml.add_space_prefix";
constexpr const char* kKeyName = "general.name";
constexpr const char* kKeyArch = "general.architecture";

// tokenizer.ggml.token_type values (llama.h: llama_token_type).
uint16_t attr_from_type(int64_t type) {
  switch (type) {
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return kAttrUndefined;
  }
}

Status bad(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status bad(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string msg = str_vprintf(fmt, args);
  va_end(args);
  return Status(ErrorCode::kBadFile, "tokenizer: " + msg);
}

// Reads an optional token id. `strict` ids must be in range when present
// (an error otherwise); others out of range keep their default, as llama.cpp.
Status read_id(const GgufFile& f, const char* key, int32_t n_vocab, bool strict, int32_t* id) {
  const GgufKV* kv = f.find(key);
  if (!kv) return Status::ok_status();
  int64_t v = -1;
  switch (kv->value.type) {
    case GgufType::kU8: case GgufType::kU16: case GgufType::kU32: case GgufType::kU64:
      v = kv->value.u > uint64_t(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(kv->value.u);
      break;
    case GgufType::kI8: case GgufType::kI16: case GgufType::kI32: case GgufType::kI64:
      v = kv->value.i;
      break;
    default:
      return bad("%s has type %s, expected an integer", key, gguf_type_name(kv->value.type));
  }
  if (v >= 0 && v < n_vocab) {
    *id = static_cast<int32_t>(v);
  } else if (strict) {
    return bad("%s = %lld is out of range (the vocabulary has %d tokens)", key, static_cast<long long>(v), n_vocab);
  }
  return Status::ok_status();
}

Status read_bool(const GgufFile& f, const char* key, bool* value) {
  if (!f.find(key)) return Status::ok_status();
  Result<bool> b = f.get_bool(key);
  if (!b.ok()) return b.status();
  *value = *b;
  return Status::ok_status();
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> subs) {
  for (std::string_view sub : subs) {
    if (s.find(sub) != std::string_view::npos) return true;
  }
  return false;
}

// Hex value of a byte token "<0xXX>" as llama.cpp's token_to_byte
// (strtol of the two characters after "<0x"); -1 if the text is too short.
int byte_of_byte_token(std::string_view text) {
  if (text.size() < 3) return -1;
  int v = 0;
  for (size_t i = 3; i < std::min<size_t>(5, text.size()); ++i) {
    const char c = text[i];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      break;
    }
    v = v * 16 + digit;
  }
  return v & 0xFF;
}

// llama.cpp's llama_decode_text: GPT-2 byte characters back to bytes; a code
// point outside that alphabet is spelled out as llama.cpp does.
std::string decode_gpt2_text(std::string_view text) {
  std::string out;
  std::vector<uint32_t> cpts;
  decode_utf8_lenient(text, &cpts);
  for (uint32_t cpt : cpts) {
    const int byte = unicode::gpt2_cpt_to_byte(cpt);
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
      continue;
    }
    std::string utf8;
    append_utf8(cpt, &utf8);
    out += "[UNK_BYTE_0x";
    for (char c : utf8) out += str_printf("%02x", static_cast<uint8_t>(c));
    out += text;
    out += "]";
  }
  return out;
}

// token_to_piece(id, special=false) of llama.cpp.
std::string make_piece(const TokenizerData& d, int32_t id) {
  const uint16_t attr = d.attrs[id];
  const std::string_view text = d.text(id);
  if (attr & (kAttrUnknown | kAttrControl)) return "";
  if (attr & kAttrUserDefined) return std::string(text);
  if (attr & kAttrNormal) {
    if (d.kind == TokenizerKind::kBpe && !d.pre->spm_style) return decode_gpt2_text(text);
    std::string s;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
        s += ' ';
        i += 2;
      } else {
        s += text[i];
      }
    }
    return s;
  }
  if (attr & kAttrByte) {
    const int b = byte_of_byte_token(text);
    return b < 0 ? "" : std::string(1, static_cast<char>(b));
  }
  return "";  // unused / undefined tokens
}

Status load_vocab(const GgufFile& f, TokenizerData* d) {
  WLLM_ASSIGN_OR_RETURN(const GgufArray* tokens, f.get_array(kKeyTokens));
  if (tokens->elem_type() != GgufType::kString) {
    return bad("%s is an array of %s, expected strings", kKeyTokens, gguf_type_name(tokens->elem_type()));
  }
  const uint64_t n = tokens->size();
  if (n == 0 || n > uint64_t(INT32_MAX)) return bad("%s has %llu tokens", kKeyTokens, (unsigned long long)n);

  const GgufArray* scores = nullptr;
  if (f.find(kKeyScores)) {
    WLLM_ASSIGN_OR_RETURN(scores, f.get_array(kKeyScores));
    if (scores->size() != n) {
      return bad("%s has %llu entries but there are %llu tokens", kKeyScores, (unsigned long long)scores->size(),
                 (unsigned long long)n);
    }
  }
  const GgufArray* types = nullptr;
  if (f.find(kKeyTokenType)) {
    WLLM_ASSIGN_OR_RETURN(types, f.get_array(kKeyTokenType));
    if (types->size() != n) {
      return bad("%s has %llu entries but there are %llu tokens", kKeyTokenType, (unsigned long long)types->size(),
                 (unsigned long long)n);
    }
  }

  // Token texts; llama.cpp renames an empty token to "[EMPTY_<id>]".
  d->text_offsets.resize(n + 1);
  size_t total = 0;
  for (uint64_t i = 0; i < n; ++i) total += tokens->string_at(i).size();
  d->text_pool.reserve(total);
  for (uint64_t i = 0; i < n; ++i) {
    d->text_offsets[i] = static_cast<uint32_t>(d->text_pool.size());
    const std::string_view t = tokens->string_at(i);
    if (t.empty()) {
      d->text_pool += "[EMPTY_" + std::to_string(i) + "]";
    } else {
      d->text_pool += t;
    }
    if (uint64_t{d->text_pool.size()} > UINT32_MAX) return bad("%s: token texts exceed 4 GiB", kKeyTokens);
    d->max_token_len = std::max<size_t>(d->max_token_len, d->text_pool.size() - d->text_offsets[i]);
  }
  d->text_offsets[n] = static_cast<uint32_t>(d->text_pool.size());

  d->scores.assign(n, 0.0f);
  d->attrs.assign(n, kAttrNormal);
  d->text_to_id.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t id = static_cast<int32_t>(i);
    if (scores) d->scores[i] = scores->f32_at(i);
    if (types) d->attrs[i] = attr_from_type(types->int_at(i));
    const auto [it, inserted] = d->text_to_id.emplace(d->text(id), id);
    if (!inserted) {
      // llama.cpp aborts on this (its token map would be smaller than the list).
      return bad("%s: tokens %d and %d are both '%.*s'", kKeyTokens, it->second, id,
                 static_cast<int>(std::min<size_t>(d->text(id).size(), 64)), d->text(id).data());
    }
  }
  return Status::ok_status();
}

Status load_merges(const GgufFile& f, TokenizerData* d) {
  WLLM_ASSIGN_OR_RETURN(const GgufArray* merges, f.get_array(kKeyMerges));
  if (merges->elem_type() != GgufType::kString) {
    return bad("%s is an array of %s, expected strings", kKeyMerges, gguf_type_name(merges->elem_type()));
  }
  if (merges->size() > uint64_t(INT32_MAX)) return bad("%s has too many entries", kKeyMerges);
  d->merges.reserve(merges->size());
  std::string joined;
  for (uint64_t i = 0; i < merges->size(); ++i) {
    const std::string_view m = merges->string_at(i);
    const size_t sp = m.find(' ', 1);  // llama.cpp splits at the first space after the first byte
    if (sp == std::string_view::npos) {
      return bad("%s[%llu] = '%.*s' has no space between its two parts", kKeyMerges, (unsigned long long)i,
                 static_cast<int>(std::min<size_t>(m.size(), 64)), m.data());
    }
    const std::string_view a = m.substr(0, sp);
    const std::string_view b = m.substr(sp + 1);
    const int32_t ia = d->find(a);
    const int32_t ib = d->find(b);
    if (ia < 0 || ib < 0) {
      return bad("%s[%llu] = '%.*s' names a part that is not a token", kKeyMerges, (unsigned long long)i,
                 static_cast<int>(std::min<size_t>(m.size(), 64)), m.data());
    }
    joined.assign(a);
    joined += b;
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(ia)) << 32) | static_cast<uint32_t>(ib);
    d->merges.emplace(key, BpeMerge{static_cast<int32_t>(i), d->find(joined)});  // first rank wins, as llama.cpp
  }
  return Status::ok_status();
}

// The Unigram matcher and normaliser (ugm.cpp), from the attributes as the
// file gives them.
Status load_ugm(const GgufFile& f, TokenizerData* d) {
  UgmData& u = d->ugm;
  const int32_t n = d->n_vocab();
  u.matchable.assign(n, 0);
  float min_score = FLT_MAX;
  for (int32_t id = 0; id < n; ++id) {
    const uint16_t attr = d->attrs[id];
    if (attr & kAttrNormal) min_score = std::min(min_score, d->scores[id]);
    if (attr & (kAttrNormal | kAttrUserDefined | kAttrUnused)) {
      u.matchable[id] = 1;
      u.max_piece_bytes = std::max(u.max_piece_bytes, d->text(id).size());
    }
    if (attr & kAttrUserDefined) u.user_defined.insert(d->text(id), id);
  }
  u.unknown_score = static_cast<double>(min_score) - 10.0;
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyRemoveExtraSpaces, &u.remove_extra_whitespaces));
  if (!f.find(kKeyCharsmap)) return Status::ok_status();
  WLLM_ASSIGN_OR_RETURN(const GgufArray* charsmap, f.get_array(kKeyCharsmap));
  if (charsmap->elem_type() != GgufType::kU8 && charsmap->elem_type() != GgufType::kI8) {
    return bad("%s is an array of %s, expected bytes", kKeyCharsmap, gguf_type_name(charsmap->elem_type()));
  }
  std::vector<uint8_t> bytes(charsmap->size());
  for (uint64_t i = 0; i < charsmap->size(); ++i) bytes[i] = static_cast<uint8_t>(charsmap->int_at(i) & 0xFF);
  return parse_ugm_charsmap(bytes, &u);
}

// Finds special tokens by their text where the file does not name them, and
// builds the end-of-generation set, as llama.cpp's load does. Where several
// texts of a list are tokens, llama.cpp takes the first in hash-map order; we
// take the first in list order (phi-3: <|end|> before <|endoftext|>, the same
// choice llama.cpp happens to make there).
void derive_special_tokens(TokenizerData* d) {
  const int32_t n = d->n_vocab();
  const auto mark_control = [&](int32_t id) { d->attrs[id] |= kAttrControl; };
  const auto detect = [&](int32_t* slot, std::initializer_list<std::string_view> texts) {
    if (*slot >= 0) return;
    for (std::string_view t : texts) {
      const int32_t id = d->find(t);
      if (id >= 0) {
        *slot = id;
        mark_control(id);
        return;
      }
    }
  };
  detect(&d->eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                   "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                   "<end_of_utterance>"});
  detect(&d->eom, {"<|eom_id|>"});
  detect(&d->fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
                       "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"});
  detect(&d->fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
                       "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"});
  detect(&d->fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
                       "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"});
  detect(&d->fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
  detect(&d->fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
  detect(&d->fim_sep, {"<|file_sep|>"});

  // Control tokens named "unused" are unused.
  for (int32_t id = 0; id < n; ++id) {
    if ((d->attrs[id] & kAttrControl) && d->text(id).find("unused") != std::string_view::npos) {
      d->attrs[id] |= kAttrUnused;
    }
  }

  d->is_eog.assign(n, 0);
  for (int32_t id : {d->fim_pad, d->fim_rep, d->fim_sep}) {
    if (id >= 0) d->is_eog[id] = 1;
  }
  static constexpr std::string_view kEogTexts[] = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
      "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
      "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
      "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~[",
  };
  for (int32_t id = 0; id < n; ++id) {
    const std::string_view t = d->text(id);
    for (std::string_view e : kEogTexts) {
      if (t == e) {
        d->is_eog[id] = 1;
        mark_control(id);
        break;
      }
    }
    // gpt-oss: always rendered, so user-defined.
    if (t == "<|channel|>" || t == "<|message|>" || t == "<|start|>" || t == "<|constrain|>") {
      d->attrs[id] = kAttrUserDefined;
    }
  }
  for (int32_t id : {d->eos, d->eot, d->eom}) {
    if (id >= 0) d->is_eog[id] = 1;
  }

  // o200k_harmony / solar-open: <|end|> ends a message, not the generation.
  const auto eog_with_text = [&](std::string_view t) {
    const int32_t id = d->find(t);
    return (id >= 0 && d->is_eog[id]) ? id : -1;
  };
  const int32_t end_id = eog_with_text("<|end|>");
  const bool has_call = eog_with_text("<|call|>") >= 0 || eog_with_text("<|calls|>") >= 0;
  if (end_id >= 0 && has_call && (eog_with_text("<|return|>") >= 0 || eog_with_text("<|flush|>") >= 0)) {
    d->is_eog[end_id] = 0;
    d->attrs[end_id] = kAttrUserDefined;
  }
  // gemma4 / paddleocr: </s> is not an end of generation there.
  const int32_t s_id = eog_with_text("</s>");
  if (s_id >= 0 && eog_with_text("<|tool_response>") >= 0) {
    d->is_eog[s_id] = 0;
    d->attrs[s_id] = kAttrNormal;
  }
}

void build_specials(const GgufFile& f, TokenizerData* d) {
  const int32_t n = d->n_vocab();
  for (int32_t id = 0; id < n; ++id) {
    if (d->attrs[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) d->specials.push_back(id);
  }
  // Longest first; llama.cpp's std::sort leaves ties unordered, we keep ids ascending.
  std::stable_sort(d->specials.begin(), d->specials.end(),
                   [&](int32_t a, int32_t b) { return d->text(a).size() > d->text(b).size(); });

  // Per-model strip flags (llama.cpp sets them by model, pre-tokenizer or
  // architecture name).
  const auto string_or_empty = [&](const char* key) {
    Result<std::string_view> v = f.get_string_or(key, "");
    return v.ok() ? *v : std::string_view();
  };
  std::string name(string_or_empty(kKeyName));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view pre = string_or_empty(kKeyPre);
  const std::string_view arch = string_or_empty(kKeyArch);
  const auto set_attr = [&](std::string_view text, uint16_t attr, bool on) {
    const int32_t id = d->find(text);
    if (id < 0) return;
    d->attrs[id] = on ? (d->attrs[id] | attr) : (d->attrs[id] & ~attr);
  };
  if (contains_any(pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set_attr("<mask>", kAttrLstrip, true);
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (int32_t id : d->specials) d->attrs[id] |= kAttrRstrip;
    set_attr("</s>", kAttrRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set_attr(t, kAttrRstrip, false);
  } else if (contains_any(name, {"modern-bert"})) {
    set_attr("[MASK]", kAttrLstrip, true);
  }

  // The trie of special texts (partition_specials finds candidates with it).
  for (size_t si = 0; si < d->specials.size(); ++si) {
    d->special_trie.insert(d->text(d->specials[si]), static_cast<int32_t>(si));
  }
}

}  // namespace

void SpecialTrie::insert(std::string_view text, int32_t index) {
  if (nodes.empty()) nodes.assign(1, {});
  int32_t node = 0;
  for (char c : text) {
    const uint64_t key = (static_cast<uint64_t>(node) << 8) | static_cast<uint8_t>(c);
    auto it = edges.find(key);
    if (it == edges.end()) {
      it = edges.emplace(key, static_cast<int32_t>(nodes.size())).first;
      nodes.push_back({});
    }
    node = it->second;
  }
  nodes[node].special_index = index;
}

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& f) {
  auto d = std::make_shared<TokenizerData>();

  WLLM_ASSIGN_OR_RETURN(const std::string_view model, f.get_string(kKeyModel));
  WLLM_ASSIGN_OR_RETURN(const std::string_view pre_key, f.get_string_or(kKeyPre, ""));
  d->model_name = std::string(model);
  d->pre_name = pre_key.empty() ? "default" : std::string(pre_key);

  bool no_default_bos = false, no_default_eos = false;
  if (model == "llama") {
    d->kind = TokenizerKind::kSpm;
    d->add_space_prefix = true;  // llama.cpp's SPM defaults
    d->add_bos = true;
  } else if (model == "gpt2" || model == "gemma4") {
    // gemma4: BPE over merges like gpt2, with its own pre-tokenizer and no
    // default special ids (llama.cpp reads them all from the file).
    const bool gemma4 = model == "gemma4";
    if (gemma4) d->pre_name = "gemma4";
    d->kind = TokenizerKind::kBpe;
    d->pre = find_pre_tokenizer(gemma4 ? "gemma4" : pre_key);
    if (!d->pre) {
      // llama.cpp refuses names it does not know; we also refuse the ones it
      // knows but this engine does not implement.
      return Status::error(ErrorCode::kUnsupported, "tokenizer: pre-tokenizer '%.*s' is not supported",
                           static_cast<int>(pre_key.size()), pre_key.data());
    }
    d->ignore_merges = d->pre->ignore_merges;
    d->add_bos = d->pre->add_bos;
    no_default_bos = d->pre->no_default_bos || gemma4;
    no_default_eos = gemma4;
  } else if (model == "bert") {
    d->kind = TokenizerKind::kWpm;
    d->add_bos = true;  // [CLS] text [SEP]
    d->add_sep = true;
  } else if (model == "t5") {
    d->kind = TokenizerKind::kUgm;
    d->add_eos = true;
  } else {
    return Status::error(ErrorCode::kUnsupported, "tokenizer: %s '%.*s' is not supported (supported: llama, gpt2, "
                         "gemma4, bert, t5)", kKeyModel, static_cast<int>(model.size()), model.data());
  }
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyAddSpacePrefix, &d->add_space_prefix));

  WLLM_RETURN_IF_ERROR(load_vocab(f, d.get()));
  const int32_t n = d->n_vocab();
  if (d->kind == TokenizerKind::kBpe) WLLM_RETURN_IF_ERROR(load_merges(f, d.get()));
  if (d->kind == TokenizerKind::kUgm) WLLM_RETURN_IF_ERROR(load_ugm(f, d.get()));

  // Default special ids (llama.cpp), dropped when outside the vocabulary.
  switch (d->kind) {
    case TokenizerKind::kSpm:
      d->bos = 1;
      d->eos = 2;
      d->unk = 0;
      break;
    case TokenizerKind::kBpe:
      d->bos = no_default_bos ? -1 : 11;
      d->eos = no_default_eos ? -1 : 11;
      break;
    case TokenizerKind::kWpm:  // BERT's [CLS], [UNK], [SEP], [PAD], [MASK]
      d->bos = 101;
      d->unk = 100;
      d->sep = 102;
      d->pad = 0;
      d->mask = 103;
      break;
    case TokenizerKind::kUgm:  // T5's
      d->eos = 1;
      d->unk = 2;
      d->pad = 0;
      break;
  }
  for (int32_t* id : {&d->bos, &d->eos, &d->unk, &d->sep, &d->pad, &d->mask}) {
    if (*id >= n) *id = -1;
  }
  struct IdKey {
    const char* key;
    int32_t* id;
    bool strict;
  };
  const IdKey id_keys[] = {
      {"tokenizer.ggml.bos_token_id", &d->bos, true},
      {"tokenizer.ggml.eos_token_id", &d->eos, true},
      {"tokenizer.ggml.eot_token_id", &d->eot, true},
      {"tokenizer.ggml.eom_token_id", &d->eom, true},
      {"tokenizer.ggml.unknown_token_id", &d->unk, true},
      {"tokenizer.ggml.seperator_token_id", &d->sep, false},
      {"tokenizer.ggml.padding_token_id", &d->pad, false},
      {"tokenizer.ggml.mask_token_id", &d->mask, false},
      {"tokenizer.ggml.fim_pre_token_id", &d->fim_pre, false},
      {"tokenizer.ggml.fim_suf_token_id", &d->fim_suf, false},
      {"tokenizer.ggml.fim_mid_token_id", &d->fim_mid, false},
      {"tokenizer.ggml.fim_pad_token_id", &d->fim_pad, false},
      {"tokenizer.ggml.fim_rep_token_id", &d->fim_rep, false},
      {"tokenizer.ggml.fim_sep_token_id", &d->fim_sep, false},
      {"tokenizer.ggml.prefix_token_id", &d->fim_pre, false},  // deprecated names
      {"tokenizer.ggml.suffix_token_id", &d->fim_suf, false},
      {"tokenizer.ggml.middle_token_id", &d->fim_mid, false},
  };
  for (const IdKey& k : id_keys) WLLM_RETURN_IF_ERROR(read_id(f, k.key, n, k.strict, k.id));
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyAddBos, &d->add_bos));
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyAddEos, &d->add_eos));
  if (d->pre && d->pre->spm_style) d->add_bos = true;  // llama.cpp overrides the file for Gemma 4
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyAddSep, &d->add_sep));
  if (d->kind == TokenizerKind::kWpm && (d->bos < 0 || d->sep < 0)) {
    return bad("a WordPiece vocabulary needs its [CLS] and [SEP] tokens (bos %d, sep %d)", d->bos, d->sep);
  }
  if (d->add_bos && d->bos < 0) return bad("%s is true but there is no BOS token", kKeyAddBos);
  if (d->add_eos && d->eos < 0) return bad("%s is true but there is no EOS token", kKeyAddEos);
  // BERT's normaliser: strip_accents follows lowercase unless given.
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyLowercase, &d->lowercase));
  d->strip_accents = d->lowercase;
  WLLM_RETURN_IF_ERROR(read_bool(f, kKeyStripAccents, &d->strip_accents));

  // Byte fallback: SPM's <0xXX>, else the byte itself as a one-byte token;
  // SentencePiece-style BPE's <0xXX> only.
  const bool spm_style = d->pre && d->pre->spm_style;
  for (int b = 0; b < 256; ++b) {
    d->byte_tokens[b] = -1;
    if (d->kind != TokenizerKind::kSpm && !spm_style) continue;
    const int32_t id = d->find(str_printf("<0x%02X>", b));
    const char c = static_cast<char>(b);
    d->byte_tokens[b] = id >= 0 || spm_style ? id : d->find(std::string_view(&c, 1));
  }

  derive_special_tokens(d.get());
  build_specials(f, d.get());

  d->piece_offsets.resize(n + 1);
  for (int32_t id = 0; id < n; ++id) {
    d->piece_offsets[id] = static_cast<uint32_t>(d->piece_pool.size());
    d->piece_pool += make_piece(*d, id);
    if (uint64_t{d->piece_pool.size()} > UINT32_MAX) return bad("token pieces exceed 4 GiB");
  }
  d->piece_offsets[n] = static_cast<uint32_t>(d->piece_pool.size());

  return Tokenizer(std::move(d));
}

}  // namespace wllm
