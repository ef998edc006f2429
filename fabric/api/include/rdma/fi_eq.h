/*
 * <rdma/fi_eq.h> -- event reporting: wait sets, poll sets, event queues
 * (EQ, control events such as connection management), completion queues
 * (CQ, data-transfer completions) and completion counters.
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * every name, enumerator value, struct layout (including the EQ and CQ entry
 * formats applications read into), ops table and inline dispatch function
 * matches libfabric.  Each inline calls the matching ops-table entry;
 * fi_cntr_adderr() and fi_cntr_seterr() are guarded by FI_CHECK_OP and
 * return -FI_ENOSYS when the op is absent.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_EQ_H_
#define FABRIC_API_RDMA_FI_EQ_H_

#include <poll.h>

#ifndef _WIN32
#include <pthread.h>
#endif

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Wait sets
 * ====================================================================== */

/* How a blocking EQ/CQ/counter/wait set waits; the object itself is
 * obtained with fi_control(FI_GETWAIT). */
enum fi_wait_obj {
	FI_WAIT_NONE = 0,       /* no blocking reads */
	FI_WAIT_UNSPEC = 1,     /* the provider chooses */
	FI_WAIT_SET = 2,        /* a struct fid_wait shared by several objects */
	FI_WAIT_FD = 3,         /* a file descriptor (int) */
	FI_WAIT_MUTEX_COND = 4, /* struct fi_mutex_cond */
	FI_WAIT_YIELD = 5,      /* busy-wait, yielding the CPU */
	FI_WAIT_POLLFD = 6,     /* struct fi_wait_pollfd */
};

/* Attributes of fi_wait_open(). */
struct fi_wait_attr {
	enum fi_wait_obj wait_obj;
	uint64_t flags;
};

/* Operations of a wait set (struct fid_wait::ops). */
struct fi_ops_wait {
	size_t size;
	int (*wait)(struct fid_wait *waitset, int timeout);
};

/* A wait set: one wait object for several EQs, CQs and counters. */
struct fid_wait {
	struct fid fid;
	struct fi_ops_wait *ops;
};

#ifndef _WIN32
/* FI_GETWAIT result for FI_WAIT_MUTEX_COND. */
struct fi_mutex_cond {
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
};
#endif

/* FI_GETWAIT result for FI_WAIT_POLLFD; change_index grows whenever the
 * set of descriptors changes. */
struct fi_wait_pollfd {
	uint64_t change_index;
	size_t nfds;
	struct pollfd *fd;
};

/* ======================================================================
 * Poll sets
 * ====================================================================== */

/* Attributes of fi_poll_open(). */
struct fi_poll_attr {
	uint64_t flags;
};

/* Operations of a poll set (struct fid_poll::ops). */
struct fi_ops_poll {
	size_t size;
	int (*poll)(struct fid_poll *pollset, void **context, int count);
	int (*poll_add)(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags);
	int (*poll_del)(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags);
};

/* A poll set: checks several CQs and counters for progress at once. */
struct fid_poll {
	struct fid fid;
	struct fi_ops_poll *ops;
};

/* ======================================================================
 * Event queues
 * ====================================================================== */

/* Attributes of fi_eq_open(). */
struct fi_eq_attr {
	size_t size;                 /* minimum number of entries */
	uint64_t flags;
	enum fi_wait_obj wait_obj;
	int signaling_vector;
	struct fid_wait *wait_set;   /* for FI_WAIT_SET */
};

/* Event codes fi_eq_read() reports, with the entry format of each. */
enum {
	FI_NOTIFY = 0,          /* struct fi_eq_entry */
	FI_CONNREQ = 1,         /* struct fi_eq_cm_entry */
	FI_CONNECTED = 2,       /* struct fi_eq_cm_entry */
	FI_SHUTDOWN = 3,        /* struct fi_eq_cm_entry */
	FI_MR_COMPLETE = 4,     /* struct fi_eq_entry */
	FI_AV_COMPLETE = 5,     /* struct fi_eq_entry */
	FI_JOIN_COMPLETE = 6,   /* struct fi_eq_entry */
};

/* A generic EQ event. */
struct fi_eq_entry {
	fid_t fid;
	void *context;
	uint64_t data;
};

/* An EQ error, read with fi_eq_readerr(). */
struct fi_eq_err_entry {
	fid_t fid;
	void *context;
	uint64_t data;
	int err;                /* positive FI_E* code */
	int prov_errno;
	void *err_data;         /* valid until the EQ is read again */
	size_t err_data_size;
};

/* A connection-management event; the caller frees info with
 * fi_freeinfo().  Connection data, if any, follows the struct. */
struct fi_eq_cm_entry {
	fid_t fid;
	struct fi_info *info;
	uint8_t data[];
};

/* Operations of an event queue (struct fid_eq::ops). */
struct fi_ops_eq {
	size_t size;
	ssize_t (*read)(struct fid_eq *eq, uint32_t *event, void *buf,
			size_t len, uint64_t flags);
	ssize_t (*readerr)(struct fid_eq *eq, struct fi_eq_err_entry *buf,
			   uint64_t flags);
	ssize_t (*write)(struct fid_eq *eq, uint32_t event, const void *buf,
			 size_t len, uint64_t flags);
	ssize_t (*sread)(struct fid_eq *eq, uint32_t *event, void *buf,
			 size_t len, int timeout, uint64_t flags);
	const char *(*strerror)(struct fid_eq *eq, int prov_errno,
				const void *err_data, char *buf, size_t len);
};

/* An event queue: control events (connections, async MR/AV work). */
struct fid_eq {
	struct fid fid;
	struct fi_ops_eq *ops;
};

/* ======================================================================
 * Completion queues
 * ====================================================================== */

/* Which entry struct a CQ returns. */
enum fi_cq_format {
	FI_CQ_FORMAT_UNSPEC = 0,
	FI_CQ_FORMAT_CONTEXT = 1,   /* struct fi_cq_entry */
	FI_CQ_FORMAT_MSG = 2,       /* struct fi_cq_msg_entry */
	FI_CQ_FORMAT_DATA = 3,      /* struct fi_cq_data_entry */
	FI_CQ_FORMAT_TAGGED = 4,    /* struct fi_cq_tagged_entry */
};

/* FI_CQ_FORMAT_CONTEXT: only the operation's context. */
struct fi_cq_entry {
	void *op_context;
};

/* FI_CQ_FORMAT_MSG: adds completion flags and received length. */
struct fi_cq_msg_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
};

/* FI_CQ_FORMAT_DATA: adds the buffer and remote CQ data. */
struct fi_cq_data_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
};

/* FI_CQ_FORMAT_TAGGED: adds the message tag. */
struct fi_cq_tagged_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
};

/* A failed operation, read with fi_cq_readerr(). */
struct fi_cq_err_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	size_t olen;            /* bytes that did not fit (truncation) */
	int err;                /* positive FI_E* code */
	int prov_errno;
	void *err_data;         /* valid until the CQ is read again */
	size_t err_data_size;
};

/* Wake-up condition of fi_cq_sread(). */
enum fi_cq_wait_cond {
	FI_CQ_COND_NONE = 0,
	FI_CQ_COND_THRESHOLD = 1,   /* cond points to a size_t threshold */
};

/* Attributes of fi_cq_open(). */
struct fi_cq_attr {
	size_t size;                 /* minimum number of entries */
	uint64_t flags;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	int signaling_vector;
	enum fi_cq_wait_cond wait_cond;
	struct fid_wait *wait_set;   /* for FI_WAIT_SET */
};

/* Operations of a completion queue (struct fid_cq::ops). */
struct fi_ops_cq {
	size_t size;
	ssize_t (*read)(struct fid_cq *cq, void *buf, size_t count);
	ssize_t (*readfrom)(struct fid_cq *cq, void *buf, size_t count,
			    fi_addr_t *src_addr);
	ssize_t (*readerr)(struct fid_cq *cq, struct fi_cq_err_entry *buf,
			   uint64_t flags);
	ssize_t (*sread)(struct fid_cq *cq, void *buf, size_t count,
			 const void *cond, int timeout);
	ssize_t (*sreadfrom)(struct fid_cq *cq, void *buf, size_t count,
			     fi_addr_t *src_addr, const void *cond,
			     int timeout);
	int (*signal)(struct fid_cq *cq);
	const char *(*strerror)(struct fid_cq *cq, int prov_errno,
				const void *err_data, char *buf, size_t len);
};

/* A completion queue: completions of data transfers. */
struct fid_cq {
	struct fid fid;
	struct fi_ops_cq *ops;
};

/* ======================================================================
 * Counters
 * ====================================================================== */

/* What a counter counts. */
enum fi_cntr_events {
	FI_CNTR_EVENTS_COMP = 0,    /* completed operations */
};

/* Attributes of fi_cntr_open(). */
struct fi_cntr_attr {
	enum fi_cntr_events events;
	enum fi_wait_obj wait_obj;
	struct fid_wait *wait_set;   /* for FI_WAIT_SET */
	uint64_t flags;
};

/* Operations of a counter (struct fid_cntr::ops). */
struct fi_ops_cntr {
	size_t size;
	uint64_t (*read)(struct fid_cntr *cntr);
	uint64_t (*readerr)(struct fid_cntr *cntr);
	int (*add)(struct fid_cntr *cntr, uint64_t value);
	int (*set)(struct fid_cntr *cntr, uint64_t value);
	int (*wait)(struct fid_cntr *cntr, uint64_t threshold, int timeout);
	int (*adderr)(struct fid_cntr *cntr, uint64_t value);
	int (*seterr)(struct fid_cntr *cntr, uint64_t value);
};

/* A completion counter: success and error counts of operations. */
struct fid_cntr {
	struct fid fid;
	struct fi_ops_cntr *ops;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_eq.h>
#endif

#ifndef FABRIC_DIRECT_EQ

/* ---- Wait and poll sets ----------------------------------------------- */

/* Whether it is safe to block on the wait objects of fids (0) or the
 * caller must poll them first (-FI_EAGAIN). */
static inline int fi_trywait(struct fid_fabric *fabric, struct fid **fids,
			     int count)
{
	return fabric->ops->trywait(fabric, fids, count);
}

static inline int fi_wait(struct fid_wait *waitset, int timeout)
{
	return waitset->ops->wait(waitset, timeout);
}

static inline int fi_poll(struct fid_poll *pollset, void **context,
			  int count)
{
	return pollset->ops->poll(pollset, context, count);
}

static inline int fi_poll_add(struct fid_poll *pollset,
			      struct fid *event_fid, uint64_t flags)
{
	return pollset->ops->poll_add(pollset, event_fid, flags);
}

static inline int fi_poll_del(struct fid_poll *pollset,
			      struct fid *event_fid, uint64_t flags)
{
	return pollset->ops->poll_del(pollset, event_fid, flags);
}

/* ---- Event queues ----------------------------------------------------- */

/* EQs belong to the fabric, not to a domain. */
static inline int fi_eq_open(struct fid_fabric *fabric,
			     struct fi_eq_attr *attr, struct fid_eq **eq,
			     void *context)
{
	return fabric->ops->eq_open(fabric, attr, eq, context);
}

static inline ssize_t fi_eq_read(struct fid_eq *eq, uint32_t *event,
				 void *buf, size_t len, uint64_t flags)
{
	return eq->ops->read(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_readerr(struct fid_eq *eq,
				    struct fi_eq_err_entry *buf,
				    uint64_t flags)
{
	return eq->ops->readerr(eq, buf, flags);
}

static inline ssize_t fi_eq_write(struct fid_eq *eq, uint32_t event,
				  const void *buf, size_t len,
				  uint64_t flags)
{
	return eq->ops->write(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_sread(struct fid_eq *eq, uint32_t *event,
				  void *buf, size_t len, int timeout,
				  uint64_t flags)
{
	return eq->ops->sread(eq, event, buf, len, timeout, flags);
}

static inline const char *fi_eq_strerror(struct fid_eq *eq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	return eq->ops->strerror(eq, prov_errno, err_data, buf, len);
}

/* ---- Completion queues ------------------------------------------------ */

static inline ssize_t fi_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return cq->ops->read(cq, buf, count);
}

static inline ssize_t fi_cq_readfrom(struct fid_cq *cq, void *buf,
				     size_t count, fi_addr_t *src_addr)
{
	return cq->ops->readfrom(cq, buf, count, src_addr);
}

static inline ssize_t fi_cq_readerr(struct fid_cq *cq,
				    struct fi_cq_err_entry *buf,
				    uint64_t flags)
{
	return cq->ops->readerr(cq, buf, flags);
}

static inline ssize_t fi_cq_sread(struct fid_cq *cq, void *buf, size_t count,
				  const void *cond, int timeout)
{
	return cq->ops->sread(cq, buf, count, cond, timeout);
}

static inline ssize_t fi_cq_sreadfrom(struct fid_cq *cq, void *buf,
				      size_t count, fi_addr_t *src_addr,
				      const void *cond, int timeout)
{
	return cq->ops->sreadfrom(cq, buf, count, src_addr, cond, timeout);
}

static inline int fi_cq_signal(struct fid_cq *cq)
{
	return cq->ops->signal(cq);
}

static inline const char *fi_cq_strerror(struct fid_cq *cq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	return cq->ops->strerror(cq, prov_errno, err_data, buf, len);
}

/* ---- Counters --------------------------------------------------------- */

static inline uint64_t fi_cntr_read(struct fid_cntr *cntr)
{
	return cntr->ops->read(cntr);
}

static inline uint64_t fi_cntr_readerr(struct fid_cntr *cntr)
{
	return cntr->ops->readerr(cntr);
}

static inline int fi_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->add(cntr, value);
}

/* -FI_ENOSYS when the counter's ops table predates adderr. */
static inline int fi_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, adderr))
		return -FI_ENOSYS;
	return cntr->ops->adderr(cntr, value);
}

static inline int fi_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->set(cntr, value);
}

/* -FI_ENOSYS when the counter's ops table predates seterr. */
static inline int fi_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, seterr))
		return -FI_ENOSYS;
	return cntr->ops->seterr(cntr, value);
}

static inline int fi_cntr_wait(struct fid_cntr *cntr, uint64_t threshold,
			       int timeout)
{
	return cntr->ops->wait(cntr, threshold, timeout);
}

#endif /* FABRIC_DIRECT_EQ */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_EQ_H_ */
