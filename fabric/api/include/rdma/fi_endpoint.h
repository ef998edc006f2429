/*
 * <rdma/fi_endpoint.h> -- endpoints and the untagged message interface.
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * every name, constant, enumerator value, struct layout and inline dispatch
 * function matches libfabric, so programs built against libfabric's headers
 * run against our library and libfabric programs compile against these.
 *
 * Additions in API 1.18 (relative to libfabric 1.17):
 *   - FI_OPT_CUDA_API_PERMITTED (= 10): FI_OPT_ENDPOINT option, value type
 *     bool; whether the provider may call the CUDA API for this endpoint.
 */

#ifndef FABRIC_API_RDMA_FI_ENDPOINT_H_
#define FABRIC_API_RDMA_FI_ENDPOINT_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Describes one message for fi_sendmsg() / fi_recvmsg(). */
struct fi_msg {
	const struct iovec *msg_iov;
	void **desc;           /* one memory descriptor per iov entry */
	size_t iov_count;
	fi_addr_t addr;        /* peer (connectionless endpoints) */
	void *context;
	uint64_t data;         /* remote CQ data (FI_REMOTE_CQ_DATA) */
};

/* Option levels accepted by fi_getopt() / fi_setopt(). */
enum {
	FI_OPT_ENDPOINT = 0,
};

/* Option names at level FI_OPT_ENDPOINT; the comment gives the value type. */
enum {
	FI_OPT_MIN_MULTI_RECV = 0,      /* size_t */
	FI_OPT_CM_DATA_SIZE = 1,        /* size_t */
	FI_OPT_BUFFERED_MIN = 2,        /* size_t */
	FI_OPT_BUFFERED_LIMIT = 3,      /* size_t */
	FI_OPT_SEND_BUF_SIZE = 4,       /* size_t */
	FI_OPT_RECV_BUF_SIZE = 5,       /* size_t */
	FI_OPT_TX_SIZE = 6,             /* size_t */
	FI_OPT_RX_SIZE = 7,             /* size_t */
	FI_OPT_FI_HMEM_P2P = 8,         /* int, one of FI_HMEM_P2P_* below */
	FI_OPT_XPU_TRIGGER = 9,         /* struct fi_trigger_xpu */
	FI_OPT_CUDA_API_PERMITTED = 10, /* bool (API 1.18) */
};

/* Values of FI_OPT_FI_HMEM_P2P: how device memory may move peer to peer. */
enum {
	FI_HMEM_P2P_ENABLED = 0,   /* the provider chooses (default) */
	FI_HMEM_P2P_REQUIRED = 1,  /* every transfer must be peer to peer */
	FI_HMEM_P2P_PREFERRED = 2, /* peer to peer whenever it is available */
	FI_HMEM_P2P_DISABLED = 3,  /* never peer to peer */
};

/* Control operations shared by active, passive and shared-context endpoints. */
struct fi_ops_ep {
	size_t size;
	ssize_t (*cancel)(fid_t fid, void *context);
	int (*getopt)(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen);
	int (*setopt)(fid_t fid, int level, int optname, const void *optval,
		      size_t optlen);
	int (*tx_ctx)(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context);
	int (*rx_ctx)(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context);
	ssize_t (*rx_size_left)(struct fid_ep *ep);
	ssize_t (*tx_size_left)(struct fid_ep *ep);
};

/* Untagged send/receive operations. */
struct fi_ops_msg {
	size_t size;
	ssize_t (*recv)(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context);
	ssize_t (*recvv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 void *context);
	ssize_t (*recvmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*send)(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context);
	ssize_t (*sendv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 void *context);
	ssize_t (*sendmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr);
	ssize_t (*senddata)(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context);
	ssize_t (*injectdata)(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr);
};

/* The other per-interface tables live in their own headers. */
struct fi_ops_cm;
struct fi_ops_rma;
struct fi_ops_tagged;
struct fi_ops_atomic;
struct fi_ops_collective;

/*
 * An active endpoint: the fid plus one ops table per interface.  A provider
 * may leave tables it does not support unset, and may swap tables when the
 * endpoint is reconfigured (bind, setopt, control), so such calls must not
 * race with data transfers on the same endpoint.
 */
struct fid_ep {
	struct fid fid;
	struct fi_ops_ep *ops;
	struct fi_ops_cm *cm;
	struct fi_ops_msg *msg;
	struct fi_ops_rma *rma;
	struct fi_ops_tagged *tagged;
	struct fi_ops_atomic *atomic;
	struct fi_ops_collective *collective;
};

/* A passive (listening) endpoint. */
struct fid_pep {
	struct fid fid;
	struct fi_ops_ep *ops;
	struct fi_ops_cm *cm;
};

/* A shared transmit context. */
struct fid_stx {
	struct fid fid;
	struct fi_ops_ep *ops;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_endpoint.h>
#endif

#ifndef FABRIC_DIRECT_ENDPOINT

/* ---- Opening endpoints ------------------------------------------------ */

static inline int fi_passive_ep(struct fid_fabric *fabric,
				struct fi_info *info, struct fid_pep **pep,
				void *context)
{
	return fabric->ops->passive_ep(fabric, info, pep, context);
}

static inline int fi_endpoint(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, void *context)
{
	return domain->ops->endpoint(domain, info, ep, context);
}

/* fi_endpoint() with flags; without flags it is plain fi_endpoint(). */
static inline int fi_endpoint2(struct fid_domain *domain,
			       struct fi_info *info, struct fid_ep **ep,
			       uint64_t flags, void *context)
{
	if (flags == 0)
		return fi_endpoint(domain, info, ep, context);
	if (!FI_CHECK_OP(domain->ops, struct fi_ops_domain, endpoint2))
		return -FI_ENOSYS;
	return domain->ops->endpoint2(domain, info, ep, flags, context);
}

static inline int fi_scalable_ep(struct fid_domain *domain,
				 struct fi_info *info, struct fid_ep **sep,
				 void *context)
{
	return domain->ops->scalable_ep(domain, info, sep, context);
}

/* ---- Binding and enabling --------------------------------------------- */

static inline int fi_ep_bind(struct fid_ep *ep, struct fid *bfid,
			     uint64_t flags)
{
	return ep->fid.ops->bind(&ep->fid, bfid, flags);
}

static inline int fi_pep_bind(struct fid_pep *pep, struct fid *bfid,
			      uint64_t flags)
{
	return pep->fid.ops->bind(&pep->fid, bfid, flags);
}

static inline int fi_scalable_ep_bind(struct fid_ep *sep, struct fid *bfid,
				      uint64_t flags)
{
	return sep->fid.ops->bind(&sep->fid, bfid, flags);
}

static inline int fi_enable(struct fid_ep *ep)
{
	return ep->fid.ops->control(&ep->fid, FI_ENABLE, NULL);
}

/* ---- Endpoint control (the fid must be an endpoint's) ----------------- */

static inline ssize_t fi_cancel(fid_t fid, void *context)
{
	struct fid_ep *owner = container_of(fid, struct fid_ep, fid);

	return owner->ops->cancel(fid, context);
}

static inline int fi_setopt(fid_t fid, int level, int optname,
			    const void *optval, size_t optlen)
{
	struct fid_ep *owner = container_of(fid, struct fid_ep, fid);

	return owner->ops->setopt(fid, level, optname, optval, optlen);
}

static inline int fi_getopt(fid_t fid, int level, int optname, void *optval,
			    size_t *optlen)
{
	struct fid_ep *owner = container_of(fid, struct fid_ep, fid);

	return owner->ops->getopt(fid, level, optname, optval, optlen);
}

static inline int fi_ep_alias(struct fid_ep *ep, struct fid_ep **alias_ep,
			      uint64_t flags)
{
	struct fid *alias_fid;
	int ret = fi_alias(&ep->fid, &alias_fid, flags);

	if (ret == 0)
		*alias_ep = container_of(alias_fid, struct fid_ep, fid);
	return ret;
}

/* ---- Scalable and shared contexts ------------------------------------- */

static inline int fi_tx_context(struct fid_ep *ep, int idx,
				struct fi_tx_attr *attr,
				struct fid_ep **tx_ep, void *context)
{
	return ep->ops->tx_ctx(ep, idx, attr, tx_ep, context);
}

static inline int fi_rx_context(struct fid_ep *ep, int idx,
				struct fi_rx_attr *attr,
				struct fid_ep **rx_ep, void *context)
{
	return ep->ops->rx_ctx(ep, idx, attr, rx_ep, context);
}

static inline FI_DEPRECATED_FUNC ssize_t fi_rx_size_left(struct fid_ep *ep)
{
	return ep->ops->rx_size_left(ep);
}

static inline FI_DEPRECATED_FUNC ssize_t fi_tx_size_left(struct fid_ep *ep)
{
	return ep->ops->tx_size_left(ep);
}

static inline int fi_stx_context(struct fid_domain *domain,
				 struct fi_tx_attr *attr,
				 struct fid_stx **stx, void *context)
{
	return domain->ops->stx_ctx(domain, attr, stx, context);
}

static inline int fi_srx_context(struct fid_domain *domain,
				 struct fi_rx_attr *attr,
				 struct fid_ep **rx_ep, void *context)
{
	return domain->ops->srx_ctx(domain, attr, rx_ep, context);
}

/* ---- Untagged messages ------------------------------------------------ */

static inline ssize_t fi_recv(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, void *context)
{
	return ep->msg->recv(ep, buf, len, desc, src_addr, context);
}

static inline ssize_t fi_recvv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       void *context)
{
	return ep->msg->recvv(ep, iov, desc, count, src_addr, context);
}

static inline ssize_t fi_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->recvmsg(ep, msg, flags);
}

static inline ssize_t fi_send(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest_addr, void *context)
{
	return ep->msg->send(ep, buf, len, desc, dest_addr, context);
}

static inline ssize_t fi_sendv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest_addr,
			       void *context)
{
	return ep->msg->sendv(ep, iov, desc, count, dest_addr, context);
}

static inline ssize_t fi_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->sendmsg(ep, msg, flags);
}

static inline ssize_t fi_inject(struct fid_ep *ep, const void *buf,
				size_t len, fi_addr_t dest_addr)
{
	return ep->msg->inject(ep, buf, len, dest_addr);
}

static inline ssize_t fi_senddata(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, uint64_t data,
				  fi_addr_t dest_addr, void *context)
{
	return ep->msg->senddata(ep, buf, len, desc, data, dest_addr, context);
}

static inline ssize_t fi_injectdata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr)
{
	return ep->msg->injectdata(ep, buf, len, data, dest_addr);
}

#endif /* FABRIC_DIRECT_ENDPOINT */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_ENDPOINT_H_ */
