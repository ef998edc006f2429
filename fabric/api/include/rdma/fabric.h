/*
 * <rdma/fabric.h> -- the base of the API: versions, capability and mode
 * bits, the fi_info description of a provider's offer and its attribute
 * structs, the fid object header, fi_getinfo() and the fabric object.
 *
 * Part of our public C API.  It reproduces libfabric's ABI for this header:
 * same names, constant values, struct layouts and inline dispatch functions,
 * so programs built against libfabric's <rdma/fabric.h> run on our library.
 *
 * Additions in API 1.18: FI_MINOR_VERSION is 18; FI_XPU (the 1.18 name of
 * the capability bit 44 that 1.17 calls FI_XPU_TRIGGER; both are defined).
 */

#ifndef FABRIC_API_RDMA_FABRIC_H_
#define FABRIC_API_RDMA_FABRIC_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/fi_errno.h>

#if defined(__GNUC__)
#define FI_DEPRECATED_FUNC __attribute__((deprecated))
#define FI_DEPRECATED_FIELD __attribute__((deprecated))
#define FI_FORMAT_PRINTF(string, first) \
	__attribute__((__format__(__printf__, (string), (first))))
#else
#define FI_DEPRECATED_FUNC
#define FI_DEPRECATED_FIELD
#define FI_FORMAT_PRINTF(string, first)
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define EXTERNALLY_VISIBLE externally_visible
#else
#define EXTERNALLY_VISIBLE
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef container_of
#define container_of(ptr, type, field) \
	((type *) ((char *) (ptr) - offsetof(type, field)))
#endif

/* Element count of an array; fails to compile-time-divide for pointers. */
#ifndef count_of
#define count_of(x) \
	((sizeof(x) / sizeof(0 [x])) / \
	 ((size_t) (!(sizeof(x) % sizeof(0 [x])))))
#endif

/* ---- Versions ---------------------------------------------------------- */

#define FI_MAJOR_VERSION 1
#define FI_MINOR_VERSION 18
#define FI_REVISION_VERSION 0

enum {
	FI_PATH_MAX = 256,
	FI_NAME_MAX = 64,
	FI_VERSION_MAX = 64
};

#define FI_VERSION(major, minor) (((major) << 16) | (minor))
#define FI_MAJOR(version) (version >> 16)
#define FI_MINOR(version) (version & 0xFFFF)
#define FI_VERSION_GE(v1, v2) (v1 >= v2)
#define FI_VERSION_LT(v1, v2) (v1 < v2)

/* The API version the library implements, as FI_VERSION(major, minor). */
uint32_t fi_version(void);

struct fid;
struct fid_fabric;
struct fid_domain;
struct fid_av;
struct fid_wait;
struct fid_poll;
struct fid_eq;
struct fid_cq;
struct fid_cntr;
struct fid_ep;
struct fid_pep;
struct fid_stx;
struct fid_mr;
struct fid_nic;

typedef struct fid *fid_t;

/* Set in values (flags, names, types) that a provider defines itself. */
#define FI_PROV_SPECIFIC (1U << 31)

/* ---- Capabilities and operation flags ----------------------------------
 * One 64-bit space shared by caps, op_flags and completion flags; some
 * bits mean different things in different fields (see the aliases). */

#define FI_MSG (1ULL << 1)
#define FI_RMA (1ULL << 2)
#define FI_TAGGED (1ULL << 3)
#define FI_ATOMIC (1ULL << 4)
#define FI_ATOMICS FI_ATOMIC
#define FI_MULTICAST (1ULL << 5)
#define FI_COLLECTIVE (1ULL << 6)

#define FI_READ (1ULL << 8)
#define FI_WRITE (1ULL << 9)
#define FI_RECV (1ULL << 10)
#define FI_SEND (1ULL << 11)
#define FI_TRANSMIT FI_SEND
#define FI_REMOTE_READ (1ULL << 12)
#define FI_REMOTE_WRITE (1ULL << 13)

#define FI_MULTI_RECV (1ULL << 16)
#define FI_REMOTE_CQ_DATA (1ULL << 17)
#define FI_MORE (1ULL << 18)
#define FI_PEEK (1ULL << 19)
#define FI_TRIGGER (1ULL << 20)
#define FI_FENCE (1ULL << 21)
#define FI_PRIORITY (1ULL << 22)

#define FI_COMPLETION (1ULL << 24)
#define FI_EVENT FI_COMPLETION
#define FI_INJECT (1ULL << 25)
#define FI_INJECT_COMPLETE (1ULL << 26)
#define FI_TRANSMIT_COMPLETE (1ULL << 27)
#define FI_DELIVERY_COMPLETE (1ULL << 28)
#define FI_AFFINITY (1ULL << 29)
#define FI_COMMIT_COMPLETE (1ULL << 30)
#define FI_MATCH_COMPLETE (1ULL << 31)

#define FI_PEER_TRANSFER (1ULL << 36)
#define FI_AV_USER_ID (1ULL << 41)
#define FI_PEER (1ULL << 43)
#define FI_XPU (1ULL << 44)
#define FI_XPU_TRIGGER FI_XPU
#define FI_HMEM_HOST_ALLOC (1ULL << 45)
#define FI_HMEM_DEVICE_ONLY (1ULL << 46)
#define FI_HMEM (1ULL << 47)
#define FI_VARIABLE_MSG (1ULL << 48)
#define FI_RMA_PMEM (1ULL << 49)
#define FI_SOURCE_ERR (1ULL << 50)
#define FI_LOCAL_COMM (1ULL << 51)
#define FI_REMOTE_COMM (1ULL << 52)
#define FI_SHARED_AV (1ULL << 53)
#define FI_PROV_ATTR_ONLY (1ULL << 54)
#define FI_NUMERICHOST (1ULL << 55)
#define FI_RMA_EVENT (1ULL << 56)
#define FI_SOURCE (1ULL << 57)
#define FI_NAMED_RX_CTX (1ULL << 58)
#define FI_DIRECTED_RECV (1ULL << 59)

/* Flags of tagged receives and buffered receives; they reuse cap bits. */
#define FI_CLAIM (1ULL << 59)
#define FI_DISCARD (1ULL << 58)

/* A buffer counted in elements of an atomic datatype. */
struct fi_ioc {
	void *addr;
	size_t count;
};

/* ---- Addresses --------------------------------------------------------- */

/* Format of src_addr/dest_addr and of addresses inserted in an AV. */
enum {
	FI_FORMAT_UNSPEC = 0, /* opaque bytes */
	FI_SOCKADDR = 1,      /* struct sockaddr (family decides) */
	FI_SOCKADDR_IN = 2,   /* struct sockaddr_in */
	FI_SOCKADDR_IN6 = 3,  /* struct sockaddr_in6 */
	FI_SOCKADDR_IB = 4,   /* struct sockaddr_ib */
	FI_ADDR_PSMX = 5,     /* uint64_t */
	FI_ADDR_GNI = 6,
	FI_ADDR_BGQ = 7,
	FI_ADDR_MLX = 8,
	FI_ADDR_STR = 9,      /* "fi_<format>://<address>" string */
	FI_ADDR_PSMX2 = 10,   /* uint64_t[2] */
	FI_ADDR_IB_UD = 11,   /* uint64_t[4] */
	FI_ADDR_EFA = 12,
	FI_ADDR_PSMX3 = 13,   /* uint64_t[4] */
	FI_ADDR_OPX = 14,
	FI_ADDR_CXI = 15,
};

#define FI_ADDR_UNSPEC ((uint64_t) -1)
#define FI_ADDR_NOTAVAIL ((uint64_t) -1)
#define FI_KEY_NOTAVAIL ((uint64_t) -1)
#define FI_SHARED_CONTEXT SIZE_MAX
typedef uint64_t fi_addr_t;

enum fi_av_type {
	FI_AV_UNSPEC = 0,
	FI_AV_MAP = 1,
	FI_AV_TABLE = 2
};

/* ---- Memory registration modes -----------------------------------------
 * Before API 1.5 mr_mode held one of the enum values; since then it holds
 * the bits below (BASIC and SCALABLE keep their old meaning as bits 0/1). */
enum fi_mr_mode {
	FI_MR_UNSPEC = 0,
	FI_MR_BASIC = 1,
	FI_MR_SCALABLE = 2,
};
#define FI_MR_LOCAL (1 << 2)
#define FI_MR_RAW (1 << 3)
#define FI_MR_VIRT_ADDR (1 << 4)
#define FI_MR_ALLOCATED (1 << 5)
#define FI_MR_PROV_KEY (1 << 6)
#define FI_MR_MMU_NOTIFY (1 << 7)
#define FI_MR_RMA_EVENT (1 << 8)
#define FI_MR_ENDPOINT (1 << 9)
#define FI_MR_HMEM (1 << 10)
#define FI_MR_COLLECTIVE (1 << 11)

/* ---- Domain behaviour -------------------------------------------------- */

enum fi_progress {
	FI_PROGRESS_UNSPEC = 0,
	FI_PROGRESS_AUTO = 1,
	FI_PROGRESS_MANUAL = 2
};

enum fi_threading {
	FI_THREAD_UNSPEC = 0,
	FI_THREAD_SAFE = 1,
	FI_THREAD_FID = 2,
	FI_THREAD_DOMAIN = 3,
	FI_THREAD_COMPLETION = 4,
	FI_THREAD_ENDPOINT = 5,
};

enum fi_resource_mgmt {
	FI_RM_UNSPEC = 0,
	FI_RM_DISABLED = 1,
	FI_RM_ENABLED = 2
};

/* ---- Ordering: msg_order and comp_order bits ---------------------------
 * R/W/S = read, write, send; "RAW" = a read after a write, and so on. */
#define FI_ORDER_NONE 0ULL
#define FI_ORDER_RAR (1ULL << 0)
#define FI_ORDER_RAW (1ULL << 1)
#define FI_ORDER_RAS (1ULL << 2)
#define FI_ORDER_WAR (1ULL << 3)
#define FI_ORDER_WAW (1ULL << 4)
#define FI_ORDER_WAS (1ULL << 5)
#define FI_ORDER_SAR (1ULL << 6)
#define FI_ORDER_SAW (1ULL << 7)
#define FI_ORDER_SAS (1ULL << 8)
#define FI_ORDER_STRICT 0x1FF

#define FI_ORDER_RMA_RAR (1ULL << 32)
#define FI_ORDER_RMA_RAW (1ULL << 33)
#define FI_ORDER_RMA_WAR (1ULL << 34)
#define FI_ORDER_RMA_WAW (1ULL << 35)
#define FI_ORDER_ATOMIC_RAR (1ULL << 36)
#define FI_ORDER_ATOMIC_RAW (1ULL << 37)
#define FI_ORDER_ATOMIC_WAR (1ULL << 38)
#define FI_ORDER_ATOMIC_WAW (1ULL << 39)

#define FI_ORDER_DATA (1ULL << 16)

/* ---- Endpoints --------------------------------------------------------- */

enum fi_ep_type {
	FI_EP_UNSPEC = 0,
	FI_EP_MSG = 1,         /* connected, reliable */
	FI_EP_DGRAM = 2,       /* connectionless, unreliable */
	FI_EP_RDM = 3,         /* connectionless, reliable */
	FI_EP_SOCK_STREAM = 4,
	FI_EP_SOCK_DGRAM = 5,
};

/* Wire protocol of an endpoint (fi_ep_attr::protocol).  Endpoints of
 * different providers that speak the same protocol interoperate. */
enum {
	FI_PROTO_UNSPEC = 0,
	FI_PROTO_RDMA_CM_IB_RC = 1,
	FI_PROTO_IWARP = 2,
	FI_PROTO_IB_UD = 3,
	FI_PROTO_PSMX = 4,
	FI_PROTO_UDP = 5,
	FI_PROTO_SOCK_TCP = 6,
	FI_PROTO_MXM = 7, /* retired provider; value kept */
	FI_PROTO_IWARP_RDM = 8,
	FI_PROTO_IB_RDM = 9,
	FI_PROTO_GNI = 10,
	FI_PROTO_RXM = 11,
	FI_PROTO_RXD = 12,
	FI_PROTO_MLX = 13,
	FI_PROTO_NETWORKDIRECT = 14,
	FI_PROTO_PSMX2 = 15,
	FI_PROTO_SHM = 16,
	FI_PROTO_MRAIL = 17,
	FI_PROTO_RSTREAM = 18,
	FI_PROTO_RDMA_CM_IB_XRC = 19,
	FI_PROTO_EFA = 20,
	FI_PROTO_PSMX3 = 21,
	FI_PROTO_RXM_TCP = 22,
	FI_PROTO_OPX = 23,
	FI_PROTO_CXI = 24,
	FI_PROTO_XNET = 25,
};

/* Traffic classes (tclass fields): a DSCP value or a service label. */
enum {
	FI_TC_UNSPEC = 0,
	FI_TC_DSCP = 0x100,
	FI_TC_LABEL = 0x200,
	FI_TC_BEST_EFFORT = FI_TC_LABEL,
	FI_TC_LOW_LATENCY = 0x201,
	FI_TC_DEDICATED_ACCESS = 0x202,
	FI_TC_BULK_DATA = 0x203,
	FI_TC_SCAVENGER = 0x204,
	FI_TC_NETWORK_CTRL = 0x205,
};

static inline uint32_t fi_tc_dscp_set(uint8_t dscp)
{
	return ((uint32_t) dscp) | FI_TC_DSCP;
}

static inline uint8_t fi_tc_dscp_get(uint32_t tclass)
{
	return (tclass & FI_TC_DSCP) ? (uint8_t) tclass : 0;
}

/* ---- Mode bits: what the application agrees to do for the provider ---- */
#define FI_CONTEXT (1ULL << 59)
#define FI_MSG_PREFIX (1ULL << 58)
#define FI_ASYNC_IOV (1ULL << 57)
#define FI_RX_CQ_DATA (1ULL << 56)
#define FI_LOCAL_MR (1ULL << 55)
#define FI_NOTIFY_FLAGS_ONLY (1ULL << 54)
#define FI_RESTRICTED_COMP (1ULL << 53)
#define FI_CONTEXT2 (1ULL << 52)
#define FI_BUFFERED_RECV (1ULL << 51)

/* ---- The attribute structs of fi_info --------------------------------- */

struct fi_tx_attr {
	uint64_t caps;
	uint64_t mode;
	uint64_t op_flags;
	uint64_t msg_order;
	uint64_t comp_order;
	size_t inject_size;
	size_t size;
	size_t iov_limit;
	size_t rma_iov_limit;
	uint32_t tclass;
};

struct fi_rx_attr {
	uint64_t caps;
	uint64_t mode;
	uint64_t op_flags;
	uint64_t msg_order;
	uint64_t comp_order;
	size_t total_buffered_recv;
	size_t size;
	size_t iov_limit;
};

struct fi_ep_attr {
	enum fi_ep_type type;
	uint32_t protocol;
	uint32_t protocol_version;
	size_t max_msg_size;
	size_t msg_prefix_size;
	size_t max_order_raw_size;
	size_t max_order_war_size;
	size_t max_order_waw_size;
	uint64_t mem_tag_format;
	size_t tx_ctx_cnt;
	size_t rx_ctx_cnt;
	size_t auth_key_size;
	uint8_t *auth_key;
};

struct fi_domain_attr {
	struct fid_domain *domain; /* restrict to / report an opened domain */
	char *name;
	enum fi_threading threading;
	enum fi_progress control_progress;
	enum fi_progress data_progress;
	enum fi_resource_mgmt resource_mgmt;
	enum fi_av_type av_type;
	int mr_mode;
	size_t mr_key_size;
	size_t cq_data_size;
	size_t cq_cnt;
	size_t ep_cnt;
	size_t tx_ctx_cnt;
	size_t rx_ctx_cnt;
	size_t max_ep_tx_ctx;
	size_t max_ep_rx_ctx;
	size_t max_ep_stx_ctx;
	size_t max_ep_srx_ctx;
	size_t cntr_cnt;
	size_t mr_iov_limit;
	uint64_t caps;
	uint64_t mode;
	uint8_t *auth_key;
	size_t auth_key_size;
	size_t max_err_data;
	size_t mr_cnt;
	uint32_t tclass;
};

struct fi_fabric_attr {
	struct fid_fabric *fabric; /* restrict to / report an opened fabric */
	char *name;
	char *prov_name;
	uint32_t prov_version;
	uint32_t api_version;
};

/* One offer of a provider: returned by fi_getinfo() as a linked list, and
 * passed back as hints to narrow the search. */
struct fi_info {
	struct fi_info *next;
	uint64_t caps;
	uint64_t mode;
	uint32_t addr_format;
	size_t src_addrlen;
	size_t dest_addrlen;
	void *src_addr;
	void *dest_addr;
	fid_t handle; /* a passive endpoint or connection request */
	struct fi_tx_attr *tx_attr;
	struct fi_rx_attr *rx_attr;
	struct fi_ep_attr *ep_attr;
	struct fi_domain_attr *domain_attr;
	struct fi_fabric_attr *fabric_attr;
	struct fid_nic *nic;
};

/* ---- NIC description (fi_info::nic) ------------------------------------ */

struct fi_device_attr {
	char *name;
	char *device_id;
	char *device_version;
	char *vendor_id;
	char *driver;
	char *firmware;
};

enum fi_bus_type {
	FI_BUS_UNSPEC = 0,
	FI_BUS_UNKNOWN = FI_BUS_UNSPEC,
	FI_BUS_PCI = 1,
};

struct fi_pci_attr {
	uint16_t domain_id;
	uint8_t bus_id;
	uint8_t device_id;
	uint8_t function_id;
};

struct fi_bus_attr {
	enum fi_bus_type bus_type;
	union {
		struct fi_pci_attr pci;
	} attr;
};

enum fi_link_state {
	FI_LINK_UNKNOWN = 0,
	FI_LINK_DOWN = 1,
	FI_LINK_UP = 2,
};

struct fi_link_attr {
	char *address;
	size_t mtu;
	size_t speed; /* bits per second */
	enum fi_link_state state;
	char *network_type;
};

/* ---- Fabric objects ---------------------------------------------------- */

/* fid::fclass values. */
enum {
	FI_CLASS_UNSPEC = 0,
	FI_CLASS_FABRIC = 1,
	FI_CLASS_DOMAIN = 2,
	FI_CLASS_EP = 3,
	FI_CLASS_SEP = 4,
	FI_CLASS_RX_CTX = 5,
	FI_CLASS_SRX_CTX = 6,
	FI_CLASS_TX_CTX = 7,
	FI_CLASS_STX_CTX = 8,
	FI_CLASS_PEP = 9,
	FI_CLASS_INTERFACE = 10,
	FI_CLASS_AV = 11,
	FI_CLASS_MR = 12,
	FI_CLASS_EQ = 13,
	FI_CLASS_CQ = 14,
	FI_CLASS_CNTR = 15,
	FI_CLASS_WAIT = 16,
	FI_CLASS_POLL = 17,
	FI_CLASS_CONNREQ = 18,
	FI_CLASS_MC = 19,
	FI_CLASS_NIC = 20,
	FI_CLASS_AV_SET = 21,
	FI_CLASS_MR_CACHE = 22,
	FI_CLASS_MEM_MONITOR = 23,
	FI_CLASS_PEER_CQ = 24,
	FI_CLASS_PEER_SRX = 25,
	FI_CLASS_LOG = 26,
	FI_CLASS_PEER_AV = 27,
	FI_CLASS_PEER_AV_SET = 28,
};

struct fi_eq_attr;
struct fi_wait_attr;

/* fi_bind() flag: only operations posted with FI_COMPLETION report. */
#define FI_SELECTIVE_COMPLETION (1ULL << 59)

/* The operations every object has (struct fid::ops). */
struct fi_ops {
	size_t size;
	int (*close)(struct fid *fid);
	int (*bind)(struct fid *fid, struct fid *bfid, uint64_t flags);
	int (*control)(struct fid *fid, int command, void *arg);
	int (*ops_open)(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context);
	int (*tostr)(const struct fid *fid, char *buf, size_t len);
	int (*ops_set)(struct fid *fid, const char *name, uint64_t flags,
		       void *ops, void *context);
};

/* The header every object starts with. */
struct fid {
	size_t fclass;
	void *context;
	struct fi_ops *ops;
};

int fi_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const struct fi_info *hints,
	       struct fi_info **info);
void fi_freeinfo(struct fi_info *info);
struct fi_info *fi_dupinfo(const struct fi_info *info);

/* A zeroed fi_info with every attribute struct allocated. */
static inline struct fi_info *fi_allocinfo(void)
{
	return fi_dupinfo(NULL);
}

struct fi_ops_fabric {
	size_t size;
	int (*domain)(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **dom, void *context);
	int (*passive_ep)(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_pep **pep, void *context);
	int (*eq_open)(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		       struct fid_eq **eq, void *context);
	int (*wait_open)(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			 struct fid_wait **waitset);
	int (*trywait)(struct fid_fabric *fabric, struct fid **fids,
		       int count);
	int (*domain2)(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **dom, uint64_t flags, void *context);
};

struct fid_fabric {
	struct fid fid;
	struct fi_ops_fabric *ops;
	uint32_t api_version;
};

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	      void *context);

/* Opens a named library-level object (e.g. "logging", see fi_log.h). */
int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
	    uint64_t flags, struct fid **fid, void *context);

struct fid_nic {
	struct fid fid;
	struct fi_device_attr *device_attr;
	struct fi_bus_attr *bus_attr;
	struct fi_link_attr *link_attr;
	void *prov_attr;
};

/* True when an ops table is large enough to hold `op` and sets it. */
#define FI_CHECK_OP(ops, opstype, op) \
	(ops && (ops->size > offsetof(opstype, op)) && ops->op)

static inline int fi_close(struct fid *fid)
{
	return fid->ops->close(fid);
}

struct fi_alias {
	struct fid **fid;
	uint64_t flags;
};

/* Argument of FI_GET_VAL / FI_SET_VAL.  No common names exist; provider
 * names carry FI_PROV_SPECIFIC. */
struct fi_fid_var {
	int name;
	void *val;
};

struct fi_mr_raw_attr {
	uint64_t flags;
	uint64_t *base_addr;
	uint8_t *raw_key;
	size_t *key_size;
};

struct fi_mr_map_raw {
	uint64_t flags;
	uint64_t base_addr;
	uint8_t *raw_key;
	size_t key_size;
	uint64_t *key;
};

/* fi_control() commands; the comment names the argument. */
enum {
	FI_GETFIDFLAG = 0,   /* uint64_t * */
	FI_SETFIDFLAG = 1,   /* uint64_t * */
	FI_GETOPSFLAG = 2,   /* uint64_t * */
	FI_SETOPSFLAG = 3,   /* uint64_t * */
	FI_ALIAS = 4,        /* struct fi_alias * */
	FI_GETWAIT = 5,      /* wait object, e.g. int * for FI_WAIT_FD */
	FI_ENABLE = 6,       /* NULL */
	FI_BACKLOG = 7,      /* int * */
	FI_GET_RAW_MR = 8,   /* struct fi_mr_raw_attr * */
	FI_MAP_RAW_MR = 9,   /* struct fi_mr_map_raw * */
	FI_UNMAP_KEY = 10,   /* uint64_t * */
	FI_QUEUE_WORK = 11,  /* struct fi_deferred_work * */
	FI_CANCEL_WORK = 12, /* struct fi_deferred_work * */
	FI_FLUSH_WORK = 13,  /* NULL */
	FI_REFRESH = 14,     /* struct fi_mr_modify * */
	FI_DUP = 15,         /* struct fid ** */
	FI_GETWAITOBJ = 16,  /* enum fi_wait_obj * */
	FI_GET_VAL = 17,     /* struct fi_fid_var * */
	FI_SET_VAL = 18,     /* struct fi_fid_var * */
	FI_EXPORT_FID = 19,  /* struct fi_fid_export * */
};

static inline int fi_control(struct fid *fid, int command, void *arg)
{
	return fid->ops->control(fid, command, arg);
}

static inline int fi_alias(struct fid *fid, struct fid **alias_fid,
			   uint64_t flags)
{
	struct fi_alias alias;
	alias.fid = alias_fid;
	alias.flags = flags;
	return fi_control(fid, FI_ALIAS, &alias);
}

static inline int fi_get_val(struct fid *fid, int name, void *val)
{
	struct fi_fid_var var;
	var.name = name;
	var.val = val;
	return fi_control(fid, FI_GET_VAL, &var);
}

static inline int fi_set_val(struct fid *fid, int name, void *val)
{
	struct fi_fid_var var;
	var.name = name;
	var.val = val;
	return fi_control(fid, FI_SET_VAL, &var);
}

static inline int fi_open_ops(struct fid *fid, const char *name,
			      uint64_t flags, void **ops, void *context)
{
	return fid->ops->ops_open(fid, name, flags, ops, context);
}

/* ops_set was appended to fi_ops later: older objects may lack it. */
static inline int fi_set_ops(struct fid *fid, const char *name,
			     uint64_t flags, void *ops, void *context)
{
	return FI_CHECK_OP(fid->ops, struct fi_ops, ops_set)
		       ? fid->ops->ops_set(fid, name, flags, ops, context)
		       : -FI_ENOSYS;
}

/* ---- Text -------------------------------------------------------------- */

/* What fi_tostr() is given a pointer to. */
enum fi_type {
	FI_TYPE_INFO = 0,           /* struct fi_info */
	FI_TYPE_EP_TYPE = 1,        /* enum fi_ep_type */
	FI_TYPE_CAPS = 2,           /* uint64_t */
	FI_TYPE_OP_FLAGS = 3,       /* uint64_t */
	FI_TYPE_ADDR_FORMAT = 4,    /* uint32_t */
	FI_TYPE_TX_ATTR = 5,        /* struct fi_tx_attr */
	FI_TYPE_RX_ATTR = 6,        /* struct fi_rx_attr */
	FI_TYPE_EP_ATTR = 7,        /* struct fi_ep_attr */
	FI_TYPE_DOMAIN_ATTR = 8,    /* struct fi_domain_attr */
	FI_TYPE_FABRIC_ATTR = 9,    /* struct fi_fabric_attr */
	FI_TYPE_THREADING = 10,     /* enum fi_threading */
	FI_TYPE_PROGRESS = 11,      /* enum fi_progress */
	FI_TYPE_PROTOCOL = 12,      /* uint32_t */
	FI_TYPE_MSG_ORDER = 13,     /* uint64_t */
	FI_TYPE_MODE = 14,          /* uint64_t */
	FI_TYPE_AV_TYPE = 15,       /* enum fi_av_type */
	FI_TYPE_ATOMIC_TYPE = 16,   /* enum fi_datatype */
	FI_TYPE_ATOMIC_OP = 17,     /* enum fi_op */
	FI_TYPE_VERSION = 18,       /* ignored */
	FI_TYPE_EQ_EVENT = 19,      /* uint32_t */
	FI_TYPE_CQ_EVENT_FLAGS = 20, /* uint64_t */
	FI_TYPE_MR_MODE = 21,       /* int */
	FI_TYPE_OP_TYPE = 22,       /* enum fi_op_type */
	FI_TYPE_FID = 23,           /* struct fid */
	FI_TYPE_COLLECTIVE_OP = 24, /* enum fi_collective_op */
	FI_TYPE_HMEM_IFACE = 25,    /* enum fi_hmem_iface */
	FI_TYPE_CQ_FORMAT = 26,     /* enum fi_cq_format */
	FI_TYPE_LOG_LEVEL = 27,     /* enum fi_log_level */
	FI_TYPE_LOG_SUBSYS = 28,    /* enum fi_log_subsys */
};

/* fi_tostr() writes into a per-thread buffer; fi_tostr_r() into `buf`. */
char *fi_tostr(const void *data, enum fi_type datatype);
char *fi_tostr_r(char *buf, size_t len, const void *data,
		 enum fi_type datatype);

/* ---- Runtime parameters (FI_* environment variables) ------------------- */

enum fi_param_type {
	FI_PARAM_STRING = 0,
	FI_PARAM_INT = 1,
	FI_PARAM_BOOL = 2,
	FI_PARAM_SIZE_T = 3,
};

struct fi_param {
	const char *name;
	enum fi_param_type type;
	const char *help_string;
	const char *value;
};

int fi_getparams(struct fi_param **params, int *count);
void fi_freeparams(struct fi_param *params);

/* ---- Operation contexts (mode FI_CONTEXT / FI_CONTEXT2) ---------------- */

struct fi_context {
	void *internal[4];
};

struct fi_context2 {
	void *internal[8];
};

struct fi_recv_context {
	struct fid_ep *ep;
	void *context;
};

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_FABRIC_H_ */
