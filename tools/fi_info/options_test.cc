#include "tools/fi_info/options.h"

#include <rdma/fabric.h>

#include <cerrno>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

// Parses "fi_info ARGS..."; *errors receives what ParseCommandLine reports.
CommandLine Parse(std::vector<std::string> args, std::string* errors) {
  args.insert(args.begin(), "fi_info");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::ostringstream error_stream;
  CommandLine result = ParseCommandLine(static_cast<int>(args.size()),
                                        argv.data(), error_stream);
  *errors = error_stream.str();
  return result;
}

TEST(ParseCommandLineTest, NoOptionsRunsWithoutHints) {
  std::string errors;
  CommandLine command_line = Parse({}, &errors);
  EXPECT_EQ(command_line.action, Action::kRun);
  const Options& options = command_line.options;
  EXPECT_FALSE(options.use_hints);
  EXPECT_EQ(options.flags, 0u);
  EXPECT_EQ(options.mode, ~uint64_t{0});
  EXPECT_FALSE(options.node.has_value());
  EXPECT_FALSE(options.port.has_value());
  EXPECT_FALSE(options.verbose);
  EXPECT_FALSE(options.list_providers);
  EXPECT_FALSE(options.print_params);
  EXPECT_EQ(options.format, OutputFormat::kText);
  EXPECT_FALSE(options.explain);
  EXPECT_EQ(errors, "");
}

TEST(ParseCommandLineTest, CapsAreOredOverEveryOption) {
  std::string errors;
  CommandLine command_line =
      Parse({"-c", "FI_MSG", "--caps=FI_RMA|fi_tagged"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.caps, FI_MSG | FI_RMA | FI_TAGGED);
  EXPECT_TRUE(command_line.options.use_hints);
}

TEST(ParseCommandLineTest, TheLastModeOptionReplacesAllModes) {
  std::string errors;
  EXPECT_EQ(Parse({"-m", "FI_CONTEXT|FI_MSG_PREFIX"}, &errors).options.mode,
            FI_CONTEXT | FI_MSG_PREFIX);
  EXPECT_EQ(Parse({"-m", "FI_CONTEXT", "--mode", "FI_CONTEXT2"}, &errors)
                .options.mode,
            FI_CONTEXT2);
  EXPECT_EQ(Parse({"-m", ""}, &errors).options.mode, 0u);
}

TEST(ParseCommandLineTest, EndpointTypeAndAddressFormat) {
  std::string errors;
  CommandLine command_line =
      Parse({"-t", "FI_EP_RDM", "--addr_format=fi_sockaddr_in6"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.ep_type, uint64_t{FI_EP_RDM});
  EXPECT_EQ(command_line.options.addr_format, uint64_t{FI_SOCKADDR_IN6});
  EXPECT_TRUE(command_line.options.use_hints);
}

TEST(ParseCommandLineTest, ProviderDomainAndFabricNamesTheLastWins) {
  std::string errors;
  CommandLine command_line =
      Parse({"-p", "tcp", "--provider=udp", "-d", "lo", "-f", "127.0.0.1/32"},
            &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.provider, "udp");
  EXPECT_EQ(command_line.options.domain, "lo");
  EXPECT_EQ(command_line.options.fabric, "127.0.0.1/32");
  EXPECT_TRUE(command_line.options.use_hints);
}

TEST(ParseCommandLineTest, NodeAndPortAreNotHints) {
  std::string errors;
  CommandLine command_line = Parse({"-n", "host", "-P", "4000"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.node, "host");
  EXPECT_EQ(command_line.options.port, "4000");
  EXPECT_EQ(command_line.options.flags, 0u);
  EXPECT_FALSE(command_line.options.use_hints);
}

TEST(ParseCommandLineTest, SourceAddressSetsTheNodeAndFiSource) {
  std::string errors;
  CommandLine command_line =
      Parse({"-s", "10.0.0.1", "--node", "10.0.0.2"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.node, "10.0.0.2");
  EXPECT_EQ(command_line.options.flags, FI_SOURCE);
}

TEST(ParseCommandLineTest, ListAsksForProviderAttributesOnly) {
  std::string errors;
  CommandLine command_line = Parse({"--list"}, &errors);
  EXPECT_TRUE(command_line.options.list_providers);
  EXPECT_EQ(command_line.options.flags, FI_PROV_ATTR_ONLY);
}

TEST(ParseCommandLineTest, GetenvAndInfoShareOneSubstring) {
  std::string errors;
  CommandLine command_line = Parse({"-g", "log", "-i", "tcp"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_TRUE(command_line.options.print_params);
  EXPECT_TRUE(command_line.options.verbose);
  EXPECT_EQ(command_line.options.substring, "tcp");
}

TEST(ParseCommandLineTest, EnvAndVerboseTakeNoSubstring) {
  std::string errors;
  CommandLine command_line = Parse({"-e", "-v"}, &errors);
  EXPECT_TRUE(command_line.options.print_params);
  EXPECT_TRUE(command_line.options.verbose);
  EXPECT_FALSE(command_line.options.substring.has_value());
}

TEST(ParseCommandLineTest, OperandsAreIgnored) {
  std::string errors;
  CommandLine command_line = Parse({"operand", "-l", "another"}, &errors);
  EXPECT_EQ(command_line.action, Action::kRun);
  EXPECT_TRUE(command_line.options.list_providers);
}

TEST(ParseCommandLineTest, AnUnknownNameFailsWithEinval) {
  std::string errors;
  CommandLine command_line = Parse({"-c", "FI_MSG|FI_BOGUS"}, &errors);
  EXPECT_EQ(command_line.action, Action::kFail);
  EXPECT_EQ(command_line.exit_code, EINVAL);
  EXPECT_EQ(errors, "error: Unrecognized capability: FI_BOGUS\n");
}

TEST(ParseCommandLineTest, EachOptionNamesItsKindInErrors) {
  std::string errors;
  Parse({"-m", "FI_MSG"}, &errors);
  EXPECT_EQ(errors, "error: Unrecognized mode: FI_MSG\n");
  Parse({"-t", "FI_EP_MSG|FI_EP_RDM"}, &errors);
  EXPECT_EQ(errors, "error: Unrecognized endpoint type: FI_EP_MSG|FI_EP_RDM\n");
  Parse({"-a", "FI_SOCKADDR_UN"}, &errors);
  EXPECT_EQ(errors, "error: Unrecognized address format: FI_SOCKADDR_UN\n");
}

TEST(ParseCommandLineTest, TheFirstRejectedValueEndsReading) {
  std::string errors;
  CommandLine command_line =
      Parse({"-c", "FI_BOGUS", "-t", "FI_ALSO_BOGUS", "--version"}, &errors);
  EXPECT_EQ(command_line.action, Action::kFail);
  EXPECT_EQ(errors, "error: Unrecognized capability: FI_BOGUS\n");
}

TEST(ParseCommandLineTest, VersionEndsReading) {
  std::string errors;
  CommandLine command_line = Parse({"--version", "-c", "FI_BOGUS"}, &errors);
  EXPECT_EQ(command_line.action, Action::kPrintVersion);
  EXPECT_EQ(errors, "");
}

TEST(ParseCommandLineTest, HelpEndsReading) {
  std::string errors;
  EXPECT_EQ(Parse({"-h", "-c", "FI_BOGUS"}, &errors).action,
            Action::kPrintHelp);
  EXPECT_EQ(Parse({"--help"}, &errors).action, Action::kPrintHelp);
  EXPECT_EQ(errors, "");
}

TEST(ParseCommandLineTest, GetoptRejectionsAskForTheUsage) {
  std::string errors;
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"--bogus"}, &errors).action, Action::kPrintUsage);
  EXPECT_EQ(Parse({"-x"}, &errors).action, Action::kPrintUsage);
  EXPECT_EQ(Parse({"-c"}, &errors).action, Action::kPrintUsage);
  EXPECT_EQ(Parse({"--ver"}, &errors).action, Action::kPrintUsage);
  const std::string getopt_messages = testing::internal::GetCapturedStderr();
  EXPECT_NE(getopt_messages.find("fi_info: unrecognized option '--bogus'"),
            std::string::npos)
      << getopt_messages;
  EXPECT_NE(getopt_messages.find("fi_info: invalid option -- 'x'"),
            std::string::npos)
      << getopt_messages;
  EXPECT_NE(getopt_messages.find("fi_info: option requires an argument -- 'c'"),
            std::string::npos)
      << getopt_messages;
  EXPECT_NE(getopt_messages.find("'--ver' is ambiguous"), std::string::npos)
      << getopt_messages;
}

TEST(ParseCommandLineTest, UniqueLongOptionPrefixesAreAccepted) {
  std::string errors;
  CommandLine command_line = Parse({"--verb", "--prov=tcp"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_TRUE(command_line.options.verbose);
  EXPECT_EQ(command_line.options.provider, "tcp");
}

TEST(ParseCommandLineTest, FormatJsonAndExplain) {
  std::string errors;
  CommandLine command_line = Parse({"--format=json", "--explain"}, &errors);
  ASSERT_EQ(command_line.action, Action::kRun);
  EXPECT_EQ(command_line.options.format, OutputFormat::kJson);
  EXPECT_TRUE(command_line.options.explain);
  EXPECT_EQ(Parse({"--format", "text"}, &errors).options.format,
            OutputFormat::kText);
}

TEST(ParseCommandLineTest, AnUnknownFormatFailsWithEinval) {
  std::string errors;
  CommandLine command_line = Parse({"--format=xml"}, &errors);
  EXPECT_EQ(command_line.action, Action::kFail);
  EXPECT_EQ(command_line.exit_code, EINVAL);
  EXPECT_EQ(errors, "error: Unrecognized output format: xml\n");
}

TEST(ParseCommandLineTest, JsonDoesNotApplyToParameters) {
  std::string errors;
  CommandLine command_line = Parse({"--format=json", "-g", "log"}, &errors);
  EXPECT_EQ(command_line.action, Action::kFail);
  EXPECT_EQ(command_line.exit_code, EINVAL);
  EXPECT_EQ(errors,
            "error: --format=json does not apply to -e/--env or "
            "-g/--getenv\n");
}

TEST(ParseCommandLineTest, ParsesAgainFromTheStart) {
  std::string errors;
  Parse({"-l", "-v"}, &errors);
  CommandLine command_line = Parse({"-p", "tcp"}, &errors);
  EXPECT_FALSE(command_line.options.list_providers);
  EXPECT_FALSE(command_line.options.verbose);
  EXPECT_EQ(command_line.options.provider, "tcp");
}

}  // namespace
}  // namespace fi_info_tool
