// Debian's rdma-core (libibverbs1, librdmacm1; setup.sh installs them)
// has every call the verbs provider makes.
#include "fabric/providers/verbs/verbs_api.h"

#include <stdint.h>

#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

TEST(VerbsApiTest, EveryCallResolves) {
  absl::StatusOr<const VerbsApi*> api = LoadVerbsApi();
  ASSERT_TRUE(api.ok()) << api.status().message();
  // Every member is a function pointer; none may be missing.
  const auto* calls = reinterpret_cast<void* const*>(*api);
  size_t count = sizeof(VerbsApi) / sizeof(void*);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_NE(calls[i], nullptr) << "call " << i;
  }
  // Loaded once: the same table every time.
  EXPECT_EQ(*LoadVerbsApi(), *api);
}

TEST(VerbsApiTest, TheCallsWorkWithoutDevices) {
  const VerbsApi* api = *LoadVerbsApi();
  int count = -1;
  ibv_device** devices = api->get_device_list(&count);
  if (devices != nullptr) api->free_device_list(devices);
  EXPECT_GE(count, 0);
  rdma_event_channel* channel = api->create_event_channel();
  // Without the kernel's rdma_cm (as here) there is no channel; with it,
  // one that closes again.
  if (channel != nullptr) api->destroy_event_channel(channel);
  EXPECT_STREQ(api->wc_status_str(IBV_WC_SUCCESS), "success");
  EXPECT_STREQ(api->event_str(RDMA_CM_EVENT_ESTABLISHED),
               "RDMA_CM_EVENT_ESTABLISHED");
}

}  // namespace
}  // namespace verbs
}  // namespace fabric
