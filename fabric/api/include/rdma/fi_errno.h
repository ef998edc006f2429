/*
 * <rdma/fi_errno.h> -- error codes.  Calls return them negated (-FI_EAGAIN).
 *
 * Part of our public C API, with libfabric's names and values: codes below
 * FI_ERRNO_OFFSET are the host's errno values, codes from it up are the
 * library's own.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_ERRNO_H_
#define FABRIC_API_RDMA_FI_ERRNO_H_

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_SUCCESS 0

/* Codes that are errno values. */
#define FI_EPERM EPERM
#define FI_ENOENT ENOENT
#define FI_EINTR EINTR
#define FI_EIO EIO
#define FI_E2BIG E2BIG
#define FI_EBADF EBADF
#define FI_EAGAIN EAGAIN
#define FI_ENOMEM ENOMEM
#define FI_EACCES EACCES
#define FI_EFAULT EFAULT
#define FI_EBUSY EBUSY
#define FI_ENODEV ENODEV
#define FI_EINVAL EINVAL
#define FI_EMFILE EMFILE
#define FI_ENOSPC ENOSPC
#define FI_ENOSYS ENOSYS
#define FI_EWOULDBLOCK EWOULDBLOCK
#define FI_ENOMSG ENOMSG
#define FI_ENODATA ENODATA
#define FI_EOVERFLOW EOVERFLOW
#define FI_EMSGSIZE EMSGSIZE
#define FI_ENOPROTOOPT ENOPROTOOPT
#define FI_EOPNOTSUPP EOPNOTSUPP
#define FI_EADDRINUSE EADDRINUSE
#define FI_EADDRNOTAVAIL EADDRNOTAVAIL
#define FI_ENETDOWN ENETDOWN
#define FI_ENETUNREACH ENETUNREACH
#define FI_ECONNABORTED ECONNABORTED
#define FI_ECONNRESET ECONNRESET
#define FI_ENOBUFS ENOBUFS
#define FI_EISCONN EISCONN
#define FI_ENOTCONN ENOTCONN
#define FI_ESHUTDOWN ESHUTDOWN
#define FI_ETIMEDOUT ETIMEDOUT
#define FI_ECONNREFUSED ECONNREFUSED
#define FI_EHOSTDOWN EHOSTDOWN
#define FI_EHOSTUNREACH EHOSTUNREACH
#define FI_EALREADY EALREADY
#define FI_EINPROGRESS EINPROGRESS
#define FI_EREMOTEIO EREMOTEIO
#define FI_ECANCELED ECANCELED
#define FI_EKEYREJECTED EKEYREJECTED

/* The library's own codes. */
#define FI_ERRNO_OFFSET 256

enum {
	FI_EOTHER = FI_ERRNO_OFFSET, /* unspecified error */
	FI_ETOOSMALL = 257,          /* caller's buffer is too small */
	FI_EOPBADSTATE = 258,        /* not allowed in the current state */
	FI_EAVAIL = 259,             /* an error entry is waiting to be read */
	FI_EBADFLAGS = 260,          /* flags not supported */
	FI_ENOEQ = 261,              /* no (usable) event queue */
	FI_EDOMAIN = 262,            /* wrong resource domain */
	FI_ENOCQ = 263,              /* no (usable) completion queue */
	FI_ECRC = 264,               /* CRC error */
	FI_ETRUNC = 265,             /* data truncated */
	FI_ENOKEY = 266,             /* required key not available */
	FI_ENOAV = 267,              /* no (usable) address vector */
	FI_EOVERRUN = 268,           /* queue overrun */
	FI_ENORX = 269,              /* receiver had no buffer posted */
	FI_ERRNO_MAX
};

/* Text for a code, given with or without its minus sign. */
const char *fi_strerror(int errnum);

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_ERRNO_H_ */
