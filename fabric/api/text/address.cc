// Addresses as libfabric 1.17's fi_tostr prints them. The fields are read at
// libfabric's offsets for each format, whatever the address really holds
// (an IPv4 family in an FI_SOCKADDR_IN6 address prints as IPv4).
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <rdma/fabric.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/api/text/printers.h"

namespace fabric::text {
namespace {

// Field offsets within struct sockaddr_in, sockaddr_in6 and libfabric's
// sockaddr_ib, and within the IB UD and EFA address layouts.
constexpr size_t kFamilyOffset = 0;
constexpr size_t kPortOffset = 2;
constexpr size_t kIn4AddrOffset = 4;
constexpr size_t kIn6AddrOffset = 8;
constexpr size_t kIbGidOffset = 8;
constexpr size_t kIbSidOffset = 24;
constexpr size_t kIbScopeIdOffset = 40;
constexpr size_t kGidQpnOffset = 16;
constexpr size_t kIbUdLidOffset = 20;
constexpr size_t kIbUdPkeyOffset = 22;
constexpr size_t kIbUdSlOffset = 26;
constexpr size_t kEfaQkeyOffset = 20;

template <typename T>
T Load(const void* addr, size_t offset) {
  T value;
  memcpy(&value, static_cast<const char*>(addr) + offset, sizeof(value));
  return value;
}

// inet_ntop of the family's address bytes at offset; false for a family
// other than AF_INET and AF_INET6.
bool IpText(int family, const void* addr, size_t offset,
            char (&text)[INET6_ADDRSTRLEN]) {
  unsigned char bytes[sizeof(struct in6_addr)];
  if (family == AF_INET) {
    memcpy(bytes, static_cast<const char*>(addr) + offset,
           sizeof(struct in_addr));
  } else if (family == AF_INET6) {
    memcpy(bytes, static_cast<const char*>(addr) + offset, sizeof(bytes));
  } else {
    return false;
  }
  return inet_ntop(family, bytes, text, sizeof(text)) != nullptr;
}

void GidText(const void* addr, size_t offset, char (&text)[INET6_ADDRSTRLEN]) {
  IpText(AF_INET6, addr, offset, text);
}

int Family(const void* addr) { return Load<sa_family_t>(addr, kFamilyOffset); }
int Port(const void* addr) { return ntohs(Load<uint16_t>(addr, kPortOffset)); }

void AppendSockaddrIn(TextBuffer& out, const void* addr) {
  char ip[INET6_ADDRSTRLEN];
  if (!IpText(Family(addr), addr, kIn4AddrOffset, ip)) return;
  out.AppendAddressf("fi_sockaddr_in://%s:%d", ip, Port(addr));
}

void AppendSockaddrIn6(TextBuffer& out, const void* addr) {
  char ip[INET6_ADDRSTRLEN];
  if (!IpText(Family(addr), addr, kIn6AddrOffset, ip)) return;
  out.AppendAddressf("fi_sockaddr_in6://[%s]:%d", ip, Port(addr));
}

// The pkey, the port space (bits 16-27 of the service id) and the low byte of
// the scope id.
void AppendSockaddrIb(TextBuffer& out, const void* addr) {
  char gid[INET6_ADDRSTRLEN];
  GidText(addr, kIbGidOffset, gid);
  uint64_t sid = be64toh(Load<uint64_t>(addr, kIbSidOffset));
  uint64_t scope_id = be64toh(Load<uint64_t>(addr, kIbScopeIdOffset));
  int pkey = Port(addr);  // where sockaddr_in has its port
  out.AppendAddressf("fi_sockaddr_ib://[%s]:0x%x:0x%x:0x%x", gid, pkey,
                     static_cast<unsigned>((sid >> 16) & 0xfff),
                     static_cast<unsigned>(scope_id & 0xff));
}

void AppendIbUd(TextBuffer& out, const void* addr) {
  char gid[INET6_ADDRSTRLEN];
  GidText(addr, 0, gid);
  out.AppendAddressf("fi_addr_ib_ud://%s:%x/%x/%x/%x", gid,
                     Load<uint32_t>(addr, kGidQpnOffset),
                     Load<uint16_t>(addr, kIbUdLidOffset),
                     Load<uint16_t>(addr, kIbUdPkeyOffset),
                     Load<uint8_t>(addr, kIbUdSlOffset));
}

void AppendEfa(TextBuffer& out, const void* addr) {
  char gid[INET6_ADDRSTRLEN];
  GidText(addr, 0, gid);
  out.AppendAddressf("fi_addr_efa://[%s]:%u:%u", gid,
                     Load<uint16_t>(addr, kGidQpnOffset),
                     Load<uint32_t>(addr, kEfaQkeyOffset));
}

uint64_t Word(const void* addr, size_t index) {
  return Load<uint64_t>(addr, index * sizeof(uint64_t));
}

}  // namespace

std::string PointerText(const void* pointer) {
  if (pointer == nullptr) return "(nil)";
  char text[32];
  snprintf(text, sizeof(text), "0x%" PRIxPTR,
           reinterpret_cast<uintptr_t>(pointer));
  return text;
}

void AppendAddress(TextBuffer& out, uint32_t format, const void* addr) {
  if (addr == nullptr) {
    out.Append("(null)");
    return;
  }
  switch (format) {
    case FI_SOCKADDR:
      if (Family(addr) == AF_INET) AppendSockaddrIn(out, addr);
      if (Family(addr) == AF_INET6) AppendSockaddrIn6(out, addr);
      break;
    case FI_SOCKADDR_IN:
      AppendSockaddrIn(out, addr);
      break;
    case FI_SOCKADDR_IN6:
      AppendSockaddrIn6(out, addr);
      break;
    case FI_SOCKADDR_IB:
      AppendSockaddrIb(out, addr);
      break;
    case FI_ADDR_PSMX:
      out.AppendAddressf("fi_addr_psmx://%" PRIx64, Word(addr, 0));
      break;
    case FI_ADDR_GNI:
      out.AppendAddressf("fi_addr_gni://%" PRIx64, Word(addr, 0));
      break;
    case FI_ADDR_BGQ:
      out.AppendAddressf("fi_addr_bgq://%s", PointerText(addr).c_str());
      break;
    case FI_ADDR_MLX:
      out.AppendAddressf("fi_addr_mlx://%s", PointerText(addr).c_str());
      break;
    case FI_ADDR_STR:
      out.AppendAddressf("%s", static_cast<const char*>(addr));
      break;
    case FI_ADDR_PSMX2:
      out.AppendAddressf("fi_addr_psmx2://%" PRIx64 ":%" PRIx64, Word(addr, 0),
                         Word(addr, 1));
      break;
    case FI_ADDR_IB_UD:
      AppendIbUd(out, addr);
      break;
    case FI_ADDR_EFA:
      AppendEfa(out, addr);
      break;
    case FI_ADDR_PSMX3:
      out.AppendAddressf(
          "fi_addr_psmx3://%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64,
          Word(addr, 0), Word(addr, 1), Word(addr, 2), Word(addr, 3));
      break;
    case FI_ADDR_OPX:
      out.AppendAddressf("fi_addr_opx://%016" PRIx64, Word(addr, 0));
      break;
    case FI_ADDR_CXI:
      out.AppendAddressf("fi_addr_cxi://0x%08" PRIx32, Load<uint32_t>(addr, 0));
      break;
  }
}

}  // namespace fabric::text
