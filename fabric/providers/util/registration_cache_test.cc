// The registration cache with the built-in userfaultfd monitor, real
// mappings and a registrar that, like pinning, keeps the pages it was
// given: its "registration" is a copy of the bytes at registration time,
// made by the kernel (process_vm_readv), so a stale registration would
// show old contents. Freed and reused
// memory must get a new registration that sees the new contents.
#include "fabric/providers/util/registration_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "fabric/api/config/mr_cache_settings.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// What a registration saw: the bytes of its range when it was made.
struct Pinned {
  std::string bytes;
};

class RegistrationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (strcmp(MonitorHub::Get().MonitorName(), "none") == 0) {
      GTEST_SKIP() << "no userfaultfd that sees kernel-mode faults here "
                      "(unprivileged, or in a user namespace, with "
                      "vm.unprivileged_userfaultfd=0)";
    }
  }

  RegistrationCache MakeCache(size_t max_count = 16,
                              size_t max_size = size_t{1} << 30) {
    return RegistrationCache(
        max_count, max_size,
        [this](uintptr_t addr, size_t len,
               uint64_t) -> absl::StatusOr<void*> {
          // Read by the kernel, through the page tables, as pinning does
          // (ibv_reg_mr): a page missing in a watched range faults in
          // kernel mode, which the monitor must answer too.
          auto pinned = std::make_unique<Pinned>();
          pinned->bytes.resize(len);
          iovec local = {pinned->bytes.data(), len};
          iovec remote = {reinterpret_cast<void*>(addr), len};
          ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
          if (got != static_cast<ssize_t>(len)) {
            return absl::InternalError(
                std::string("process_vm_readv: ") + strerror(errno));
          }
          ++live_;
          return pinned.release();
        },
        [this](void* handle) {
          --live_;
          delete static_cast<Pinned*>(handle);
        });
  }

  // `pages` anonymous pages filled with `fill`; with `replacing`, new pages
  // in place of that mapping of ours (its pages are freed: what an
  // allocator reusing an address does, with no moment in which another
  // mapping could take the address).
  char* Map(size_t pages, char fill, void* replacing = nullptr) {
    size_t len = pages * page_;
    void* map = mmap(replacing, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS |
                         (replacing != nullptr ? MAP_FIXED : 0),
                     -1, 0);
    EXPECT_NE(map, MAP_FAILED);
    if (map == MAP_FAILED) return nullptr;
    memset(map, fill, len);
    return static_cast<char*>(map);
  }

  static std::string Seen(RegistrationCache::Entry* entry) {
    return static_cast<Pinned*>(entry->handle)->bytes;
  }

  const size_t page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Changed by the monitor's thread too (a registration it invalidates).
  std::atomic<int> live_{0};
};

TEST_F(RegistrationCacheTest, FreedAndReusedMemoryIsRegisteredAgain) {
  RegistrationCache cache = MakeCache();
  ASSERT_TRUE(cache.enabled()) << "userfaultfd monitor: "
                               << MonitorHub::Get().MonitorName();
  EXPECT_STREQ(MonitorHub::Get().MonitorName(), "userfaultfd");
  size_t len = 2 * page_;
  char* buf = Map(2, 'A');
  absl::StatusOr<RegistrationCache::Entry*> first =
      cache.Acquire(buf, len, FI_REMOTE_READ);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Seen(*first), std::string(len, 'A'));
  cache.Release(*first);

  // Still mapped: the cached registration comes back, also for a part of
  // it with less access.
  absl::StatusOr<RegistrationCache::Entry*> again =
      cache.Acquire(buf + 100, 1000, FI_REMOTE_READ);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  cache.Release(*again);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().registrations, 1u);

  // Freed and mapped again at the same address with new contents.
  char* reused = Map(2, 'B', buf);
  ASSERT_EQ(reused, buf);
  absl::StatusOr<RegistrationCache::Entry*> fresh =
      cache.Acquire(reused, len, FI_REMOTE_READ);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(Seen(*fresh), std::string(len, 'B')) << "a stale registration";
  EXPECT_EQ(cache.stats().registrations, 2u);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_EQ(live_, 1) << "the stale registration was not released";
  cache.Release(*fresh);
  ASSERT_EQ(munmap(reused, len), 0);
}

TEST_F(RegistrationCacheTest, PagesGivenBackAreRegisteredAgain) {
  RegistrationCache cache = MakeCache();
  ASSERT_TRUE(cache.enabled());
  char* buf = Map(4, 'C');
  absl::StatusOr<RegistrationCache::Entry*> entry =
      cache.Acquire(buf, 4 * page_, 0);
  ASSERT_TRUE(entry.ok());
  // In use while its memory goes: it leaves the cache, and is released
  // when its user is done.
  ASSERT_EQ(madvise(buf + page_, page_, MADV_DONTNEED), 0);
  // The page reads as zeros again (the monitor answers the fault).
  EXPECT_EQ(buf[page_], 0);
  buf[page_] = 'D';
  absl::StatusOr<RegistrationCache::Entry*> fresh =
      cache.Acquire(buf, 4 * page_, 0);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(*fresh, *entry);
  EXPECT_EQ(Seen(*fresh)[page_], 'D');
  EXPECT_EQ(live_, 2);
  cache.Release(*entry);
  EXPECT_EQ(live_, 1);
  cache.Release(*fresh);
  EXPECT_EQ(live_, 1);  // cached
  ASSERT_EQ(munmap(buf, 4 * page_), 0);
  MonitorHub::Get().Sync();
  EXPECT_EQ(cache.stats().invalidated, 2u);
}

// A page given back in a watched range and registered before anything
// touches it: the registration's own (kernel-mode) fault is answered.
TEST_F(RegistrationCacheTest, AGivenBackPageIsRegisteredBeforeItIsTouched) {
  RegistrationCache cache = MakeCache();
  char* buf = Map(2, 'O');
  absl::StatusOr<RegistrationCache::Entry*> entry =
      cache.Acquire(buf, 2 * page_, 0);
  ASSERT_TRUE(entry.ok()) << entry.status();
  cache.Release(*entry);
  ASSERT_EQ(madvise(buf, page_, MADV_DONTNEED), 0);
  absl::StatusOr<RegistrationCache::Entry*> fresh =
      cache.Acquire(buf, 2 * page_, 0);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(Seen(*fresh), std::string(page_, '\0') + std::string(page_, 'O'));
  cache.Release(*fresh);
  ASSERT_EQ(munmap(buf, 2 * page_), 0);
}

TEST_F(RegistrationCacheTest, UnusedRegistrationsAreBoundedByCountAndSize) {
  RegistrationCache cache = MakeCache(/*max_count=*/2,
                                      /*max_size=*/3 * page_);
  ASSERT_TRUE(cache.enabled());
  char* buf = Map(8, 'E');
  std::vector<RegistrationCache::Entry*> entries;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<RegistrationCache::Entry*> entry =
        cache.Acquire(buf + i * page_, page_, 0);
    ASSERT_TRUE(entry.ok());
    entries.push_back(*entry);
  }
  EXPECT_EQ(live_, 3);  // in use: never evicted
  for (RegistrationCache::Entry* entry : entries) cache.Release(entry);
  EXPECT_EQ(live_, 2);  // the least recently used went
  // A large one exceeds max_size alone once unused.
  absl::StatusOr<RegistrationCache::Entry*> big =
      cache.Acquire(buf + 4 * page_, 4 * page_, 0);
  ASSERT_TRUE(big.ok());
  cache.Release(*big);
  EXPECT_LE(live_, 2);
  EXPECT_EQ(cache.stats().registrations, 4u);
  ASSERT_EQ(munmap(buf, 8 * page_), 0);
}

// Two caches (two domains) hold the same memory: one dropping its
// registration must not stop the monitor watching the other's.
TEST_F(RegistrationCacheTest, OneCacheLettingGoLeavesTheOtherWatched) {
  RegistrationCache evicting = MakeCache(/*max_count=*/1);
  RegistrationCache keeping = MakeCache();
  ASSERT_TRUE(evicting.enabled());
  char* shared = Map(1, 'H');
  char* other = Map(1, 'I');
  for (RegistrationCache* cache : {&evicting, &keeping}) {
    absl::StatusOr<RegistrationCache::Entry*> entry =
        cache->Acquire(shared, page_, 0);
    ASSERT_TRUE(entry.ok());
    cache->Release(*entry);
  }
  // `evicting` keeps one: `other` pushes `shared` out of it.
  absl::StatusOr<RegistrationCache::Entry*> push =
      evicting.Acquire(other, page_, 0);
  ASSERT_TRUE(push.ok());
  evicting.Release(*push);
  EXPECT_EQ(evicting.stats().deregistrations, 1u);
  // New pages where `shared` was: `keeping` must see it.
  ASSERT_EQ(Map(1, 'J', shared), shared);
  absl::StatusOr<RegistrationCache::Entry*> fresh =
      keeping.Acquire(shared, page_, 0);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(Seen(*fresh), std::string(page_, 'J')) << "a stale registration";
  keeping.Release(*fresh);
  ASSERT_EQ(munmap(shared, page_), 0);
  ASSERT_EQ(munmap(other, page_), 0);
}

// A forked child's memory is not watched by the parent's monitor (and
// reading the parent's userfaultfd would take its events): the child
// caches nothing, and the parent's monitor goes on hearing its own unmaps.
TEST_F(RegistrationCacheTest, AForkedChildCachesNothingOfItsParents) {
  RegistrationCache cache = MakeCache();
  ASSERT_TRUE(cache.enabled());
  char* buf = Map(1, 'K');
  absl::StatusOr<RegistrationCache::Entry*> entry =
      cache.Acquire(buf, page_, 0);
  ASSERT_TRUE(entry.ok());
  cache.Release(*entry);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // New pages in the child, where the cached registration is.
    if (Map(1, 'L', buf) != buf) _exit(2);
    absl::StatusOr<RegistrationCache::Entry*> fresh =
        cache.Acquire(buf, page_, 0);
    if (!fresh.ok()) _exit(3);
    bool stale = Seen(*fresh) != std::string(page_, 'L');
    cache.Release(*fresh);
    if (cache.stats().hits != 0) _exit(4);
    _exit(stale ? 5 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: no mapping, 3: no registration, 4: a cache hit, 5: stale";
  ASSERT_EQ(Map(1, 'M', buf), buf);
  absl::StatusOr<RegistrationCache::Entry*> fresh =
      cache.Acquire(buf, page_, 0);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(Seen(*fresh), std::string(page_, 'M')) << "a stale registration";
  cache.Release(*fresh);
  ASSERT_EQ(munmap(buf, page_), 0);
}

// userfaultfd cannot answer a fault on hugetlbfs with a zero page: such a
// range must not be watched, or a thread touching a page given back there
// would fault forever. Needs huge pages (vm.nr_hugepages > 0).
TEST_F(RegistrationCacheTest, HugePagesAreRegisteredButNotWatched) {
  constexpr size_t kHuge = size_t{2} << 20;
  void* map = mmap(nullptr, kHuge, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
  if (map == MAP_FAILED) {
    GTEST_SKIP() << "no 2 MiB huge pages here (vm.nr_hugepages): "
                 << strerror(errno);
  }
  char* buf = static_cast<char*>(map);
  RegistrationCache cache = MakeCache();
  ASSERT_TRUE(cache.enabled());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RegistrationCache::Entry*> entry =
        cache.Acquire(buf, kHuge, 0);
    ASSERT_TRUE(entry.ok()) << entry.status();
    cache.Release(*entry);
  }
  EXPECT_EQ(cache.stats().hits, 0u) << "cached without a monitor watching";
  EXPECT_EQ(live_, 0);
  // Given back and touched again: the kernel's fault, not ours.
  buf[0] = 'N';
  ASSERT_EQ(madvise(buf, kHuge, MADV_DONTNEED), 0);
  EXPECT_EQ(buf[0], 0);
  ASSERT_EQ(munmap(buf, kHuge), 0);
}

// What must not outlive its region (remote access: closing it revokes the
// key) is registered anew each time and released at once.
TEST_F(RegistrationCacheTest, UncacheableRegistrationsAreNeverKept) {
  RegistrationCache cache = MakeCache();
  char* buf = Map(1, 'G');
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RegistrationCache::Entry*> entry =
        cache.Acquire(buf, page_, FI_REMOTE_WRITE, /*cacheable=*/false);
    ASSERT_TRUE(entry.ok());
    EXPECT_EQ(live_, 1);
    cache.Release(*entry);
    EXPECT_EQ(live_, 0);
  }
  EXPECT_EQ(cache.stats().registrations, 2u);
  EXPECT_EQ(cache.stats().hits, 0u);
  ASSERT_EQ(munmap(buf, page_), 0);
}

TEST_F(RegistrationCacheTest, NoCountMeansNoCaching) {
  RegistrationCache cache = MakeCache(/*max_count=*/0);
  EXPECT_FALSE(cache.enabled());
  char* buf = Map(1, 'F');
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RegistrationCache::Entry*> entry =
        cache.Acquire(buf, page_, 0);
    ASSERT_TRUE(entry.ok());
    cache.Release(*entry);
    EXPECT_EQ(live_, 0);
  }
  EXPECT_EQ(cache.stats().registrations, 2u);
  ASSERT_EQ(munmap(buf, page_), 0);
}

TEST(MrCacheSettingsTest, EnvironmentOverridesDefaultsAndBadValuesAreIgnored) {
  unsetenv("FI_MR_CACHE_MAX_SIZE");
  unsetenv("FI_MR_CACHE_MAX_COUNT");
  unsetenv("FI_MR_CACHE_MONITOR");
  MrCacheSettings defaults = CurrentMrCacheSettings();
  EXPECT_EQ(defaults.max_count, 1024u);
  EXPECT_GT(defaults.max_size, 0u);
  EXPECT_EQ(defaults.monitor, "userfaultfd");
  setenv("FI_MR_CACHE_MAX_SIZE", "4096", 1);
  setenv("FI_MR_CACHE_MAX_COUNT", "7", 1);
  setenv("FI_MR_CACHE_MONITOR", "disabled", 1);
  MrCacheSettings set = CurrentMrCacheSettings();
  EXPECT_EQ(set.max_size, 4096u);
  EXPECT_EQ(set.max_count, 7u);
  EXPECT_EQ(set.monitor, "disabled");
  setenv("FI_MR_CACHE_MAX_COUNT", "many", 1);
  setenv("FI_MR_CACHE_MONITOR", "memhooks", 1);
  MrCacheSettings bad = CurrentMrCacheSettings();
  EXPECT_EQ(bad.max_count, 1024u);
  EXPECT_EQ(bad.monitor, "userfaultfd");
  unsetenv("FI_MR_CACHE_MAX_SIZE");
  unsetenv("FI_MR_CACHE_MAX_COUNT");
  unsetenv("FI_MR_CACHE_MONITOR");
}

}  // namespace
}  // namespace fabric
