/*
 * <rdma/fi_cm.h> -- connection management: endpoint names, connect /
 * listen / accept / reject / shutdown for connected endpoints, and
 * multicast groups (fi_join()).
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, struct layouts, ops table and inline dispatch functions (each
 * one calls the matching entry of ep->cm or pep->cm; fi_join() is guarded
 * by FI_CHECK_OP and returns -FI_ENOSYS when the op is absent).
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_CM_H_
#define FABRIC_API_RDMA_FI_CM_H_

#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A joined multicast group; fi_mc_addr() is its address for sends. */
struct fid_mc {
	struct fid fid;
	fi_addr_t fi_addr;
};

/* The connection-management ops table of an endpoint (struct fid_ep::cm,
 * struct fid_pep::cm).  setname/getname take the fid of an active or
 * passive endpoint. */
struct fi_ops_cm {
	size_t size;
	int (*setname)(fid_t fid, void *addr, size_t addrlen);
	int (*getname)(fid_t fid, void *addr, size_t *addrlen);
	int (*getpeer)(struct fid_ep *ep, void *addr, size_t *addrlen);
	int (*connect)(struct fid_ep *ep, const void *addr, const void *param,
		       size_t paramlen);
	int (*listen)(struct fid_pep *pep);
	int (*accept)(struct fid_ep *ep, const void *param, size_t paramlen);
	int (*reject)(struct fid_pep *pep, fid_t handle, const void *param,
		      size_t paramlen);
	int (*shutdown)(struct fid_ep *ep, uint64_t flags);
	int (*join)(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context);
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_cm.h>
#endif

#ifndef FABRIC_DIRECT_CM

/* ---- Endpoint names --------------------------------------------------- */

/*
 * fid may be an active or a passive endpoint's: struct fid_ep and struct
 * fid_pep both start with the fid followed by ops and cm, so the cm table
 * is found at the same place in either.
 */
static inline int fi_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct fid_ep *owner = container_of(fid, struct fid_ep, fid);

	return owner->cm->setname(fid, addr, addrlen);
}

static inline int fi_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fid_ep *owner = container_of(fid, struct fid_ep, fid);

	return owner->cm->getname(fid, addr, addrlen);
}

static inline int fi_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return ep->cm->getpeer(ep, addr, addrlen);
}

/* ---- Connections ------------------------------------------------------ */

static inline int fi_listen(struct fid_pep *pep)
{
	return pep->cm->listen(pep);
}

static inline int fi_connect(struct fid_ep *ep, const void *addr,
			     const void *param, size_t paramlen)
{
	return ep->cm->connect(ep, addr, param, paramlen);
}

static inline int fi_accept(struct fid_ep *ep, const void *param,
			    size_t paramlen)
{
	return ep->cm->accept(ep, param, paramlen);
}

static inline int fi_reject(struct fid_pep *pep, fid_t handle,
			    const void *param, size_t paramlen)
{
	return pep->cm->reject(pep, handle, param, paramlen);
}

static inline int fi_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return ep->cm->shutdown(ep, flags);
}

/* ---- Multicast -------------------------------------------------------- */

static inline int fi_join(struct fid_ep *ep, const void *addr, uint64_t flags,
			  struct fid_mc **mc, void *context)
{
	if (!FI_CHECK_OP(ep->cm, struct fi_ops_cm, join))
		return -FI_ENOSYS;
	return ep->cm->join(ep, addr, flags, mc, context);
}

static inline fi_addr_t fi_mc_addr(struct fid_mc *mc)
{
	return mc->fi_addr;
}

#endif /* FABRIC_DIRECT_CM */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_CM_H_ */
