#include "fabric/providers/util/live_objects.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace fabric {
namespace {

struct LiveObject {
  fid* object;
  size_t fclass;
  std::string provider;
  std::string name;
  fid* parent;  // the object it was opened on, or null
};

struct LiveObjects {
  std::mutex mutex;
  std::vector<LiveObject> objects;  // in opening order
};

LiveObjects& Objects() {
  static LiveObjects* objects = new LiveObjects;
  return *objects;
}

template <typename Fn>
auto WithObject(const void* object, Fn fn) {
  LiveObjects& live = Objects();
  std::lock_guard<std::mutex> lock(live.mutex);
  auto it = std::find_if(
      live.objects.begin(), live.objects.end(),
      [object](const LiveObject& entry) { return entry.object == object; });
  return fn(it == live.objects.end() ? nullptr : &*it);
}

}  // namespace

void AddLiveObject(fid* object, absl::string_view provider,
                   absl::string_view name, fid* parent) {
  LiveObjects& live = Objects();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.objects.push_back(LiveObject{object, object->fclass,
                                    std::string(provider), std::string(name),
                                    parent});
}

void RemoveLiveObject(fid* object) {
  LiveObjects& live = Objects();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.objects.erase(
      std::remove_if(
          live.objects.begin(), live.objects.end(),
          [object](const LiveObject& entry) { return entry.object == object; }),
      live.objects.end());
}

bool IsLiveObject(const void* object, size_t fclass) {
  return WithObject(object, [fclass](const LiveObject* entry) {
    return entry != nullptr && entry->fclass == fclass;
  });
}

std::string LiveObjectProvider(const void* object) {
  return WithObject(object, [](const LiveObject* entry) {
    return entry != nullptr ? entry->provider : std::string();
  });
}

std::string LiveObjectName(const void* object) {
  return WithObject(object, [](const LiveObject* entry) {
    return entry != nullptr ? entry->name : std::string();
  });
}

fid* LiveObjectParent(const void* object) {
  return WithObject(object, [](const LiveObject* entry) {
    return entry != nullptr ? entry->parent : nullptr;
  });
}

fid* FirstLiveObject(size_t fclass, absl::string_view provider,
                     absl::string_view name, const fid* parent) {
  LiveObjects& live = Objects();
  std::lock_guard<std::mutex> lock(live.mutex);
  for (const LiveObject& entry : live.objects) {
    if (entry.fclass == fclass && entry.provider == provider &&
        entry.name == name && (parent == nullptr || entry.parent == parent)) {
      return entry.object;
    }
  }
  return nullptr;
}

}  // namespace fabric
