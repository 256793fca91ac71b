// SHA-256 (FIPS 180-4), fed incrementally: the JS loader checks a model's
// published hash while the bytes stream into the wasm heap, without holding
// the file twice (WebCrypto can only hash a whole buffer at once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wllm {

class Sha256 {
 public:
  Sha256();
  void update(const uint8_t* data, size_t n);
  // The digest as 64 lowercase hex digits. Ends this hash: call reset() to reuse.
  std::string hex_digest();
  void reset();

 private:
  void compress(const uint8_t block[64]);

  uint32_t state_[8];
  uint8_t buffer_[64];   // the partial block not yet compressed
  size_t buffered_ = 0;  // bytes in buffer_
  uint64_t total_ = 0;   // bytes hashed so far
};

}  // namespace wllm
