#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

namespace wllm::unicode {

namespace {

uint16_t lookup_flags(uint32_t cpt) {
  // Last range whose first <= cpt (kCptRanges[0].first is 0).
  const CptRange* end = kCptRanges + kCptRangeCount;
  const CptRange* it =
      std::upper_bound(kCptRanges, end, cpt, [](uint32_t c, const CptRange& r) { return c < r.first; });
  return (it - 1)->flags;
}

// Most text is Latin: answer the first 256 code points from a flat table.
struct Latin1Flags {
  std::array<uint16_t, 256> flags{};
  Latin1Flags() {
    for (uint32_t c = 0; c < 256; ++c) flags[c] = lookup_flags(c);
  }
};

struct Gpt2ByteMap {
  std::array<uint32_t, 256> byte_to_cpt{};
  std::array<int16_t, 324> cpt_to_byte{};  // every mapped code point is < 256 + 68
  Gpt2ByteMap() {
    cpt_to_byte.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      byte_to_cpt[b] = printable ? b : next++;
      cpt_to_byte[byte_to_cpt[b]] = static_cast<int16_t>(b);
    }
  }
};

// The `to` of `cpt` in a table sorted by `from`, or `cpt`.
uint32_t map_cpt(const CptPair* table, size_t count, uint32_t cpt) {
  const CptPair* end = table + count;
  const CptPair* it = std::lower_bound(table, end, cpt, [](const CptPair& p, uint32_t c) { return p.from < c; });
  return it != end && it->from == cpt ? it->to : cpt;
}

const Gpt2ByteMap& gpt2_map() {
  static const Gpt2ByteMap map;
  return map;
}

}  // namespace

uint16_t cpt_flags(uint32_t cpt) {
  static const Latin1Flags latin1;
  if (cpt < 256) return latin1.flags[cpt];
  if (cpt >= 0x110000) return kUndefined;
  return lookup_flags(cpt);
}

uint32_t to_lower(uint32_t cpt) { return map_cpt(kLowercase, kLowercaseCount, cpt); }

uint32_t nfd_first(uint32_t cpt) { return map_cpt(kNfdFirst, kNfdFirstCount, cpt); }

uint32_t gpt2_byte_to_cpt(uint8_t byte) { return gpt2_map().byte_to_cpt[byte]; }

int gpt2_cpt_to_byte(uint32_t cpt) {
  const auto& map = gpt2_map();
  return cpt < map.cpt_to_byte.size() ? map.cpt_to_byte[cpt] : -1;
}

}  // namespace wllm::unicode
