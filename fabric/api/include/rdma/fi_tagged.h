/*
 * <rdma/fi_tagged.h> -- tagged messages: sends matched to receives by a
 * 64-bit tag (with an ignore mask on the receive side).
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, struct layouts and inline dispatch functions (each one calls
 * the matching entry of ep->tagged).
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_TAGGED_H_
#define FABRIC_API_RDMA_FI_TAGGED_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Describes one tagged message for fi_tsendmsg() / fi_trecvmsg(). */
struct fi_msg_tagged {
	const struct iovec *msg_iov;
	void **desc;
	size_t iov_count;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;       /* receive side: tag bits that need not match */
	void *context;
	uint64_t data;         /* remote CQ data */
};

/* The tagged ops table of an endpoint (struct fid_ep::tagged). */
struct fi_ops_tagged {
	size_t size;
	ssize_t (*recv)(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t tag, uint64_t ignore,
			void *context);
	ssize_t (*recvv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 uint64_t tag, uint64_t ignore, void *context);
	ssize_t (*recvmsg)(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			   uint64_t flags);
	ssize_t (*send)(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, uint64_t tag,
			void *context);
	ssize_t (*sendv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 uint64_t tag, void *context);
	ssize_t (*sendmsg)(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			   uint64_t flags);
	ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t tag);
	ssize_t (*senddata)(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    uint64_t tag, void *context);
	ssize_t (*injectdata)(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr,
			      uint64_t tag);
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_tagged.h>
#endif

#ifndef FABRIC_DIRECT_TAGGED

/* ---- Receives --------------------------------------------------------- */

static inline ssize_t fi_trecv(struct fid_ep *ep, void *buf, size_t len,
			       void *desc, fi_addr_t src_addr, uint64_t tag,
			       uint64_t ignore, void *context)
{
	return ep->tagged->recv(ep, buf, len, desc, src_addr, tag, ignore,
				context);
}

static inline ssize_t fi_trecvv(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t src_addr,
				uint64_t tag, uint64_t ignore, void *context)
{
	return ep->tagged->recvv(ep, iov, desc, count, src_addr, tag, ignore,
				 context);
}

static inline ssize_t fi_trecvmsg(struct fid_ep *ep,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	return ep->tagged->recvmsg(ep, msg, flags);
}

/* ---- Sends ------------------------------------------------------------ */

static inline ssize_t fi_tsend(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest_addr, uint64_t tag,
			       void *context)
{
	return ep->tagged->send(ep, buf, len, desc, dest_addr, tag, context);
}

static inline ssize_t fi_tsendv(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count,
				fi_addr_t dest_addr, uint64_t tag,
				void *context)
{
	return ep->tagged->sendv(ep, iov, desc, count, dest_addr, tag,
				 context);
}

static inline ssize_t fi_tsendmsg(struct fid_ep *ep,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	return ep->tagged->sendmsg(ep, msg, flags);
}

static inline ssize_t fi_tinject(struct fid_ep *ep, const void *buf,
				 size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	return ep->tagged->inject(ep, buf, len, dest_addr, tag);
}

static inline ssize_t fi_tsenddata(struct fid_ep *ep, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t tag,
				   void *context)
{
	return ep->tagged->senddata(ep, buf, len, desc, data, dest_addr, tag,
				    context);
}

static inline ssize_t fi_tinjectdata(struct fid_ep *ep, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest_addr, uint64_t tag)
{
	return ep->tagged->injectdata(ep, buf, len, data, dest_addr, tag);
}

#endif /* FABRIC_DIRECT_TAGGED */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_TAGGED_H_ */
