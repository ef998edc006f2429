// Conformance tests for fi_getinfo(3), through the C API as applications use
// it, against the real compiled-in providers and this machine's interfaces.
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fabric/api/entry/getinfo_testing.h"
#include "gtest/gtest.h"

namespace {

using getinfo_testing::GetInfo;
using getinfo_testing::Hints;
using getinfo_testing::Info;
using getinfo_testing::Items;
using getinfo_testing::kVersion;
using getinfo_testing::Provider;

// fi_fabric(3): api_version is the version the application passed, which
// decides the layouts the objects opened from this info use.
TEST(GetInfoTest, ApiVersionIsTheRequestedOne) {
  for (uint32_t version : {uint32_t{FI_VERSION(1, 4)}, uint32_t{FI_VERSION(1, 10)}, kVersion}) {
    for (uint64_t flags : {uint64_t{0}, uint64_t{FI_PROV_ATTR_ONLY}}) {
      fi_info* list = nullptr;
      ASSERT_EQ(fi_getinfo(version, nullptr, nullptr, flags, nullptr, &list),
                0);
      for (fi_info* info = list; info != nullptr; info = info->next) {
        EXPECT_EQ(info->fabric_attr->api_version, version) << flags;
      }
      fi_freeinfo(list);
    }
  }
}

TEST(GetInfoTest, NullHintsListsTcpAndUdp) {
  Info list;
  ASSERT_EQ(GetInfo(&list, nullptr), 0);
  bool tcp = false, udp = false;
  for (fi_info* info : Items(list)) {
    tcp |= Provider(info) == "tcp";
    udp |= Provider(info) == "udp";
    EXPECT_NE(info->fabric_attr->name, nullptr);
    EXPECT_NE(info->domain_attr->name, nullptr);
    EXPECT_EQ(info->fabric_attr->api_version, kVersion);
    EXPECT_EQ(info->handle, nullptr);
  }
  EXPECT_TRUE(tcp);
  EXPECT_TRUE(udp);
}

TEST(GetInfoTest, NullInfoPointerIsEinval) {
  EXPECT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, nullptr, nullptr),
            -FI_EINVAL);
}

TEST(GetInfoTest, VersionsOutsideOursAreEnosys) {
  Info list;
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, 0, FI_VERSION(1, 19)),
            -FI_ENOSYS);
  EXPECT_EQ(list, nullptr);
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, 0, 0), -FI_ENOSYS);
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, 0, FI_VERSION(2, 0)),
            -FI_ENOSYS);
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, 0, FI_VERSION(1, 0)), 0);
}

TEST(GetInfoTest, UnknownFlagsAreEbadflags) {
  Info list;
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, FI_MULTI_RECV),
            -FI_EBADFLAGS);
  EXPECT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, 1ULL << 63),
            -FI_EBADFLAGS);
}

TEST(GetInfoTest, EpTypeHintSelects) {
  Info hints = Hints();
  hints->ep_attr->type = FI_EP_DGRAM;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(info->ep_attr->type, FI_EP_DGRAM);
    EXPECT_EQ(Provider(info), "udp");
  }
  hints->fabric_attr->prov_name = strdup("tcp");
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, PrimaryCapsOnlyAsRequested) {
  Info hints = Hints();
  hints->caps = FI_MSG;
  hints->ep_attr->type = FI_EP_RDM;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(info->caps & (FI_RMA | FI_TAGGED | FI_ATOMIC), 0u);
    EXPECT_EQ(info->caps & (FI_MSG | FI_SEND | FI_RECV),
              FI_MSG | FI_SEND | FI_RECV);
    // FI_SOURCE costs performance: reported only when requested.
    EXPECT_EQ(info->caps & FI_SOURCE, 0u);
    EXPECT_EQ(info->tx_attr->caps & FI_RECV, 0u);
    EXPECT_EQ(info->rx_attr->caps & FI_SEND, 0u);
  }
}

TEST(GetInfoTest, ModifiersRestrictTheirCapability) {
  Info hints = Hints();
  hints->caps = FI_RMA | FI_READ | FI_MSG;
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  fi_info* info = list.get();
  EXPECT_EQ(info->caps & (FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE), 0u);
  EXPECT_NE(info->caps & FI_READ, 0u);
  // FI_MSG got both of its modifiers since none was named for it.
  EXPECT_EQ(info->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
}

TEST(GetInfoTest, SecondaryCapsMustBeSupported) {
  Info hints = Hints();
  hints->caps = FI_MSG | FI_SOURCE;
  hints->ep_attr->type = FI_EP_RDM;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_NE(list->caps & FI_SOURCE, 0u);
  hints->caps = FI_MSG | FI_TRIGGER;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

// FI_<PROV>_ATTR_* (and the config file's provider { attrs {} }) are the
// provider's attribute defaults: sizes at most what it offers, the
// threading and progress models as given; a malformed value fails.
TEST(GetInfoTest, ProviderAttributeSettingsSetTheDefaults) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  Info plain;
  ASSERT_EQ(GetInfo(&plain, hints.get()), 0);
  setenv("FI_TCP_ATTR_TX_SIZE", "77", 1);
  setenv("FI_TCP_ATTR_MAX_MSG_SIZE", "4096", 1);
  setenv("FI_TCP_ATTR_RX_SIZE", "999999999", 1);  // more than offered
  setenv("FI_TCP_ATTR_DATA_PROGRESS", "FI_PROGRESS_AUTO", 1);
  Info list;
  int rc = GetInfo(&list, hints.get());
  setenv("FI_TCP_ATTR_INJECT_SIZE", "lots", 1);
  Info malformed;
  int bad = GetInfo(&malformed, hints.get());
  for (const char* name :
       {"FI_TCP_ATTR_TX_SIZE", "FI_TCP_ATTR_MAX_MSG_SIZE", "FI_TCP_ATTR_RX_SIZE",
        "FI_TCP_ATTR_DATA_PROGRESS", "FI_TCP_ATTR_INJECT_SIZE"}) {
    unsetenv(name);
  }
  ASSERT_EQ(rc, 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(info->tx_attr->size, 77u);
    EXPECT_EQ(info->ep_attr->max_msg_size, 4096u);
    EXPECT_EQ(info->rx_attr->size, plain->rx_attr->size);
    EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
  }
  EXPECT_EQ(bad, -FI_EINVAL);
}

// Malformed addresses in node and service are refused, not wrapped or
// half read (address_test has the parser's cases).
TEST(GetInfoTest, MalformedAddressesAreEinval) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  for (const char* node :
       {"fi_sockaddr_in://127.0.0.1:99999", "fi_sockaddr_in://127.0.0.1:1/x",
        "fi_sockaddr_in://", "fi_sockaddr_in6://[::1]:65536"}) {
    EXPECT_EQ(GetInfo(&list, hints.get(), node, nullptr), -FI_EINVAL) << node;
  }
  EXPECT_EQ(GetInfo(&list, hints.get(), "127.0.0.1", "99999"), -FI_EINVAL);
  EXPECT_EQ(GetInfo(&list, hints.get(), "fi_sockaddr_in://127.0.0.1:7", nullptr),
            0);
}

// As libfabric 1.17 answers: nobody offers them.
TEST(GetInfoTest, BitsThatAreNoCapabilityAreEnodata) {
  Info hints = Hints();
  Info list;
  for (uint64_t caps : {1ULL << 62, FI_MSG | FI_REMOTE_CQ_DATA}) {
    hints->caps = caps;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA) << caps;
  }
  hints->caps = FI_MSG;
  hints->domain_attr->caps = FI_MSG;  // not a domain capability
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, MalformedOpFlagsAreEbadflags) {
  Info hints = Hints();
  Info list;
  hints->caps = FI_MSG;
  hints->tx_attr->op_flags = FI_MULTI_RECV;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EBADFLAGS);
}

// Capabilities no provider offers, alone or without the capability they
// modify, find nothing (-FI_ENODATA), as in libfabric 1.17: conformance
// suites probe them one at a time.
TEST(GetInfoTest, CapabilitiesNobodyOffersAreEnodata) {
  Info hints = Hints();
  Info list;
  for (uint64_t caps :
       {FI_MULTICAST, FI_MSG | FI_MULTICAST, FI_VARIABLE_MSG,
        FI_MSG | FI_VARIABLE_MSG, FI_COLLECTIVE, FI_MSG | FI_READ,
        FI_NAMED_RX_CTX}) {
    hints->caps = caps;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA)
        << "caps 0x" << std::hex << caps;
  }
}

// fi_mr(3): an application of API >= 1.5 that still asks for FI_MR_BASIC
// or FI_MR_SCALABLE gets that legacy value back (FI_MR_BASIC stands for
// FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY), as from libfabric.
TEST(GetInfoTest, LegacyMrModeHintsGetLegacyAnswers) {
  for (int mode : {FI_MR_BASIC, FI_MR_SCALABLE}) {
    Info hints = Hints();
    hints->caps = FI_RMA;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = mode;
    Info list;
    ASSERT_EQ(GetInfo(&list, hints.get()), 0) << "mr_mode " << mode;
    for (fi_info* info : Items(list)) {
      EXPECT_EQ(info->domain_attr->mr_mode, mode)
          << Provider(info) << " answered mr_mode " << mode;
    }
  }
  // A domain opened with the legacy answer registers memory as FI_MR_BASIC
  // says: the provider picks the key.
  Info hints = Hints();
  hints->caps = FI_RMA;
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->mr_mode = FI_MR_BASIC;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_fabric(list->fabric_attr, &fabric, nullptr), 0);
  ASSERT_EQ(fi_domain(fabric, list.get(), &domain, nullptr), 0);
  char region[64];
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(domain, region, sizeof(region), FI_REMOTE_WRITE, 0,
                      0x1234, 0, &mr, nullptr),
            0);
  EXPECT_NE(fi_mr_key(mr), 0x1234u) << "FI_MR_BASIC: the provider's key";
  EXPECT_EQ(fi_close(&mr->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

TEST(GetInfoTest, UnknownEnumValuesAreEinval) {
  Info list;
  {
    Info hints = Hints();
    hints->ep_attr->type = static_cast<fi_ep_type>(99);
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    Info hints = Hints();
    hints->domain_attr->threading = static_cast<fi_threading>(42);
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    Info hints = Hints();
    hints->domain_attr->data_progress = static_cast<fi_progress>(-1);
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    Info hints = Hints();
    hints->domain_attr->av_type = static_cast<fi_av_type>(7);
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    Info hints = Hints();
    hints->addr_format = 1000;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    Info hints = Hints();
    hints->domain_attr->tclass = 0x12345;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
}

TEST(GetInfoTest, AddressWithoutLengthIsEinval) {
  Info hints = Hints();
  sockaddr_in addr = {};
  hints->dest_addr = malloc(sizeof(addr));
  memcpy(hints->dest_addr, &addr, sizeof(addr));
  hints->dest_addrlen = 0;
  Info list;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
}

TEST(GetInfoTest, ShortOrMismatchedAddressesAreEinval) {
  Info list;
  {
    // Three bytes cannot hold a sockaddr_in.
    Info hints = Hints();
    hints->addr_format = FI_SOCKADDR_IN;
    hints->src_addr = calloc(1, 3);
    hints->src_addrlen = 3;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    // An IPv6 address declared as FI_SOCKADDR_IN.
    Info hints = Hints();
    hints->addr_format = FI_SOCKADDR_IN;
    sockaddr_in6 addr6 = {};
    addr6.sin6_family = AF_INET6;
    hints->dest_addr = malloc(sizeof(addr6));
    memcpy(hints->dest_addr, &addr6, sizeof(addr6));
    hints->dest_addrlen = sizeof(addr6);
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
  {
    // An FI_ADDR_STR address that is not NUL-terminated within its length.
    Info hints = Hints();
    hints->addr_format = FI_ADDR_STR;
    const char text[] = "fi_sockaddr_in://127.0.0.1:1";
    hints->dest_addr = malloc(sizeof(text) - 1);
    memcpy(hints->dest_addr, text, sizeof(text) - 1);
    hints->dest_addrlen = sizeof(text) - 1;
    EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  }
}

TEST(GetInfoTest, OversizedStringsAreRejectedCleanly) {
  const std::string huge(1 << 20, 'x');
  Info list;
  EXPECT_EQ(GetInfo(&list, nullptr, huge.c_str(), "7470", FI_NUMERICHOST),
            -FI_EINVAL);
  EXPECT_NE(GetInfo(&list, nullptr, "127.0.0.1", huge.c_str()), 0);
  EXPECT_EQ(list, nullptr);
  EXPECT_NE(GetInfo(&list, nullptr, (huge + "://1.2.3.4:5").c_str(), nullptr),
            0);
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup(huge.c_str());
  hints->domain_attr->name = strdup(huge.c_str());
  hints->fabric_attr->name = strdup(huge.c_str());
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, OutputIsAtLeastRequested) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->tx_attr->size = 512;
  hints->rx_attr->iov_limit = 2;
  hints->domain_attr->cq_data_size = 4;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_GE(list->tx_attr->size, 512u);
  EXPECT_GE(list->rx_attr->iov_limit, 2u);
  EXPECT_GE(list->domain_attr->cq_data_size, 4u);
  hints->tx_attr->size = 1u << 30;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, DomainSettingsAreHonoured) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->resource_mgmt = FI_RM_DISABLED;
  hints->domain_attr->av_type = FI_AV_TABLE;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_EQ(list->domain_attr->threading, FI_THREAD_DOMAIN);
  EXPECT_EQ(list->domain_attr->data_progress, FI_PROGRESS_MANUAL);
  EXPECT_EQ(list->domain_attr->control_progress, FI_PROGRESS_MANUAL);
  EXPECT_EQ(list->domain_attr->resource_mgmt, FI_RM_DISABLED);
  EXPECT_EQ(list->domain_attr->av_type, FI_AV_TABLE);
}

// Without progress hints every provider offers manual data and control
// progress (no thread in the process); automatic progress is there on
// request, for each of the two.
TEST(GetInfoTest, ProgressIsManualUnlessAutoIsAsked) {
  Info list;
  ASSERT_EQ(GetInfo(&list, nullptr), 0);
  for (fi_info* info = list.get(); info != nullptr; info = info->next) {
    EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_MANUAL)
        << info->fabric_attr->prov_name;
    EXPECT_EQ(info->domain_attr->control_progress, FI_PROGRESS_MANUAL)
        << info->fabric_attr->prov_name;
  }
  Info hints = Hints();
  hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
  Info data_auto;
  ASSERT_EQ(GetInfo(&data_auto, hints.get()), 0);
  for (fi_info* info = data_auto.get(); info != nullptr; info = info->next) {
    EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_AUTO)
        << info->fabric_attr->prov_name;
  }
  hints->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
  hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
  Info control_auto;
  ASSERT_EQ(GetInfo(&control_auto, hints.get()), 0);
  for (fi_info* info = control_auto.get(); info != nullptr;
       info = info->next) {
    EXPECT_EQ(info->domain_attr->control_progress, FI_PROGRESS_AUTO)
        << info->fabric_attr->prov_name;
    EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_MANUAL)
        << info->fabric_attr->prov_name;
  }
}

TEST(GetInfoTest, ModesAreClearedWhenNotNeeded) {
  Info hints = Hints();
  hints->mode = FI_CONTEXT | FI_MSG_PREFIX;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  for (fi_info* info : Items(list)) EXPECT_EQ(info->mode, 0u);
}

TEST(GetInfoTest, MrModeByVersion) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), nullptr, nullptr, 0,
                    FI_VERSION(1, 4)),
            0);
  EXPECT_EQ(list->domain_attr->mr_mode, FI_MR_SCALABLE);
  hints->domain_attr->mr_mode = FI_MR_BASIC;
  ASSERT_EQ(GetInfo(&list, hints.get(), nullptr, nullptr, 0,
                    FI_VERSION(1, 4)),
            0);
  EXPECT_EQ(list->domain_attr->mr_mode, FI_MR_BASIC);
  hints->domain_attr->mr_mode = FI_MR_LOCAL;
  EXPECT_EQ(GetInfo(&list, hints.get(), nullptr, nullptr, 0,
                    FI_VERSION(1, 4)),
            -FI_EINVAL);
  hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_EQ(list->domain_attr->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  // Bits we do not know are modes the application could support: ignored,
  // and never echoed back.
  hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_EQ(list->domain_attr->mr_mode & ~0xffc, 0);
}

TEST(GetInfoTest, ProvAttrOnlyGivesOnePerProvider) {
  Info list;
  ASSERT_EQ(GetInfo(&list, nullptr, nullptr, nullptr, FI_PROV_ATTR_ONLY), 0);
  std::vector<std::string> names;
  for (fi_info* info : Items(list)) {
    names.push_back(Provider(info));
    EXPECT_NE(info->fabric_attr->prov_version, 0u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"verbs", "tcp", "shm", "udp"}));
}

TEST(GetInfoTest, BogusInstancePointersAreEinval) {
  Info hints = Hints();
  int not_a_domain = 0;
  hints->domain_attr->domain = reinterpret_cast<fid_domain*>(&not_a_domain);
  Info list;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  hints->domain_attr->domain = nullptr;
  hints->fabric_attr->fabric = reinterpret_cast<fid_fabric*>(&not_a_domain);
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_EINVAL);
  hints->fabric_attr->fabric = nullptr;
  // Handles that are not our passive endpoints are not interpreted.
  hints->handle = reinterpret_cast<fid_t>(&not_a_domain);
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_EQ(list->handle, nullptr);
}

TEST(GetInfoTest, OpenedFabricRestrictsAndIsReferenced) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  EXPECT_EQ(list->fabric_attr->fabric, nullptr);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(list->fabric_attr, &fabric, nullptr), 0);

  Info by_instance = Hints();
  by_instance->fabric_attr->fabric = fabric;
  Info restricted;
  ASSERT_EQ(GetInfo(&restricted, by_instance.get()), 0);
  for (fi_info* info : Items(restricted)) {
    EXPECT_EQ(info->fabric_attr->fabric, fabric);
    EXPECT_STREQ(info->fabric_attr->name, list->fabric_attr->name);
    EXPECT_EQ(Provider(info), "tcp");
  }
  Info again;
  ASSERT_EQ(GetInfo(&again, hints.get()), 0);
  EXPECT_EQ(again->fabric_attr->fabric, fabric);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

TEST(GetInfoTest, ConcurrentCallsAgree) {
  Info reference;
  ASSERT_EQ(GetInfo(&reference, nullptr), 0);
  size_t expected = Items(reference).size();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        Info list;
        if (GetInfo(&list, nullptr) != 0 || Items(list).size() != expected) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
