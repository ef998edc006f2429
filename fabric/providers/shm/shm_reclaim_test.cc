#include "fabric/providers/shm/shm_reclaim.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/providers/shm/shm_process.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/shm/shm_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

class ShmReclaimTest : public testing::Test {
 protected:
  void TearDown() override { RemoveShmNamesWithPrefix(prefix_); }

  // A reaped child's pid, and the name of the segment it created and left
  // behind (it exits without destroying its Segment).
  void ForkCreatorThatDies(pid_t* pid, std::string* name) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      absl::StatusOr<Segment> segment =
          Segment::Create(SegmentName(prefix_, 0), 4096);
      _exit(segment.ok() ? 0 : 1);
    }
    int status;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    *pid = child;
    *name = NameWithPid(child, 0);
  }

  // A name of the form SegmentName gives, with `pid` in it.
  std::string NameWithPid(pid_t pid, int n) {
    return absl::StrCat(prefix_, "-", geteuid(), "-", *OwnPidNamespace(), "-",
                        pid, "-", n);
  }

  const std::string prefix_ = TestPrefix();
};

TEST_F(ShmReclaimTest, RemovesWhatDeadCreatorsLeftAndNothingElse) {
  pid_t dead_pid;
  std::string dead_creators;
  ForkCreatorThatDies(&dead_pid, &dead_creators);
  ASSERT_FALSE(IsPidAlive(dead_pid));

  absl::StatusOr<Segment> live = Segment::Create(SegmentName(prefix_, 1), 4096);
  ASSERT_TRUE(live.ok()) << live.status();
  // Another start time in the header: it names the liveness lock of
  // another process of that pid (one that reused it), which nobody holds:
  // gone.
  absl::StatusOr<Segment> reused =
      Segment::Create(SegmentName(prefix_, 2), 4096);
  ASSERT_TRUE(reused.ok()) << reused.status();
  static_cast<SegmentHeader*>(reused->base())->creator_start_time += 1;
  // Malformed headers, unlocked: judged by the pid in the name.
  std::string garbage(100, 'g');
  std::string malformed_dead = NameWithPid(dead_pid, 3);
  ASSERT_TRUE(WriteShmFile(malformed_dead, garbage).ok());
  std::string malformed_live = NameWithPid(getpid(), 4);
  ASSERT_TRUE(WriteShmFile(malformed_live, garbage).ok());
  std::string not_ready_live = NameWithPid(getpid(), 5);
  std::string not_ready = SegmentBytes(InfoInOurNamespace(4096, dead_pid, 1));
  not_ready[offsetof(SegmentHeader, ready)] = 0;
  ASSERT_TRUE(WriteShmFile(not_ready_live, not_ready).ok());
  // A creator in another pid namespace, which holds no lock: gone, whatever
  // its pid means here.
  std::string other_namespace = NameWithPid(dead_pid, 6);
  SegmentInfo foreign = InfoInOurNamespace(4096, dead_pid, 1);
  foreign.pid_ns += 1;
  ASSERT_TRUE(WriteShmFile(other_namespace, SegmentBytes(foreign)).ok());
  // Not a segment name under the prefix.
  std::string other_form = absl::StrCat(prefix_, "-notes");
  ASSERT_TRUE(WriteShmFile(other_form, garbage).ok());

  absl::StatusOr<int> removed = ReclaimStale(prefix_);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 4);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_),
              UnorderedElementsAre(live->name(), malformed_live,
                                   not_ready_live, other_form));
  EXPECT_TRUE(Segment::Open(live->name()).ok());
  EXPECT_EQ(*ReclaimStale(prefix_), 0);
}

TEST_F(ShmReclaimTest, LeavesOtherPrefixesAlone) {
  pid_t dead_pid;
  std::string dead_creators;
  ForkCreatorThatDies(&dead_pid, &dead_creators);
  EXPECT_EQ(*ReclaimStale(prefix_ + "-x"), 0);
  EXPECT_EQ(*ReclaimStale(prefix_.substr(0, prefix_.size() - 1)), 0);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_), ElementsAre(dead_creators));
  EXPECT_EQ(*ReclaimStale(prefix_), 1);
}

TEST_F(ShmReclaimTest, LeavesOtherUsersSegmentsAlone) {
  pid_t dead_pid;
  std::string dead_creators;
  ForkCreatorThatDies(&dead_pid, &dead_creators);
  std::string theirs_malformed = NameWithPid(dead_pid, 1);
  ASSERT_TRUE(WriteShmFile(theirs_malformed, "junk").ok());
  for (const std::string& name : {dead_creators, theirs_malformed}) {
    if (chown(("/dev/shm" + name).c_str(), 65534, 65534) != 0) {
      GTEST_SKIP() << "cannot give a file away: " << strerror(errno);
    }
  }
  EXPECT_EQ(*ReclaimStale(prefix_), 0);
  EXPECT_THAT(ShmNamesWithPrefix(prefix_),
              UnorderedElementsAre(dead_creators, theirs_malformed));
}

}  // namespace
}  // namespace shm
}  // namespace fabric
