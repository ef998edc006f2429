// AV sets through the C API, on an FI_AV_TABLE AV of a tcp domain on lo that
// holds fi_addr_t 0..5 with 3 removed.
#include "fabric/providers/util/av_set.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <vector>

#include "fabric/fixtures/loopback_domain_test.h"
#include "gtest/gtest.h"

namespace {

using Members = std::vector<fi_addr_t>;

class AvSetTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenDomain([](fi_info* hints) {
      hints->ep_attr->type = FI_EP_RDM;
      hints->addr_format = FI_SOCKADDR_IN;
    }));
    ASSERT_EQ(OpenAv(FI_AV_TABLE, &av_), 0);
    std::vector<sockaddr_in> peers(6);
    for (size_t i = 0; i < peers.size(); ++i) {
      peers[i].sin_family = AF_INET;
      peers[i].sin_port = htons(5000 + i);
      peers[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    ASSERT_EQ(fi_av_insert(av_, peers.data(), 6, nullptr, 0, nullptr), 6);
    fi_addr_t gone = 3;
    ASSERT_EQ(fi_av_remove(av_, &gone, 1, 0), 0);
  }
  void TearDown() override {
    while (!sets_.empty()) Close(sets_.back());
    for (fid_av* av : avs_) EXPECT_EQ(fi_close(&av->fid), 0);
    LoopbackDomainTest::TearDown();
  }
  int OpenAv(fi_av_type type, fid_av** av) {
    fi_av_attr attr = {};
    attr.type = type;
    int rc = fi_av_open(domain_, &attr, av, nullptr);
    if (rc == 0) avs_.push_back(*av);
    return rc;
  }
  // Opens a set of `av` (av_ when null), closed in TearDown.
  int OpenSet(fi_av_set_attr attr, fid_av_set** set, fid_av* av = nullptr) {
    int rc = fi_av_set(av != nullptr ? av : av_, &attr, set, &context_);
    if (rc == 0) sets_.push_back(*set);
    return rc;
  }
  void Close(fid_av_set* set) {
    sets_.erase(std::find(sets_.begin(), sets_.end(), set));
    EXPECT_EQ(fi_close(&set->fid), 0);
  }
  static fi_av_set_attr Range(fi_addr_t start, fi_addr_t end,
                              uint64_t stride) {
    fi_av_set_attr attr = {};
    attr.start_addr = start;
    attr.end_addr = end;
    attr.stride = stride;
    return attr;
  }
  static fi_av_set_attr Empty(uint64_t flags = 0) {
    fi_av_set_attr attr = Range(FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL, 0);
    attr.flags = flags;
    return attr;
  }
  static Members Of(fid_av_set* set) {
    fabric::UtilAvSet* util = fabric::AsUtilAvSet(set);
    fabric::MutexLock<fabric::Mutex> lock(util->mutex);
    return util->members;
  }

  fid_av* av_ = nullptr;
  std::vector<fid_av*> avs_;
  std::vector<fid_av_set*> sets_;
  int context_ = 0;
};

TEST_F(AvSetTest, RangesStridesAndTheUniverse) {
  fid_av_set* set;
  ASSERT_EQ(OpenSet(Range(0, 5, 2), &set), 0);
  EXPECT_EQ(Of(set), (Members{0, 2, 4}));
  EXPECT_EQ(set->fid.fclass, static_cast<size_t>(FI_CLASS_AV_SET));
  EXPECT_EQ(set->fid.context, &context_);
  ASSERT_EQ(OpenSet(Range(1, 5, 1), &set), 0);
  EXPECT_EQ(Of(set), (Members{1, 2, 4, 5}));  // removed 3 is skipped
  ASSERT_EQ(OpenSet(Range(2, 2, 7), &set), 0);
  EXPECT_EQ(Of(set), (Members{2}));
  ASSERT_EQ(OpenSet(Empty(FI_UNIVERSE | FI_BARRIER_SET), &set), 0);
  EXPECT_EQ(Of(set), (Members{0, 1, 2, 4, 5}));
  ASSERT_EQ(OpenSet(Empty(), &set), 0);
  EXPECT_EQ(Of(set), Members{});
}

TEST_F(AvSetTest, BadAttributesAreRefused) {
  fid_av_set* set = nullptr;
  EXPECT_EQ(fi_av_set(av_, nullptr, &set, nullptr), -FI_EINVAL);
  fi_av_set_attr attr = Range(0, 1, 1);
  EXPECT_EQ(fi_av_set(av_, &attr, nullptr, nullptr), -FI_EINVAL);
  EXPECT_EQ(OpenSet(Range(0, 5, 0), &set), -FI_EINVAL);     // stride 0
  EXPECT_EQ(OpenSet(Range(4, 2, 1), &set), -FI_EINVAL);     // backwards
  EXPECT_EQ(OpenSet(Range(0, 6, 1), &set), -FI_EINVAL);     // past the AV
  EXPECT_EQ(OpenSet(Range(3, 5, 1), &set), -FI_EINVAL);     // 3 was removed
  EXPECT_EQ(OpenSet(Range(0, FI_ADDR_NOTAVAIL, 1), &set), -FI_EINVAL);
  EXPECT_EQ(OpenSet(Range(FI_ADDR_NOTAVAIL, 2, 1), &set), -FI_EINVAL);
  EXPECT_EQ(OpenSet(Range(FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL, 1), &set),
            -FI_EINVAL);  // a stride without a range
  attr = Range(0, 2, 1);
  attr.flags = FI_UNIVERSE;
  EXPECT_EQ(OpenSet(attr, &set), -FI_EINVAL);
  EXPECT_EQ(OpenSet(Empty(FI_SEND), &set), -FI_EBADFLAGS);
  uint8_t key[4] = {1, 2, 3, 4};
  attr = Empty();
  attr.comm_key = key;
  attr.comm_key_size = sizeof(key);
  EXPECT_EQ(OpenSet(attr, &set), -FI_ENOSYS);
  fid_av* map;
  ASSERT_EQ(OpenAv(FI_AV_MAP, &map), 0);
  sockaddr_in peer = {};
  peer.sin_family = AF_INET;
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(fi_av_insert(map, &peer, 1, nullptr, 0, nullptr), 1);
  EXPECT_EQ(OpenSet(Range(0, 0, 1), &set, map), -FI_EINVAL);  // not a table
  ASSERT_EQ(OpenSet(Empty(FI_UNIVERSE), &set, map), 0);
  EXPECT_EQ(Of(set), (Members{0}));
}

TEST_F(AvSetTest, UnionIntersectAndDiffKeepTheOrder) {
  fid_av_set* evens;
  fid_av_set* picked;
  fid_av_set* all;
  fid_av_set* rest;
  ASSERT_EQ(OpenSet(Range(0, 4, 2), &evens), 0);
  ASSERT_EQ(OpenSet(Empty(), &picked), 0);
  for (fi_addr_t fi_addr : {4, 5, 0}) {
    ASSERT_EQ(fi_av_set_insert(picked, fi_addr), 0);
  }
  ASSERT_EQ(OpenSet(Empty(FI_UNIVERSE), &all), 0);
  ASSERT_EQ(OpenSet(Empty(FI_UNIVERSE), &rest), 0);

  ASSERT_EQ(fi_av_set_union(evens, picked), 0);
  EXPECT_EQ(Of(evens), (Members{0, 2, 4, 5}));
  ASSERT_EQ(fi_av_set_intersect(all, picked), 0);
  EXPECT_EQ(Of(all), (Members{0, 4, 5}));
  ASSERT_EQ(fi_av_set_diff(rest, evens), 0);
  EXPECT_EQ(Of(rest), (Members{1}));

  // A set combined with itself.
  ASSERT_EQ(fi_av_set_union(picked, picked), 0);
  ASSERT_EQ(fi_av_set_intersect(picked, picked), 0);
  EXPECT_EQ(Of(picked), (Members{4, 5, 0}));
  ASSERT_EQ(fi_av_set_diff(picked, picked), 0);
  EXPECT_EQ(Of(picked), Members{});
}

TEST_F(AvSetTest, MembersMustBeAddressesOfTheSameAv) {
  fid_av_set* set;
  ASSERT_EQ(OpenSet(Range(0, 2, 1), &set), 0);
  EXPECT_EQ(fi_av_set_insert(set, 1), -FI_EINVAL);  // already a member
  EXPECT_EQ(fi_av_set_insert(set, 3), -FI_EINVAL);  // removed from the AV
  EXPECT_EQ(fi_av_set_insert(set, 6), -FI_EINVAL);  // never in the AV
  EXPECT_EQ(fi_av_set_insert(set, FI_ADDR_NOTAVAIL), -FI_EINVAL);
  EXPECT_EQ(fi_av_set_remove(set, 4), -FI_EINVAL);  // not a member
  ASSERT_EQ(fi_av_set_remove(set, 1), 0);
  ASSERT_EQ(fi_av_set_insert(set, 5), 0);
  EXPECT_EQ(Of(set), (Members{0, 2, 5}));

  EXPECT_EQ(fi_av_set_union(set, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_av_set_intersect(
                set, reinterpret_cast<const fid_av_set*>(av_)),  // an AV
            -FI_EINVAL);
  fid_av* other_av;
  ASSERT_EQ(OpenAv(FI_AV_TABLE, &other_av), 0);
  fid_av_set* foreign;
  ASSERT_EQ(OpenSet(Empty(), &foreign, other_av), 0);
  EXPECT_EQ(fi_av_set_union(set, foreign), -FI_EINVAL);
  EXPECT_EQ(fi_av_set_diff(foreign, set), -FI_EINVAL);
  EXPECT_EQ(Of(set), (Members{0, 2, 5}));
}

TEST_F(AvSetTest, AddressesAndClosing) {
  fid_av_set* first;
  fid_av_set* second;
  ASSERT_EQ(OpenSet(Range(0, 2, 1), &first), 0);
  ASSERT_EQ(OpenSet(Empty(), &second), 0);
  EXPECT_EQ(fi_av_set_addr(first, nullptr), -FI_EINVAL);
  fi_addr_t first_addr = FI_ADDR_NOTAVAIL;
  fi_addr_t second_addr = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_set_addr(first, &first_addr), 0);
  ASSERT_EQ(fi_av_set_addr(second, &second_addr), 0);
  EXPECT_NE(first_addr, FI_ADDR_NOTAVAIL);
  EXPECT_NE(first_addr, second_addr);
  // Collectives, the only users of that address, are not implemented.
  fi_collective_attr coll = {};
  coll.op = FI_NOOP;
  EXPECT_EQ(fi_query_collective(domain_, FI_BARRIER, &coll, 0), -FI_ENOSYS);

  EXPECT_EQ(fi_close(&av_->fid), -FI_EBUSY);  // two sets are open
  Close(first);
  EXPECT_EQ(fi_close(&av_->fid), -FI_EBUSY);
  Close(second);
  ASSERT_EQ(fi_close(&av_->fid), 0);
  avs_.erase(std::find(avs_.begin(), avs_.end(), av_));
}

}  // namespace
