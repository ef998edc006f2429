"""The external repositories the library builds with, for any WORKSPACE.

Every one is local: Debian's packages (see third_party/README.md) and the
small wrappers in third_party/. This workspace calls fabric_repositories();
a workspace that depends on this one calls it too, with this repository's
path (examples/bazel_consumer/WORKSPACE):

    local_repository(name = "fabric", path = "/path/to/fabric")
    load("@fabric//:repositories.bzl", "fabric_repositories")
    fabric_repositories(path = "/path/to/fabric")
"""

def _maybe(rule, name, **kwargs):
    """Declares `name` unless the calling workspace already has."""
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def fabric_repositories(path = "."):
    """Declares the repositories //fabric and its tests use.

    A repository the calling workspace declared before is kept: its own
    absl, for example. This repository must be named @fabric.

    Args:
      path: this repository's root, absolute or relative to the root of the
        workspace that calls it.
    """

    # Bazel 4 asks for these three from the internet; they are local here.
    _maybe(
        native.local_repository,
        "rules_java",
        path = "/usr/share/bazel/rules/java",
    )
    _maybe(
        native.local_repository,
        "rules_cc",
        path = path + "/third_party/rules_cc",
    )
    _maybe(
        native.local_repository,
        "remote_coverage_tools",
        path = path + "/third_party/coverage_tools",
    )
    _maybe(
        native.local_repository,
        "com_google_absl",
        path = path + "/third_party/absl",
    )
    _maybe(
        native.new_local_repository,
        "com_google_protobuf",
        build_file = "@fabric//third_party:protobuf.BUILD",
        path = "/usr",
    )
    _maybe(
        native.new_local_repository,
        "com_google_googletest",
        build_file = "@fabric//third_party:googletest.BUILD",
        path = "/usr",
    )
    _maybe(
        native.new_local_repository,
        "com_github_google_benchmark",
        build_file = "@fabric//third_party:benchmark.BUILD",
        path = "/usr",
    )
    _maybe(
        native.new_local_repository,
        "rdma_core",
        build_file = "@fabric//third_party:rdma_core.BUILD",
        path = "/usr",
    )
    _maybe(
        native.new_local_repository,
        "openmpi",
        build_file = "@fabric//third_party:openmpi.BUILD",
        path = "/usr/lib/x86_64-linux-gnu/openmpi",
    )
