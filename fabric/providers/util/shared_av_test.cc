// Named (shared) AVs: a forked process reading the creator's table, joining
// writers, bad input, and tables corrupted behind the library's back.
#include "fabric/providers/util/shared_av.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback_domain_test.h"
#include "fabric/providers/util/av.h"
#include "gtest/gtest.h"

namespace {

using fabric::fixtures::Ipv4;

std::string UniqueName(const char* test) {
  static const std::string run = std::to_string(std::random_device()());
  return "fabric_av_test_" + run + "_" + test;
}

bool SameIpv4(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_family == b.sin_family && a.sin_port == b.sin_port &&
         a.sin_addr.s_addr == b.sin_addr.s_addr;
}

fabric::IpAddress Ip(const sockaddr_in& addr) {
  return *fabric::IpAddress::FromSockaddr(
      reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
}

// A tcp RDM domain on lo with FI_SHARED_AV, and the named AVs a test opens
// (closed in TearDown, last opened first).
class SharedAvTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenDomain([](fi_info* hints) {
      hints->ep_attr->type = FI_EP_RDM;
      hints->addr_format = FI_SOCKADDR_IN;
      hints->domain_attr->caps = FI_SHARED_AV;
    }));
  }
  void TearDown() override {
    while (!avs_.empty()) Close(avs_.back());
    LoopbackDomainTest::TearDown();
  }
  int Open(fi_av_attr& attr, fid_av** av) {
    int rc = fi_av_open(domain_, &attr, av, nullptr);
    if (rc == 0) avs_.push_back(*av);
    return rc;
  }
  int Open(const std::string& name, uint64_t flags, fid_av** av,
           size_t count = 0) {
    fi_av_attr attr = {};
    attr.type = FI_AV_TABLE;
    attr.name = name.c_str();
    attr.flags = flags;
    attr.count = count;
    return Open(attr, av);
  }
  void Close(fid_av* av) {
    avs_.erase(std::find(avs_.begin(), avs_.end(), av));
    EXPECT_EQ(fi_close(&av->fid), 0);
  }

  std::vector<fid_av*> avs_;
};

#define CHILD_CHECK(condition)                                      \
  do {                                                              \
    if (!(condition)) {                                             \
      fprintf(stderr, "child, line %d: %s\n", __LINE__, #condition); \
      return 1;                                                     \
    }                                                               \
  } while (0)

// What another process opens: tcp RDM on lo with FI_SHARED_AV; null when
// fi_getinfo fails.
fi_info* SharedAvInfo() {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  hints->ep_attr->type = FI_EP_RDM;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->caps = FI_SHARED_AV;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  return rc == 0 ? info : nullptr;
}

// The other process: its own fabric and domain, and AV `name` read-only.
// It reports through `to_parent` once open, and looks up what the parent
// inserted meanwhile when `from_parent` says so. 0 when all is as expected.
int ReaderProcess(const std::string& name, const sockaddr_in* peers,
                  int to_parent, int from_parent) {
  fi_info* info = SharedAvInfo();
  CHILD_CHECK(info != nullptr);
  fid_fabric* fabric;
  fid_domain* domain;
  fid_av* av;
  CHILD_CHECK(fi_fabric(info->fabric_attr, &fabric, nullptr) == 0);
  CHILD_CHECK(fi_domain(fabric, info, &domain, nullptr) == 0);
  fi_av_attr attr = {};
  attr.name = name.c_str();
  attr.flags = FI_READ;
  CHILD_CHECK(fi_av_open(domain, &attr, &av, nullptr) == 0);

  sockaddr_in out;
  size_t len = sizeof(out);
  CHILD_CHECK(fi_av_lookup(av, 0, &out, &len) == 0);
  CHILD_CHECK(len == sizeof(out) && SameIpv4(out, peers[0]));
  CHILD_CHECK(fi_av_lookup(av, 1, &out, &len) == -FI_EINVAL);  // removed
  CHILD_CHECK(fi_av_lookup(av, 2, &out, &len) == 0);
  CHILD_CHECK(SameIpv4(out, peers[2]));
  CHILD_CHECK(fi_av_lookup(av, 3, &out, &len) == -FI_EINVAL);  // not yet
  CHILD_CHECK(fabric::AvFindIp(fabric::AsUtilAv(&av->fid), Ip(peers[2])) ==
              2);
  CHILD_CHECK(fi_av_insert(av, &peers[3], 1, nullptr, 0, nullptr) ==
              -FI_EOPNOTSUPP);

  CHILD_CHECK(write(to_parent, "o", 1) == 1);
  char byte;
  CHILD_CHECK(read(from_parent, &byte, 1) == 1);
  CHILD_CHECK(fi_av_lookup(av, 3, &out, &len) == 0);
  CHILD_CHECK(SameIpv4(out, peers[3]));

  CHILD_CHECK(fi_close(&av->fid) == 0);
  CHILD_CHECK(fi_close(&domain->fid) == 0);
  CHILD_CHECK(fi_close(&fabric->fid) == 0);
  fi_freeinfo(info);
  return 0;
}

TEST_F(SharedAvTest, AnotherProcessReadsTheSameAddresses) {
  std::string name = UniqueName("fork");
  fid_av* writer;
  ASSERT_EQ(Open(name, 0, &writer, 16), 0);
  sockaddr_in peers[4] = {Ipv4("127.0.0.1", 7000), Ipv4("10.0.0.2", 7001),
                          Ipv4("192.0.2.7", 7002), Ipv4("127.0.0.9", 7003)};
  fi_addr_t fi_addr[3];
  ASSERT_EQ(fi_av_insert(writer, peers, 3, fi_addr, 0, nullptr), 3);
  ASSERT_EQ(fi_av_remove(writer, &fi_addr[1], 1, 0), 0);

  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(to_parent[0]);
    close(to_child[1]);
    _exit(ReaderProcess(name, peers, to_parent[1], to_child[0]));
  }
  close(to_parent[1]);
  close(to_child[0]);
  char byte = 0;
  EXPECT_EQ(read(to_parent[0], &byte, 1), 1);  // the child has opened it
  fi_addr_t later = 0;
  EXPECT_EQ(fi_av_insert(writer, &peers[3], 1, &later, 0, nullptr), 1);
  EXPECT_EQ(later, 3u);
  EXPECT_EQ(write(to_child[1], "i", 1), 1);
  close(to_parent[0]);
  close(to_child[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child printed what failed";
}

TEST_F(SharedAvTest, ReadersFollowTheWritersAndOutliveTheCreator) {
  std::string name = UniqueName("follow");
  fi_av_attr attr = {};
  attr.name = name.c_str();
  attr.count = 2;
  fid_av* creator;
  ASSERT_EQ(Open(attr, &creator), 0);
  EXPECT_NE(attr.map_addr, nullptr);  // NULL asks where it is mapped
  fid_av* reader;
  ASSERT_EQ(Open(name, FI_READ, &reader), 0);
  fid_av* joiner;  // the name exists: this open joins it as a writer
  ASSERT_EQ(Open(name, 0, &joiner, 100), 0);

  sockaddr_in peers[3] = {Ipv4("127.0.0.1", 1), Ipv4("127.0.0.2", 2),
                          Ipv4("127.0.0.3", 3)};
  fi_addr_t first;
  fi_addr_t second;
  ASSERT_EQ(fi_av_insert(creator, &peers[0], 1, &first, 0, nullptr), 1);
  ASSERT_EQ(fi_av_insert(joiner, &peers[1], 1, &second, 0, nullptr), 1);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(second, 1u);
  // The creator's count (2) sized the table; the joiner's was ignored.
  int errors[1] = {0};
  fi_addr_t none;
  EXPECT_EQ(fi_av_insert(joiner, &peers[2], 1, &none, FI_SYNC_ERR, errors),
            0);
  EXPECT_EQ(errors[0], -FI_ENOSPC);
  EXPECT_EQ(none, FI_ADDR_NOTAVAIL);

  // Misses refresh each process's view from the table.
  fabric::UtilAv* reader_av = fabric::AsUtilAv(&reader->fid);
  EXPECT_EQ(fabric::AvFindIp(reader_av, Ip(peers[1])), 1u);
  EXPECT_EQ(fabric::AvLookupIp(fabric::AsUtilAv(&creator->fid), 1)->port(),
            2);
  EXPECT_EQ(fabric::AvAddresses(reader_av), (std::vector<fi_addr_t>{0, 1}));
  ASSERT_EQ(fi_av_remove(creator, &second, 1, 0), 0);  // the joiner's entry
  EXPECT_EQ(fabric::AvFindIp(reader_av, Ip(peers[2])), FI_ADDR_NOTAVAIL);
  EXPECT_EQ(fabric::AvAddresses(reader_av), (std::vector<fi_addr_t>{0}));
  EXPECT_EQ(fabric::AvAddresses(fabric::AsUtilAv(&joiner->fid)),
            (std::vector<fi_addr_t>{0}));

  // The table lives while anyone holds it, the creator or not; the last
  // close removes the name.
  Close(joiner);
  Close(creator);
  fid_av* late;
  ASSERT_EQ(Open(name, FI_READ, &late), 0);
  sockaddr_in out;
  size_t len = sizeof(out);
  ASSERT_EQ(fi_av_lookup(late, 0, &out, &len), 0);
  EXPECT_TRUE(SameIpv4(out, peers[0]));
  Close(late);
  ASSERT_EQ(fi_av_lookup(reader, 0, &out, &len), 0);
  EXPECT_TRUE(SameIpv4(out, peers[0]));
  Close(reader);
  EXPECT_EQ(Open(name, FI_READ, &late), -FI_ENOENT);
  EXPECT_EQ(shm_open(("/" + name).c_str(), O_RDONLY, 0), -1);
}

// A process killed while it holds a named AV leaves its table behind; the
// next writer to open the name starts a new, empty table instead of joining
// the full, stale one (a reader finds none). While the process lives, the
// name is joined as usual.
TEST_F(SharedAvTest, ATableLeftByKilledProcessesStartsAfresh) {
  std::string name = UniqueName("killed");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Its own fabric, domain and AV of two slots, filled, then it waits to
    // be killed.
    fi_info* info = SharedAvInfo();
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    fid_av* av = nullptr;
    fi_av_attr attr = {};
    attr.name = name.c_str();
    attr.count = 2;
    sockaddr_in peers[2] = {Ipv4("127.0.0.1", 1), Ipv4("127.0.0.2", 2)};
    bool ok = info != nullptr &&
              fi_fabric(info->fabric_attr, &fabric, nullptr) == 0 &&
              fi_domain(fabric, info, &domain, nullptr) == 0 &&
              fi_av_open(domain, &attr, &av, nullptr) == 0 &&
              fi_av_insert(av, peers, 2, nullptr, 0, nullptr) == 2;
    if (write(ready[1], ok ? "y" : "n", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y');

  // Alive: joined, full.
  fid_av* joined;
  ASSERT_EQ(Open(name, 0, &joined, 2), 0);
  sockaddr_in third = Ipv4("127.0.0.3", 3);
  int errors[1] = {0};
  fi_addr_t addr;
  EXPECT_EQ(fi_av_insert(joined, &third, 1, &addr, FI_SYNC_ERR, errors), 0);
  EXPECT_EQ(errors[0], -FI_ENOSPC);
  Close(joined);

  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // Its table is still there, held by nobody.
  int left = shm_open(("/" + name).c_str(), O_RDONLY, 0);
  ASSERT_GE(left, 0);
  close(left);
  fid_av* reader;
  EXPECT_EQ(Open(name, FI_READ, &reader), -FI_ENOENT);
  fid_av* fresh;
  ASSERT_EQ(Open(name, 0, &fresh, 2), 0);
  EXPECT_EQ(fi_av_insert(fresh, &third, 1, &addr, 0, nullptr), 1);
  EXPECT_EQ(addr, 0u);
  Close(fresh);
  EXPECT_EQ(shm_open(("/" + name).c_str(), O_RDONLY, 0), -1);
}

TEST_F(SharedAvTest, BadNamesFlagsAndReadOnlyChanges) {
  fid_av* av = nullptr;
  EXPECT_EQ(Open("", 0, &av), -FI_EINVAL);
  EXPECT_EQ(Open("a/b", 0, &av), -FI_EINVAL);
  EXPECT_EQ(Open(".", 0, &av), -FI_EINVAL);
  EXPECT_EQ(Open("..", FI_READ, &av), -FI_EINVAL);
  EXPECT_EQ(Open(std::string(fabric::kSharedAvMaxNameLength + 1, 'n'), 0, &av),
            -FI_EINVAL);
  EXPECT_EQ(Open(UniqueName("big"), 0, &av, fabric::kSharedAvMaxCount + 1),
            -FI_EINVAL);
  EXPECT_EQ(Open(UniqueName("missing"), FI_READ, &av), -FI_ENOENT);
  fi_av_attr attr = {};
  attr.flags = FI_READ;  // without a name
  EXPECT_EQ(Open(attr, &av), -FI_EINVAL);
  EXPECT_EQ(av, nullptr);

  std::string name = UniqueName("readonly");
  fid_av* writer;
  ASSERT_EQ(Open(name, 0, &writer), 0);
  sockaddr_in peer = Ipv4("127.0.0.1", 9);
  fi_addr_t fi_addr;
  ASSERT_EQ(fi_av_insert(writer, &peer, 1, &fi_addr, 0, nullptr), 1);
  fid_av* reader;
  ASSERT_EQ(Open(name, FI_READ, &reader), 0);
  EXPECT_EQ(fi_av_insert(reader, &peer, 1, nullptr, 0, nullptr),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_av_insertsvc(reader, "127.0.0.1", "9", nullptr, 0, nullptr),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_av_insertsym(reader, "127.0.0.1", 1, "9", 1, nullptr, 0,
                            nullptr),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_av_remove(reader, &fi_addr, 1, 0), -FI_EOPNOTSUPP);
  sockaddr_in out;
  size_t len = sizeof(out);
  ASSERT_EQ(fi_av_lookup(reader, fi_addr, &out, &len), 0);
  EXPECT_TRUE(SameIpv4(out, peer));
}

// A shared memory object the test writes itself; unlinked at the end.
class RawShm {
 public:
  RawShm(const std::string& name, size_t size) : path_("/" + name) {
    fd_ = shm_open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd_, 0);
    if (size > 0) {
      EXPECT_EQ(ftruncate(fd_, size), 0);
    }
  }
  ~RawShm() {
    close(fd_);
    shm_unlink(path_.c_str());
  }
  void Fill(unsigned char byte, size_t size) {
    std::vector<unsigned char> bytes(size, byte);
    EXPECT_EQ(pwrite(fd_, bytes.data(), size, 0),
              static_cast<ssize_t>(size));
  }

 private:
  std::string path_;
  int fd_;
};

TEST_F(SharedAvTest, ObjectsThatAreNotTablesAreRejected) {
  fid_av* av = nullptr;
  std::string name = UniqueName("empty");
  {
    RawShm empty(name, 0);  // as if its creator were still busy
    EXPECT_EQ(Open(name, FI_READ, &av), -FI_EAGAIN);
    EXPECT_EQ(Open(name, 0, &av), -FI_EAGAIN);
  }
  name = UniqueName("tiny");
  {
    RawShm tiny(name, 10);
    EXPECT_EQ(Open(name, FI_READ, &av), -FI_EINVAL);
  }
  name = UniqueName("garbage");
  {
    RawShm garbage(name, 4096);
    garbage.Fill(0xab, 4096);
    EXPECT_EQ(Open(name, FI_READ, &av), -FI_EINVAL);
    EXPECT_EQ(Open(name, 0, &av), -FI_EINVAL);
  }
  EXPECT_EQ(av, nullptr);
}

// Maps the table of `name` writable, as a misbehaving process would.
class TableEditor {
 public:
  explicit TableEditor(const std::string& name) {
    int fd = shm_open(("/" + name).c_str(), O_RDWR, 0);
    EXPECT_GE(fd, 0);
    struct stat st;
    EXPECT_EQ(fstat(fd, &st), 0);
    size_ = st.st_size;
    map_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(map_, MAP_FAILED);
    close(fd);
  }
  ~TableEditor() { munmap(map_, size_); }
  fabric::SharedAvHeader& header() {
    return *static_cast<fabric::SharedAvHeader*>(map_);
  }
  fabric::SharedAvSlot& slot(size_t i) {
    return reinterpret_cast<fabric::SharedAvSlot*>(&header() + 1)[i];
  }

 private:
  void* map_;
  size_t size_;
};

TEST_F(SharedAvTest, CorruptHeadersAndSlotsAreNeverTrusted) {
  std::string name = UniqueName("corrupt");
  fid_av* writer;
  ASSERT_EQ(Open(name, 0, &writer, 8), 0);
  std::vector<sockaddr_in> peers;
  for (uint16_t port = 1; port <= 5; ++port) {
    peers.push_back(Ipv4("127.0.0.1", port));
  }
  ASSERT_EQ(fi_av_insert(writer, peers.data(), 5, nullptr, 0, nullptr), 5);

  TableEditor table(name);
  table.slot(0).address[0] = 99;  // sa_family 99 (little endian)
  table.slot(0).address[1] = 0;
  table.slot(1).length = 1000;
  table.slot(2).state.store(7);
  table.slot(3).length = sizeof(sockaddr_in6);  // an AF_INET address
  table.header().next.store(UINT64_MAX);
  fid_av* reader;
  ASSERT_EQ(Open(name, FI_READ, &reader), 0);
  sockaddr_in out;
  for (fi_addr_t bad : {0, 1, 2, 3, 5, 7, 8, 1000}) {
    size_t len = sizeof(out);
    EXPECT_EQ(fi_av_lookup(reader, bad, &out, &len), -FI_EINVAL) << bad;
  }
  size_t len = sizeof(out);
  ASSERT_EQ(fi_av_lookup(reader, 4, &out, &len), 0);
  EXPECT_TRUE(SameIpv4(out, peers[4]));

  // Headers that do not describe the object are refused at open.
  fid_av* other = nullptr;
  table.header().capacity = 1 << 30;
  EXPECT_EQ(Open(name, FI_READ, &other), -FI_EINVAL);
  table.header().capacity = 100;  // more slots than the object holds
  EXPECT_EQ(Open(name, FI_READ, &other), -FI_EINVAL);
  table.header().capacity = 8;
  table.header().slot_size = 1;
  EXPECT_EQ(Open(name, 0, &other), -FI_EINVAL);
  table.header().slot_size = sizeof(fabric::SharedAvSlot);
  table.header().addr_format = FI_SOCKADDR_IN6;  // not the domain's format
  EXPECT_EQ(Open(name, FI_READ, &other), -FI_EINVAL);
  table.header().addr_format = FI_SOCKADDR_IN;
  table.header().magic.store(0x1234);
  EXPECT_EQ(Open(name, FI_READ, &other), -FI_EINVAL);
  EXPECT_EQ(other, nullptr);
}

TEST(SharedAvTableTest, AddrStrTablesHoldBothFamilies) {
  std::string name = UniqueName("str");
  auto writer = fabric::SharedAvTable::OpenForWrite(name, FI_ADDR_STR, 4);
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto v4 = fabric::ResolveIp("127.0.0.1", "5", AF_INET, true, false);
  auto v6 = fabric::ResolveIp("::1", "6", AF_INET6, true, false);
  ASSERT_TRUE(v4.ok() && v6.ok());
  EXPECT_EQ(*(*writer)->Insert(v4->front()), 0u);
  EXPECT_EQ(*(*writer)->Insert(v6->front()), 1u);
  auto reader = fabric::SharedAvTable::OpenForRead(name, FI_ADDR_STR);
  ASSERT_TRUE(reader.ok()) << reader.status();
  fabric::SharedAvSnapshot snapshot = (*reader)->Snapshot();
  ASSERT_EQ(snapshot.addresses.size(), 2u);
  EXPECT_EQ(snapshot.addresses[1]->HostString(), "::1");
  EXPECT_EQ(snapshot.malformed, 0u);
  // An IPv4-only domain cannot use a table that may hold IPv6 addresses.
  EXPECT_FALSE(fabric::SharedAvTable::OpenForRead(name, FI_SOCKADDR_IN).ok());
}

}  // namespace
