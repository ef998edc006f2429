// File: fabric/providers/util/syscalls.h
//
// The data path's system calls, made without glibc's cancellation-point
// wrappers. In a process with more than one thread (ours have the
// auto-progress thread), glibc brackets every cancellable call (recvmsg,
// sendmsg, readv, write, poll, epoll_wait, ...) with switching asynchronous
// cancellation on and off; a udp ping-pong's client spent about 6% of its
// CPU there (perf, 64 B fi_pingpong), which a single-threaded process
// skips. Not being cancellation points is also what these calls need: they
// run under an endpoint's lock, which a cancellation would leave held.
//
// Same results as the libc calls: the count, or -1 with errno set.
// Sanitizer builds use libc calls, whose interceptors check the buffers
// (AddressSanitizer) and see the synchronization through sockets
// (ThreadSanitizer: in send/sendmsg and recv/recvmsg, so SendTo and
// RecvFrom take the msghdr calls there).
#ifndef FABRIC_PROVIDERS_UTIL_SYSCALLS_H_
#define FABRIC_PROVIDERS_UTIL_SYSCALLS_H_

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

namespace fabric {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kRawSyscalls = false;
#else
inline constexpr bool kRawSyscalls = true;
#endif

inline ssize_t RecvMsg(int fd, msghdr* message, int flags) {
  if constexpr (kRawSyscalls) return syscall(SYS_recvmsg, fd, message, flags);
  return recvmsg(fd, message, flags);
}

inline ssize_t SendMsg(int fd, const msghdr* message, int flags) {
  if constexpr (kRawSyscalls) return syscall(SYS_sendmsg, fd, message, flags);
  return sendmsg(fd, message, flags);
}

// One buffer: the kernel copies no msghdr and iovec in.
inline ssize_t SendTo(int fd, const void* buf, size_t len, int flags,
                      const sockaddr* to, socklen_t to_len) {
  if constexpr (kRawSyscalls) {
    return syscall(SYS_sendto, fd, buf, len, flags, to, to_len);
  }
  // sendmsg, whose interceptor ThreadSanitizer models the socket's
  // synchronization in.
  iovec piece = {const_cast<void*>(buf), len};
  msghdr message = {};
  message.msg_name = const_cast<sockaddr*>(to);
  message.msg_namelen = to_len;
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  return sendmsg(fd, &message, flags);
}

inline ssize_t RecvFrom(int fd, void* buf, size_t len, int flags,
                        sockaddr* from, socklen_t* from_len) {
  if constexpr (kRawSyscalls) {
    return syscall(SYS_recvfrom, fd, buf, len, flags, from, from_len);
  }
  // recvmsg, as SendTo uses sendmsg.
  iovec piece = {buf, len};
  msghdr message = {};
  message.msg_name = from;
  message.msg_namelen = from_len != nullptr ? *from_len : 0;
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  ssize_t n = recvmsg(fd, &message, flags);
  if (n >= 0 && from_len != nullptr) *from_len = message.msg_namelen;
  return n;
}

// send and recv on a connected socket. (ThreadSanitizer sees the
// synchronization through the socket in send/recv, not in sendto/recvfrom.)
inline ssize_t Send(int fd, const void* buf, size_t len, int flags) {
  if constexpr (kRawSyscalls) {
    return syscall(SYS_sendto, fd, buf, len, flags, nullptr, 0);
  }
  return send(fd, buf, len, flags);
}

inline ssize_t Recv(int fd, void* buf, size_t len, int flags) {
  if constexpr (kRawSyscalls) {
    return syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
  }
  return recv(fd, buf, len, flags);
}

inline ssize_t ReadV(int fd, const iovec* iov, int count) {
  if constexpr (kRawSyscalls) return syscall(SYS_readv, fd, iov, count);
  return readv(fd, iov, count);
}

inline ssize_t ReadFd(int fd, void* buf, size_t count) {
  if constexpr (kRawSyscalls) return syscall(SYS_read, fd, buf, count);
  return read(fd, buf, count);
}

inline ssize_t WriteFd(int fd, const void* buf, size_t count) {
  if constexpr (kRawSyscalls) return syscall(SYS_write, fd, buf, count);
  return write(fd, buf, count);
}

// poll with a zero timeout: which of `fds` are ready now.
inline int PollNow(pollfd* fds, nfds_t count) {
  if constexpr (kRawSyscalls) {
    // ppoll: poll has no entry of its own on some architectures.
    timespec zero = {0, 0};
    return static_cast<int>(
        syscall(SYS_ppoll, fds, count, &zero, nullptr, 0));
  }
  return poll(fds, count, 0);
}

// epoll_wait with a zero timeout: a poll that never blocks (the blocking
// waits keep the libc call).
inline int EpollPoll(int epoll_fd, epoll_event* events, int max_events) {
  if constexpr (kRawSyscalls) {
    // epoll_wait has no entry of its own on some architectures; epoll_pwait
    // with no signal mask is the same call.
    return static_cast<int>(syscall(SYS_epoll_pwait, epoll_fd, events,
                                    max_events, 0, nullptr, 0));
  }
  return epoll_wait(epoll_fd, events, max_events, 0);
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_SYSCALLS_H_
