#include <algorithm>
#include <memory>

#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {

Link* RdmLinks::Add(std::unique_ptr<Link> link) {
  all.push_back(std::move(link));
  return all.back().get();
}

void RdmLinks::Retire(Link* link) {
  for (auto it = to.begin(); it != to.end();) {
    it = it->second == link ? to.erase(it) : std::next(it);
  }
  auto owned = std::find_if(
      all.begin(), all.end(),
      [link](const std::unique_ptr<Link>& l) { return l.get() == link; });
  if (owned == all.end()) return;
  closed.push_back(std::move(*owned));
  all.erase(owned);
}

void RdmLinks::Clear() {
  for (const auto& link : all) link->Unreserve();
  to.clear();
  all.clear();
  closed.clear();
}

void RdmLinks::ProgressStalled() {
  // Index loop: a link may close (and leave `all`) while it progresses.
  for (size_t i = 0; i < all.size(); ++i) {
    Link* link = all[i].get();
    if (link->connection.stalled()) link->connection.Progress();
    if (i < all.size() && all[i].get() != link) --i;
  }
}

}  // namespace stream
}  // namespace fabric
