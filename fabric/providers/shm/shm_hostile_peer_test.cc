// A hostile or broken peer speaking to a real shm endpoint through the
// shared-memory structures directly: garbage in a connection ring, ring
// indices that cannot be, and request slots naming nothing usable. Each
// costs that peer its connection (the endpoint closes its side, a warning
// is logged), never a crash, and the endpoint keeps serving good peers.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/shm/shm_connection.h"
#include "fabric/providers/shm/shm_doorbell.h"
#include "fabric/providers/shm/shm_names.h"
#include "fabric/providers/shm/shm_requests.h"
#include "fabric/providers/shm/shm_ring_stream.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/shm/shm_testing.h"
#include "fabric/providers/stream/wire.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

class ShmHostilePeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fixtures::OpenShmLoopback(0, &loopback_, &av_, &cq_), 0);
    for (fid_ep** ep : {&target_, &good_}) {
      ASSERT_EQ(fixtures::OpenBoundEndpoint(loopback_.domain, loopback_.info,
                                            av_, cq_, ep),
                0);
    }
    sockaddr_in name = {};
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&target_->fid, &name, &len), 0);
    target_address_ = *IpAddress::FromSockaddr(
        reinterpret_cast<sockaddr*>(&name), sizeof(name));
    ASSERT_EQ(fi_av_insert(av_, &name, 1, &to_target_, 0, nullptr), 1);
    absl::StatusOr<Doorbell> doorbell =
        Doorbell::Bind(DoorbellName(hostile_address_, ""));
    ASSERT_TRUE(doorbell.ok()) << doorbell.status();
    doorbell_ = std::make_unique<Doorbell>(*std::move(doorbell));
  }

  void TearDown() override {
    stream_.reset();
    for (fid* object : {&good_->fid, &target_->fid, &cq_->fid, &av_->fid}) {
      EXPECT_EQ(fi_close(object), 0);
    }
    EXPECT_EQ(fixtures::CloseObjects(&loopback_), 0);
  }

  // Posts `name` to the target's request slots as a connecting peer would.
  void Post(const std::string& name) {
    absl::StatusOr<Segment> endpoint =
        Segment::Open(EndpointSegmentName(target_address_, ""));
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    bool wake = false;
    ASSERT_TRUE(PostRequest(*endpoint, name, &wake).ok());
  }

  // The hostile peer's connection to the target, accepted.
  void Connect() {
    absl::StatusOr<std::unique_ptr<RingStream>> stream =
        MakeConnection(hostile_address_, "", kMinRingCapacity,
                       doorbell_.get(), target_address_, "");
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = *std::move(stream);
    Post(stream_->segment().name());
    ASSERT_TRUE(Progress([this] {
      return stream_->area()->state.load() == kAccepted;
    }));
  }

  // Drives the endpoints' progress until `done` or 5 s.
  bool Progress(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      fi_cq_read(cq_, nullptr, 0);
    }
    return true;
  }

  // The target closed its side of the hostile connection.
  bool TargetClosed() {
    char byte;
    iovec in = {&byte, 1};
    return stream_->Read(&in, 1) == 0;
  }

  // The target still takes a message from the good endpoint.
  void ExpectTargetServes() {
    char in[8] = {};
    ASSERT_EQ(fi_recv(target_, in, sizeof(in), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
    ASSERT_EQ(fi_inject(good_, "fine", 5, to_target_), 0);
    ASSERT_TRUE(Progress([&in] { return strcmp(in, "fine") == 0; }));
  }

  fixtures::Objects loopback_;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* target_ = nullptr;
  fid_ep* good_ = nullptr;
  fi_addr_t to_target_ = FI_ADDR_NOTAVAIL;
  IpAddress target_address_;
  const IpAddress hostile_address_ = LoopbackAddress(1999);
  std::unique_ptr<Doorbell> doorbell_;
  std::unique_ptr<RingStream> stream_;
};

TEST_F(ShmHostilePeerTest, GarbageInTheRingClosesThatConnection) {
  Connect();
  stream::Header header = {};
  header.op = 99;  // no such opcode
  header.size = 8;
  iovec out = {&header, sizeof(header)};
  ASSERT_EQ(stream_->Write(&out, 1), static_cast<ssize_t>(sizeof(header)));
  ASSERT_TRUE(Progress([this] { return TargetClosed(); }));
  ExpectTargetServes();
}

TEST_F(ShmHostilePeerTest, AnImpossibleChunkClosesThatConnection) {
  Connect();
  // Ring 0 (to the target) claims a chunk longer than it holds.
  auto* ring = reinterpret_cast<RingHeader*>(
      reinterpret_cast<char*>(stream_->area()) + kRingsOffset);
  uint64_t position = ring->head.load() & (ring->capacity.load() - 1);
  auto* control = reinterpret_cast<std::atomic<uint64_t>*>(
      reinterpret_cast<char*>(ring) + sizeof(RingHeader) + position);
  control->store((kChunkMagic << 32) | (10 * kMinRingCapacity));
  ASSERT_TRUE(Progress([this] { return TargetClosed(); }));
  ExpectTargetServes();
}

TEST_F(ShmHostilePeerTest, RequestsNamingNothingUsableAreDropped) {
  Post("/not-a-connection-segment");
  Post(SegmentName(kConnectionSegmentPrefix, 999999));  // does not exist
  ExpectTargetServes();
}

}  // namespace
}  // namespace shm
}  // namespace fabric
