// The shared event queue through the C API (fi_eq_open on a tcp fabric),
// plus EqPost/EqPostError, which providers use for their own events.
#include "fabric/providers/util/eq.h"

#include <poll.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <time.h>

#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr uint32_t kVersion = FI_VERSION(1, 18);

class EqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fi_info* hints = fi_allocinfo();
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->domain_attr->name = strdup("lo");
    ASSERT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, hints, &info_), 0);
    fi_freeinfo(hints);
    ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
  }
  void TearDown() override {
    if (eq_ != nullptr) {
      EXPECT_EQ(fi_close(&eq_->fid), 0);
    }
    EXPECT_EQ(fi_close(&fabric_->fid), 0);
    fi_freeinfo(info_);
  }

  int Open(fi_wait_obj wait, uint64_t flags = FI_WRITE, size_t size = 0) {
    fi_eq_attr attr = {};
    attr.size = size;
    attr.flags = flags;
    attr.wait_obj = wait;
    return fi_eq_open(fabric_, &attr, &eq_, &context_);
  }

  ssize_t Write(uint64_t data) {
    fi_eq_entry entry = {};
    entry.context = &context_;
    entry.data = data;
    return fi_eq_write(eq_, FI_NOTIFY, &entry, sizeof(entry), 0);
  }

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_eq* eq_ = nullptr;
  int context_ = 0;
};

TEST_F(EqTest, WrittenEventsAreReadInOrder) {
  ASSERT_EQ(Open(FI_WAIT_NONE), 0);
  EXPECT_EQ(eq_->fid.fclass, FI_CLASS_EQ);
  EXPECT_EQ(eq_->fid.context, &context_);
  uint32_t event = 99;
  fi_eq_entry entry = {};
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), -FI_EAGAIN);
  ASSERT_EQ(Write(1), static_cast<ssize_t>(sizeof(fi_eq_entry)));
  ASSERT_EQ(Write(2), static_cast<ssize_t>(sizeof(fi_eq_entry)));

  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), FI_PEEK),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(entry.data, 1u);
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_NOTIFY));
  EXPECT_EQ(entry.data, 1u);
  EXPECT_EQ(entry.context, &context_);
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(entry.data, 2u);
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), -FI_EAGAIN);
}

TEST_F(EqTest, FullQueueRefusesAndShortBufferKeepsTheEntry) {
  ASSERT_EQ(Open(FI_WAIT_NONE, FI_WRITE, 2), 0);
  ASSERT_GT(Write(1), 0);
  ASSERT_GT(Write(2), 0);
  EXPECT_EQ(Write(3), -FI_EAGAIN);
  uint32_t event;
  char small[4];
  EXPECT_EQ(fi_eq_read(eq_, &event, small, sizeof(small), 0), -FI_ETOOSMALL);
  fi_eq_entry entry = {};
  EXPECT_GT(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), 0);
  EXPECT_EQ(entry.data, 1u);
}

TEST_F(EqTest, ErrorEntriesComeThroughReaderr) {
  ASSERT_EQ(Open(FI_WAIT_NONE), 0);
  char detail[] = "provider detail";
  fi_eq_err_entry error = {};
  error.context = &context_;
  error.err = FI_ECONNREFUSED;
  error.prov_errno = 111;
  error.err_data = detail;
  error.err_data_size = sizeof(detail);
  ASSERT_EQ(fabric::EqPostError(eq_, error), 0);
  ASSERT_EQ(fabric::EqPostError(eq_, error), 0);
  ASSERT_GT(Write(7), 0);

  uint32_t event;
  fi_eq_entry entry;
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), -FI_EAVAIL);
  // The library's own err_data buffer.
  fi_eq_err_entry out = {};
  EXPECT_EQ(fi_eq_readerr(eq_, &out, 0),
            static_cast<ssize_t>(sizeof(fi_eq_err_entry)));
  EXPECT_EQ(out.err, FI_ECONNREFUSED);
  EXPECT_EQ(out.prov_errno, 111);
  EXPECT_EQ(out.context, &context_);
  ASSERT_EQ(out.err_data_size, sizeof(detail));
  EXPECT_STREQ(static_cast<char*>(out.err_data), detail);
  EXPECT_NE(out.err_data, static_cast<void*>(detail));
  // The application's buffer (API >= 1.5): filled up to its size.
  char mine[8] = {};
  out = {};
  out.err_data = mine;
  out.err_data_size = sizeof(mine);
  EXPECT_GT(fi_eq_readerr(eq_, &out, 0), 0);
  EXPECT_EQ(out.err_data, static_cast<void*>(mine));
  EXPECT_EQ(out.err_data_size, sizeof(mine));
  EXPECT_EQ(memcmp(mine, detail, sizeof(mine)), 0);

  EXPECT_EQ(fi_eq_readerr(eq_, &out, 0), -FI_EAGAIN);
  EXPECT_GT(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), 0);
  EXPECT_EQ(entry.data, 7u);
  char text[64];
  EXPECT_STREQ(fi_eq_strerror(eq_, FI_ECONNREFUSED, nullptr, text,
                              sizeof(text)),
               fi_strerror(FI_ECONNREFUSED));
}

TEST_F(EqTest, BadArgumentsAreRejected) {
  fi_eq_attr attr = {};
  EXPECT_EQ(fi_eq_open(fabric_, nullptr, &eq_, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_eq_open(fabric_, &attr, nullptr, nullptr), -FI_EINVAL);
  attr.flags = FI_SEND;
  EXPECT_EQ(fi_eq_open(fabric_, &attr, &eq_, nullptr), -FI_EBADFLAGS);
  attr.flags = 0;
  attr.wait_obj = static_cast<fi_wait_obj>(99);
  EXPECT_EQ(fi_eq_open(fabric_, &attr, &eq_, nullptr), -FI_EINVAL);
  attr.wait_obj = FI_WAIT_SET;  // without a wait set
  EXPECT_EQ(fi_eq_open(fabric_, &attr, &eq_, nullptr), -FI_EINVAL);
  EXPECT_EQ(eq_, nullptr);

  ASSERT_EQ(Open(FI_WAIT_NONE, /*flags=*/0), 0);
  EXPECT_EQ(Write(1), -FI_EINVAL);  // not opened with FI_WRITE
  uint32_t event;
  fi_eq_entry entry;
  EXPECT_EQ(fi_eq_read(eq_, nullptr, &entry, sizeof(entry), 0), -FI_EINVAL);
  EXPECT_EQ(fi_eq_read(eq_, &event, nullptr, sizeof(entry), 0), -FI_EINVAL);
  EXPECT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), FI_SEND),
            -FI_EBADFLAGS);
  EXPECT_EQ(fi_eq_readerr(eq_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_eq_sread(eq_, &event, &entry, sizeof(entry), 0, 0),
            -FI_EINVAL);  // FI_WAIT_NONE cannot block
}

TEST_F(EqTest, SreadTimesOutAndWakesOnWrite) {
  ASSERT_EQ(Open(FI_WAIT_UNSPEC), 0);
  uint32_t event;
  fi_eq_entry entry = {};
  EXPECT_EQ(fi_eq_sread(eq_, &event, &entry, sizeof(entry), 10, 0),
            -FI_EAGAIN);
  std::thread writer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GT(Write(5), 0);
  });
  EXPECT_EQ(fi_eq_sread(eq_, &event, &entry, sizeof(entry), -1, 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(entry.data, 5u);
  writer.join();
}

bool Readable(int fd) {
  pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

TEST_F(EqTest, WaitFdIsReadableWhileEntriesWait) {
  ASSERT_EQ(Open(FI_WAIT_FD), 0);
  int fd = -1;
  ASSERT_EQ(fi_control(&eq_->fid, FI_GETWAIT, &fd), 0);
  ASSERT_GE(fd, 0);
  fi_wait_obj kind;
  ASSERT_EQ(fi_control(&eq_->fid, FI_GETWAITOBJ, &kind), 0);
  EXPECT_EQ(kind, FI_WAIT_FD);
  fid* objects[] = {&eq_->fid};
  EXPECT_FALSE(Readable(fd));
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), 0);
  ASSERT_GT(Write(1), 0);
  ASSERT_GT(Write(2), 0);
  EXPECT_TRUE(Readable(fd));
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), -FI_EAGAIN);
  uint32_t event;
  fi_eq_entry entry;
  ASSERT_GT(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), 0);
  EXPECT_TRUE(Readable(fd));  // one entry left
  ASSERT_GT(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), 0);
  EXPECT_FALSE(Readable(fd));
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), 0);
  fid* not_an_eq[] = {&fabric_->fid};
  EXPECT_EQ(fi_trywait(fabric_, not_an_eq, 1), -FI_EINVAL);
}

TEST_F(EqTest, WaitPollfdListsOneReadableFd) {
  ASSERT_EQ(Open(FI_WAIT_POLLFD), 0);
  fi_wait_pollfd pollfds = {};
  EXPECT_EQ(fi_control(&eq_->fid, FI_GETWAIT, &pollfds), -FI_ETOOSMALL);
  EXPECT_EQ(pollfds.nfds, 1u);
  pollfd fd = {};
  pollfds.fd = &fd;
  ASSERT_EQ(fi_control(&eq_->fid, FI_GETWAIT, &pollfds), 0);
  EXPECT_EQ(pollfds.nfds, 1u);
  EXPECT_EQ(fd.events, POLLIN);
  EXPECT_FALSE(Readable(fd.fd));
  ASSERT_GT(Write(1), 0);
  EXPECT_TRUE(Readable(fd.fd));
}

TEST_F(EqTest, MutexCondIsSignalledOnWrite) {
  ASSERT_EQ(Open(FI_WAIT_MUTEX_COND), 0);
  fi_mutex_cond mutex_cond = {};
  ASSERT_EQ(fi_control(&eq_->fid, FI_GETWAIT, &mutex_cond), 0);
  ASSERT_NE(mutex_cond.mutex, nullptr);
  ASSERT_NE(mutex_cond.cond, nullptr);
  // The writer needs the mutex, which it gets only once this thread waits.
  pthread_mutex_lock(mutex_cond.mutex);
  std::thread writer([this] { EXPECT_GT(Write(3), 0); });
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  EXPECT_EQ(pthread_cond_timedwait(mutex_cond.cond, mutex_cond.mutex,
                                   &deadline),
            0);
  pthread_mutex_unlock(mutex_cond.mutex);
  writer.join();
  uint32_t event;
  fi_eq_entry entry;
  EXPECT_GT(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0), 0);
}

TEST_F(EqTest, EqHoldsItsFabric) {
  ASSERT_EQ(Open(FI_WAIT_NONE), 0);
  EXPECT_EQ(fi_close(&fabric_->fid), -FI_EBUSY);
  // A connection request the application never reads is freed with the EQ.
  fi_eq_cm_entry cm = {};
  cm.info = fi_dupinfo(info_);
  ASSERT_GT(fabric::EqPost(eq_, FI_CONNREQ, &cm, sizeof(cm)), 0);
}

TEST_F(EqTest, ConcurrentWritersLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  ASSERT_EQ(Open(FI_WAIT_UNSPEC, FI_WRITE, kThreads * kEach), 0);
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([this, t] {
      for (int i = 0; i < kEach; ++i) EXPECT_GT(Write(t * kEach + i), 0);
    });
  }
  std::vector<bool> seen(kThreads * kEach, false);
  for (int n = 0; n < kThreads * kEach; ++n) {
    uint32_t event;
    fi_eq_entry entry = {};
    ASSERT_GT(fi_eq_sread(eq_, &event, &entry, sizeof(entry), -1, 0), 0);
    ASSERT_LT(entry.data, seen.size());
    EXPECT_FALSE(seen[entry.data]);
    seen[entry.data] = true;
  }
  for (std::thread& writer : writers) writer.join();
}

}  // namespace
