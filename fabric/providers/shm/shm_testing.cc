#include "fabric/providers/shm/shm_testing.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/providers/shm/shm_process.h"
#include "fabric/providers/shm/shm_segment_header.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {

IpAddress LoopbackAddress(uint16_t port) {
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  in.sin_port = htons(port);
  return *IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&in),
                                  sizeof(in));
}

std::string TestPrefix() {
  const testing::TestInfo* test =
      testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat("/fabric-shmtest-", absl::Hex(std::random_device()()),
                      "-", test != nullptr ? test->name() : "none");
}

std::vector<std::string> ShmNamesWithPrefix(absl::string_view prefix) {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (struct dirent* entry = readdir(dir)) {
    std::string name = absl::StrCat("/", entry->d_name);
    if (absl::StartsWith(name, prefix)) names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

void RemoveShmNamesWithPrefix(absl::string_view prefix) {
  for (const std::string& name : ShmNamesWithPrefix(prefix)) {
    shm_unlink(name.c_str());
  }
}

absl::Status WriteShmFile(const std::string& name, absl::string_view bytes,
                          mode_t mode) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return absl::InternalError(strerror(errno));
  bool ok = write(fd, bytes.data(), bytes.size()) ==
                static_cast<ssize_t>(bytes.size()) &&
            fchmod(fd, mode) == 0;
  int err = errno;
  close(fd);
  return ok ? absl::OkStatus() : absl::InternalError(strerror(err));
}

SegmentInfo InfoInOurNamespace(uint64_t size, pid_t pid, uint64_t start_time) {
  return SegmentInfo{pid, start_time, OwnPidNamespace().value(), size};
}

std::string SegmentBytes(const SegmentInfo& info) {
  alignas(SegmentHeader) char header[kSegmentPayloadOffset] = {};
  WriteSegmentHeader(header, info);
  std::string bytes(header, sizeof(header));
  bytes.resize(std::max<size_t>(info.size, bytes.size()), '\0');
  return bytes;
}

}  // namespace shm
}  // namespace fabric
