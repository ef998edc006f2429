// Compiled by fid_cast_compile_test.sh: builds as it is, and fails to
// build with each of WRONG_MEMBER, VIRTUAL and UNDECLARED defined.
#include <rdma/fabric.h>

#include "fabric/providers/util/fid_cast.h"

namespace demo {
struct Good {
  fid object;
  int x;
};
FABRIC_BEGINS_WITH(Good, object);
struct Bad {
  int x;
  fid object;
};
#ifdef WRONG_MEMBER
FABRIC_BEGINS_WITH(Bad, object);
#endif
struct Virtual {
  virtual ~Virtual() = default;
  fid object;
};
#ifdef VIRTUAL
FABRIC_BEGINS_WITH(Virtual, object);
#endif
}  // namespace demo
int main() {
  fid f{};
  demo::Good* g = fabric::FidCast<demo::Good>(&f);
#ifdef UNDECLARED
  demo::Bad* b = fabric::FidCast<demo::Bad>(&f);
#endif
  return g == nullptr;
}
