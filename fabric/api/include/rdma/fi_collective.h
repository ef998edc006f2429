/*
 * <rdma/fi_collective.h> -- collective operations (barrier, broadcast,
 * all-reduce, ...) over address-vector sets (struct fid_av_set).
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, struct layouts and inline dispatch functions (each one calls
 * the matching entry of ep->collective or set->ops; fi_av_set(),
 * fi_barrier2() with flags and fi_query_collective() are guarded by
 * FI_CHECK_OP and return -FI_ENOSYS when the op is absent).
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_COLLECTIVE_H_
#define FABRIC_API_RDMA_FI_COLLECTIVE_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_cm.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_collective_def.h>
#endif

/* Operations on an AV set: set algebra and membership. */
struct fi_ops_av_set {
	size_t size;
	int (*set_union)(struct fid_av_set *dst, const struct fid_av_set *src);
	int (*intersect)(struct fid_av_set *dst, const struct fid_av_set *src);
	int (*diff)(struct fid_av_set *dst, const struct fid_av_set *src);
	int (*insert)(struct fid_av_set *set, fi_addr_t addr);
	int (*remove)(struct fid_av_set *set, fi_addr_t addr);
	int (*addr)(struct fid_av_set *set, fi_addr_t *coll_addr);
};

/* A subset of an AV's addresses that takes part in collectives. */
struct fid_av_set {
	struct fid fid;
	struct fi_ops_av_set *ops;
};

/* What fi_query_collective() reports. */
struct fi_collective_attr {
	enum fi_op op;
	enum fi_datatype datatype;
	struct fi_atomic_attr datatype_attr;
	size_t max_members;
	uint64_t mode;
};

/* The address argument fi_join_collective() hands to fi_join(). */
struct fi_collective_addr {
	const struct fid_av_set *set;
	fi_addr_t coll_addr;
};

/* Describes one collective for the msg entry of struct fi_ops_collective. */
struct fi_msg_collective {
	const struct fi_ioc *msg_iov;
	void **desc;
	size_t iov_count;
	fi_addr_t coll_addr;
	fi_addr_t root_addr;
	enum fi_collective_op coll;
	enum fi_datatype datatype;
	enum fi_op op;
	void *context;
};

/* The collective ops table of an endpoint (struct fid_ep::collective). */
struct fi_ops_collective {
	size_t size;

	ssize_t (*barrier)(struct fid_ep *ep, fi_addr_t coll_addr,
			   void *context);
	ssize_t (*broadcast)(struct fid_ep *ep, void *buf, size_t count,
			     void *desc, fi_addr_t coll_addr,
			     fi_addr_t root_addr, enum fi_datatype datatype,
			     uint64_t flags, void *context);
	ssize_t (*alltoall)(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype datatype,
			    uint64_t flags, void *context);
	ssize_t (*allreduce)(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, void *result, void *result_desc,
			     fi_addr_t coll_addr, enum fi_datatype datatype,
			     enum fi_op op, uint64_t flags, void *context);
	ssize_t (*allgather)(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, void *result, void *result_desc,
			     fi_addr_t coll_addr, enum fi_datatype datatype,
			     uint64_t flags, void *context);
	ssize_t (*reduce_scatter)(struct fid_ep *ep, const void *buf,
				  size_t count, void *desc, void *result,
				  void *result_desc, fi_addr_t coll_addr,
				  enum fi_datatype datatype, enum fi_op op,
				  uint64_t flags, void *context);
	ssize_t (*reduce)(struct fid_ep *ep, const void *buf, size_t count,
			  void *desc, void *result, void *result_desc,
			  fi_addr_t coll_addr, fi_addr_t root_addr,
			  enum fi_datatype datatype, enum fi_op op,
			  uint64_t flags, void *context);
	ssize_t (*scatter)(struct fid_ep *ep, const void *buf, size_t count,
			   void *desc, void *result, void *result_desc,
			   fi_addr_t coll_addr, fi_addr_t root_addr,
			   enum fi_datatype datatype, uint64_t flags,
			   void *context);
	ssize_t (*gather)(struct fid_ep *ep, const void *buf, size_t count,
			  void *desc, void *result, void *result_desc,
			  fi_addr_t coll_addr, fi_addr_t root_addr,
			  enum fi_datatype datatype, uint64_t flags,
			  void *context);
	ssize_t (*msg)(struct fid_ep *ep, const struct fi_msg_collective *msg,
		       struct fi_ioc *resultv, void **result_desc,
		       size_t result_count, uint64_t flags);
	ssize_t (*barrier2)(struct fid_ep *ep, fi_addr_t coll_addr,
			    uint64_t flags, void *context);
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_collective.h>
#endif

#ifndef FABRIC_DIRECT_COLLECTIVE

/* ---- AV sets ---------------------------------------------------------- */

static inline int fi_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
			    struct fid_av_set **set, void *context)
{
	if (!FI_CHECK_OP(av->ops, struct fi_ops_av, av_set))
		return -FI_ENOSYS;
	return av->ops->av_set(av, attr, set, context);
}

static inline int fi_av_set_union(struct fid_av_set *dst,
				  const struct fid_av_set *src)
{
	return dst->ops->set_union(dst, src);
}

static inline int fi_av_set_intersect(struct fid_av_set *dst,
				      const struct fid_av_set *src)
{
	return dst->ops->intersect(dst, src);
}

static inline int fi_av_set_diff(struct fid_av_set *dst,
				 const struct fid_av_set *src)
{
	return dst->ops->diff(dst, src);
}

static inline int fi_av_set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	return set->ops->insert(set, addr);
}

static inline int fi_av_set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	return set->ops->remove(set, addr);
}

static inline int fi_av_set_addr(struct fid_av_set *set, fi_addr_t *coll_addr)
{
	return set->ops->addr(set, coll_addr);
}

/* Joins the collective group of coll_addr/set: fi_join() with FI_COLLECTIVE. */
static inline int fi_join_collective(struct fid_ep *ep, fi_addr_t coll_addr,
				     const struct fid_av_set *set,
				     uint64_t flags, struct fid_mc **mc,
				     void *context)
{
	struct fi_collective_addr group;

	group.set = set;
	group.coll_addr = coll_addr;
	return fi_join(ep, &group, flags | FI_COLLECTIVE, mc, context);
}

/* ---- Collective operations -------------------------------------------- */

static inline ssize_t fi_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
				 void *context)
{
	return ep->collective->barrier(ep, coll_addr, context);
}

/* fi_barrier() with flags; without flags it is plain fi_barrier(). */
static inline ssize_t fi_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
				  uint64_t flags, void *context)
{
	if (flags == 0)
		return fi_barrier(ep, coll_addr, context);
	if (!FI_CHECK_OP(ep->collective, struct fi_ops_collective, barrier2))
		return -FI_ENOSYS;
	return ep->collective->barrier2(ep, coll_addr, flags, context);
}

static inline ssize_t fi_broadcast(struct fid_ep *ep, void *buf, size_t count,
				   void *desc, fi_addr_t coll_addr,
				   fi_addr_t root_addr,
				   enum fi_datatype datatype, uint64_t flags,
				   void *context)
{
	return ep->collective->broadcast(ep, buf, count, desc, coll_addr,
					 root_addr, datatype, flags, context);
}

static inline ssize_t fi_alltoall(struct fid_ep *ep, const void *buf,
				  size_t count, void *desc, void *result,
				  void *result_desc, fi_addr_t coll_addr,
				  enum fi_datatype datatype, uint64_t flags,
				  void *context)
{
	return ep->collective->alltoall(ep, buf, count, desc, result,
					result_desc, coll_addr, datatype,
					flags, context);
}

static inline ssize_t fi_allreduce(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t coll_addr,
				   enum fi_datatype datatype, enum fi_op op,
				   uint64_t flags, void *context)
{
	return ep->collective->allreduce(ep, buf, count, desc, result,
					 result_desc, coll_addr, datatype, op,
					 flags, context);
}

static inline ssize_t fi_allgather(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t coll_addr,
				   enum fi_datatype datatype, uint64_t flags,
				   void *context)
{
	return ep->collective->allgather(ep, buf, count, desc, result,
					 result_desc, coll_addr, datatype,
					 flags, context);
}

static inline ssize_t fi_reduce_scatter(struct fid_ep *ep, const void *buf,
					size_t count, void *desc,
					void *result, void *result_desc,
					fi_addr_t coll_addr,
					enum fi_datatype datatype,
					enum fi_op op, uint64_t flags,
					void *context)
{
	return ep->collective->reduce_scatter(ep, buf, count, desc, result,
					      result_desc, coll_addr,
					      datatype, op, flags, context);
}

static inline ssize_t fi_reduce(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t coll_addr,
				fi_addr_t root_addr,
				enum fi_datatype datatype, enum fi_op op,
				uint64_t flags, void *context)
{
	return ep->collective->reduce(ep, buf, count, desc, result,
				      result_desc, coll_addr, root_addr,
				      datatype, op, flags, context);
}

static inline ssize_t fi_scatter(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t coll_addr,
				 fi_addr_t root_addr,
				 enum fi_datatype datatype, uint64_t flags,
				 void *context)
{
	return ep->collective->scatter(ep, buf, count, desc, result,
				       result_desc, coll_addr, root_addr,
				       datatype, flags, context);
}

static inline ssize_t fi_gather(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t coll_addr,
				fi_addr_t root_addr,
				enum fi_datatype datatype, uint64_t flags,
				void *context)
{
	return ep->collective->gather(ep, buf, count, desc, result,
				      result_desc, coll_addr, root_addr,
				      datatype, flags, context);
}

/* Domain-level query; -FI_ENOSYS when the domain's ops table predates it. */
static inline int fi_query_collective(struct fid_domain *domain,
				      enum fi_collective_op coll,
				      struct fi_collective_attr *attr,
				      uint64_t flags)
{
	if (!FI_CHECK_OP(domain->ops, struct fi_ops_domain, query_collective))
		return -FI_ENOSYS;
	return domain->ops->query_collective(domain, coll, attr, flags);
}

#endif /* FABRIC_DIRECT_COLLECTIVE */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_COLLECTIVE_H_ */
