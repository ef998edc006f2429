// The shared completion queue: fi_cq_* through the C API on a tcp domain,
// with completions posted by CqWrite/CqWriteError as a provider posts them.
#include "fabric/providers/util/cq.h"

#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fabric/fixtures/loopback_domain_test.h"
#include "fabric/providers/util/progress.h"
#include "gtest/gtest.h"

namespace {

using fabric::AsUtilCq;
using fabric::CqWrite;
using fabric::CqWriteError;

class CqTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void SetUp() override {
    OpenDomain([](fi_info* hints) { hints->ep_attr->type = FI_EP_RDM; });
  }
  void TearDown() override {
    if (cq_ != nullptr) {
      EXPECT_EQ(fi_close(&cq_->fid), 0);
    }
    LoopbackDomainTest::TearDown();
  }

  int OpenCq(fi_cq_format format, fi_wait_obj wait = FI_WAIT_NONE,
             size_t size = 0,
             fi_cq_wait_cond wait_cond = FI_CQ_COND_NONE) {
    fi_cq_attr attr = {};
    attr.size = size;
    attr.format = format;
    attr.wait_obj = wait;
    attr.wait_cond = wait_cond;
    return fi_cq_open(domain_, &attr, &cq_, &context_);
  }

  // A completion whose every field says `n`.
  int Post(uint64_t n, fi_addr_t source = FI_ADDR_NOTAVAIL) {
    fi_cq_tagged_entry entry;
    entry.op_context = reinterpret_cast<void*>(n);
    entry.flags = FI_RECV | FI_MSG;
    entry.len = n;
    entry.buf = reinterpret_cast<void*>(n + 1);
    entry.data = n + 2;
    entry.tag = n + 3;
    return CqWrite(AsUtilCq(&cq_->fid), entry, source);
  }

  fid_cq* cq_ = nullptr;
  int context_ = 0;
};

TEST_F(CqTest, EachFormatReturnsItsPrefix) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_TAGGED), 0);
  EXPECT_EQ(cq_->fid.fclass, FI_CLASS_CQ);
  ASSERT_EQ(Post(10), 0);
  ASSERT_EQ(Post(20), 0);
  fi_cq_tagged_entry tagged[4];
  ASSERT_EQ(fi_cq_read(cq_, tagged, 4), 2);
  EXPECT_EQ(tagged[0].op_context, reinterpret_cast<void*>(10));
  EXPECT_EQ(tagged[0].flags, FI_RECV | FI_MSG);
  EXPECT_EQ(tagged[0].len, 10u);
  EXPECT_EQ(tagged[0].buf, reinterpret_cast<void*>(11));
  EXPECT_EQ(tagged[0].data, 12u);
  EXPECT_EQ(tagged[0].tag, 13u);
  EXPECT_EQ(tagged[1].len, 20u);
  EXPECT_EQ(fi_cq_read(cq_, tagged, 4), -FI_EAGAIN);
  ASSERT_EQ(fi_close(&cq_->fid), 0);

  // CONTEXT (also for UNSPEC): packed fi_cq_entry, nothing written past them.
  for (fi_cq_format format : {FI_CQ_FORMAT_UNSPEC, FI_CQ_FORMAT_CONTEXT}) {
    cq_ = nullptr;
    ASSERT_EQ(OpenCq(format), 0);
    ASSERT_EQ(Post(1), 0);
    ASSERT_EQ(Post(2), 0);
    fi_cq_entry entries[3];
    memset(entries, 0xab, sizeof(entries));
    ASSERT_EQ(fi_cq_read(cq_, entries, 3), 2);
    EXPECT_EQ(entries[0].op_context, reinterpret_cast<void*>(1));
    EXPECT_EQ(entries[1].op_context, reinterpret_cast<void*>(2));
    EXPECT_EQ(entries[2].op_context, reinterpret_cast<void*>(0xabababababababab));
    ASSERT_EQ(fi_close(&cq_->fid), 0);
  }
  cq_ = nullptr;
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_MSG), 0);
  ASSERT_EQ(Post(3), 0);
  fi_cq_msg_entry msg;
  ASSERT_EQ(fi_cq_read(cq_, &msg, 1), 1);
  EXPECT_EQ(msg.len, 3u);
  ASSERT_EQ(fi_close(&cq_->fid), 0);
  cq_ = nullptr;
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_DATA), 0);
  ASSERT_EQ(Post(4), 0);
  fi_cq_data_entry data;
  ASSERT_EQ(fi_cq_read(cq_, &data, 1), 1);
  EXPECT_EQ(data.data, 6u);
}

TEST_F(CqTest, ReadFromReportsSources) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT), 0);
  ASSERT_EQ(Post(1, 42), 0);
  ASSERT_EQ(Post(2), 0);
  fi_cq_entry entries[2];
  fi_addr_t sources[2] = {0, 0};
  ASSERT_EQ(fi_cq_readfrom(cq_, entries, 2, sources), 2);
  EXPECT_EQ(sources[0], 42u);
  EXPECT_EQ(sources[1], FI_ADDR_NOTAVAIL);
}

TEST_F(CqTest, ErrorsStopReadsUntilReaderr) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT), 0);
  ASSERT_EQ(Post(1), 0);
  std::vector<char> detail(info_->domain_attr->max_err_data + 100, 'd');
  fi_cq_err_entry error = {};
  error.op_context = &context_;
  error.err = FI_ETRUNC;
  error.olen = 5;
  error.prov_errno = -7;
  error.err_data = detail.data();
  error.err_data_size = detail.size();
  ASSERT_EQ(CqWriteError(AsUtilCq(&cq_->fid), error), 0);
  ASSERT_EQ(Post(2), 0);

  fi_cq_entry entries[4];
  EXPECT_EQ(fi_cq_read(cq_, entries, 4), 1);  // stops before the error
  EXPECT_EQ(fi_cq_read(cq_, entries, 4), -FI_EAVAIL);
  fi_cq_err_entry out = {};
  ASSERT_EQ(fi_cq_readerr(cq_, &out, 0), 1);
  EXPECT_EQ(out.op_context, &context_);
  EXPECT_EQ(out.err, FI_ETRUNC);
  EXPECT_EQ(out.olen, 5u);
  EXPECT_EQ(out.prov_errno, -7);
  // Cut to the domain's max_err_data.
  EXPECT_EQ(out.err_data_size, info_->domain_attr->max_err_data);
  EXPECT_EQ(memcmp(out.err_data, detail.data(), out.err_data_size), 0);
  EXPECT_EQ(fi_cq_readerr(cq_, &out, 0), -FI_EAGAIN);
  ASSERT_EQ(fi_cq_read(cq_, entries, 4), 1);
  EXPECT_EQ(entries[0].op_context, reinterpret_cast<void*>(2));
  char text[64];
  EXPECT_STREQ(fi_cq_strerror(cq_, FI_ETRUNC, nullptr, text, sizeof(text)),
               fi_strerror(FI_ETRUNC));
}

// Errors are queued apart from the completions: each keeps its place in the
// order and its own details, many of them at once.
TEST_F(CqTest, ManyErrorsKeepTheirOrderAndDetails) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT), 0);
  constexpr int kRounds = 40;  // past the queues' first growths
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_EQ(Post(static_cast<uint64_t>(i)), 0);
    std::string detail = "error " + std::to_string(i);
    fi_cq_err_entry error = {};
    error.op_context = reinterpret_cast<void*>(1000 + i);
    error.err = FI_EIO;
    error.prov_errno = i;
    error.err_data = detail.data();
    error.err_data_size = detail.size();
    ASSERT_EQ(CqWriteError(AsUtilCq(&cq_->fid), error), 0);
  }
  for (int i = 0; i < kRounds; ++i) {
    fi_cq_entry entries[4];
    ASSERT_EQ(fi_cq_read(cq_, entries, 4), 1);
    EXPECT_EQ(entries[0].op_context, reinterpret_cast<void*>(i));
    EXPECT_EQ(fi_cq_read(cq_, entries, 4), -FI_EAVAIL);
    fi_cq_err_entry out = {};
    ASSERT_EQ(fi_cq_readerr(cq_, &out, 0), 1);
    EXPECT_EQ(out.op_context, reinterpret_cast<void*>(1000 + i));
    EXPECT_EQ(out.prov_errno, i);
    std::string expected = "error " + std::to_string(i);
    ASSERT_EQ(out.err_data_size, expected.size());
    EXPECT_EQ(std::string(static_cast<char*>(out.err_data), out.err_data_size),
              expected);
  }
  fi_cq_entry entry;
  EXPECT_EQ(fi_cq_read(cq_, &entry, 1), -FI_EAGAIN);
}

// A completion is never lost: past its size a CQ keeps entries (and errors)
// in order and refuses reservations until they are read; it is full while
// it holds its size in entries (promises do not count).
TEST_F(CqTest, FullCqKeepsCompletionsAndRefusesReservations) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 2), 0);
  fabric::UtilCq* cq = AsUtilCq(&cq_->fid);
  EXPECT_FALSE(fabric::CqFull(cq));
  ASSERT_EQ(Post(1), 0);
  ASSERT_EQ(Post(2), 0);
  EXPECT_TRUE(fabric::CqFull(cq));
  EXPECT_EQ(fabric::CqReserve(cq), -FI_EAGAIN);
  ASSERT_EQ(Post(3), 0);
  fi_cq_err_entry error = {};
  error.op_context = reinterpret_cast<void*>(4);
  error.err = FI_EIO;
  ASSERT_EQ(CqWriteError(cq, error), 0);
  ASSERT_EQ(Post(5), 0);
  fi_cq_entry entries[8];
  ASSERT_EQ(fi_cq_read(cq_, entries, 8), 3);
  for (uintptr_t i = 0; i < 3; ++i) {
    EXPECT_EQ(entries[i].op_context, reinterpret_cast<void*>(i + 1));
  }
  EXPECT_TRUE(fabric::CqFull(cq));  // the error and entry 5 still fill it
  fi_cq_err_entry out = {};
  ASSERT_EQ(fi_cq_readerr(cq_, &out, 0), 1);
  EXPECT_EQ(out.op_context, reinterpret_cast<void*>(4));
  EXPECT_EQ(out.err, FI_EIO);
  EXPECT_FALSE(fabric::CqFull(cq));
  ASSERT_EQ(fabric::CqReserve(cq), 0);  // one promise and entry 5: no room
  EXPECT_FALSE(fabric::CqFull(cq));     // but only one entry to read
  EXPECT_EQ(fabric::CqReserve(cq), -FI_EAGAIN);
  ASSERT_EQ(fi_cq_read(cq_, entries, 8), 1);
  EXPECT_EQ(entries[0].op_context, reinterpret_cast<void*>(5));
  fi_cq_tagged_entry reserved = {};
  reserved.op_context = reinterpret_cast<void*>(6);
  ASSERT_EQ(CqWrite(cq, reserved, FI_ADDR_NOTAVAIL, /*reserved=*/true), 0);
  ASSERT_EQ(fi_cq_read(cq_, entries, 8), 1);
  EXPECT_EQ(entries[0].op_context, reinterpret_cast<void*>(6));
  EXPECT_FALSE(fabric::CqFull(cq));
}

TEST_F(CqTest, SreadTimeoutThresholdAndSignal) {
  size_t threshold = 3;
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC, 0,
                   FI_CQ_COND_THRESHOLD),
            0);
  fi_cq_entry entries[8];
  EXPECT_EQ(fi_cq_sread(cq_, entries, 8, nullptr, 10), -FI_EAGAIN);
  ASSERT_EQ(Post(1), 0);
  // One entry is below the threshold of three: still a timeout.
  EXPECT_EQ(fi_cq_sread(cq_, entries, 8, &threshold, 10), -FI_EAGAIN);
  std::thread poster([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(Post(2), 0);
    EXPECT_EQ(Post(3), 0);
  });
  EXPECT_EQ(fi_cq_sread(cq_, entries, 8, &threshold, -1), 3);
  poster.join();

  std::thread signaller([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(fi_cq_signal(cq_), 0);
  });
  EXPECT_EQ(fi_cq_sread(cq_, entries, 8, nullptr, -1), -FI_ECANCELED);
  signaller.join();
}

TEST_F(CqTest, WaitFdAndTrywait) {
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD), 0);
  int fd = -1;
  ASSERT_EQ(fi_control(&cq_->fid, FI_GETWAIT, &fd), 0);
  fid* objects[] = {&cq_->fid};
  pollfd p = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), 0);
  ASSERT_EQ(Post(1), 0);
  EXPECT_EQ(poll(&p, 1, 0), 1);
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), -FI_EAGAIN);
  fi_cq_entry entry;
  ASSERT_EQ(fi_cq_read(cq_, &entry, 1), 1);
  EXPECT_EQ(poll(&p, 1, 0), 0);
}

TEST_F(CqTest, BadArgumentsAndLimits) {
  fi_cq_attr attr = {};
  EXPECT_EQ(fi_cq_open(domain_, nullptr, &cq_, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_cq_open(domain_, &attr, nullptr, nullptr), -FI_EINVAL);
  attr.format = static_cast<fi_cq_format>(9);
  EXPECT_EQ(fi_cq_open(domain_, &attr, &cq_, nullptr), -FI_EINVAL);
  attr = {};
  attr.wait_cond = static_cast<fi_cq_wait_cond>(5);
  EXPECT_EQ(fi_cq_open(domain_, &attr, &cq_, nullptr), -FI_EINVAL);
  attr = {};
  attr.flags = FI_SEND;
  EXPECT_EQ(fi_cq_open(domain_, &attr, &cq_, nullptr), -FI_EBADFLAGS);
  attr = {};
  attr.wait_obj = FI_WAIT_SET;  // without a wait set
  EXPECT_EQ(fi_cq_open(domain_, &attr, &cq_, nullptr), -FI_EINVAL);
  EXPECT_EQ(cq_, nullptr);

  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT), 0);
  EXPECT_EQ(fi_cq_read(cq_, nullptr, 1), -FI_EINVAL);
  EXPECT_EQ(fi_cq_readerr(cq_, nullptr, 0), -FI_EINVAL);
  fi_cq_err_entry err = {};
  EXPECT_EQ(fi_cq_readerr(cq_, &err, FI_PEEK), -FI_EBADFLAGS);
  fi_cq_entry entry;
  EXPECT_EQ(fi_cq_sread(cq_, &entry, 1, nullptr, 0), -FI_EINVAL);  // no wait

  // The domain holds its CQs.
  EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);
}

TEST_F(CqTest, CqCountIsEnforced) {
  size_t limit = info_->domain_attr->cq_cnt;
  std::vector<fid_cq*> cqs;
  fi_cq_attr attr = {};
  for (size_t i = 0; i < limit; ++i) {
    fid_cq* cq = nullptr;
    ASSERT_EQ(fi_cq_open(domain_, &attr, &cq, nullptr), 0) << i;
    cqs.push_back(cq);
  }
  fid_cq* one_more = nullptr;
  EXPECT_EQ(fi_cq_open(domain_, &attr, &one_more, nullptr), -FI_ENOSPC);
  EXPECT_EQ(fi_close(&cqs.back()->fid), 0);
  cqs.pop_back();
  EXPECT_EQ(fi_cq_open(domain_, &attr, &one_more, nullptr), 0);
  cqs.push_back(one_more);
  for (fid_cq* cq : cqs) EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, ConcurrentPostersLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC, kThreads * kEach),
            0);
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([this, t] {
      for (int i = 0; i < kEach; ++i) EXPECT_EQ(Post(t * kEach + i), 0);
    });
  }
  std::vector<bool> seen(kThreads * kEach, false);
  int read = 0;
  while (read < kThreads * kEach) {
    fi_cq_entry entries[16];
    ssize_t n = fi_cq_sread(cq_, entries, 16, nullptr, -1);
    ASSERT_GT(n, 0);
    for (ssize_t i = 0; i < n; ++i) {
      auto value = reinterpret_cast<uintptr_t>(entries[i].op_context);
      ASSERT_LT(value, seen.size());
      EXPECT_FALSE(seen[value]);
      seen[value] = true;
    }
    read += n;
  }
  for (std::thread& poster : posters) poster.join();
}

// A producer with a queue of its own (as a verbs endpoint's device CQ):
// `pending` completions, handed out oldest first; counts the reads that
// asked it.
class QueueProducer final : public fabric::CqDirectProducer {
 public:
  size_t ReadDirect(fabric::UtilCq* cq, void* buf, size_t count,
                    fi_addr_t*) override {
    ++asked;
    size_t n = 0;
    for (; n < count && pending > 0; ++n, --pending) {
      fi_cq_tagged_entry entry = {};
      entry.op_context = reinterpret_cast<void*>(next++);
      fabric::CqStoreEntry(*cq, entry, buf, n);
    }
    return n;
  }
  int asked = 0;
  int pending = 0;
  uintptr_t next = 1;
};

// A progress source of the domain that counts its passes.
class CountingSource final : public fabric::ProgressSource {
 public:
  ~CountingSource() override { close(fd_); }
  void Progress() override { ++runs; }
  int progress_fd() const override { return fd_; }
  bool auto_progress() const override { return false; }
  bool always_run() const override { return true; }
  int runs = 0;

 private:
  int fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
};

// A CQ with a QueueProducer as its direct producer and a CountingSource
// in its domain's engine, in a domain of the given data progress.
class DirectCqTest : public CqTest,
                     public ::testing::WithParamInterface<fi_progress> {
 protected:
  void SetUp() override {
    OpenDomain([](fi_info* hints) {
      hints->ep_attr->type = FI_EP_RDM;
      hints->domain_attr->data_progress = GetParam();
    });
    ASSERT_EQ(OpenCq(FI_CQ_FORMAT_CONTEXT), 0);
    domain()->progress->Add(&source_);
    fabric::CqSetDirect(AsUtilCq(&cq_->fid), &producer_, 0);  // no endpoint
  }
  void TearDown() override {
    if (cq_ != nullptr) {
      fabric::CqClearDirect(AsUtilCq(&cq_->fid), &producer_);
    }
    if (domain_ != nullptr) domain()->progress->Remove(&source_);
    CqTest::TearDown();
  }
  fabric::UtilDomain* domain() {
    return fabric::FidCast<fabric::UtilDomain>(domain_);
  }

  QueueProducer producer_;
  CountingSource source_;
};

// While a direct producer finds nothing, fi_cq_read asks it every time and
// (with manual progress) runs the domain's progress pass once in
// kDirectProgressInterval reads; what it holds comes straight out, in
// order, without a pass.
TEST_P(DirectCqTest, EmptyReadsRunProgressNowAndThen) {
  const int reads = 2 * fabric::kDirectProgressInterval;
  const bool manual = GetParam() == FI_PROGRESS_MANUAL;
  fi_cq_entry entry;
  for (int i = 0; i < reads; ++i) {
    ASSERT_EQ(fi_cq_read(cq_, &entry, 1), -FI_EAGAIN);
  }
  EXPECT_EQ(producer_.asked, reads);
  const int runs = manual ? 2 : reads;  // automatic progress: every read
  EXPECT_EQ(source_.runs, runs);
  producer_.pending = 3;
  fi_cq_entry entries[4];
  ASSERT_EQ(fi_cq_read(cq_, entries, 4), 3);
  for (uintptr_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(entries[i].op_context), i + 1);
  }
  EXPECT_EQ(source_.runs, runs);
  // An entry queued meanwhile is read without asking the producer.
  ASSERT_EQ(Post(7), 0);
  ASSERT_EQ(fi_cq_read(cq_, &entry, 1), 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(entry.op_context), 7u);
  EXPECT_EQ(producer_.asked, reads + 1);
  // Without a producer every empty read runs the pass.
  fabric::CqClearDirect(AsUtilCq(&cq_->fid), &producer_);
  ASSERT_EQ(fi_cq_read(cq_, &entry, 1), -FI_EAGAIN);
  EXPECT_EQ(source_.runs, runs + 1);
  EXPECT_EQ(producer_.asked, reads + 1);
}

INSTANTIATE_TEST_SUITE_P(Progress, DirectCqTest,
                         ::testing::Values(FI_PROGRESS_MANUAL,
                                           FI_PROGRESS_AUTO));

// Before API 1.5, fi_cq_err_entry had no err_data_size: it is not written.
TEST(CqOldApiTest, ReaderrLeavesErrDataSizeAlone) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  fi_info* info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 4), nullptr, nullptr, 0, hints, &info),
            0);
  fi_freeinfo(hints);
  EXPECT_EQ(info->fabric_attr->api_version, FI_VERSION(1, 4));
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
  fi_cq_attr attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(domain, &attr, &cq, nullptr), 0);
  char detail[] = "x";
  fi_cq_err_entry error = {};
  error.err = FI_EIO;
  error.err_data = detail;
  error.err_data_size = sizeof(detail);
  ASSERT_EQ(CqWriteError(AsUtilCq(&cq->fid), error), 0);
  fi_cq_err_entry out;
  memset(&out, 0, sizeof(out));
  out.err_data_size = 0x5a5a;
  ASSERT_EQ(fi_cq_readerr(cq, &out, 0), 1);
  EXPECT_EQ(out.err, FI_EIO);
  EXPECT_NE(out.err_data, nullptr);
  EXPECT_EQ(out.err_data_size, 0x5a5au);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
  fi_freeinfo(info);
}

}  // namespace
