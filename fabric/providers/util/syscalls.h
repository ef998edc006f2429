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
// Sanitizer builds use the libc calls, whose interceptors check the
// buffers (AddressSanitizer) and see the synchronization through sockets
// (ThreadSanitizer: in send/sendmsg and recv/recvmsg, not in
// sendto/recvfrom).
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

// A message of one piece (or none) and no control data goes through
// recvfrom/sendto, which take in no msghdr and iovec array (udp 64 B
// ping-pong 2.135 -> 2.035 us); RecvMsg leaves msg_flags 0 then.
inline ssize_t RecvMsg(int fd, msghdr* message, int flags) {
  if constexpr (kRawSyscalls) {
    if (message->msg_iovlen <= 1 && message->msg_controllen == 0) {
      bool one = message->msg_iovlen == 1;
      message->msg_flags = 0;
      return syscall(SYS_recvfrom, fd,
                     one ? message->msg_iov[0].iov_base : nullptr,
                     one ? message->msg_iov[0].iov_len : 0, flags,
                     message->msg_name,
                     message->msg_name != nullptr ? &message->msg_namelen
                                                  : nullptr);
    }
    return syscall(SYS_recvmsg, fd, message, flags);
  }
  return recvmsg(fd, message, flags);
}

inline ssize_t SendMsg(int fd, const msghdr* message, int flags) {
  if constexpr (kRawSyscalls) {
    if (message->msg_iovlen <= 1 && message->msg_controllen == 0) {
      bool one = message->msg_iovlen == 1;
      return syscall(SYS_sendto, fd,
                     one ? message->msg_iov[0].iov_base : nullptr,
                     one ? message->msg_iov[0].iov_len : 0, flags,
                     message->msg_name, message->msg_namelen);
    }
    return syscall(SYS_sendmsg, fd, message, flags);
  }
  return sendmsg(fd, message, flags);
}

// send and recv of one buffer on a connected socket.
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
