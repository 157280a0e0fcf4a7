// A small hash table from 64-bit keys to ids (open addressing, linear probing), for loess's vertex lookup by
// coordinates and its cache of vertex pairs: a few hundred bytes of WebAssembly where std::map and
// std::unordered_map cost kilobytes.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace ka::loess {

class IdTable {
 public:
  // The id stored under `hash` for which same(id) holds; else `fresh`, stored under `hash`. Equal hashes of
  // different entries are allowed: `same` tells them apart.
  template <class Same>
  int32_t find_or_insert(uint64_t hash, int32_t fresh, Same same) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t s = mix(hash) & mask;; s = (s + 1) & mask) {
      Slot& slot = slots_[s];
      if (slot.id < 0) {
        slot = {hash, fresh};
        ++count_;
        return fresh;
      }
      if (slot.hash == hash && same(slot.id)) return slot.id;
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    int32_t id = -1;
  };

  static uint64_t mix(uint64_t h) {  // a 64-bit finaliser: every input bit reaches the low bits the mask keeps
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.id < 0) continue;
      size_t s = mix(slot.hash) & mask;
      while (slots_[s].id >= 0) s = (s + 1) & mask;
      slots_[s] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace ka::loess
