#include "fabric/providers/shm/shm_segment.h"

#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_process.h"
#include "fabric/providers/shm/shm_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kPiB = uint64_t{1} << 50;

class ShmSegmentTest : public testing::Test {
 protected:
  void TearDown() override { RemoveShmNamesWithPrefix(prefix_); }

  std::string Name(uint64_t n) { return SegmentName(prefix_, n); }

  // The refusal Open gives for a segment file holding `bytes` in `mode`.
  int OpenErrno(const std::string& bytes, mode_t mode = 0600) {
    std::string name = Name(next_++);
    absl::Status written = WriteShmFile(name, bytes, mode);
    EXPECT_TRUE(written.ok()) << written;
    absl::StatusOr<Segment> segment = Segment::Open(name);
    return ToFiErrno(segment.status());
  }

  const std::string prefix_ = TestPrefix();
  uint64_t next_ = 100;
};

// The bytes of a sound segment file; the arguments make it less so.
std::string GoodSegment(uint64_t size = 4096, pid_t pid = getpid()) {
  return SegmentBytes(InfoInOurNamespace(size, pid, /*start_time=*/1));
}

struct stat StatShm(const std::string& name) {
  struct stat st = {};
  EXPECT_EQ(stat(("/dev/shm" + name).c_str(), &st), 0) << name;
  return st;
}

TEST_F(ShmSegmentTest, NameHasUidPidNamespacePidAndNumber) {
  absl::StatusOr<uint64_t> pid_ns = OwnPidNamespace();
  ASSERT_TRUE(pid_ns.ok()) << pid_ns.status();
  const std::string ns = absl::StrCat(*pid_ns);
  EXPECT_EQ(SegmentName("/fabric-shm", 7),
            absl::StrCat("/fabric-shm-", geteuid(), "-", ns, "-", getpid(),
                         "-7"));
  EXPECT_EQ(PidFromSegmentName("/fabric-shm",
                               absl::StrCat("/fabric-shm-1000-", ns, "-4242-0")),
            4242);
  EXPECT_EQ(PidFromSegmentName("/fabric-shm", SegmentName("/fabric-shm", 3)),
            getpid());
  // A pid of another pid namespace (containers sharing /dev/shm) is not one
  // this process can ask about.
  EXPECT_EQ(PidFromSegmentName(
                "/fabric-shm", absl::StrCat("/fabric-shm-1000-", *pid_ns + 1,
                                            "-4242-0")),
            std::nullopt);
  for (const std::string& bad :
       {absl::StrCat("/fabric-shm-1000-", ns, "-4242"),
        absl::StrCat("/fabric-shm-1000-", ns, "-4242-0-1"),
        absl::StrCat("/fabric-shm-1000-", ns, "-x-0"),
        absl::StrCat("/fabric-shm-1000-", ns, "-0-0"),
        std::string("/fabric-shmX1-2-3-4"),
        absl::StrCat("/other-1000-", ns, "-4242-0"),
        absl::StrCat("/fabric-shm-1000-", ns, "--0"),
        absl::StrCat("/fabric-shm-1000-", ns, "-99999999999-0"),
        std::string("/fabric-shm-1000-4242-0")}) {
    EXPECT_EQ(PidFromSegmentName("/fabric-shm", bad), std::nullopt) << bad;
  }
}

TEST_F(ShmSegmentTest, CreateOpenAndUnlinkOnDestruction) {
  const std::string name = Name(0);
  absl::StatusOr<Segment> created = Segment::Create(name, 1 << 20);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->size(), 1u << 20);
  EXPECT_EQ(created->payload_size(), (1u << 20) - kSegmentPayloadOffset);
  EXPECT_TRUE(created->is_creator());
  EXPECT_EQ(created->creator_pid(), getpid());
  EXPECT_EQ(created->creator_start_time(), *ProcessStartTime(getpid()));

  struct stat st = StatShm(name);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(st.st_size, 1 << 20);
  // Allocated up front, not sparse.
  EXPECT_GE(st.st_blocks * 512, 1 << 20);

  absl::StatusOr<Segment> opened = Segment::Open(name);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_FALSE(opened->is_creator());
  EXPECT_EQ(opened->size(), 1u << 20);
  EXPECT_EQ(opened->creator_pid(), getpid());
  EXPECT_EQ(opened->creator_start_time(), created->creator_start_time());
  EXPECT_EQ(opened->creator_pid_ns(), *OwnPidNamespace());
  EXPECT_EQ(created->creator_pid_ns(), *OwnPidNamespace());
  EXPECT_NE(opened->base(), created->base());
  // Two mappings of the same memory.
  memcpy(static_cast<char*>(created->payload()) + 4000, "shared", 7);
  EXPECT_STREQ(static_cast<char*>(opened->payload()) + 4000, "shared");

  // The opener's destruction leaves the name; the creator's removes it.
  { Segment gone = std::move(*opened); }
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), ElementsAre(name));
  { Segment gone = std::move(*created); }
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), IsEmpty());
  EXPECT_EQ(ToFiErrno(Segment::Open(name).status()), -FI_ENOENT);
}

// The creator's lock says whether it lives: held by our Segment, free
// once a creator dies without cleaning up, and no segment is not in use.
TEST_F(ShmSegmentTest, TheCreatorsLockSaysWhetherItLives) {
  absl::StatusOr<Segment> mine = Segment::Create(Name(1), 4096);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(IsSegmentInUse(mine->name()));
  absl::StatusOr<Segment> opened = Segment::Open(mine->name());
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(IsSegmentInUse(mine->name()));  // testing takes no lock away
  std::string orphan_name = absl::StrCat(prefix_, "-orphan");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<Segment> orphan = Segment::Create(orphan_name, 4096);
    _exit(orphan.ok() ? 0 : 1);  // no destructor: the name stays
  }
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), testing::Contains(orphan_name));
  EXPECT_FALSE(IsSegmentInUse(orphan_name));
  EXPECT_FALSE(IsSegmentInUse(Name(3)));
}

// The number of fds this process has open.
size_t OpenFds() {
  size_t count = 0;
  for (int fd = 0; fd < 65536; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) ++count;
  }
  return count;
}

// One liveness lock per process, not an fd per segment: a process with
// hundreds of peers (each connection a segment it creates) must not run
// out of fds (under ulimit -n 64 one shm endpoint reached 54 of 100).
TEST_F(ShmSegmentTest, SegmentsHoldNoFds) {
  absl::StatusOr<Segment> first = Segment::Create(Name(10), 4096);
  ASSERT_TRUE(first.ok()) << first.status();  // takes the liveness lock
  size_t before = OpenFds();
  std::vector<Segment> many;
  for (uint64_t n = 0; n < 100; ++n) {
    absl::StatusOr<Segment> segment = Segment::Create(Name(200 + n), 4096);
    ASSERT_TRUE(segment.ok()) << segment.status();
    many.push_back(*std::move(segment));
  }
  EXPECT_EQ(OpenFds(), before) << "fds grew with the segments";
  for (const Segment& segment : many) {
    EXPECT_TRUE(IsSegmentInUse(segment.name()));
  }
}

TEST_F(ShmSegmentTest, ModeIs0600WhateverTheUmask) {
  for (mode_t mask : {0000, 0077, 0277}) {
    mode_t old = umask(mask);
    absl::StatusOr<Segment> segment = Segment::Create(Name(mask), 4096);
    umask(old);
    ASSERT_TRUE(segment.ok()) << segment.status();
    EXPECT_EQ(StatShm(segment->name()).st_mode & 07777, 0600u) << mask;
  }
}

TEST_F(ShmSegmentTest, CreateRefusesAnExistingNameAndKeepsIt) {
  absl::StatusOr<Segment> first = Segment::Create(Name(0), 4096);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Segment> second = Segment::Create(Name(0), 8192);
  EXPECT_EQ(ToFiErrno(second.status()), -EEXIST);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(Name(0)));
  EXPECT_EQ(StatShm(Name(0)).st_size, 4096);
}

TEST_F(ShmSegmentTest, CreateRefusesASizeBelowTheHeader) {
  EXPECT_EQ(ToFiErrno(Segment::Create(Name(0), 10).status()), -FI_EINVAL);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), IsEmpty());
}

TEST_F(ShmSegmentTest, MovedFromObjectsDoNotUnlink) {
  absl::StatusOr<Segment> created = Segment::Create(Name(0), 4096);
  ASSERT_TRUE(created.ok()) << created.status();
  Segment moved = std::move(*created);
  { Segment emptied = std::move(*created); }  // holds nothing
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), ElementsAre(Name(0)));
  Segment other = Segment::Create(Name(1), 4096).value();
  other = std::move(moved);  // drops Name(1), now owns Name(0)
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), ElementsAre(Name(0)));
  EXPECT_TRUE(other.is_creator());
}

// A child inherits a copy of the creator's object; destroying it there must
// not remove the parent's segment.
TEST_F(ShmSegmentTest, ForkedChildDoesNotUnlink) {
  absl::StatusOr<Segment> created = Segment::Create(Name(0), 4096);
  ASSERT_TRUE(created.ok()) << created.status();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    { Segment copy = std::move(*created); }
    _exit(0);
  }
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), ElementsAre(Name(0)));
  EXPECT_TRUE(Segment::Open(Name(0)).ok());
}

TEST_F(ShmSegmentTest, OpenAcceptsAWellFormedFile) {
  EXPECT_EQ(OpenErrno(GoodSegment()), 0);
}

TEST_F(ShmSegmentTest, OpenRefusesAWrongMode) {
  for (mode_t mode : {0644, 0700, 0400, 0660}) {
    EXPECT_EQ(OpenErrno(GoodSegment(), mode), -FI_EACCES) << std::oct << mode;
  }
}

TEST_F(ShmSegmentTest, OpenRefusesAnotherOwner) {
  std::string name = Name(0);
  ASSERT_TRUE(WriteShmFile(name, GoodSegment()).ok());
  if (chown(("/dev/shm" + name).c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "cannot give a file away: " << strerror(errno);
  }
  absl::StatusOr<Segment> segment = Segment::Open(name);
  EXPECT_EQ(ToFiErrno(segment.status()), -FI_EACCES);
  EXPECT_THAT(std::string(segment.status().message()),
              HasSubstr("owned by uid 65534"));
}

TEST_F(ShmSegmentTest, OpenRefusesAWrongMagicOrVersion) {
  std::string bytes = GoodSegment();
  bytes[0] ^= 1;  // magic
  EXPECT_EQ(OpenErrno(bytes), -FI_EINVAL);
  bytes = GoodSegment();
  bytes[offsetof(SegmentHeader, version)] = kSegmentVersion + 1;
  EXPECT_EQ(OpenErrno(bytes), -FI_EOPNOTSUPP);
  bytes = GoodSegment();
  bytes[offsetof(SegmentHeader, ready)] = 7;
  EXPECT_EQ(OpenErrno(bytes), -FI_EINVAL);
}

TEST_F(ShmSegmentTest, OpenRefusesATruncatedFile) {
  std::string bytes = GoodSegment();
  // Shorter than the header.
  EXPECT_EQ(OpenErrno(bytes.substr(0, 10)), -FI_EINVAL);
  EXPECT_EQ(OpenErrno(bytes.substr(0, kSegmentPayloadOffset - 1)), -FI_EINVAL);
  // Shorter than the header's size field.
  EXPECT_EQ(OpenErrno(bytes.substr(0, 4095)), -FI_EINVAL);
  // A size field below the header.
  EXPECT_EQ(OpenErrno(GoodSegment(8).substr(0, 4096)), -FI_EINVAL);
  // Empty: its creator has not sized it yet.
  EXPECT_EQ(OpenErrno(""), -FI_EAGAIN);
}

TEST_F(ShmSegmentTest, OpenRefusesAHeaderNotReady) {
  std::string bytes = GoodSegment();
  bytes[offsetof(SegmentHeader, ready)] = 0;
  EXPECT_EQ(OpenErrno(bytes), -FI_EAGAIN);
}

TEST_F(ShmSegmentTest, OpenRefusesABadCreatorPid) {
  EXPECT_EQ(OpenErrno(GoodSegment(4096, 0)), -FI_EINVAL);
  EXPECT_EQ(OpenErrno(GoodSegment(4096, -3)), -FI_EINVAL);
}

TEST_F(ShmSegmentTest, OpenRefusesGarbage) {
  std::string garbage(8192, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = char(i * 131 + 7);
  EXPECT_EQ(OpenErrno(garbage), -FI_EINVAL);
  EXPECT_EQ(OpenErrno(std::string(4096, '\xff')), -FI_EINVAL);
}

TEST_F(ShmSegmentTest, SpaceCheckNamesNeededAndFree) {
  EXPECT_TRUE(SpaceCheck(4096).ok());
  absl::Status status = SpaceCheck(kPiB);
  EXPECT_EQ(ToFiErrno(status), -FI_ENOSPC);
  EXPECT_THAT(
      std::string(status.message()),
      ContainsRegex(absl::StrCat("needs ", kPiB, " bytes, [0-9]+ free")));
  struct statvfs vfs;
  ASSERT_EQ(statvfs("/dev/shm", &vfs), 0);
  EXPECT_FALSE(SpaceCheck(uint64_t{vfs.f_blocks} * vfs.f_frsize + 1).ok());
}

TEST_F(ShmSegmentTest, CreateTooBigFailsCleanly) {
  absl::StatusOr<Segment> segment = Segment::Create(Name(0), kPiB);
  EXPECT_EQ(ToFiErrno(segment.status()), -FI_ENOSPC);
  EXPECT_THAT(std::string(segment.status().message()),
              ContainsRegex(absl::StrCat(Name(0), ": .*needs ", kPiB,
                                         " bytes, [0-9]+ free")));
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), IsEmpty());
}

}  // namespace
}  // namespace shm
}  // namespace fabric
