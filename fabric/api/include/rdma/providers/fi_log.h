/*
 * <rdma/providers/fi_log.h> -- logging for providers: levels, subsystems,
 * and the FI_WARN/FI_INFO/... macros over fi_log().  FI_LOG_LEVEL,
 * FI_LOG_PROV and FI_LOG_SUBSYS choose what is printed.
 *
 * Part of our public C API, with libfabric's names and values.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_PROVIDERS_FI_LOG_H_
#define FABRIC_API_RDMA_PROVIDERS_FI_LOG_H_

#include <errno.h>

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fi_log_subsys {
	FI_LOG_CORE = 0,
	FI_LOG_FABRIC = 1,
	FI_LOG_DOMAIN = 2,
	FI_LOG_EP_CTRL = 3,
	FI_LOG_EP_DATA = 4,
	FI_LOG_AV = 5,
	FI_LOG_CQ = 6,
	FI_LOG_EQ = 7,
	FI_LOG_MR = 8,
	FI_LOG_CNTR = 9,
	FI_LOG_SUBSYS_MAX
};

enum fi_log_level {
	FI_LOG_WARN = 0,
	FI_LOG_TRACE = 1,
	FI_LOG_INFO = 2,
	FI_LOG_DEBUG = 3,
	FI_LOG_MAX
};

int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys);
/* Like fi_log_enabled(), and at most once a second per *showtime. */
int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime);
void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...) FI_FORMAT_PRINTF(6, 7);

/* Logging never changes errno as seen by the caller. */
#define FI_LOG(prov, level, subsystem, ...)                             \
	do {                                                            \
		if (fi_log_enabled(prov, level, subsystem)) {           \
			int fi_log_saved_errno_ = errno;                \
			fi_log(prov, level, subsystem, __func__,        \
			       __LINE__, __VA_ARGS__);                  \
			errno = fi_log_saved_errno_;                    \
		}                                                       \
	} while (0)

#define FI_LOG_SPARSE(prov, level, subsystem, ...)                      \
	do {                                                            \
		static uint64_t showtime;                               \
		if (fi_log_ready(prov, level, subsystem, &showtime)) {  \
			int fi_log_saved_errno_ = errno;                \
			fi_log(prov, level, subsystem, __func__,        \
			       __LINE__, __VA_ARGS__);                  \
			errno = fi_log_saved_errno_;                    \
		}                                                       \
	} while (0)

#define FI_WARN(prov, subsystem, ...) \
	FI_LOG(prov, FI_LOG_WARN, subsystem, __VA_ARGS__)
#define FI_WARN_SPARSE(prov, subsystem, ...) \
	FI_LOG_SPARSE(prov, FI_LOG_WARN, subsystem, __VA_ARGS__)
#define FI_TRACE(prov, subsystem, ...) \
	FI_LOG(prov, FI_LOG_TRACE, subsystem, __VA_ARGS__)
#define FI_INFO(prov, subsystem, ...) \
	FI_LOG(prov, FI_LOG_INFO, subsystem, __VA_ARGS__)

/* Debug-level logging is compiled in only with ENABLE_DEBUG. */
#if defined(ENABLE_DEBUG) && ENABLE_DEBUG
#define FI_DBG(prov, subsystem, ...) \
	FI_LOG(prov, FI_LOG_DEBUG, subsystem, __VA_ARGS__)
#define FI_DBG_TRACE(prov, subsystem, ...) \
	FI_LOG(prov, FI_LOG_TRACE, subsystem, __VA_ARGS__)
#else
#define FI_DBG(prov, subsystem, ...) \
	do {                         \
	} while (0)
#define FI_DBG_TRACE(prov, subsystem, ...) \
	do {                               \
	} while (0)
#endif

#define FI_WARN_ONCE(prov, subsystem, ...)                              \
	do {                                                            \
		static int warned = 0;                                  \
		if (!warned &&                                          \
		    fi_log_enabled(prov, FI_LOG_WARN, subsystem)) {     \
			int fi_log_saved_errno_ = errno;                \
			fi_log(prov, FI_LOG_WARN, subsystem, __func__,  \
			       __LINE__, __VA_ARGS__);                  \
			warned = 1;                                     \
			errno = fi_log_saved_errno_;                    \
		}                                                       \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_PROVIDERS_FI_LOG_H_ */
