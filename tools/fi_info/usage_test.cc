#include "tools/fi_info/usage.h"

#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

// libfabric 1.17's fi_info usage, as /usr/bin/fi_info prints it.
constexpr char kLibfabricUsage[] =
    "Usage: fi_info\n"
    "  -h, --help\t\t\tdisplay this help and exit\n"
    "  -s, --src_addr=ADDR\t\tsource name or address\n"
    "  -n, --node=NAME\t\tdest node name or address\n"
    "  -P, --port=PNUM\t\tport number\n"
    "  -c, --caps=CAP1|CAP2..\tone or more capabilities: FI_MSG|FI_RMA...\n"
    "  -m, --mode=MOD1|MOD2..\tone or more modes, default all modes\n"
    "  -t, --ep_type=EPTYPE\t\tspecify single endpoint type: FI_EP_MSG, "
    "FI_EP_DGRAM...\n"
    "  -d, --domain=DOMAIN\t\tspecify the domain name\n"
    "  -f, --fabric=FABRIC\t\tspecify the fabric name\n"
    "  -a, --addr_format=FMT\t\tspecify accepted address format: "
    "FI_FORMAT_UNSPEC, FI_SOCKADDR...\n"
    "  -p, --provider=PROV\t\tspecify provider explicitly\n"
    "  -e, --env\t\t\tprint libfabric environment variables\n"
    "  -g, --getenv=SUBSTR\t\tprint libfabric environment variables with "
    "substr\n"
    "  -i, --info=\t\tprint fi_info structures containing substr\n"
    "  -l, --list\t\t\tlist available libfabric providers\n"
    "  -v, --verbose\t\t\tverbose output\n"
    "  --version\t\t\tprint version info and exit\n";

TEST(UsageTest, IsLibfabricFiInfosUsage) {
  std::ostringstream out;
  PrintUsage(out, "fi_info");
  EXPECT_EQ(out.str(), kLibfabricUsage);
}

TEST(UsageTest, NamesTheProgramAsInvoked) {
  std::ostringstream out;
  PrintUsage(out, "/opt/fabric/bin/fi_info");
  EXPECT_EQ(out.str().rfind("Usage: /opt/fabric/bin/fi_info\n", 0), 0u);
}

TEST(HelpTest, IsTheUsageThenTheAdditions) {
  std::ostringstream out;
  PrintHelp(out, "fi_info");
  const std::string help = out.str();
  EXPECT_EQ(help.rfind(kLibfabricUsage, 0), 0u) << help;
  const std::string additions = help.substr(sizeof(kLibfabricUsage) - 1);
  EXPECT_NE(additions.find("  --format=FMT\t\toutput format: text (default) "
                           "or json\n"),
            std::string::npos)
      << additions;
  EXPECT_NE(additions.find("  --explain\t\t\t"), std::string::npos)
      << additions;
  EXPECT_NE(additions.find("FI_LOG_LEVEL=warn and FI_LOG_SUBSYS=core"),
            std::string::npos)
      << additions;
  EXPECT_NE(additions.find("\"caps\": [FLAG]"), std::string::npos) << additions;
}

}  // namespace
}  // namespace fi_info_tool
