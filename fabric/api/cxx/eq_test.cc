// Eq over tcp on lo: events written and read back, empty reads, and errors
// that keep their fi_errno.
#include "fabric/api/cxx/eq.h"

#include <rdma/fi_errno.h>

#include <type_traits>
#include <utility>

#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Eq> &&
                  std::is_nothrow_move_constructible_v<ofi::Eq>,
              "ofi::Eq is move-only");

class EqTest : public ofi::testing::LoopbackTest {};

TEST_F(EqTest, WrittenEventIsReadBack) {
  fi_eq_attr attr = {};
  attr.flags = FI_WRITE;
  int context = 0;
  absl::StatusOr<ofi::Eq> eq = ofi::OpenEq(lo_.fabric, attr, &context);
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ(eq->get()->fid.context, &context);

  fi_eq_entry written = {};
  written.context = &context;
  written.data = 42;
  ASSERT_TRUE(eq->Write(FI_NOTIFY, written).ok());

  absl::StatusOr<std::optional<ofi::EqEvent>> event = eq->Read();
  ASSERT_TRUE(event.ok()) << event.status();
  ASSERT_TRUE(event->has_value());
  EXPECT_EQ((*event)->event, FI_NOTIFY);
  EXPECT_EQ((*event)->data.size(), sizeof(fi_eq_entry));
  EXPECT_EQ((*event)->Entry().context, &context);
  EXPECT_EQ((*event)->Entry().data, 42u);
}

TEST_F(EqTest, EmptyReadIsNoEvent) {
  absl::StatusOr<ofi::Eq> eq = ofi::OpenEq(lo_.fabric, fi_eq_attr{});
  ASSERT_TRUE(eq.ok()) << eq.status();
  absl::StatusOr<std::optional<ofi::EqEvent>> event = eq->Read();
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_FALSE(event->has_value());
}

TEST_F(EqTest, ReadErrorWithNoneWaitingIsEagain) {
  absl::StatusOr<ofi::Eq> eq = ofi::OpenEq(lo_.fabric, fi_eq_attr{});
  ASSERT_TRUE(eq.ok()) << eq.status();
  absl::StatusOr<ofi::EqError> error = eq->ReadError();
  EXPECT_EQ(ofi::FiErrno(error.status()), FI_EAGAIN);
}

TEST_F(EqTest, ErrorsKeepTheFiErrno) {
  absl::StatusOr<ofi::Eq> read_only = ofi::OpenEq(lo_.fabric, fi_eq_attr{});
  ASSERT_TRUE(read_only.ok()) << read_only.status();
  EXPECT_EQ(ofi::FiErrno(read_only->Write(FI_NOTIFY, fi_eq_entry{})),
            FI_EINVAL);

  fi_eq_attr unknown_flags = {};
  unknown_flags.flags = FI_SEND;
  absl::StatusOr<ofi::Eq> eq = ofi::OpenEq(lo_.fabric, unknown_flags);
  EXPECT_EQ(ofi::FiErrno(eq.status()), FI_EBADFLAGS);
}

}  // namespace
