// FI_PROVIDER=^udp (see BUILD) excludes udp from every result.
#include <rdma/fabric.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

std::vector<std::string> ProviderNames(uint64_t flags) {
  fi_info* info = nullptr;
  std::vector<std::string> names;
  EXPECT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, flags, nullptr,
                       &info),
            0);
  for (fi_info* i = info; i != nullptr; i = i->next) {
    names.push_back(i->fabric_attr->prov_name);
  }
  fi_freeinfo(info);
  return names;
}

TEST(ProviderFilterTest, ExcludedProviderIsAbsent) {
  std::vector<std::string> names = ProviderNames(0);
  EXPECT_FALSE(names.empty());
  for (const std::string& name : names) EXPECT_NE(name, "udp");
  EXPECT_EQ(ProviderNames(FI_PROV_ATTR_ONLY),
            (std::vector<std::string>{"verbs", "tcp", "shm"}));
}

}  // namespace
