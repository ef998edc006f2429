// shm FI_EP_RDM endpoints in one process: discovery, messages both ways
// with FI_SOURCE, large messages through small rings, tagged messages, RMA
// and atomics, blocking reads woken by the peer's doorbell, and the
// segments: private to the user and gone after close.
#include <netinet/in.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/log_capture.h"
#include "fabric/api/core/address.h"
#include "fabric/fixtures/av_pair_test.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/shm/shm_names.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// One CQ each, for both directions (cq).
using End = fixtures::AvEndpoint;

// The /dev/shm entries of this user whose names start with `prefix`.
std::vector<std::string> ShmFiles(const std::string& prefix) {
  std::vector<std::string> names;
  std::string mine = absl::StrCat(prefix, "-", geteuid(), "-");
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    std::string name = entry.path().filename().string();
    if (name.rfind(mine, 0) == 0) names.push_back(name);
  }
  return names;
}

class ShmRdmTest : public fixtures::AvPairTest {
 protected:
  void SetUp() override {
    fixtures::AvEndpointOptions options;
    options.cq_wait = FI_WAIT_UNSPEC;
    OpenPair(
        FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SOURCE | FI_DIRECTED_RECV,
        [this](fi_info* hints) {
          fixtures::UseShm(hints, data_progress_);
          hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
          hints->domain_attr->av_type = FI_AV_TABLE;
        },
        options);
  }

  // An endpoint in a domain of its own, whose AV holds b_: its calls
  // advance only its own domain.
  struct FarEnd : fixtures::Objects {
    fi_addr_t to_b = FI_ADDR_NOTAVAIL;
  };

  void OpenFar(FarEnd* far) {
    ASSERT_EQ(fi_domain(loopback_.fabric, loopback_.info, &far->domain,
                        nullptr),
              0);
    ASSERT_EQ(fixtures::OpenTableAv(far->domain, &far->av), 0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(far->domain, &cq_attr, &far->cq, nullptr), 0);
    ASSERT_EQ(fixtures::OpenBoundEndpoint(far->domain, loopback_.info, far->av,
                                          far->cq, &far->ep),
              0);
    sockaddr_in name = {};
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&b_.ep->fid, &name, &len), 0);
    ASSERT_EQ(fi_av_insert(far->av, &name, 1, &far->to_b, 0, nullptr), 1);
  }

  fi_progress data_progress_ = FI_PROGRESS_UNSPEC;  // the provider's default
};

// Endpoints opened with FI_SHM_CMA=0: large messages go through the rings.
class ShmRdmNoCmaTest : public ShmRdmTest {
 protected:
  void SetUp() override {
    setenv("FI_SHM_CMA", "0", 1);
    ShmRdmTest::SetUp();
  }
  void TearDown() override {
    ShmRdmTest::TearDown();
    unsetenv("FI_SHM_CMA");
  }
};

// Nothing moves except inside the application's calls.
class ShmRdmManualTest : public ShmRdmTest {
 protected:
  void SetUp() override {
    data_progress_ = FI_PROGRESS_MANUAL;
    ShmRdmTest::SetUp();
  }
};

// Progress runs on the engine's own thread too.
class ShmRdmAutoTest : public ShmRdmTest {
 protected:
  void SetUp() override {
    data_progress_ = FI_PROGRESS_AUTO;
    ShmRdmTest::SetUp();
  }
};

TEST_F(ShmRdmTest, DiscoveryOffersLocalRdm) {
  const fi_info& info = *loopback_.info;
  EXPECT_STREQ(info.fabric_attr->prov_name, "shm");
  EXPECT_STREQ(info.fabric_attr->name, "shm");
  EXPECT_STREQ(info.domain_attr->name, "shm");
  EXPECT_EQ(info.ep_attr->type, FI_EP_RDM);
  EXPECT_EQ(info.ep_attr->protocol, static_cast<uint32_t>(FI_PROTO_SHM));
  EXPECT_NE(info.caps & FI_LOCAL_COMM, 0u);
  EXPECT_EQ(info.caps & FI_REMOTE_COMM, 0u);
}

TEST_F(ShmRdmTest, MessagesBothWaysReportTheirSource) {
  for (int round = 0; round < 3; ++round) {
    for (auto [from, to] : {std::pair<End*, End*>{&a_, &b_}, {&b_, &a_}}) {
      char in[64] = {};
      ASSERT_EQ(fi_recv(to->ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC,
                        nullptr),
                0);
      std::string text = absl::StrCat("round ", round);
      int context;
      ASSERT_EQ(fi_send(from->ep, text.c_str(), text.size() + 1, nullptr,
                        to->addr, &context),
                0);
      fi_cq_tagged_entry entry;
      fi_addr_t source = FI_ADDR_NOTAVAIL;
      ASSERT_EQ(Wait(to->cq, &entry, &source), 1);
      EXPECT_STREQ(in, text.c_str());
      EXPECT_EQ(entry.len, text.size() + 1);
      EXPECT_EQ(source, from->addr);
      ASSERT_EQ(Wait(from->cq, &entry), 1);
      EXPECT_EQ(entry.op_context, &context);
    }
  }
}

// Large messages are copied straight from the sender's memory: both
// endpoints probe each other's memory when they connect, and say so.
TEST_F(ShmRdmTest, LargeMessagesAreCopiedFromTheSendersMemory) {
  LogCapture logs;
  constexpr size_t kSize = 1 << 20;
  for (auto [from, to] : {std::pair<End*, End*>{&a_, &b_}, {&b_, &a_}}) {
    std::vector<char> out(kSize), in(kSize);
    for (size_t i = 0; i < kSize; ++i) out[i] = static_cast<char>(i * 13 + 1);
    ASSERT_EQ(fi_recv(to->ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
    ASSERT_EQ(fi_send(from->ep, out.data(), out.size(), nullptr, to->addr,
                      nullptr),
              0);
    fi_cq_tagged_entry entry;
    ASSERT_EQ(Wait(to->cq, &entry), 1);
    EXPECT_EQ(entry.len, kSize);
    EXPECT_TRUE(in == out);
    ASSERT_EQ(Wait(from->cq, &entry), 1);
  }
  // One connection, a's to b (probed by b, then a): b's answers take it
  // back instead of making a second.
  EXPECT_EQ(logs.Count("copied from its memory"), 2);
}

// A large message is copied by both sides when the sender progresses
// meanwhile (kAssist): here a thread of its own reads the sender's CQ while
// the receiver copies. Each message must arrive intact whoever copied
// which chunk; the receiver logs how many chunks the sender took, and the
// sender must take some (a receiver that copies alone would pass the data
// checks: tried over up to 20 messages, as the thread may lose its CPU).
TEST_F(ShmRdmTest, TheSenderHelpsCopyLargeMessages) {
  // The sender in a domain of its own: the endpoints of one domain share
  // its progress, so one would wait for the other's copy to end.
  FarEnd far;
  OpenFar(&far);
  // A first message makes the connection, and the probes that tell each
  // side it may copy the other's memory.
  char hello[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, hello, sizeof(hello), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(far.ep, "hello", 6, nullptr, far.to_b, nullptr), 0);
  fi_cq_tagged_entry entry;
  auto hello_deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool received = false, sent_hello = false;
  while (!(received && sent_hello) &&
         std::chrono::steady_clock::now() < hello_deadline) {
    if (fi_cq_read(b_.cq, &entry, 1) == 1) received = true;
    if (fi_cq_read(far.cq, &entry, 1) == 1) sent_hello = true;
  }
  ASSERT_TRUE(received && sent_hello);

  LogCapture logs;
  // 64 chunks: about a millisecond of copying, time enough for the thread
  // to be scheduled even on a loaded machine.
  constexpr size_t kSize = 32 << 20;
  std::vector<char> out(kSize), in(kSize);
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread sender_progress([&] {
    fi_cq_tagged_entry done;
    while (!stop.load()) {
      if (fi_cq_read(far.cq, &done, 1) == 1) sent.fetch_add(1);
    }
  });
  // Stops the thread when an assertion returns early.
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& thread;
    bool joined = false;
    ~Joiner() {
      if (joined) return;
      stop.store(true);
      thread.join();
    }
  } joiner{stop, sender_progress};
  int messages = 0;
  bool helped = false;
  while (messages < 20 && !helped) {
    for (size_t i = 0; i < kSize; ++i) {
      out[i] = static_cast<char>(i * 31 + i / 4096 + messages);
    }
    std::fill(in.begin(), in.end(), 0);
    ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
    ASSERT_EQ(fi_send(far.ep, out.data(), out.size(), nullptr, far.to_b,
                      nullptr),
              0);
    ++messages;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    ssize_t rc = -FI_EAGAIN;
    while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
      rc = fi_cq_read(b_.cq, &entry, 1);
    }
    ASSERT_EQ(rc, 1);
    ASSERT_EQ(entry.len, kSize);
    ASSERT_EQ(memcmp(in.data(), out.data(), kSize), 0) << "message " << messages;
    // Each shared copy logs one line; those the receiver did alone say so.
    ASSERT_EQ(logs.Count("shared copy of 33554432 bytes"), messages);
    helped = logs.Count(": 0 of 64 chunks by the sender") < messages;
    // The send completes once the receiver answers; the next reuses `out`.
    auto sent_deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sent.load() < messages &&
           std::chrono::steady_clock::now() < sent_deadline) {
    }
    ASSERT_EQ(sent.load(), messages);
  }
  EXPECT_TRUE(helped) << "the sender took no chunk of " << messages
                      << " messages";
  stop.store(true);
  sender_progress.join();
  joiner.joined = true;
  EXPECT_EQ(fixtures::CloseObjects(&far), 0);
}

// FI_SHM_CMA=0: the same through the rings.
TEST_F(ShmRdmNoCmaTest, LargeMessagesCrossSmallRingsIntact) {
  constexpr size_t kSize = 4 << 20;  // 64 times a ring
  std::vector<char> out(kSize), in(kSize);
  for (size_t i = 0; i < kSize; ++i) out[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, a_.addr, nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, out.data(), out.size(), nullptr, b_.addr, nullptr),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.cq, &entry), 1);
  EXPECT_EQ(entry.len, kSize);
  EXPECT_EQ(memcmp(in.data(), out.data(), kSize), 0);
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
}

TEST_F(ShmRdmTest, TaggedMessagesMatchTheirTags) {
  uint64_t in[2] = {};
  ASSERT_EQ(fi_trecv(b_.ep, &in[0], sizeof(in[0]), nullptr, FI_ADDR_UNSPEC,
                     0x20, 0, &in[0]),
            0);
  ASSERT_EQ(fi_trecv(b_.ep, &in[1], sizeof(in[1]), nullptr, FI_ADDR_UNSPEC,
                     0x10, 0, &in[1]),
            0);
  uint64_t first = 111, second = 222;
  ASSERT_EQ(fi_tinject(a_.ep, &first, sizeof(first), b_.addr, 0x10), 0);
  ASSERT_EQ(fi_tinject(a_.ep, &second, sizeof(second), b_.addr, 0x20), 0);
  for (int i = 0; i < 2; ++i) {
    fi_cq_tagged_entry entry;
    ASSERT_EQ(Wait(b_.cq, &entry), 1);
  }
  EXPECT_EQ(in[0], 222u);
  EXPECT_EQ(in[1], 111u);
}

TEST_F(ShmRdmTest, RmaAndAtomicsReachTheTargetsMemory) {
  std::vector<uint64_t> target(16, 5);
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, target.data(),
                      target.size() * sizeof(uint64_t),
                      FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, nullptr),
            0);
  uint64_t key = fi_mr_key(mr);
  uint64_t base = reinterpret_cast<uint64_t>(target.data());
  uint64_t words[2] = {0xabc, 0xdef};
  ASSERT_EQ(fi_write(a_.ep, words, sizeof(words), nullptr, b_.addr, base, key,
                     nullptr),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(target[0], 0xabcu);
  EXPECT_EQ(target[1], 0xdefu);
  uint64_t back[2] = {};
  ASSERT_EQ(fi_read(a_.ep, back, sizeof(back), nullptr, b_.addr, base, key,
                    nullptr),
            0);
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(back[0], 0xabcu);
  EXPECT_EQ(back[1], 0xdefu);
  uint64_t add = 10;
  ASSERT_EQ(fi_atomic(a_.ep, &add, 1, nullptr, b_.addr, base + 8 * 5, key,
                      FI_UINT64, FI_SUM, nullptr),
            0);
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(target[5], 15u);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

// An application that sleeps in poll(2) on the CQ's wait fd (after
// fi_trywait) is woken by the sender ringing the endpoint's doorbell. The
// sender is in another domain, so nothing else runs the receiver's
// progress meanwhile.
TEST_F(ShmRdmManualTest, APollOnTheWaitFdWakesWhenThePeerSends) {
  FarEnd far;
  OpenFar(&far);
  char in[16] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  int fd = -1;
  ASSERT_EQ(fi_control(&b_.cq->fid, FI_GETWAIT, &fd), 0);
  std::atomic<bool> received{false};
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(fi_inject(far.ep, "wake", 5, far.to_b), 0);
    // The sender makes progress until the message is written (the
    // connection is accepted first).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!received.load() && std::chrono::steady_clock::now() < deadline) {
      fi_cq_read(far.cq, nullptr, 0);
    }
  });
  fi_cq_tagged_entry entry;
  ssize_t rc = -FI_EAGAIN;
  int sleeps = 0;
  auto start = std::chrono::steady_clock::now();
  while (rc == -FI_EAGAIN &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    fid* waiting[] = {&b_.cq->fid};
    if (fi_trywait(loopback_.fabric, waiting, 1) == 0) {
      pollfd ready = {fd, POLLIN, 0};
      poll(&ready, 1, 20000);
      ++sleeps;
    }
    rc = fi_cq_read(b_.cq, &entry, 1);
  }
  received = true;
  sender.join();
  ASSERT_EQ(rc, 1);
  EXPECT_STREQ(in, "wake");
  EXPECT_GE(sleeps, 1);
  EXPECT_EQ(fixtures::CloseObjects(&far), 0);
}

// A read of the receive CQ that takes its entries straight from the links
// (ShmRdmEpEvents::ReadDirect) and fills its buffer from one peer's link
// leaves the other links to the next reads: a peer with many messages
// waiting does not hold back another's.
TEST_F(ShmRdmManualTest, OnePeersBacklogDoesNotHoldBackAnothersMessage) {
  FarEnd far;
  OpenFar(&far);
  fi_cq_tagged_entry entry;
  // One entry of b_'s, the senders' reads (their progress) between tries.
  auto wait_b = [&]() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t rc = fi_cq_read(b_.cq, &entry, 1);
      if (rc != -FI_EAGAIN) return rc;
      fi_cq_read(a_.cq, nullptr, 0);
      fi_cq_read(far.cq, nullptr, 0);
    }
    return ssize_t{-FI_ETIMEDOUT};
  };
  // Connects a_ first, then far: a_'s link is the receiver's first.
  for (auto [ep, cq, to] : {std::tuple{a_.ep, a_.cq, b_.addr},
                            std::tuple{far.ep, far.cq, far.to_b}}) {
    char in[8];
    ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
              0);
    ASSERT_EQ(fi_send(ep, "hello", 6, nullptr, to, nullptr), 0);
    ASSERT_EQ(wait_b(), 1);
    ASSERT_EQ(Wait(cq, &entry), 1);
  }
  constexpr int kBacklog = 100;
  std::vector<uint64_t> in(kBacklog + 1, 0);
  for (uint64_t& slot : in) {
    ASSERT_EQ(
        fi_recv(b_.ep, &slot, sizeof(slot), nullptr, FI_ADDR_UNSPEC, &slot), 0);
  }
  for (uint64_t i = 1; i <= kBacklog; ++i) {
    ASSERT_EQ(fi_inject(a_.ep, &i, sizeof(i), b_.addr), 0);
  }
  const uint64_t far_word = 7777;
  ASSERT_EQ(fi_inject(far.ep, &far_word, sizeof(far_word), far.to_b), 0);
  int far_at = -1;
  for (int read = 0; read <= kBacklog; ++read) {
    ASSERT_EQ(wait_b(), 1) << "read " << read;
    if (*static_cast<uint64_t*>(entry.op_context) == far_word) far_at = read;
  }
  EXPECT_GE(far_at, 0);
  EXPECT_LT(far_at, 4) << "far's message waited behind a_'s";
  EXPECT_EQ(fixtures::CloseObjects(&far), 0);
}

// With auto progress the receiver drains its rings while it makes no call:
// a message 16 times the ring size completes at a sender in another domain
// (whose calls advance only that domain).
TEST_F(ShmRdmAutoTest, TheReceiverTakesMessagesWithoutCalls) {
  EXPECT_EQ(loopback_.info->domain_attr->data_progress, FI_PROGRESS_AUTO);
  FarEnd far;
  OpenFar(&far);
  std::vector<char> out(1 << 20), in(1 << 20);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i % 251);
  ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(far.ep, out.data(), out.size(), nullptr, far.to_b,
                    nullptr),
            0);
  fi_cq_tagged_entry entry;
  ssize_t rc = -FI_EAGAIN;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
    rc = fi_cq_read(far.cq, &entry, 1);
  }
  ASSERT_EQ(rc, 1);
  ASSERT_EQ(Wait(b_.cq, &entry), 1);
  EXPECT_EQ(entry.len, out.size());
  EXPECT_TRUE(in == out);
  EXPECT_EQ(fixtures::CloseObjects(&far), 0);
}

TEST_F(ShmRdmTest, RemoteCqDataAndCancel) {
  uint64_t in = 0;
  ASSERT_EQ(fi_recv(b_.ep, &in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  uint64_t out = 77;
  ASSERT_EQ(fi_senddata(a_.ep, &out, sizeof(out), nullptr, 0xfeed, b_.addr,
                        nullptr),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.cq, &entry), 1);
  EXPECT_EQ(in, 77u);
  EXPECT_NE(entry.flags & FI_REMOTE_CQ_DATA, 0u);
  EXPECT_EQ(entry.data, 0xfeedu);
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  // A receive nothing arrives for, cancelled.
  int context;
  ASSERT_EQ(fi_recv(b_.ep, &in, sizeof(in), nullptr, FI_ADDR_UNSPEC,
                    &context),
            0);
  ASSERT_EQ(fi_cancel(&b_.ep->fid, &context), 0);
  ASSERT_EQ(Wait(b_.cq, &entry), -FI_EAVAIL);
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(b_.cq, &error, 0), 1);
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, &context);
}

TEST_F(ShmRdmTest, SegmentsArePrivateAndGoAwayOnClose) {
  sockaddr_in name = {};
  size_t len = sizeof(name);
  ASSERT_EQ(fi_getname(&a_.ep->fid, &name, &len), 0);
  absl::StatusOr<IpAddress> address =
      IpFromUser(FI_SOCKADDR_IN, &name, sizeof(name));
  ASSERT_TRUE(address.ok()) << address.status();
  std::string segment = "/dev/shm" + shm::EndpointSegmentName(*address, "");
  struct stat st = {};
  ASSERT_EQ(stat(segment.c_str(), &st), 0) << segment;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  // A connection, then close: no connection segment stays behind. (Other
  // tests running meanwhile, perhaps with the same pid in another pid
  // namespace, make connection segments that go away within moments.)
  std::vector<std::string> before = ShmFiles("fabric-shmc");
  ASSERT_EQ(fi_inject(a_.ep, "x", 2, b_.addr), 0);
  char in[4];
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.cq, &entry), 1);
  CloseEnd(&a_);
  EXPECT_NE(stat(segment.c_str(), &st), 0);
  auto left_behind = [&before] {
    std::vector<std::string> left;
    for (const std::string& file : ShmFiles("fabric-shmc")) {
      if (std::find(before.begin(), before.end(), file) == before.end()) {
        left.push_back(file);
      }
    }
    return left;
  };
  for (int i = 0; i < 100 && !left_behind().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const std::string& file : left_behind()) {
    ADD_FAILURE() << "left behind: " << file;
  }
}

TEST_F(ShmRdmTest, SendingToNoEndpointFailsTheCall) {
  sockaddr_in nobody = {};
  nobody.sin_family = AF_INET;
  nobody.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  nobody.sin_port = htons(1);  // never picked: ports start at 1024
  fi_addr_t addr;
  ASSERT_EQ(fi_av_insert(loopback_.av, &nobody, 1, &addr, 0, nullptr), 1);
  EXPECT_EQ(fi_inject(a_.ep, "x", 2, addr), -FI_ECONNREFUSED);
}

}  // namespace
}  // namespace fabric
