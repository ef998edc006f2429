#include "apps/common/check.h"

#include <rdma/fi_errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace apps {
namespace {
const char* program_name = "app";
}  // namespace

void SetProgramName(const char* argv0) {
  const char* slash = strrchr(argv0, '/');
  program_name = slash != nullptr ? slash + 1 : argv0;
}

const char* ProgramName() { return program_name; }

ssize_t Check(ssize_t rc, const char* what) {
  if (rc >= 0) return rc;
  fflush(stdout);
  fprintf(stderr, "%s: %s: %s (%zd)\n", program_name, what,
          fi_strerror(static_cast<int>(-rc)), rc);
  exit(1);
}

void Fail(const char* format, ...) {
  fflush(stdout);
  fprintf(stderr, "%s: ", program_name);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  exit(1);
}

void Say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  fflush(stdout);
}

}  // namespace apps
