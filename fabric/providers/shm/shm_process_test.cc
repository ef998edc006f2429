#include "fabric/providers/shm/shm_process.h"

#include <rdma/fi_errno.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

TEST(ShmProcessTest, OwnStartTimeIsStableAndAlive) {
  absl::StatusOr<uint64_t> start = ProcessStartTime(getpid());
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_GT(*start, 0u);
  EXPECT_EQ(*ProcessStartTime(getpid()), *start);
  EXPECT_TRUE(IsPidAlive(getpid()));
  EXPECT_TRUE(IsAlive(getpid(), *start));
}

TEST(ShmProcessTest, AnotherStartTimeIsAnotherProcess) {
  uint64_t start = *ProcessStartTime(getpid());
  EXPECT_FALSE(IsAlive(getpid(), start + 1));
  EXPECT_FALSE(IsAlive(getpid(), start - 1));
}

TEST(ShmProcessTest, OwnPidNamespaceIsThatOfProcSelf) {
  absl::StatusOr<uint64_t> ns = OwnPidNamespace();
  ASSERT_TRUE(ns.ok()) << ns.status();
  struct stat st;
  ASSERT_EQ(stat(absl::StrCat("/proc/", getpid(), "/ns/pid").c_str(), &st), 0);
  EXPECT_EQ(*ns, st.st_ino);
}

TEST(ShmProcessTest, BadPidsAreNotAlive) {
  EXPECT_FALSE(IsPidAlive(0));
  EXPECT_FALSE(IsPidAlive(-1));
  EXPECT_EQ(ToFiErrno(ProcessStartTime(-5).status()), -FI_EINVAL);
}

// A command name with spaces and ')' must not shift the fields after it.
TEST(ShmProcessTest, StartTimeParsesAroundAnOddCommandName) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "a) b ) (c");
    char byte;
    _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
  }
  // The child shares our start time's clock tick or a later one.
  absl::StatusOr<uint64_t> start = ProcessStartTime(child);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_GE(*start, *ProcessStartTime(getpid()));
  EXPECT_TRUE(IsAlive(child, *start));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ShmProcessTest, ZombieAndReapedChildAreDead) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // Waits for the exit but leaves the child a zombie.
  siginfo_t info;
  ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  absl::StatusOr<uint64_t> start = ProcessStartTime(child);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_FALSE(IsPidAlive(child));
  EXPECT_FALSE(IsAlive(child, *start));
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(IsPidAlive(child));
  EXPECT_FALSE(IsAlive(child, *start));
  EXPECT_EQ(ToFiErrno(ProcessStartTime(child).status()), -FI_ENOENT);
}

}  // namespace
}  // namespace shm
}  // namespace fabric
