/*
 * <rdma/fi_domain.h> -- resource domains and what is opened on them:
 * address vectors (AV), memory regions (MR), the atomic and collective
 * datatype/operation enums, and the domain's ops table (the entry point for
 * CQs, counters, endpoints, poll sets and shared contexts).
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * every name, flag value, enumerator value, struct layout, ops table and
 * inline dispatch function matches libfabric, so programs built against
 * libfabric's headers run against our library and libfabric programs compile
 * against these.  fi_domain2() is guarded by FI_CHECK_OP on the fabric's ops
 * and returns -FI_ENOSYS when the op is absent.  As in libfabric, two
 * domain-level calls live elsewhere: fi_query_atomic() in <rdma/fi_atomic.h>
 * and fi_av_set() / fi_query_collective() in <rdma/fi_collective.h>.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).  What newer
 * libfabric releases add to struct fi_mr_attr (hmem_data, the dmabuf union
 * member with struct fi_mr_dmabuf and FI_MR_DMABUF, page_size, base_mr, ...)
 * is deliberately absent: it would change the 1.17 layouts of fi_mr_attr and
 * fi_mr_modify.
 */

#ifndef FABRIC_API_RDMA_FI_DOMAIN_H_
#define FABRIC_API_RDMA_FI_DOMAIN_H_

#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Address vectors
 * ====================================================================== */

/* AV flags: symmetric insertion, synchronous errors, the whole universe. */
#define FI_SYMMETRIC (1ULL << 59)
#define FI_SYNC_ERR  (1ULL << 58)
#define FI_UNIVERSE  (1ULL << 57)

/* AV-set flags: which collective the set will be used for. */
#define FI_BARRIER_SET        (1ULL << 40)
#define FI_BROADCAST_SET      (1ULL << 41)
#define FI_ALLTOALL_SET       (1ULL << 42)
#define FI_ALLREDUCE_SET      (1ULL << 43)
#define FI_ALLGATHER_SET      (1ULL << 44)
#define FI_REDUCE_SCATTER_SET (1ULL << 45)
#define FI_REDUCE_SET         (1ULL << 46)
#define FI_SCATTER_SET        (1ULL << 47)
#define FI_GATHER_SET         (1ULL << 48)

/* Attributes of fi_av_open(). */
struct fi_av_attr {
	enum fi_av_type type;    /* FI_AV_MAP / FI_AV_TABLE / unspecified */
	int rx_ctx_bits;         /* high fi_addr_t bits naming an rx context */
	size_t count;            /* expected number of addresses */
	size_t ep_per_node;
	const char *name;        /* named (shared) AV, or NULL */
	void *map_addr;          /* where a named FI_AV_MAP is mapped */
	uint64_t flags;
};

/* Attributes of fi_av_set(): a strided range of AV addresses. */
struct fi_av_set_attr {
	size_t count;
	fi_addr_t start_addr;
	fi_addr_t end_addr;
	uint64_t stride;
	size_t comm_key_size;
	uint8_t *comm_key;
	uint64_t flags;
};

struct fid_av_set;

/* Operations of an address vector (struct fid_av::ops). */
struct fi_ops_av {
	size_t size;
	int (*insert)(struct fid_av *av, const void *addr, size_t count,
		      fi_addr_t *fi_addr, uint64_t flags, void *context);
	int (*insertsvc)(struct fid_av *av, const char *node,
			 const char *service, fi_addr_t *fi_addr,
			 uint64_t flags, void *context);
	int (*insertsym)(struct fid_av *av, const char *node, size_t nodecnt,
			 const char *service, size_t svccnt,
			 fi_addr_t *fi_addr, uint64_t flags, void *context);
	int (*remove)(struct fid_av *av, fi_addr_t *fi_addr, size_t count,
		      uint64_t flags);
	int (*lookup)(struct fid_av *av, fi_addr_t fi_addr, void *addr,
		      size_t *addrlen);
	const char *(*straddr)(struct fid_av *av, const void *addr,
			       char *buf, size_t *len);
	int (*av_set)(struct fid_av *av, struct fi_av_set_attr *attr,
		      struct fid_av_set **av_set, void *context);
};

/* An address vector: maps fabric addresses to compact fi_addr_t values. */
struct fid_av {
	struct fid fid;
	struct fi_ops_av *ops;
};

/* ======================================================================
 * Memory regions
 * ====================================================================== */

/* A registered memory region: local descriptor and remote key. */
struct fid_mr {
	struct fid fid;
	void *mem_desc;        /* what fi_mr_desc() returns */
	uint64_t key;          /* what fi_mr_key() returns */
};

/* Which device API owns registered memory (struct fi_mr_attr::iface). */
enum fi_hmem_iface {
	FI_HMEM_SYSTEM = 0,    /* host memory */
	FI_HMEM_CUDA = 1,
	FI_HMEM_ROCR = 2,
	FI_HMEM_ZE = 3,        /* oneAPI Level Zero */
	FI_HMEM_NEURON = 4,
	FI_HMEM_SYNAPSEAI = 5,
};

/* Attributes of fi_mr_regattr(). */
struct fi_mr_attr {
	const struct iovec *mr_iov;
	size_t iov_count;
	uint64_t access;        /* FI_READ, FI_WRITE, FI_REMOTE_* ... */
	uint64_t offset;
	uint64_t requested_key;
	void *context;
	size_t auth_key_size;
	uint8_t *auth_key;
	enum fi_hmem_iface iface;
	union {                 /* device id, read according to iface */
		uint64_t reserved;
		int cuda;
		int ze;
		int neuron;
		int synapseai;
	} device;
};

/* Argument of the FI_REFRESH control command (see fi_mr_refresh()). */
struct fi_mr_modify {
	uint64_t flags;
	struct fi_mr_attr attr;
};

/* fi_set_ops() name of struct fi_hmem_override_ops. */
#define FI_SET_OPS_HMEM_OVERRIDE "hmem_override_ops"

/* Application-supplied copies to and from device memory. */
struct fi_hmem_override_ops {
	size_t size;
	ssize_t (*copy_from_hmem_iov)(void *dest, size_t size,
				      enum fi_hmem_iface iface,
				      uint64_t device,
				      const struct iovec *hmem_iov,
				      size_t hmem_iov_count,
				      uint64_t hmem_iov_offset);
	ssize_t (*copy_to_hmem_iov)(enum fi_hmem_iface iface, uint64_t device,
				    const struct iovec *hmem_iov,
				    size_t hmem_iov_count,
				    uint64_t hmem_iov_offset, const void *src,
				    size_t size);
};

/* ======================================================================
 * Atomic and collective datatypes and operations
 * ====================================================================== */

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_atomic_def.h>
#endif

#ifndef FABRIC_DIRECT_ATOMIC_DEF

/* First value of the collective-only datatypes and operations. */
#define FI_COLLECTIVE_OFFSET 256

/* Element types of atomic and collective operations. */
enum fi_datatype {
	FI_INT8 = 0,
	FI_UINT8 = 1,
	FI_INT16 = 2,
	FI_UINT16 = 3,
	FI_INT32 = 4,
	FI_UINT32 = 5,
	FI_INT64 = 6,
	FI_UINT64 = 7,
	FI_FLOAT = 8,
	FI_DOUBLE = 9,
	FI_FLOAT_COMPLEX = 10,
	FI_DOUBLE_COMPLEX = 11,
	FI_LONG_DOUBLE = 12,
	FI_LONG_DOUBLE_COMPLEX = 13,
	FI_DATATYPE_LAST = 14,  /* one past the original point-to-point set */
	/* The 128-bit integers came later; they start at FI_DATATYPE_LAST so
	 * that its value stays what older programs were built with. */
	FI_INT128 = FI_DATATYPE_LAST,
	FI_UINT128 = 15,
	FI_VOID = FI_COLLECTIVE_OFFSET,  /* collectives without data */
};

/* Atomic operations (and the collective-only FI_NOOP). */
enum fi_op {
	FI_MIN = 0,
	FI_MAX = 1,
	FI_SUM = 2,
	FI_PROD = 3,
	FI_LOR = 4,
	FI_LAND = 5,
	FI_BOR = 6,
	FI_BAND = 7,
	FI_LXOR = 8,
	FI_BXOR = 9,
	FI_ATOMIC_READ = 10,
	FI_ATOMIC_WRITE = 11,
	FI_CSWAP = 12,
	FI_CSWAP_NE = 13,
	FI_CSWAP_LE = 14,
	FI_CSWAP_LT = 15,
	FI_CSWAP_GE = 16,
	FI_CSWAP_GT = 17,
	FI_MSWAP = 18,
	FI_ATOMIC_OP_LAST = 19, /* one past the point-to-point operations */
	FI_NOOP = FI_COLLECTIVE_OFFSET,
};

#endif /* FABRIC_DIRECT_ATOMIC_DEF */

#ifndef FABRIC_DIRECT_COLLECTIVE_DEF

/* Collective operations, as named to fi_query_collective(). */
enum fi_collective_op {
	FI_BARRIER = 0,
	FI_BROADCAST = 1,
	FI_ALLTOALL = 2,
	FI_ALLREDUCE = 3,
	FI_ALLGATHER = 4,
	FI_REDUCE_SCATTER = 5,
	FI_REDUCE = 6,
	FI_SCATTER = 7,
	FI_GATHER = 8,
};

#endif /* FABRIC_DIRECT_COLLECTIVE_DEF */

/* ======================================================================
 * Domains
 * ====================================================================== */

/* Defined by <rdma/fi_eq.h>, <rdma/fi_atomic.h>, <rdma/fi_collective.h>. */
struct fi_atomic_attr;
struct fi_cq_attr;
struct fi_cntr_attr;
struct fi_collective_attr;

/* What a domain opens (struct fid_domain::ops). */
struct fi_ops_domain {
	size_t size;
	int (*av_open)(struct fid_domain *domain, struct fi_av_attr *attr,
		       struct fid_av **av, void *context);
	int (*cq_open)(struct fid_domain *domain, struct fi_cq_attr *attr,
		       struct fid_cq **cq, void *context);
	int (*endpoint)(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **ep, void *context);
	int (*scalable_ep)(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **sep, void *context);
	int (*cntr_open)(struct fid_domain *domain, struct fi_cntr_attr *attr,
			 struct fid_cntr **cntr, void *context);
	int (*poll_open)(struct fid_domain *domain, struct fi_poll_attr *attr,
			 struct fid_poll **pollset);
	int (*stx_ctx)(struct fid_domain *domain, struct fi_tx_attr *attr,
		       struct fid_stx **stx, void *context);
	int (*srx_ctx)(struct fid_domain *domain, struct fi_rx_attr *attr,
		       struct fid_ep **rx_ep, void *context);
	int (*query_atomic)(struct fid_domain *domain,
			    enum fi_datatype datatype, enum fi_op op,
			    struct fi_atomic_attr *attr, uint64_t flags);
	int (*query_collective)(struct fid_domain *domain,
				enum fi_collective_op coll,
				struct fi_collective_attr *attr,
				uint64_t flags);
	int (*endpoint2)(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **ep, uint64_t flags, void *context);
};

/* Memory registration (struct fid_domain::mr).  The first argument is the
 * registering fid: the domain's, or an endpoint's for per-endpoint MRs. */
struct fi_ops_mr {
	size_t size;
	int (*reg)(struct fid *fid, const void *buf, size_t len,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context);
	int (*regv)(struct fid *fid, const struct iovec *iov, size_t count,
		    uint64_t access, uint64_t offset, uint64_t requested_key,
		    uint64_t flags, struct fid_mr **mr, void *context);
	int (*regattr)(struct fid *fid, const struct fi_mr_attr *attr,
		       uint64_t flags, struct fid_mr **mr);
};

/* fi_domain_bind() flag: the bound EQ receives memory registration events. */
#define FI_REG_MR (1ULL << 59)

/* A resource domain: usually one NIC (or port) as seen by one process. */
struct fid_domain {
	struct fid fid;
	struct fi_ops_domain *ops;
	struct fi_ops_mr *mr;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_domain.h>
#endif

#ifndef FABRIC_DIRECT_DOMAIN

/* ---- Opening and binding domains -------------------------------------- */

static inline int fi_domain(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_domain **domain, void *context)
{
	return fabric->ops->domain(fabric, info, domain, context);
}

/* fi_domain() with flags; without flags it is plain fi_domain(). */
static inline int fi_domain2(struct fid_fabric *fabric, struct fi_info *info,
			     struct fid_domain **domain, uint64_t flags,
			     void *context)
{
	if (flags == 0)
		return fi_domain(fabric, info, domain, context);
	if (!FI_CHECK_OP(fabric->ops, struct fi_ops_fabric, domain2))
		return -FI_ENOSYS;
	return fabric->ops->domain2(fabric, info, domain, flags, context);
}

static inline int fi_domain_bind(struct fid_domain *domain, struct fid *fid,
				 uint64_t flags)
{
	return domain->fid.ops->bind(&domain->fid, fid, flags);
}

/* ---- Completion queues, counters, wait and poll sets ------------------ */

static inline int fi_cq_open(struct fid_domain *domain,
			     struct fi_cq_attr *attr, struct fid_cq **cq,
			     void *context)
{
	return domain->ops->cq_open(domain, attr, cq, context);
}

static inline int fi_cntr_open(struct fid_domain *domain,
			       struct fi_cntr_attr *attr,
			       struct fid_cntr **cntr, void *context)
{
	return domain->ops->cntr_open(domain, attr, cntr, context);
}

/* Wait sets belong to the fabric, not to a domain. */
static inline int fi_wait_open(struct fid_fabric *fabric,
			       struct fi_wait_attr *attr,
			       struct fid_wait **waitset)
{
	return fabric->ops->wait_open(fabric, attr, waitset);
}

static inline int fi_poll_open(struct fid_domain *domain,
			       struct fi_poll_attr *attr,
			       struct fid_poll **pollset)
{
	return domain->ops->poll_open(domain, attr, pollset);
}

/* ---- Memory registration ---------------------------------------------- */

static inline int fi_mr_reg(struct fid_domain *domain, const void *buf,
			    size_t len, uint64_t acs, uint64_t offset,
			    uint64_t requested_key, uint64_t flags,
			    struct fid_mr **mr, void *context)
{
	return domain->mr->reg(&domain->fid, buf, len, acs, offset,
			       requested_key, flags, mr, context);
}

static inline int fi_mr_regv(struct fid_domain *domain,
			     const struct iovec *iov, size_t count,
			     uint64_t acs, uint64_t offset,
			     uint64_t requested_key, uint64_t flags,
			     struct fid_mr **mr, void *context)
{
	return domain->mr->regv(&domain->fid, iov, count, acs, offset,
				requested_key, flags, mr, context);
}

static inline int fi_mr_regattr(struct fid_domain *domain,
				const struct fi_mr_attr *attr,
				uint64_t flags, struct fid_mr **mr)
{
	return domain->mr->regattr(&domain->fid, attr, flags, mr);
}

static inline void *fi_mr_desc(struct fid_mr *mr)
{
	return mr->mem_desc;
}

static inline uint64_t fi_mr_key(struct fid_mr *mr)
{
	return mr->key;
}

/* Raw (large) keys: FI_GET_RAW_MR / FI_MAP_RAW_MR / FI_UNMAP_KEY. */
static inline int fi_mr_raw_attr(struct fid_mr *mr, uint64_t *base_addr,
				 uint8_t *raw_key, size_t *key_size,
				 uint64_t flags)
{
	struct fi_mr_raw_attr attr;

	attr.flags = flags;
	attr.base_addr = base_addr;
	attr.raw_key = raw_key;
	attr.key_size = key_size;
	return mr->fid.ops->control(&mr->fid, FI_GET_RAW_MR, &attr);
}

static inline int fi_mr_map_raw(struct fid_domain *domain, uint64_t base_addr,
				uint8_t *raw_key, size_t key_size,
				uint64_t *key, uint64_t flags)
{
	struct fi_mr_map_raw map;

	map.flags = flags;
	map.base_addr = base_addr;
	map.raw_key = raw_key;
	map.key_size = key_size;
	map.key = key;
	return domain->fid.ops->control(&domain->fid, FI_MAP_RAW_MR, &map);
}

static inline int fi_mr_unmap_key(struct fid_domain *domain, uint64_t key)
{
	return domain->fid.ops->control(&domain->fid, FI_UNMAP_KEY, &key);
}

static inline int fi_mr_bind(struct fid_mr *mr, struct fid *bfid,
			     uint64_t flags)
{
	return mr->fid.ops->bind(&mr->fid, bfid, flags);
}

/* Re-reads the pages behind iov (FI_REFRESH with a zeroed fi_mr_modify). */
static inline int fi_mr_refresh(struct fid_mr *mr, const struct iovec *iov,
				size_t count, uint64_t flags)
{
	struct fi_mr_modify modify;

	memset(&modify, 0, sizeof(modify));
	modify.flags = flags;
	modify.attr.mr_iov = iov;
	modify.attr.iov_count = count;
	return mr->fid.ops->control(&mr->fid, FI_REFRESH, &modify);
}

static inline int fi_mr_enable(struct fid_mr *mr)
{
	return mr->fid.ops->control(&mr->fid, FI_ENABLE, NULL);
}

/* ---- Address vectors -------------------------------------------------- */

static inline int fi_av_open(struct fid_domain *domain,
			     struct fi_av_attr *attr, struct fid_av **av,
			     void *context)
{
	return domain->ops->av_open(domain, attr, av, context);
}

static inline int fi_av_bind(struct fid_av *av, struct fid *fid,
			     uint64_t flags)
{
	return av->fid.ops->bind(&av->fid, fid, flags);
}

static inline int fi_av_insert(struct fid_av *av, const void *addr,
			       size_t count, fi_addr_t *fi_addr,
			       uint64_t flags, void *context)
{
	return av->ops->insert(av, addr, count, fi_addr, flags, context);
}

static inline int fi_av_insertsvc(struct fid_av *av, const char *node,
				  const char *service, fi_addr_t *fi_addr,
				  uint64_t flags, void *context)
{
	return av->ops->insertsvc(av, node, service, fi_addr, flags, context);
}

static inline int fi_av_insertsym(struct fid_av *av, const char *node,
				  size_t nodecnt, const char *service,
				  size_t svccnt, fi_addr_t *fi_addr,
				  uint64_t flags, void *context)
{
	return av->ops->insertsym(av, node, nodecnt, service, svccnt, fi_addr,
				  flags, context);
}

static inline int fi_av_remove(struct fid_av *av, fi_addr_t *fi_addr,
			       size_t count, uint64_t flags)
{
	return av->ops->remove(av, fi_addr, count, flags);
}

static inline int fi_av_lookup(struct fid_av *av, fi_addr_t fi_addr,
			       void *addr, size_t *addrlen)
{
	return av->ops->lookup(av, fi_addr, addr, addrlen);
}

static inline const char *fi_av_straddr(struct fid_av *av, const void *addr,
					char *buf, size_t *len)
{
	return av->ops->straddr(av, addr, buf, len);
}

/* The address of receive context rx_index of a scalable endpoint: the index
 * goes into the top rx_ctx_bits bits (see fi_av_attr::rx_ctx_bits). */
static inline fi_addr_t fi_rx_addr(fi_addr_t fi_addr, int rx_index,
				   int rx_ctx_bits)
{
	return (fi_addr_t)(((uint64_t)rx_index << (64 - rx_ctx_bits)) |
			   fi_addr);
}

#endif /* FABRIC_DIRECT_DOMAIN */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_DOMAIN_H_ */
