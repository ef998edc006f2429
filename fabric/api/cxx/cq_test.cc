// Cq over tcp on lo: typed reads of an empty queue and the format check.
#include "fabric/api/cxx/cq.h"

#include <rdma/fi_errno.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Cq> &&
                  std::is_nothrow_move_constructible_v<ofi::Cq>,
              "ofi::Cq is move-only");

class CqTest : public ofi::testing::LoopbackTest {};

TEST_F(CqTest, ReadOfAnEmptyQueueIsZero) {
  fi_cq_attr attr = {};
  attr.format = FI_CQ_FORMAT_DATA;
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo_.domain, attr);
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ(cq->get()->fid.fclass, FI_CLASS_CQ);

  std::vector<fi_cq_data_entry> entries(4);
  absl::StatusOr<size_t> n = cq->Read(absl::MakeSpan(entries));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0u);
}

TEST_F(CqTest, UnspecifiedFormatReadsContextEntries) {
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo_.domain, fi_cq_attr{});
  ASSERT_TRUE(cq.ok()) << cq.status();
  fi_cq_entry entries[2];
  absl::StatusOr<size_t> n = cq->Read(absl::MakeSpan(entries));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0u);

  std::vector<fi_cq_tagged_entry> wrong(2);
  n = cq->Read(absl::MakeSpan(wrong));
  EXPECT_EQ(ofi::FiErrno(n.status()), FI_EINVAL);
}

TEST_F(CqTest, ReadErrorWithNoneWaitingIsEagain) {
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo_.domain, fi_cq_attr{});
  ASSERT_TRUE(cq.ok()) << cq.status();
  absl::StatusOr<ofi::CqError> error = cq->ReadError();
  EXPECT_EQ(ofi::FiErrno(error.status()), FI_EAGAIN);
}

TEST_F(CqTest, MoveKeepsTheFormat) {
  fi_cq_attr attr = {};
  attr.format = FI_CQ_FORMAT_MSG;
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo_.domain, attr);
  ASSERT_TRUE(cq.ok()) << cq.status();
  ofi::Cq moved = *std::move(cq);
  EXPECT_FALSE(*cq);
  std::vector<fi_cq_msg_entry> entries(1);
  absl::StatusOr<size_t> n = moved.Read(absl::MakeSpan(entries));
  EXPECT_TRUE(n.ok()) << n.status();
}

}  // namespace
