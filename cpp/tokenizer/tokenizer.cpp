// Tokenizer's public methods and StreamDecoder. Loading is in vocab.cpp, the
// algorithms in spm.cpp, bpe.cpp, special_tokens.cpp and pretokenizers.cpp.
#include "tokenizer/tokenizer.h"

#include "tokenizer/tokenizer_data.h"
#include "tokenizer/utf8.h"

namespace wllm {

int32_t Tokenizer::n_vocab() const { return data_->n_vocab(); }
int32_t Tokenizer::bos() const { return data_->bos; }
int32_t Tokenizer::eos() const { return data_->eos; }
int32_t Tokenizer::eot() const { return data_->eot; }
int32_t Tokenizer::eom() const { return data_->eom; }
int32_t Tokenizer::unk() const { return data_->unk; }
int32_t Tokenizer::pad() const { return data_->pad; }
int32_t Tokenizer::sep() const { return data_->sep; }
bool Tokenizer::add_bos() const { return data_->add_bos; }
bool Tokenizer::add_eos() const { return data_->add_eos; }
bool Tokenizer::add_sep() const { return data_->add_sep; }
std::string_view Tokenizer::model() const { return data_->model_name; }
std::string_view Tokenizer::pre() const { return data_->pre_name; }

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return id >= 0 && id < data_->n_vocab() && data_->is_eog[id];
}

bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && id < data_->n_vocab() && (data_->attrs[id] & (kAttrControl | kAttrUnknown));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const TokenizerData& d = *data_;
  std::vector<Fragment> fragments;
  partition_specials(d, text, parse_special, &fragments);

  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  // BOS first and EOS last when asked for and the flags say so; WordPiece
  // always [CLS] first and [SEP] last (llama.cpp's llama_vocab::impl::tokenize).
  const bool wpm = d.kind == TokenizerKind::kWpm;
  if (add_special && (d.add_bos || wpm)) ids.push_back(d.bos);
  switch (d.kind) {
    case TokenizerKind::kSpm: spm_encode(d, text, fragments, &ids); break;
    case TokenizerKind::kBpe: bpe_encode(d, text, fragments, &ids); break;
    case TokenizerKind::kWpm: wpm_encode(d, text, fragments, &ids); break;
    case TokenizerKind::kUgm: ugm_encode(d, text, fragments, &ids); break;
  }
  if (add_special && wpm) {
    ids.push_back(d.sep);
  } else if (add_special && d.add_eos) {
    ids.push_back(d.eos);
  }
  return ids;
}

std::string Tokenizer::piece(int32_t id) const { return std::string(piece_view(id)); }

std::string_view Tokenizer::piece_view(int32_t id) const {
  if (id < 0 || id >= data_->n_vocab()) return {};
  return data_->piece(id);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && id < data_->n_vocab()) out += data_->piece(id);
  }
  return out;
}

std::string_view Tokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= data_->n_vocab()) return {};
  return data_->text(id);
}

void StreamDecoder::push(int32_t id, std::string* out) {
  pending_ += tok_.piece_view(id);  // no allocation per token once pending_ has grown
  drain(false, out);
}

void StreamDecoder::finish(std::string* out) { drain(true, out); }

void StreamDecoder::drain(bool final, std::string* out) {
  size_t i = 0;
  while (i < pending_.size()) {
    const Utf8Step s = utf8_step(std::string_view(pending_).substr(i));
    if (s.kind == Utf8Step::kIncomplete && !final) break;  // wait for the next token
    if (s.kind == Utf8Step::kValid) {
      out->append(pending_, i, s.length);
    } else {
      append_utf8(kReplacementChar, out);
    }
    i += s.length;
  }
  pending_.erase(0, i);
}

}  // namespace wllm
