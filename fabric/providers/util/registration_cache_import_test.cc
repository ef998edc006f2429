// fi_open("mr_cache") and fi_import_fid with an application's
// fid_mem_monitor, as Open MPI 4.1 does: the caches subscribe their ranges
// with it, and its notify invalidates them.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fabric/providers/util/registration_cache.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// The application's monitor: records what the library asks of it.
struct AppMonitor {
  fid_mem_monitor monitor = {};
  fi_ops_mem_monitor ops = {};
  bool started = false;
  bool stopped = false;
  std::vector<std::pair<const void*, size_t>> subscribed;
  std::vector<std::pair<const void*, size_t>> unsubscribed;
};

AppMonitor* Of(fid_mem_monitor* monitor) {
  return static_cast<AppMonitor*>(monitor->fid.context);
}

TEST(RegistrationCacheImportTest, AnImportedMonitorSubscribesAndInvalidates) {
  static AppMonitor app;
  app.monitor.fid.fclass = FI_CLASS_MEM_MONITOR;
  app.monitor.fid.context = &app;
  app.ops.size = sizeof(app.ops);
  app.ops.start = [](fid_mem_monitor* m) {
    Of(m)->started = true;
    return 0;
  };
  app.ops.stop = [](fid_mem_monitor* m) { Of(m)->stopped = true; };
  app.ops.subscribe = [](fid_mem_monitor* m, const void* addr, size_t len) {
    Of(m)->subscribed.emplace_back(addr, len);
    return 0;
  };
  app.ops.unsubscribe = [](fid_mem_monitor* m, const void* addr, size_t len) {
    Of(m)->unsubscribed.emplace_back(addr, len);
  };
  app.ops.valid = [](fid_mem_monitor*, const void*, size_t) { return true; };
  app.monitor.export_ops = &app.ops;

  fid* cache_fid = nullptr;
  ASSERT_EQ(fi_open(FI_VERSION(1, 13), "mr_cache", nullptr, 0, 0, &cache_fid,
                    nullptr),
            0);
  EXPECT_EQ(cache_fid->fclass, FI_CLASS_MR_CACHE);
  // Not a monitor, or one without its calls: refused.
  fid_mem_monitor empty = {};
  empty.fid.fclass = FI_CLASS_MEM_MONITOR;
  EXPECT_EQ(fi_import_fid(cache_fid, &empty.fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_import_fid(cache_fid, cache_fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_import_fid(cache_fid, &app.monitor.fid, 1), -FI_EINVAL);
  // One that does not start is not used: the monitor in place stays.
  EXPECT_STREQ(MonitorHub::Get().MonitorName(), "userfaultfd");
  static AppMonitor refusing;
  refusing.monitor = app.monitor;
  refusing.ops = app.ops;
  refusing.ops.start = [](fid_mem_monitor*) { return -FI_EBUSY; };
  refusing.monitor.export_ops = &refusing.ops;
  refusing.monitor.fid.context = &refusing;
  EXPECT_EQ(fi_import_fid(cache_fid, &refusing.monitor.fid, 0), -FI_EBUSY);
  EXPECT_STREQ(MonitorHub::Get().MonitorName(), "userfaultfd");
  ASSERT_EQ(fi_import_fid(cache_fid, &app.monitor.fid, 0), 0);
  EXPECT_EQ(fi_close(cache_fid), 0);
  EXPECT_TRUE(app.started);
  ASSERT_NE(app.monitor.import_ops, nullptr);
  EXPECT_STREQ(MonitorHub::Get().MonitorName(), "imported");

  int live = 0;
  // What the registrar does while it registers (Open MPI's hooks notify
  // from inside the allocator, on any thread).
  std::function<void()> while_registering;
  RegistrationCache cache(
      16, size_t{1} << 20,
      [&](uintptr_t, size_t, uint64_t) -> absl::StatusOr<void*> {
        ++live;
        if (while_registering) while_registering();
        return &live;
      },
      [&live](void*) { --live; });
  ASSERT_TRUE(cache.enabled());
  static char buf[8192];
  absl::StatusOr<RegistrationCache::Entry*> entry =
      cache.Acquire(buf, sizeof(buf), 0);
  ASSERT_TRUE(entry.ok());
  ASSERT_EQ(app.subscribed.size(), 1u);
  EXPECT_EQ(app.subscribed[0].first, buf);
  EXPECT_EQ(app.subscribed[0].second, sizeof(buf));
  cache.Release(*entry);
  EXPECT_EQ(live, 1);  // cached
  // The application saw the memory freed: queued by the notify (which
  // takes no lock a cache holds), the registration goes at the next sync.
  app.monitor.import_ops->notify(&app.monitor, buf + 100, 10);
  EXPECT_EQ(live, 1);
  MonitorHub::Get().Sync();
  EXPECT_EQ(live, 0);
  EXPECT_EQ(app.unsubscribed.size(), 1u);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  absl::StatusOr<RegistrationCache::Entry*> again =
      cache.Acquire(buf, sizeof(buf), 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(cache.stats().registrations, 2u);
  cache.Release(*again);

  // Freed while being registered, and the news delivered (by another
  // thread's lookup) before the registration is in the cache: never
  // cached, the next lookup registers again.
  static char other[4096];
  while_registering = [] {  // app and other are static: no capture
    app.monitor.import_ops->notify(&app.monitor, other, sizeof(other));
    MonitorHub::Get().Sync();
  };
  absl::StatusOr<RegistrationCache::Entry*> racing =
      cache.Acquire(other, sizeof(other), 0);
  ASSERT_TRUE(racing.ok());
  while_registering = nullptr;
  cache.Release(*racing);
  size_t hits = cache.stats().hits;
  absl::StatusOr<RegistrationCache::Entry*> after =
      cache.Acquire(other, sizeof(other), 0);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(cache.stats().hits, hits)
      << "a registration of freed memory was cached";
  EXPECT_EQ(cache.stats().registrations, 4u);
  cache.Release(*after);

  // More notifications than the queue holds: every cache is emptied.
  EXPECT_EQ(live, 2);  // buf's and other's, cached
  static char elsewhere[1 << 16];
  for (size_t i = 0; i < 1000; ++i) {
    app.monitor.import_ops->notify(&app.monitor, elsewhere + i, 1);
  }
  MonitorHub::Get().Sync();
  EXPECT_EQ(live, 0);
  absl::StatusOr<RegistrationCache::Entry*> refilled =
      cache.Acquire(buf, sizeof(buf), 0);
  ASSERT_TRUE(refilled.ok());
  cache.Release(*refilled);

  // Closing the monitor's fid, as Open MPI does at MPI_Finalize (before it
  // frees the monitor): no longer used, stopped, its subscriptions gone;
  // the built-in monitor takes over.
  EXPECT_EQ(live, 1);
  ASSERT_NE(app.monitor.fid.ops, nullptr);
  EXPECT_EQ(fi_close(&app.monitor.fid), 0);
  EXPECT_TRUE(app.stopped);
  EXPECT_EQ(live, 0);
  EXPECT_EQ(app.unsubscribed.size(), app.subscribed.size());
  EXPECT_STREQ(MonitorHub::Get().MonitorName(), "userfaultfd");
}

}  // namespace
}  // namespace fabric
