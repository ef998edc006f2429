// fi_allocinfo / fi_dupinfo / fi_freeinfo: deep copies, handle not owned.
#include <rdma/fabric.h>
#include <string.h>

#include "gtest/gtest.h"

namespace {

TEST(InfoTest, AllocInfoHasAllAttributes) {
  fi_info* info = fi_allocinfo();
  ASSERT_NE(info, nullptr);
  EXPECT_NE(info->tx_attr, nullptr);
  EXPECT_NE(info->rx_attr, nullptr);
  EXPECT_NE(info->ep_attr, nullptr);
  EXPECT_NE(info->domain_attr, nullptr);
  EXPECT_NE(info->fabric_attr, nullptr);
  EXPECT_EQ(info->nic, nullptr);
  EXPECT_EQ(info->caps, 0u);
  fi_freeinfo(info);
}

TEST(InfoTest, DupInfoIsDeep) {
  fi_info* info = fi_allocinfo();
  info->caps = FI_MSG;
  info->src_addr = malloc(4);
  memcpy(info->src_addr, "abcd", 4);
  info->src_addrlen = 4;
  info->domain_attr->name = strdup("lo");
  info->fabric_attr->name = strdup("127.0.0.0/8");
  info->fabric_attr->prov_name = strdup("tcp");
  info->ep_attr->auth_key = static_cast<uint8_t*>(malloc(3));
  memcpy(info->ep_attr->auth_key, "key", 3);
  info->ep_attr->auth_key_size = 3;
  int handle_target = 0;
  info->handle = reinterpret_cast<fid_t>(&handle_target);
  info->next = fi_allocinfo();  // not copied: dupinfo copies one structure

  fi_info* copy = fi_dupinfo(info);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->next, nullptr);
  EXPECT_EQ(copy->caps, FI_MSG);
  EXPECT_NE(copy->src_addr, info->src_addr);
  EXPECT_EQ(memcmp(copy->src_addr, "abcd", 4), 0);
  EXPECT_NE(copy->domain_attr, info->domain_attr);
  EXPECT_NE(copy->domain_attr->name, info->domain_attr->name);
  EXPECT_STREQ(copy->domain_attr->name, "lo");
  EXPECT_STREQ(copy->fabric_attr->prov_name, "tcp");
  EXPECT_NE(copy->ep_attr->auth_key, info->ep_attr->auth_key);
  EXPECT_EQ(memcmp(copy->ep_attr->auth_key, "key", 3), 0);
  EXPECT_EQ(copy->handle, info->handle);

  fi_freeinfo(info);
  // The copy stays valid after the original is gone (ASan checks this).
  EXPECT_STREQ(copy->fabric_attr->name, "127.0.0.0/8");
  fi_freeinfo(copy);
}

TEST(InfoTest, DupInfoOfPartialInfoAllocatesMissingAttributes) {
  fi_info partial = {};
  partial.caps = FI_RMA;
  fi_info* copy = fi_dupinfo(&partial);
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy->tx_attr, nullptr);
  EXPECT_NE(copy->fabric_attr, nullptr);
  EXPECT_EQ(copy->caps, FI_RMA);
  fi_freeinfo(copy);
}

TEST(InfoTest, AddressPointerWithZeroLengthIsNotCopied) {
  fi_info* info = fi_allocinfo();
  info->dest_addr = malloc(8);
  info->dest_addrlen = 0;
  fi_info* copy = fi_dupinfo(info);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->dest_addr, nullptr);
  EXPECT_EQ(copy->dest_addrlen, 0u);
  fi_freeinfo(copy);
  fi_freeinfo(info);
}

TEST(InfoTest, FreeInfoOfNullIsANoOp) { fi_freeinfo(nullptr); }

}  // namespace
