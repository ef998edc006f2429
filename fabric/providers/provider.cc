#include "fabric/providers/provider.h"

namespace fabric {

Provider::Provider(const char* name, uint32_t version) : c_provider_{} {
  c_provider_.version = version;
  c_provider_.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
  c_provider_.name = name;
}

}  // namespace fabric
