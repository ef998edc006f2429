/*
 * <rdma/providers/fi_prov.h> -- what a provider exports to the core: the
 * fi_provider descriptor and the configuration-parameter calls.
 *
 * Part of our public C API, with libfabric's names and layouts.
 *
 * Additions in API 1.18: none (identical to libfabric 1.17).
 */

#ifndef FABRIC_API_RDMA_PROVIDERS_FI_PROV_H_
#define FABRIC_API_RDMA_PROVIDERS_FI_PROV_H_

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A provider "foo" loaded at run time lives in libfoo-fi.so. */
#define FI_LIB_EXTENSION "fi"
#define FI_LIB_SUFFIX FI_LIB_EXTENSION ".so"

/* The entry point a run-time loaded provider library exports. */
#define FI_EXT_INI                                                   \
	__attribute__((visibility("default"), EXTERNALLY_VISIBLE)) \
	struct fi_provider *fi_prov_ini(void)

struct fi_provider {
	uint32_t version;    /* the provider's own version */
	uint32_t fi_version; /* the API version it was written for */
	struct fi_context context; /* reserved for the core */
	const char *name;
	int (*getinfo)(uint32_t version, const char *node,
		       const char *service, uint64_t flags,
		       const struct fi_info *hints, struct fi_info **info);
	int (*fabric)(struct fi_fabric_attr *attr,
		      struct fid_fabric **fabric, void *context);
	void (*cleanup)(void);
};

/* Declares the parameter FI_<PROV>_<NAME> (FI_<NAME> for the core, when
 * provider is NULL) with a help text. */
int fi_param_define(const struct fi_provider *provider,
		    const char *param_name, enum fi_param_type type,
		    const char *help_string_fmt, ...);

/* Reads a defined parameter from the environment into *value, whose type
 * is the one it was defined with; -FI_ENODATA when it is not set. */
int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value);

static inline int fi_param_get_str(struct fi_provider *provider,
				   const char *param_name, char **value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_int(struct fi_provider *provider,
				   const char *param_name, int *value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_bool(struct fi_provider *provider,
				    const char *param_name, int *value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int fi_param_get_size_t(struct fi_provider *provider,
				      const char *param_name, size_t *value)
{
	return fi_param_get(provider, param_name, value);
}

#ifdef __cplusplus
}
#endif

#endif /* FABRIC_API_RDMA_PROVIDERS_FI_PROV_H_ */
