/*
 * <rdma/fi_trigger.h> -- triggered operations: data transfers that a
 * provider defers until a condition holds (a counter reaching a threshold,
 * or a device-side trigger for FI_TRIGGER_XPU), and the deferred-work
 * descriptors queued with FI_QUEUE_WORK.
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, enumerator values and struct layouts.  The triggered contexts
 * must stay exactly as large as struct fi_context / struct fi_context2,
 * because applications pass them in place of those.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_FI_TRIGGER_H_
#define FABRIC_API_RDMA_FI_TRIGGER_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What fires a triggered operation. */
enum fi_trigger_event {
	FI_TRIGGER_THRESHOLD = 0, /* a counter reaches a threshold */
	FI_TRIGGER_XPU = 1,       /* a device (GPU/XPU) writes trigger variables */
};

/* The kind of operation a struct fi_deferred_work carries. */
enum fi_op_type {
	FI_OP_RECV = 0,
	FI_OP_SEND = 1,
	FI_OP_TRECV = 2,
	FI_OP_TSEND = 3,
	FI_OP_READ = 4,
	FI_OP_WRITE = 5,
	FI_OP_ATOMIC = 6,
	FI_OP_FETCH_ATOMIC = 7,
	FI_OP_COMPARE_ATOMIC = 8,
	FI_OP_CNTR_SET = 9,
	FI_OP_CNTR_ADD = 10,
};

/* FI_TRIGGER_THRESHOLD: fire once cntr reaches threshold. */
struct fi_trigger_threshold {
	struct fid_cntr *cntr;
	size_t threshold;
};

/* One trigger variable of an FI_TRIGGER_XPU trigger. */
struct fi_trigger_var {
	enum fi_datatype datatype;
	int count;
	void *addr;
	union {
		uint8_t val8;
		uint16_t val16;
		uint32_t val32;
		uint64_t val64;
		uint8_t *data;
	} value;
};

/* FI_TRIGGER_XPU: a device-initiated trigger (also FI_OPT_XPU_TRIGGER). */
struct fi_trigger_xpu {
	int count;                  /* number of entries in var */
	enum fi_hmem_iface iface;
	union {
		uint64_t reserved;
		int cuda;
		int ze;
	} device;
	struct fi_trigger_var *var;
};

/* Deferred-work descriptors, one per operation kind. */
struct fi_op_msg {
	struct fid_ep *ep;
	struct fi_msg msg;
	uint64_t flags;
};

struct fi_op_tagged {
	struct fid_ep *ep;
	struct fi_msg_tagged msg;
	uint64_t flags;
};

struct fi_op_rma {
	struct fid_ep *ep;
	struct fi_msg_rma msg;
	uint64_t flags;
};

struct fi_op_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	uint64_t flags;
};

struct fi_op_fetch_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	struct fi_msg_fetch fetch;
	uint64_t flags;
};

struct fi_op_compare_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	struct fi_msg_fetch fetch;
	struct fi_msg_compare compare;
	uint64_t flags;
};

/* FI_OP_CNTR_SET / FI_OP_CNTR_ADD: set or add value to cntr. */
struct fi_op_cntr {
	struct fid_cntr *cntr;
	uint64_t value;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_trigger.h>
#endif

#ifndef FABRIC_DIRECT_TRIGGER

/*
 * Passed as the context of a triggered transfer (FI_TRIGGER flag).  Its size
 * is that of struct fi_context (4 pointers): the event type plus 3 pointers.
 */
struct fi_triggered_context {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu xpu;
		void *internal[3];
	} trigger;
};

/* The same for providers that require FI_CONTEXT2 (8 pointers). */
struct fi_triggered_context2 {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu xpu;
		void *internal[7];
	} trigger;
};

/*
 * Work queued on a domain with fi_control(FI_QUEUE_WORK): run op once
 * triggering_cntr reaches threshold, then bump completion_cntr.
 */
struct fi_deferred_work {
	struct fi_context2 context;

	uint64_t threshold;
	struct fid_cntr *triggering_cntr;
	struct fid_cntr *completion_cntr;

	enum fi_op_type op_type;

	union {
		struct fi_op_msg *msg;
		struct fi_op_tagged *tagged;
		struct fi_op_rma *rma;
		struct fi_op_atomic *atomic;
		struct fi_op_fetch_atomic *fetch_atomic;
		struct fi_op_compare_atomic *compare_atomic;
		struct fi_op_cntr *cntr;
	} op;
};

#endif /* FABRIC_DIRECT_TRIGGER */

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FI_TRIGGER_H_ */
