/*
 * <rdma/fi_ext.h> -- extension interfaces: provider-specific option
 * ranges, fid export/import, the memory-monitor and logging import
 * extensions, and the peer provider API (peer AV, AV set, CQ, domain, EQ,
 * shared receive context and peer transfers; see fi_peer(3)).
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, constant values, struct layouts and inline functions.  The
 * peer-API flags and fid classes it relies on (FI_PEER, FI_PEER_TRANSFER,
 * FI_CLASS_PEER_CQ, FI_CLASS_PEER_SRX, FI_CLASS_PEER_AV,
 * FI_CLASS_PEER_AV_SET, FI_CLASS_LOG, FI_EXPORT_FID) are defined, as in
 * libfabric, by <rdma/fabric.h>.
 *
 * Additions in API 1.18: none.  libfabric 1.18's fi_ext.h adds no names to
 * 1.17's.  It does carry two type corrections made upstream in 1.17.1
 * ("Fix typos in fi_ext.h"), which we deliberately do NOT adopt, because
 * our reference ABI is Debian's libfabric 1.17.0 and its member types must
 * stay identical (the layouts are the same either way):
 *   - struct fi_peer_av_context::av stays `struct fi_peer_av *` (upstream
 *     1.17.1+: `struct fid_peer_av *`); a struct fid_peer_av pointer needs a
 *     cast to be stored there;
 *   - struct fi_ops_transfer_peer::complete keeps its last parameter as
 *     `fi_addr_t *src_addr` (upstream 1.17.1+: `fi_addr_t src_addr`).
 */

#ifndef FABRIC_API_RDMA_FI_EXT_H_
#define FABRIC_API_RDMA_FI_EXT_H_

#include <stdbool.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Provider-specific values
 *
 * A provider owns a 12-bit code, shifted left by 16 bits (the top 4 bits
 * stay zero).  Its private option names and error codes are the negated
 * code plus a small offset, so they never collide with common values or
 * with another provider's.
 * ====================================================================== */

#define FI_PROV_SPECIFIC_EFA (0xefa << 16)
#define FI_PROV_SPECIFIC_TCP (0x7cb << 16)

/* EFA endpoint options (level FI_OPT_ENDPOINT). */
enum {
	FI_OPT_EFA_RNR_RETRY = -FI_PROV_SPECIFIC_EFA,
};

/* ======================================================================
 * Exporting and importing fids
 * ====================================================================== */

/* Argument of fi_control(fid, FI_EXPORT_FID, ...). */
struct fi_fid_export {
	struct fid **fid;   /* receives the exported fid */
	uint64_t flags;
	void *context;
};

/* Asks fid's provider for a fid that exports it to another component. */
static inline int fi_export_fid(struct fid *fid, uint64_t flags,
				struct fid **expfid, void *context)
{
	struct fi_fid_export request;

	request.fid = expfid;
	request.flags = flags;
	request.context = context;
	return fi_control(fid, FI_EXPORT_FID, &request);
}

/* Hands expfid (an exported or user-built fid) to fid: a bind. */
static inline int fi_import_fid(struct fid *fid, struct fid *expfid,
				uint64_t flags)
{
	return fid->ops->bind(fid, expfid, flags);
}

/* ======================================================================
 * Memory monitor import: open the "mr_cache" fid and import a monitor
 * built by the application.
 * ====================================================================== */

struct fid_mem_monitor;

/* Implemented by the importing application, called by the library. */
struct fi_ops_mem_monitor {
	size_t size;
	int (*start)(struct fid_mem_monitor *monitor);
	void (*stop)(struct fid_mem_monitor *monitor);
	int (*subscribe)(struct fid_mem_monitor *monitor, const void *addr,
			 size_t len);
	void (*unsubscribe)(struct fid_mem_monitor *monitor, const void *addr,
			    size_t len);
	bool (*valid)(struct fid_mem_monitor *monitor, const void *addr,
		      size_t len);
};

/* Implemented by the library, called by the monitor on a change. */
struct fi_ops_mem_notify {
	size_t size;
	void (*notify)(struct fid_mem_monitor *monitor, const void *addr,
		       size_t len);
};

struct fid_mem_monitor {
	struct fid fid;
	struct fi_ops_mem_monitor *export_ops;
	struct fi_ops_mem_notify *import_ops;
};

/* ======================================================================
 * Peer providers (fi_peer(3)).  An owner provider shares one of its
 * objects with a peer provider: the owner passes the FI_PEER flag and one
 * of the *_context structs below as the open call's context.
 * ====================================================================== */

/* ---- Peer AV ---------------------------------------------------------- */

struct fid_peer_av;

/* Owner-side operations on a shared AV. */
struct fi_ops_av_owner {
	size_t size;
	int (*query)(struct fid_peer_av *av, struct fi_av_attr *attr);
	fi_addr_t (*ep_addr)(struct fid_peer_av *av, struct fid_ep *ep);
};

struct fid_peer_av {
	struct fid fid;
	struct fi_ops_av_owner *owner_ops;
};

/* Context of fi_av_open() with FI_PEER.  The member type is libfabric
 * 1.17.0's (see the note at the top of this file). */
struct fi_peer_av_context {
	size_t size;
	struct fi_peer_av *av;
};

/* ---- Peer AV set ------------------------------------------------------ */

struct fid_peer_av_set;

struct fi_ops_av_set_owner {
	size_t size;
	int (*members)(struct fid_peer_av_set *av, fi_addr_t *addr,
		       size_t *count);
};

struct fid_peer_av_set {
	struct fid fid;
	struct fi_ops_av_set_owner *owner_ops;
};

/* Context of fi_av_set() with FI_PEER (member type as in libfabric). */
struct fi_peer_av_set_context {
	size_t size;
	struct fi_peer_av_set *av_set;
};

/* ---- Peer CQ ---------------------------------------------------------- */

struct fid_peer_cq;

/* Owner-side calls through which the peer posts completions. */
struct fi_ops_cq_owner {
	size_t size;
	ssize_t (*write)(struct fid_peer_cq *cq, void *context,
			 uint64_t flags, size_t len, void *buf, uint64_t data,
			 uint64_t tag, fi_addr_t src);
	ssize_t (*writeerr)(struct fid_peer_cq *cq,
			    const struct fi_cq_err_entry *err_entry);
};

struct fid_peer_cq {
	struct fid fid;
	struct fi_ops_cq_owner *owner_ops;
};

/* Context of fi_cq_open() with FI_PEER. */
struct fi_peer_cq_context {
	size_t size;
	struct fid_peer_cq *cq;
};

/* ---- Peer domain and EQ ----------------------------------------------- */

/* Context of fi_domain2() with FI_PEER. */
struct fi_peer_domain_context {
	size_t size;
	struct fid_domain *domain;
};

/* Context of fi_eq_open() with FI_PEER. */
struct fi_peer_eq_context {
	size_t size;
	struct fid_eq *eq;
};

/* ---- Peer shared receive context -------------------------------------- */

struct fid_peer_srx;

/*
 * A posted or unexpected receive, shared by owner and peer.  next/prev come
 * first so that an entry can be linked into a doubly linked list directly.
 */
struct fi_peer_rx_entry {
	struct fi_peer_rx_entry *next;
	struct fi_peer_rx_entry *prev;
	struct fid_peer_srx *srx;
	fi_addr_t addr;
	size_t size;
	uint64_t tag;
	uint64_t flags;
	void *context;
	size_t count;           /* entries in iov and desc */
	void **desc;
	void *peer_context;     /* for the peer's use */
	void *owner_context;    /* for the owner's use */
	struct iovec *iov;
};

/* Implemented by the owner of the receive queues, called by the peer. */
struct fi_ops_srx_owner {
	size_t size;
	int (*get_msg)(struct fid_peer_srx *srx, fi_addr_t addr, size_t size,
		       struct fi_peer_rx_entry **entry);
	int (*get_tag)(struct fid_peer_srx *srx, fi_addr_t addr, uint64_t tag,
		       struct fi_peer_rx_entry **entry);
	int (*queue_msg)(struct fi_peer_rx_entry *entry);
	int (*queue_tag)(struct fi_peer_rx_entry *entry);

	void (*free_entry)(struct fi_peer_rx_entry *entry);
};

/* Implemented by the peer, called by the owner for queued entries. */
struct fi_ops_srx_peer {
	size_t size;
	int (*start_msg)(struct fi_peer_rx_entry *entry);
	int (*start_tag)(struct fi_peer_rx_entry *entry);
	int (*discard_msg)(struct fi_peer_rx_entry *entry);
	int (*discard_tag)(struct fi_peer_rx_entry *entry);
};

struct fid_peer_srx {
	struct fid_ep ep_fid;
	struct fi_ops_srx_owner *owner_ops;
	struct fi_ops_srx_peer *peer_ops;
};

/* Context of fi_srx_context() with FI_PEER. */
struct fi_peer_srx_context {
	size_t size;
	struct fid_peer_srx *srx;
};

/* ---- Peer transfers (FI_PEER_TRANSFER) -------------------------------- */

struct fi_peer_transfer_context;

/* Completion reporting into the main provider.  The complete() signature
 * is libfabric 1.17.0's (see the note at the top of this file). */
struct fi_ops_transfer_peer {
	size_t size;
	ssize_t (*complete)(struct fid_ep *ep, struct fi_cq_tagged_entry *buf,
			    fi_addr_t *src_addr);
	ssize_t (*comperr)(struct fid_ep *ep, struct fi_cq_err_entry *buf);
};

/* Context of fi_endpoint2() with FI_PEER_TRANSFER. */
struct fi_peer_transfer_context {
	size_t size;
	struct fi_info *info;
	struct fid_ep *ep;
	struct fi_ops_transfer_peer *peer_ops;
};

/* ======================================================================
 * Logging import: open the "logging" fid and import an application's
 * logger, which then receives all log output.
 * ====================================================================== */

/* Flag of the enabled()/ready() callbacks: the provider filter applies. */
#define FI_LOG_PROV_FILTERED (1ULL << 0)

struct fi_ops_log {
	size_t size;
	int (*enabled)(const struct fi_provider *prov,
		       enum fi_log_level level, enum fi_log_subsys subsys,
		       uint64_t flags);
	int (*ready)(const struct fi_provider *prov, enum fi_log_level level,
		     enum fi_log_subsys subsys, uint64_t flags,
		     uint64_t *showtime);
	void (*log)(const struct fi_provider *prov, enum fi_log_level level,
		    enum fi_log_subsys subsys, const char *func, int line,
		    const char *msg);
};

struct fid_logging {
	struct fid fid;
	struct fi_ops_log *ops;
};

/* Opens the named extension fid, imports fid into it, and closes it. */
static inline int fi_import(uint32_t version, const char *name, void *attr,
			    size_t attr_len, uint64_t flags, struct fid *fid,
			    void *context)
{
	struct fid *opened;
	int ret;

	ret = fi_open(version, name, attr, attr_len, flags, &opened, context);
	if (ret != FI_SUCCESS)
		return ret;

	ret = fi_import_fid(opened, fid, flags);
	fi_close(opened);
	return ret;
}

/* Installs log_fid (whose ops the caller has filled in) as the logger. */
static inline int fi_import_log(uint32_t version, uint64_t flags,
				struct fid_logging *log_fid)
{
	log_fid->fid.fclass = FI_CLASS_LOG;
	log_fid->ops->size = sizeof(struct fi_ops_log);

	return fi_import(version, "logging", NULL, 0, flags, &log_fid->fid,
			 log_fid);
}

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_EXT_H_ */
