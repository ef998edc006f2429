#!/usr/bin/env bash
# Our pingpong against Debian's fi_pingpong (package libfabric-bin) over our
# libfabric.so.1: their control-port protocols are the same, so either can
# be the server.
#
# Usage: fi_pingpong_compat_test.sh LIBFABRIC_SO PINGPONG server|client ARGS...
#   server: fi_pingpong serves, our pingpong is the client; client: the
#   other way round.
set -uo pipefail
library=$(realpath "$1")
pingpong=$(realpath "$2")
fi_pingpong_role=$3
shift 3
if [ ! -x /usr/bin/fi_pingpong ]; then
  echo "/usr/bin/fi_pingpong is missing (./setup.sh installs libfabric-bin)" >&2
  exit 1
fi
# shellcheck source=tools/testing/sanitizer_runtime.sh
source tools/testing/sanitizer_runtime.sh
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/compat.XXXXXX")
mkdir "$work/lib"
ln -s "$library" "$work/lib/libfabric.so.1"
# fi_pingpong on our library, with the sanitizer runtime when it needs one.
cat >"$work/fi_pingpong" <<SCRIPT
#!/usr/bin/env bash
source "$PWD/tools/testing/sanitizer_runtime.sh"
export LD_LIBRARY_PATH="$work/lib"
run_uninstrumented "$library" /usr/bin/fi_pingpong "\$@"
SCRIPT
chmod +x "$work/fi_pingpong"
if [ "$fi_pingpong_role" = server ]; then
  exec apps/pingpong/pair_test.sh "$work/fi_pingpong" "$pingpong" "$@"
fi
exec apps/pingpong/pair_test.sh "$pingpong" "$work/fi_pingpong" "$@"
