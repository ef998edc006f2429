// File: apps/common/args.h
//
// The examples' command line, rc_pingpong style: no address runs the
// server, an address runs the client against that server.
//
//   PROGRAM [options]              server
//   PROGRAM [options] SERVER_ADDR  client
//     -p, --port PORT      the server's port (0: the server picks one)
//     -b, --bind ADDR      local interface address (default 127.0.0.1)
//         --prov NAME      provider (fabric_attr->prov_name; default: any)
//         --protocol NAME  only where the program lists protocols
//     -h, --help
//
// -h prints the usage on stdout and exits 0; a bad argument prints the
// reason and the usage on stderr and exits 2 (kUsageExit).
#ifndef APPS_COMMON_ARGS_H_
#define APPS_COMMON_ARGS_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace apps {

constexpr int kUsageExit = 2;

struct ArgSpec {
  const char* summary;    // one line: what the program shows
  uint16_t default_port;  // -p
  // Accepted --protocol words, the default first; empty: no --protocol.
  std::vector<std::string> protocols;
  const char* protocol_help = "";  // what the words mean
  const char* notes = "";          // printed last (exit codes, ...)
};

struct Args {
  std::string server;  // the server's address (client mode); empty: server
  std::string bind = "127.0.0.1";
  uint16_t port = 0;
  std::string prov;      // empty: any provider
  std::string protocol;  // one of ArgSpec::protocols, when it has any
  bool is_server() const { return server.empty(); }
  // "server" or "client", the prefix of every line the program prints.
  const char* role() const { return is_server() ? "server" : "client"; }
};

Args ParseArgs(int argc, char** argv, const ArgSpec& spec);

}  // namespace apps

#endif  // APPS_COMMON_ARGS_H_
