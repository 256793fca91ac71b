#include "engine/state_file.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace wllm {
namespace {

// The body is the model's memory as it is: f16 and f32 values and i32 ids in
// the host's order, which is little-endian on every target (x86, aarch64, wasm).
static_assert(std::endian::native == std::endian::little, "the state format is little-endian");

constexpr char kMagic[8] = {'W', 'L', 'L', 'M', 'S', 'T', 'A', 'T'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kFixedHeader = 8 + 4 + 8 + 4 + 4 + 4;  // magic, version, model id, layers, interval, tokens
constexpr uint64_t kTrailer = 8;

void put_u32(std::vector<uint8_t>* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
uint64_t get_u64(const uint8_t* p) { return get_u32(p) | (uint64_t{get_u32(p + 4)} << 32); }

unsigned long long ull(uint64_t v) { return v; }

// Calls piece(data, bytes) for each run of the body of a state of n tokens,
// in the format's order. Layer l's positions in the state start at first[l];
// the model keeps those from keep[l] (>= first[l]) on, and the ones before go
// to piece(nullptr, bytes). A layer keeps position u in slot u mod its slots
// (a ring, or slot u of a whole context), so its positions are at most two
// runs of slots.
template <class Piece>
void for_each_body_run(Transformer& model, int64_t n, const int64_t* first, const int64_t* keep, Piece piece) {
  KvCache& cache = model.kv_cache();
  ConvState& conv = model.conv_state();
  const ModelConfig& c = model.config();
  // Layer l's positions in a row of `slots` slots of `width` values of `size` bytes.
  const auto positions = [&](int l, uint8_t* row, int64_t slots, int64_t width, int64_t size) {
    const int64_t bytes = width * size;
    if (keep[l] > first[l]) piece(nullptr, static_cast<uint64_t>((keep[l] - first[l]) * bytes));
    for (int64_t u = keep[l]; u < n;) {
      const int64_t slot = u % slots, count = std::min(n - u, slots - slot);
      piece(row + slot * bytes, static_cast<uint64_t>(count * bytes));
      u += count;
    }
  };
  for (int l = 0; l < c.n_layers; ++l) {
    if (!c.layers[l].attention) {
      positions(l, reinterpret_cast<uint8_t*>(conv.inputs(l)), ConvState::kRecentInputs, c.dim, 4);
      continue;
    }
    const int64_t kv_dim = cache.kv_dim(l), slots = cache.slots(l);
    positions(l, reinterpret_cast<uint8_t*>(cache.keys(l)), slots, kv_dim, 2);  // (slots, kv_dim)
    for (int64_t i = 0; i < kv_dim; ++i) {  // (kv_dim, slots)
      positions(l, reinterpret_cast<uint8_t*>(cache.values(l) + i * slots), slots, 1, 2);
    }
  }
  const std::span<float> blocks = conv.blocks(n);
  if (!blocks.empty()) piece(reinterpret_cast<uint8_t*>(blocks.data()), blocks.size_bytes());
}

}  // namespace

StateWriter::StateWriter(Transformer& model, uint64_t model_id) {
  const ModelConfig& c = model.config();
  const std::vector<int32_t>& tokens = model.sequence();
  const int64_t n = static_cast<int64_t>(tokens.size());
  std::vector<int64_t> first(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    first[l] = c.layers[l].attention ? model.kv_cache().oldest(l) : model.conv_state().oldest_input();
  }

  head_.assign(kMagic, kMagic + 8);
  put_u32(&head_, kVersion);
  head_.resize(head_.size() + 8);
  put_u64(head_.data() + 12, model_id);
  put_u32(&head_, static_cast<uint32_t>(c.n_layers));
  put_u32(&head_, ConvState::kCheckpointInterval);
  put_u32(&head_, static_cast<uint32_t>(n));
  const auto* ids = reinterpret_cast<const uint8_t*>(tokens.data());
  head_.insert(head_.end(), ids, ids + n * 4);
  for (const int64_t f : first) put_u32(&head_, static_cast<uint32_t>(f));

  Checksum64 checksum;
  pieces_.emplace_back(head_);
  checksum.update(head_.data(), head_.size());
  for_each_body_run(model, n, first.data(), first.data(), [&](const uint8_t* data, uint64_t bytes) {
    pieces_.emplace_back(data, static_cast<size_t>(bytes));
    checksum.update(data, static_cast<size_t>(bytes));
  });
  trailer_.resize(kTrailer);
  put_u64(trailer_.data(), checksum.digest());
  pieces_.emplace_back(trailer_);
  for (const std::span<const uint8_t> piece : pieces_) size_ += piece.size();
}

StateReader::StateReader(Transformer& model, uint64_t model_id, int n_vocab, uint64_t size)
    : model_(model), model_id_(model_id), n_vocab_(n_vocab), size_(size) {
  if (size_ < kFixedHeader + kTrailer) {
    status_ = Status::error(ErrorCode::kBadState, "the state is truncated: %llu bytes, while a state has at least %llu",
                            ull(size_), ull(kFixedHeader + kTrailer));
  }
}

Status StateReader::fail(Status s) {
  status_ = std::move(s);
  return status_;
}

Status StateReader::write(std::span<const uint8_t> bytes) {
  if (!status_.ok()) return status_;
  if (bytes.size() > size_ - received_) {
    return fail(Status::error(ErrorCode::kBadState, "the state has more than the %llu bytes it was said to have",
                              ull(size_)));
  }
  received_ += bytes.size();
  while (!head_read_ && !bytes.empty()) {
    const uint64_t want = head_size_ > 0 ? head_size_ : kFixedHeader;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(bytes.size(), want - head_.size()));
    head_.insert(head_.end(), bytes.begin(), bytes.begin() + take);
    checksum_.update(bytes.data(), take);
    bytes = bytes.subspan(take);
    if (head_.size() < want) break;
    WLLM_RETURN_IF_ERROR(head_size_ == 0 ? read_fixed_header() : read_head());
  }
  copy_body(&bytes);
  const size_t take = std::min(bytes.size(), sizeof trailer_ - trailer_filled_);
  std::memcpy(trailer_ + trailer_filled_, bytes.data(), take);
  trailer_filled_ += take;
  return {};
}

Status StateReader::read_fixed_header() {
  const uint8_t* p = head_.data();
  const ModelConfig& c = model_.config();
  if (std::memcmp(p, kMagic, 8) != 0) {
    return fail(Status::error(ErrorCode::kBadState, "not a saved state: it does not start with \"WLLMSTAT\""));
  }
  const uint32_t version = get_u32(p + 8);
  if (version != kVersion) {
    return fail(Status::error(ErrorCode::kBadState, "the state has format version %u; this engine reads version %u",
                              version, kVersion));
  }
  const uint64_t id = get_u64(p + 12);
  if (id != model_id_) {
    return fail(Status::error(ErrorCode::kBadState,
                              "the state was saved from another model (model id %016llx; this model's is %016llx)",
                              ull(id), ull(model_id_)));
  }
  const uint32_t layers = get_u32(p + 20), interval = get_u32(p + 24), n = get_u32(p + 28);
  if (layers != static_cast<uint32_t>(c.n_layers) || interval != ConvState::kCheckpointInterval) {
    return fail(Status::error(ErrorCode::kBadState,
                              "the state has %u layers and checkpoints every %u positions; the model has %d and %d",
                              layers, interval, c.n_layers, ConvState::kCheckpointInterval));
  }
  if (n > static_cast<uint32_t>(model_.n_ctx())) {
    return fail(Status::error(ErrorCode::kBadState, "the state holds %u tokens but the context holds %d", n,
                              model_.n_ctx()));
  }
  head_size_ = kFixedHeader + 4ull * n + 4ull * layers;
  if (head_size_ + kTrailer > size_) {
    return fail(Status::error(ErrorCode::kBadState, "the state is truncated: %llu bytes, while its %u tokens take %llu",
                              ull(size_), n, ull(4ull * n)));
  }
  return {};
}

// The token ids and first positions: checked, then the body's runs planned
// and its size compared with the state's.
Status StateReader::read_head() {
  const ModelConfig& c = model_.config();
  const KvCache& cache = model_.kv_cache();
  const int64_t n = get_u32(head_.data() + 28);
  const uint8_t* p = head_.data() + kFixedHeader;
  tokens_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i, p += 4) {
    tokens_[i] = static_cast<int32_t>(get_u32(p));
    if (tokens_[i] < 0 || tokens_[i] >= n_vocab_) {
      return fail(Status::error(ErrorCode::kBadState,
                                "token %lld of the state is id %d, outside the vocabulary (0..%d)",
                                static_cast<long long>(i), tokens_[i], n_vocab_ - 1));
    }
  }
  std::vector<int64_t> first(c.n_layers);
  keep_.assign(c.n_layers, 0);
  uint64_t body = 0;
  int64_t conv_first = -1;  // the first convolution layer's
  for (int l = 0; l < c.n_layers; ++l, p += 4) {
    first[l] = get_u32(p);
    const LayerConfig& layer = c.layers[l];
    // What the model needs to continue at n: a global layer every position,
    // a sliding-window layer those its window of position n sees; the
    // convolution layers each keep the inputs of the same last positions.
    int64_t earliest = 0, latest = 0;
    if (!layer.attention) {
      earliest = conv_first >= 0 ? conv_first : n - ConvState::kRecentInputs;
      latest = conv_first >= 0 ? conv_first : n;
      conv_first = first[l];
    } else if (layer.window > 0) {
      latest = std::max<int64_t>(0, n - layer.window + 1);
    }
    if (first[l] < earliest || first[l] > latest) {
      return fail(Status::error(ErrorCode::kBadState,
                                "layer %d of the state starts at position %lld, outside %lld..%lld", l,
                                static_cast<long long>(first[l]), static_cast<long long>(earliest),
                                static_cast<long long>(latest)));
    }
    const int64_t slots = layer.attention ? cache.slots(l) : ConvState::kRecentInputs;
    const int64_t bytes = layer.attention ? 2ll * cache.kv_dim(l) * 2 : 4ll * c.dim;  // per position
    keep_[l] = std::max<int64_t>(first[l], n - slots);
    body += static_cast<uint64_t>((n - first[l]) * bytes);
  }
  body += model_.conv_state().blocks(n).size_bytes();
  const uint64_t expected = head_size_ + body + kTrailer;
  if (expected != size_) {
    return fail(Status::error(ErrorCode::kBadState, "the state is %llu bytes but its header describes %llu%s",
                              ull(size_), ull(expected), size_ < expected ? " (it is truncated)" : ""));
  }
  // From here the model's memory is overwritten: until finish() it holds nothing.
  model_.rewind(0);
  runs_.clear();
  for_each_body_run(model_, n, first.data(), keep_.data(),
                    [&](uint8_t* data, uint64_t bytes) { runs_.push_back({data, bytes}); });
  head_read_ = true;
  return {};
}

void StateReader::copy_body(std::span<const uint8_t>* bytes) {
  while (!bytes->empty() && run_ < runs_.size()) {
    const Run& run = runs_[run_];
    const size_t take = static_cast<size_t>(std::min<uint64_t>(bytes->size(), run.bytes - run_filled_));
    if (run.data) std::memcpy(run.data + run_filled_, bytes->data(), take);
    checksum_.update(bytes->data(), take);
    *bytes = bytes->subspan(take);
    run_filled_ += take;
    if (run_filled_ == run.bytes) {
      ++run_;
      run_filled_ = 0;
    }
  }
}

Status StateReader::finish() {
  if (!status_.ok()) return status_;
  if (received_ < size_ || !head_read_) {
    return fail(Status::error(ErrorCode::kBadState, "the state ended after %llu of its %llu bytes", ull(received_),
                              ull(size_)));
  }
  const uint64_t recorded = get_u64(trailer_), actual = checksum_.digest();
  if (actual != recorded) {
    return fail(Status::error(ErrorCode::kBadState,
                              "the state is damaged: its checksum is %016llx, not the recorded %016llx", ull(actual),
                              ull(recorded)));
  }
  const ModelConfig& c = model_.config();
  for (int l = 0; l < c.n_layers; ++l) {
    if (c.layers[l].attention) {
      model_.kv_cache().set_oldest(l, keep_[l]);
    } else {
      model_.conv_state().set_oldest_input(keep_[l]);
    }
  }
  model_.set_sequence(tokens_.data(), static_cast<int>(tokens_.size()));
  status_ = Status::error(ErrorCode::kInvalidArgument, "the state has been read already");
  return {};
}

}  // namespace wllm
