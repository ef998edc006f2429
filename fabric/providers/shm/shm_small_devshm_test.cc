// A /dev/shm too small for shm (a common container setup): fi_getinfo
// offers no shm and says why (bytes needed and free), and when the space
// runs out after fi_getinfo, the transmit that needs a new connection
// fails with -FI_ENOSPC instead of a SIGBUS later, and a tcp RDM endpoint
// whose local path (tcp_local_path.h) finds no room for a connection sends
// over TCP instead. Runs in a child process
// with a mount namespace of its own and a small tmpfs on /dev/shm; skipped
// (with the reason) where mounting is not allowed.
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace {

constexpr int kSkipped = 77;

// A tmpfs of `kib` KiB on /dev/shm, seen by this process only.
bool MountSmallDevShm(int kib) {
  std::string options = absl::StrCat("size=", kib, "k,mode=1777");
  return unshare(CLONE_NEWNS) == 0 &&
         mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount("tmpfs", "/dev/shm", "tmpfs", 0, options.c_str()) == 0;
}

// Two endpoints of one domain, AV and CQ (objects.ep is a), and b's
// address in the AV.
struct Pair {
  fabric::fixtures::Objects objects;
  fid_ep* b = nullptr;
  fi_addr_t to_b = FI_ADDR_NOTAVAIL;
};

// Opens the AV, the CQ and both endpoints of `pair` in its domain; 0 or
// the failing step.
int OpenEndpoints(Pair* pair) {
  fabric::fixtures::Objects& objects = pair->objects;
  fi_cq_attr cq_attr = {};
  if (fabric::fixtures::OpenTableAv(objects.domain, &objects.av) != 0 ||
      fi_cq_open(objects.domain, &cq_attr, &objects.cq, nullptr) != 0) {
    return 1;
  }
  for (fid_ep** ep : {&objects.ep, &pair->b}) {
    if (fabric::fixtures::OpenBoundEndpoint(objects.domain, objects.info,
                                            objects.av, objects.cq, ep) != 0) {
      return 2;
    }
  }
  sockaddr_in name = {};
  size_t len = sizeof(name);
  if (fi_getname(&pair->b->fid, &name, &len) != 0 ||
      fi_av_insert(objects.av, &name, 1, &pair->to_b, 0, nullptr) != 1) {
    return 3;
  }
  return 0;
}

int ClosePair(Pair* pair) {
  if (pair->b != nullptr && fi_close(&pair->b->fid) != 0) return 1;
  return fabric::fixtures::CloseObjects(&pair->objects);
}

// a's message reaches b (over TCP: shm has no room); 0 or the failing step.
int TcpPairDelivers(Pair* pair) {
  char in[8] = {};
  if (fi_recv(pair->b, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, in) != 0 ||
      fi_inject(pair->objects.ep, "tcp", 4, pair->to_b) != 0) {
    return 1;
  }
  fi_cq_msg_entry entry;
  for (int i = 0; i < 1000000; ++i) {
    ssize_t rc = fi_cq_read(pair->objects.cq, &entry, 1);
    if (rc == 1) return strcmp(in, "tcp") == 0 ? 0 : 2;
    if (rc != -FI_EAGAIN) return 3;
  }
  return 4;
}

fi_info* ShmHints() {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("shm");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  return hints;
}

// The child's checks; its exit code says which failed.
int RunInChild() {
  // 64 KiB: less than an endpoint and one connection (2 x 64 KiB rings).
  if (!MountSmallDevShm(64)) {
    fprintf(stderr, "skipped: cannot mount a tmpfs: %s\n", strerror(errno));
    return kSkipped;
  }
  fi_info* hints = ShmHints();
  fi_info* info = nullptr;
  if (fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info) !=
      -FI_ENODATA) {
    return 10;
  }
  // Room for the endpoints and a little, not for a connection.
  if (umount("/dev/shm") != 0 ||
      mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=512k,mode=1777") != 0) {
    return 11;
  }
  if (fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info) != 0) {
    return 12;
  }
  fi_freeinfo(hints);
  Pair shm;
  shm.objects.info = info;
  if (fi_fabric(info->fabric_attr, &shm.objects.fabric, nullptr) != 0 ||
      fi_domain(shm.objects.fabric, info, &shm.objects.domain, nullptr) != 0 ||
      OpenEndpoints(&shm) != 0) {
    return 13;
  }
  // Two tcp RDM endpoints on 127.0.0.1 (local paths through shm, the
  // default).
  Pair tcp;
  if (fabric::fixtures::OpenLoopbackDomain(
          FI_EP_RDM, FI_MSG, [](fi_info*) {}, &tcp.objects) != 0 ||
      OpenEndpoints(&tcp) != 0) {
    return 20;
  }
  // Someone else takes the space meanwhile.
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) return 16;
  int junk = open("/dev/shm/junk", O_RDWR | O_CREAT, 0600);
  off_t take = static_cast<off_t>(fs.f_bavail * fs.f_bsize) - 16 * 1024;
  if (junk < 0 || posix_fallocate(junk, 0, take) != 0) return 17;
  if (fi_inject(shm.objects.ep, "x", 2, shm.to_b) != -FI_ENOSPC) return 18;
  if (TcpPairDelivers(&tcp) != 0) return 21;
  if (ClosePair(&tcp) != 0) return 22;
  if (ClosePair(&shm) != 0) return 19;
  return 0;
}

TEST(ShmSmallDevShmTest, SaysWhyAndFailsCleanly) {
  std::string log = absl::StrCat(getenv("TEST_TMPDIR"), "/child.log");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    setenv("FI_LOG_LEVEL", "warn", 1);
    _exit(RunInChild());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << "child died: " << text;
  if (WEXITSTATUS(status) == kSkipped) GTEST_SKIP() << text;
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
  // fi_getinfo's reason names the bytes needed and the bytes free.
  EXPECT_NE(text.find("/dev/shm cannot hold an endpoint and a connection"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("65536 free"), std::string::npos) << text;
}

}  // namespace
