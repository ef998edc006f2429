#include "fabric/hmem/hmem_copy.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// A buffer in pieces, each its own heap block (so that ASan sees a copy
// that runs past a piece), and the iovec array that describes it.
class ScatteredBuffer {
 public:
  // Piece lengths; byte k of the whole buffer holds Fill(k).
  explicit ScatteredBuffer(const std::vector<size_t>& lengths) {
    size_t k = 0;
    for (size_t length : lengths) {
      pieces_.emplace_back(length);
      for (char& byte : pieces_.back()) byte = Fill(k++);
      // An empty vector's data() may be null: entries of length 0 with a
      // null base must be skipped like any other.
      iov_.push_back({pieces_.back().data(), length});
    }
  }

  static char Fill(size_t k) { return static_cast<char>(k * 7 + 1); }

  const struct iovec* iov() const { return iov_.empty() ? nullptr : &iov_[0]; }
  size_t count() const { return iov_.size(); }

  std::string Bytes() const {
    std::string bytes;
    for (const std::vector<char>& piece : pieces_) {
      bytes.append(piece.begin(), piece.end());
    }
    return bytes;
  }

 private:
  std::vector<std::vector<char>> pieces_;
  std::vector<struct iovec> iov_;
};

// What a copy from `offset` of `size` bytes moves, by a plain reading of the
// semantics: the bytes of the whole buffer in [offset, offset + size).
std::string ExpectedCopy(const std::string& whole, uint64_t offset,
                         size_t size) {
  if (offset >= whole.size()) return "";
  return whole.substr(offset, size);
}

const std::vector<std::vector<size_t>> kLayouts = {
    {},                  // no entry at all
    {0},                 // one empty entry
    {16},                // one entry
    {5, 7, 3},           // several
    {0, 4, 0, 0, 9, 0},  // empty entries between and around
    {1, 1, 1, 1, 1},     // one byte each
    {0, 0},
    {3, 0, 12},
};

std::string Describe(const std::vector<size_t>& lengths, uint64_t offset,
                     size_t size) {
  return absl::StrCat("layout {", absl::StrJoin(lengths, ","),
                      "} offset ", offset, " size ", size);
}

TEST(HmemCopierTest, CopyFromIovMatchesReferenceForEveryLayout) {
  HmemCopier copier;
  for (const std::vector<size_t>& lengths : kLayouts) {
    ScatteredBuffer source(lengths);
    const std::string whole = source.Bytes();
    for (uint64_t offset = 0; offset <= whole.size() + 2; ++offset) {
      for (size_t size = 0; size <= whole.size() + 2; ++size) {
        SCOPED_TRACE(Describe(lengths, offset, size));
        std::vector<char> dest(size, '\xee');
        ssize_t copied =
            copier.CopyFromIov(dest.data(), size, FI_HMEM_SYSTEM, 0,
                               source.iov(), source.count(), offset);
        std::string expected = ExpectedCopy(whole, offset, size);
        ASSERT_EQ(copied, static_cast<ssize_t>(expected.size()));
        std::string untouched(size - expected.size(), '\xee');
        EXPECT_EQ(std::string(dest.begin(), dest.end()), expected + untouched);
        EXPECT_EQ(source.Bytes(), whole);
      }
    }
  }
}

TEST(HmemCopierTest, CopyToIovMatchesReferenceForEveryLayout) {
  HmemCopier copier;
  for (const std::vector<size_t>& lengths : kLayouts) {
    const size_t total = ScatteredBuffer(lengths).Bytes().size();
    for (uint64_t offset = 0; offset <= total + 2; ++offset) {
      for (size_t size = 0; size <= total + 2; ++size) {
        SCOPED_TRACE(Describe(lengths, offset, size));
        ScatteredBuffer target(lengths);
        const std::string before = target.Bytes();
        std::string src(size, '\0');
        for (size_t i = 0; i < size; ++i) src[i] = static_cast<char>(200 + i);
        ssize_t copied =
            copier.CopyToIov(FI_HMEM_SYSTEM, 0, target.iov(), target.count(),
                             offset, src.data(), size);
        size_t expected_count = ExpectedCopy(before, offset, size).size();
        ASSERT_EQ(copied, static_cast<ssize_t>(expected_count));
        std::string expected = before;
        expected.replace(std::min<size_t>(offset, before.size()),
                         expected_count, src.substr(0, expected_count));
        EXPECT_EQ(target.Bytes(), expected);
      }
    }
  }
}

TEST(HmemCopierTest, OffsetFarPastTheEndCopiesNothing) {
  HmemCopier copier;
  ScatteredBuffer buffer({4, 4});
  char byte = 'x';
  EXPECT_EQ(copier.CopyFromIov(&byte, 1, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), UINT64_MAX),
            0);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, buffer.iov(), buffer.count(),
                             UINT64_MAX, &byte, 1),
            0);
  EXPECT_EQ(byte, 'x');
}

TEST(HmemCopierTest, RejectsNullIovWithEntries) {
  HmemCopier copier;
  char buffer[4] = {};
  EXPECT_EQ(copier.CopyFromIov(buffer, 4, FI_HMEM_SYSTEM, 0, nullptr, 1, 0),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, nullptr, 1, 0, buffer, 4),
            -FI_EINVAL);
  // Without entries there is nothing to read.
  EXPECT_EQ(copier.CopyFromIov(buffer, 4, FI_HMEM_SYSTEM, 0, nullptr, 0, 0),
            0);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, nullptr, 0, 0, buffer, 4), 0);
}

TEST(HmemCopierTest, RejectsNullHostBufferWithSize) {
  HmemCopier copier;
  ScatteredBuffer buffer({4});
  EXPECT_EQ(copier.CopyFromIov(nullptr, 4, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, buffer.iov(), buffer.count(),
                             0, nullptr, 4),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyFromIov(nullptr, 0, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            0);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, buffer.iov(), buffer.count(),
                             0, nullptr, 0),
            0);
}

TEST(HmemCopierTest, RejectsEntryWithNullBaseThatTheCopyReaches) {
  HmemCopier copier;
  char bytes[4] = {1, 2, 3, 4};
  struct iovec iov[2] = {{bytes, 4}, {nullptr, 4}};
  char dest[8];
  EXPECT_EQ(copier.CopyFromIov(dest, 8, FI_HMEM_SYSTEM, 0, iov, 2, 0),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, iov, 2, 0, dest, 8),
            -FI_EINVAL);
  // A copy that ends before the null entry never touches it.
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, iov, 2, 0), 4);
}

TEST(HmemCopierTest, ReportsTheInterfaceError) {
  HmemCopier copier;
  ScatteredBuffer buffer({4});
  char dest[4];
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_ZE, 0, buffer.iov(),
                               buffer.count(), 0),
            -FI_ENOSYS);
  EXPECT_EQ(copier.CopyToIov(static_cast<fi_hmem_iface>(7), 0, buffer.iov(),
                             buffer.count(), 0, dest, 4),
            -FI_EINVAL);
}

// The application's override: records what it was asked and copies with a
// reference implementation of its own.
struct Recorded {
  std::atomic<int> from_calls{0};
  std::atomic<int> to_calls{0};
  std::atomic<size_t> bytes{0};
  // Arguments of the last call.
  void* dest;
  const void* src;
  size_t size;
  fi_hmem_iface iface;
  uint64_t device;
  const struct iovec* iov;
  size_t iov_count;
  uint64_t iov_offset;
};

Recorded recorded;

// False in the concurrency tests, where the override only counts.
std::atomic<bool> record_arguments{true};

// The bytes of `iov` as one string, and back.
std::string Gather(const struct iovec* iov, size_t count) {
  std::string bytes;
  for (size_t i = 0; i < count; ++i) {
    bytes.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
  }
  return bytes;
}

void Scatter(const std::string& bytes, const struct iovec* iov,
             size_t count) {
  size_t k = 0;
  for (size_t i = 0; i < count; ++i) {
    std::copy_n(bytes.begin() + k, iov[i].iov_len,
                static_cast<char*>(iov[i].iov_base));
    k += iov[i].iov_len;
  }
}

void Record(void* dest, const void* src, size_t size, fi_hmem_iface iface,
            uint64_t device, const struct iovec* iov, size_t iov_count,
            uint64_t iov_offset) {
  if (!record_arguments) return;
  recorded.dest = dest;
  recorded.src = src;
  recorded.size = size;
  recorded.iface = iface;
  recorded.device = device;
  recorded.iov = iov;
  recorded.iov_count = iov_count;
  recorded.iov_offset = iov_offset;
}

ssize_t RecordingCopyFrom(void* dest, size_t size, fi_hmem_iface iface,
                          uint64_t device, const struct iovec* iov,
                          size_t iov_count, uint64_t iov_offset) {
  recorded.from_calls++;
  Record(dest, nullptr, size, iface, device, iov, iov_count, iov_offset);
  std::string bytes = ExpectedCopy(Gather(iov, iov_count), iov_offset, size);
  std::copy(bytes.begin(), bytes.end(), static_cast<char*>(dest));
  recorded.bytes += bytes.size();
  return static_cast<ssize_t>(bytes.size());
}

ssize_t RecordingCopyTo(fi_hmem_iface iface, uint64_t device,
                        const struct iovec* iov, size_t iov_count,
                        uint64_t iov_offset, const void* src, size_t size) {
  recorded.to_calls++;
  Record(nullptr, src, size, iface, device, iov, iov_count, iov_offset);
  std::string whole = Gather(iov, iov_count);
  size_t n = ExpectedCopy(whole, iov_offset, size).size();
  if (n > 0) whole.replace(iov_offset, n, static_cast<const char*>(src), n);
  Scatter(whole, iov, iov_count);
  recorded.bytes += n;
  return static_cast<ssize_t>(n);
}

// An override that only answers, so that a test can tell its result apart.
constexpr ssize_t kMarker = 4242;

ssize_t MarkerCopyFrom(void*, size_t, fi_hmem_iface, uint64_t,
                       const struct iovec*, size_t, uint64_t) {
  return kMarker;
}

ssize_t MarkerCopyTo(fi_hmem_iface, uint64_t, const struct iovec*, size_t,
                     uint64_t, const void*, size_t) {
  return kMarker;
}

// An override that hands each copy to the built-in functions.
ssize_t ForwardingCopyFrom(void* dest, size_t size, fi_hmem_iface iface,
                           uint64_t device, const struct iovec* iov,
                           size_t iov_count, uint64_t iov_offset) {
  static const HmemCopier built_in;
  return built_in.CopyFromIov(dest, size, iface, device, iov, iov_count,
                              iov_offset);
}

ssize_t ForwardingCopyTo(fi_hmem_iface iface, uint64_t device,
                         const struct iovec* iov, size_t iov_count,
                         uint64_t iov_offset, const void* src, size_t size) {
  static const HmemCopier built_in;
  return built_in.CopyToIov(iface, device, iov, iov_count, iov_offset, src,
                            size);
}

constexpr struct fi_hmem_override_ops kRecordingOps = {
    sizeof(struct fi_hmem_override_ops), RecordingCopyFrom, RecordingCopyTo};
constexpr struct fi_hmem_override_ops kMarkerOps = {
    sizeof(struct fi_hmem_override_ops), MarkerCopyFrom, MarkerCopyTo};
constexpr struct fi_hmem_override_ops kForwardingOps = {
    sizeof(struct fi_hmem_override_ops), ForwardingCopyFrom,
    ForwardingCopyTo};

class HmemOverrideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    recorded.from_calls = 0;
    recorded.to_calls = 0;
    recorded.bytes = 0;
    record_arguments = true;
  }
};

TEST_F(HmemOverrideTest, RejectsNullOps) {
  HmemCopier copier;
  EXPECT_EQ(ToFiErrno(copier.SetOverride(nullptr)), -FI_EINVAL);
}

TEST_F(HmemOverrideTest, RejectsWrongSize) {
  for (size_t size : {size_t{0}, sizeof(fi_hmem_override_ops) - 1,
                      sizeof(fi_hmem_override_ops) + 8}) {
    SCOPED_TRACE(size);
    HmemCopier copier;
    struct fi_hmem_override_ops ops = kRecordingOps;
    ops.size = size;
    EXPECT_EQ(ToFiErrno(copier.SetOverride(&ops)), -FI_EINVAL);
  }
}

TEST_F(HmemOverrideTest, RejectsEachNullFunction) {
  HmemCopier copier;
  struct fi_hmem_override_ops no_from = kRecordingOps;
  no_from.copy_from_hmem_iov = nullptr;
  EXPECT_EQ(ToFiErrno(copier.SetOverride(&no_from)), -FI_EINVAL);
  struct fi_hmem_override_ops no_to = kRecordingOps;
  no_to.copy_to_hmem_iov = nullptr;
  EXPECT_EQ(ToFiErrno(copier.SetOverride(&no_to)), -FI_EINVAL);
}

TEST_F(HmemOverrideTest, RejectedOverrideLeavesTheBuiltInCopies) {
  HmemCopier copier;
  struct fi_hmem_override_ops half = kMarkerOps;
  half.copy_to_hmem_iov = nullptr;
  ASSERT_FALSE(copier.SetOverride(&half).ok());
  ScatteredBuffer buffer({3, 5});
  char dest[8];
  EXPECT_EQ(copier.CopyFromIov(dest, 8, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            8);
  EXPECT_EQ(std::string(dest, 8), buffer.Bytes());
}

TEST_F(HmemOverrideTest, EveryCopyGoesThroughOverrideWithItsArguments) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kRecordingOps).ok());
  ScatteredBuffer buffer({3, 0, 5});
  char dest[6] = {};

  // Host memory too: the override replaces every built-in copy.
  EXPECT_EQ(copier.CopyFromIov(dest, sizeof(dest), FI_HMEM_SYSTEM, 0,
                               buffer.iov(), buffer.count(), 2),
            6);
  EXPECT_EQ(recorded.from_calls, 1);
  EXPECT_EQ(recorded.dest, dest);
  EXPECT_EQ(recorded.size, sizeof(dest));
  EXPECT_EQ(recorded.iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(recorded.device, 0u);
  EXPECT_EQ(recorded.iov, buffer.iov());
  EXPECT_EQ(recorded.iov_count, 3u);
  EXPECT_EQ(recorded.iov_offset, 2u);
  EXPECT_EQ(std::string(dest, 6), buffer.Bytes().substr(2, 6));

  const char src[] = "abcd";
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_CUDA, 3, buffer.iov(), buffer.count(), 1,
                             src, 4),
            4);
  EXPECT_EQ(recorded.to_calls, 1);
  EXPECT_EQ(recorded.src, src);
  EXPECT_EQ(recorded.size, 4u);
  EXPECT_EQ(recorded.iface, FI_HMEM_CUDA);
  EXPECT_EQ(recorded.device, 3u);
  EXPECT_EQ(recorded.iov, buffer.iov());
  EXPECT_EQ(recorded.iov_count, 3u);
  EXPECT_EQ(recorded.iov_offset, 1u);
  EXPECT_EQ(buffer.Bytes().substr(1, 4), "abcd");
  EXPECT_EQ(recorded.bytes, 10u);
}

// The inline copy for one host piece is the built-in one: with an
// override installed, that layout goes through the override too.
TEST_F(HmemOverrideTest, OneHostPieceGoesThroughOverride) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kMarkerOps).ok());
  ScatteredBuffer buffer({8});
  const char src[] = "abcd";
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, buffer.iov(), buffer.count(),
                             0, src, 4),
            kMarker);
  EXPECT_NE(buffer.Bytes().substr(0, 4), "abcd");
}

TEST_F(HmemOverrideTest, OverrideCopiesEveryLayoutAndCountsEveryByte) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kRecordingOps).ok());
  int calls = 0;
  size_t bytes = 0;
  for (const std::vector<size_t>& lengths : kLayouts) {
    ScatteredBuffer buffer(lengths);
    const std::string whole = buffer.Bytes();
    for (uint64_t offset = 0; offset <= whole.size() + 1; ++offset) {
      for (size_t size = 0; size <= whole.size() + 1; ++size) {
        std::vector<char> dest(size);
        ssize_t copied = copier.CopyFromIov(dest.data(), size, FI_HMEM_SYSTEM,
                                            0, buffer.iov(), buffer.count(),
                                            offset);
        ASSERT_EQ(copied, static_cast<ssize_t>(
                              ExpectedCopy(whole, offset, size).size()));
        ASSERT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, buffer.iov(),
                                   buffer.count(), offset, dest.data(),
                                   copied),
                  copied);
        calls += 2;
        bytes += 2 * copied;
      }
    }
    EXPECT_EQ(buffer.Bytes(), whole);  // each copy put back what it read
  }
  EXPECT_EQ(recorded.from_calls + recorded.to_calls, calls);
  EXPECT_EQ(recorded.bytes, bytes);
}

TEST_F(HmemOverrideTest, ReturnsWhatTheOverrideReturns) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kMarkerOps).ok());
  ScatteredBuffer buffer({4});
  char dest[4] = {'a', 'b', 'c', 'd'};
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            kMarker);
  EXPECT_EQ(std::string(dest, 4), "abcd");  // nothing else copied
  // Interfaces the built-in copies reject are the override's to judge.
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_NEURON, 0, buffer.iov(), buffer.count(),
                             0, dest, 4),
            kMarker);
  EXPECT_EQ(copier.CopyToIov(static_cast<fi_hmem_iface>(7), 0, buffer.iov(),
                             buffer.count(), 0, dest, 4),
            kMarker);
}

TEST_F(HmemOverrideTest, StillRejectsBadArgumentsBeforeTheOverride) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kMarkerOps).ok());
  char dest[4];
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, nullptr, 2, 0),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_SYSTEM, 0, nullptr, 2, 0, dest, 4),
            -FI_EINVAL);
}

TEST_F(HmemOverrideTest, KeepsItsOwnCopyOfTheOps) {
  HmemCopier copier;
  auto ops = std::make_unique<fi_hmem_override_ops>(kMarkerOps);
  ASSERT_TRUE(copier.SetOverride(ops.get()).ok());
  *ops = {};
  ops.reset();
  char dest[4];
  ScatteredBuffer buffer({4});
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            kMarker);
}

TEST_F(HmemOverrideTest, LaterOverrideReplacesEarlierOne) {
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kMarkerOps).ok());
  ASSERT_TRUE(copier.SetOverride(&kRecordingOps).ok());
  ScatteredBuffer buffer({4});
  char dest[4];
  EXPECT_EQ(copier.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, buffer.iov(),
                               buffer.count(), 0),
            4);
  EXPECT_EQ(recorded.from_calls, 1);
}

TEST_F(HmemOverrideTest, OverrideBelongsToOneCopier) {
  HmemCopier overridden;
  HmemCopier built_in;
  ASSERT_TRUE(overridden.SetOverride(&kMarkerOps).ok());
  ScatteredBuffer buffer({4});
  char dest[4];
  EXPECT_EQ(built_in.CopyFromIov(dest, 4, FI_HMEM_SYSTEM, 0, buffer.iov(),
                                 buffer.count(), 0),
            4);
}

constexpr int kThreads = 4;
constexpr int kCopiesPerThread = 2000;

// Each thread copies its own buffer in and out at changing offsets and checks
// every byte.
void CopyAndCheck(const HmemCopier& copier, int thread, bool* ok) {
  ScatteredBuffer source({7, 0, 13, 1, 29});
  const std::string whole = source.Bytes();
  ScatteredBuffer target({11, 39});
  for (int i = 0; i < kCopiesPerThread; ++i) {
    uint64_t offset = (i + thread) % whole.size();
    size_t size = (i * 3 + thread) % whole.size() + 1;
    std::string expected = ExpectedCopy(whole, offset, size);
    std::vector<char> dest(size);
    ssize_t from = copier.CopyFromIov(dest.data(), size, FI_HMEM_SYSTEM, 0,
                                      source.iov(), source.count(), offset);
    ssize_t to = copier.CopyToIov(FI_HMEM_SYSTEM, 0, target.iov(),
                                  target.count(), offset, dest.data(), from);
    if (from != static_cast<ssize_t>(expected.size()) || to != from ||
        std::string(dest.data(), from) != expected ||
        target.Bytes().substr(offset, from) != expected) {
      *ok = false;
      return;
    }
  }
  *ok = true;
}

void RunCopyThreads(const HmemCopier& copier) {
  bool ok[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(CopyAndCheck, std::cref(copier), t, &ok[t]);
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
}

TEST(HmemCopierConcurrencyTest, BuiltInCopiesFromFourThreads) {
  HmemCopier copier;
  RunCopyThreads(copier);
}

TEST_F(HmemOverrideTest, OverrideCopiesFromFourThreads) {
  record_arguments = false;
  HmemCopier copier;
  ASSERT_TRUE(copier.SetOverride(&kRecordingOps).ok());
  RunCopyThreads(copier);
  EXPECT_EQ(recorded.from_calls, kThreads * kCopiesPerThread);
  EXPECT_EQ(recorded.to_calls, kThreads * kCopiesPerThread);
}

TEST_F(HmemOverrideTest, SetOverrideWhileCopiesRun) {
  record_arguments = false;
  HmemCopier copier;
  std::atomic<bool> done{false};
  // Every set of functions copies correctly, so every copy must check out
  // whichever it meets, even a copy from one set and back with the other.
  std::thread setter([&copier, &done] {
    for (int i = 0; !done; ++i) {
      EXPECT_TRUE(
          copier.SetOverride(i % 2 ? &kRecordingOps : &kForwardingOps).ok());
      std::this_thread::yield();
    }
  });
  RunCopyThreads(copier);
  done = true;
  setter.join();
}

}  // namespace
}  // namespace fabric
