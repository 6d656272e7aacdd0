#include "plugins/docker/frame_demuxer.h"

#include <algorithm>

namespace fleetplan {

void FrameDemuxer::Feed(absl::string_view bytes) {
  while (!bytes.empty()) {
    if (remaining_ > 0) {
      size_t n = std::min<size_t>(remaining_, bytes.size());
      sink_(stream_, bytes.substr(0, n));
      remaining_ -= n;
      bytes.remove_prefix(n);
      continue;
    }
    size_t need = 8 - header_.size();
    size_t n = std::min(need, bytes.size());
    header_.append(bytes.data(), n);
    bytes.remove_prefix(n);
    if (header_.size() < 8) return;
    const auto* h = reinterpret_cast<const unsigned char*>(header_.data());
    stream_ = h[0];
    remaining_ = (uint32_t{h[4]} << 24) | (uint32_t{h[5]} << 16) |
                 (uint32_t{h[6]} << 8) | uint32_t{h[7]};
    header_.clear();
  }
}

}  // namespace fleetplan
