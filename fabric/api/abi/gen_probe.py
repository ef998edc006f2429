#!/usr/bin/env python3
"""Generates probe.c, the ABI probe of //fabric/api/abi:abi_test.

The list of items is taken ONCE from Debian's libfabric-dev 1.17 headers in /usr/include/rdma
(the ABI reference) and written out as an ordinary C source that is committed; the Bazel build
never runs this script.  Re-run it by hand when the reference changes:

    python3 fabric/api/abi/gen_probe.py          # needs clang and gcc, writes probe.c beside it

What is collected, from the declarations that lie in the headers below:
  * every struct/union defined there: size, alignment, and for every member (nested members too,
    as dotted names) its offset and size, plus a compile-time check of the member's type;
  * every named enum: size; every enumerator: value;
  * every typedef: size and alignment;
  * every object-like macro whose value is an integer constant expression (value, size and
    signedness) or a string literal;
  * every function (the `static inline` ones and the exported ones): a compile-time check that it
    is declared with the same type.
The clang JSON AST gives the declarations; `gcc -E -dD` gives the macros; the compiler itself
decides which macros are constants.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

RDMA = "/usr/include/rdma/"
# The headers our //fabric/api:headers provides (fi_ext_psm2.h, a provider's private header, is
# not one of them).
HEADERS = [
    "rdma/fabric.h",
    "rdma/fi_errno.h",
    "rdma/fi_domain.h",
    "rdma/fi_eq.h",
    "rdma/fi_cm.h",
    "rdma/fi_endpoint.h",
    "rdma/fi_rma.h",
    "rdma/fi_tagged.h",
    "rdma/fi_atomic.h",
    "rdma/fi_trigger.h",
    "rdma/fi_collective.h",
    "rdma/fi_ext.h",
    "rdma/providers/fi_log.h",
    "rdma/providers/fi_prov.h",
]

# Legitimately different: Debian ships API 1.17, we implement 1.18.  FI_MINOR_VERSION is the only
# macro that carries the minor version; anything whose definition uses it (e.g. a macro defined
# as FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)) is left out as well, automatically.
VERSION_DEPENDENT = {"FI_MINOR_VERSION"}

# Results of the public function-like macros, on fixed arguments.
FUNCTION_LIKE_MACROS = [
    "FI_VERSION(1, 0)",
    "FI_VERSION(1, 17)",
    "FI_VERSION(2, 65535)",
    "FI_VERSION(FI_MAJOR_VERSION, 5)",
    "FI_MAJOR(FI_VERSION(3, 7))",
    "FI_MINOR(FI_VERSION(3, 7))",
    "FI_VERSION_GE(FI_VERSION(1, 18), FI_VERSION(1, 17))",
    "FI_VERSION_GE(FI_VERSION(1, 17), FI_VERSION(1, 17))",
    "FI_VERSION_LT(FI_VERSION(1, 17), FI_VERSION(1, 18))",
    "FI_VERSION_LT(FI_VERSION(1, 18), FI_VERSION(1, 18))",
    "count_of(abi_array_of_7)",
    "(container_of(&abi_ep.fid, struct fid_ep, fid) == &abi_ep)",
    "FI_CHECK_OP(abi_ops_ep_p, struct fi_ops_ep, cancel)",
    "FI_CHECK_OP(abi_ops_ep_p, struct fi_ops_ep, getopt)",
]

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def includes():
    return "".join("#include <%s>\n" % h for h in HEADERS)


# ---------------------------------------------------------------- declarations (clang AST) ----

def parse_ast(tu_path):
    out = run(["clang", "-std=gnu11", "-fsyntax-only", "-Xclang", "-ast-dump=json", tu_path])
    if out.returncode != 0:
        sys.exit("clang failed:\n" + out.stderr)
    ast = json.loads(out.stdout)
    # The JSON dump writes a location's "file" only when it differs from the previous location
    # written; replay that in document order to learn each declaration's file.
    current = [None]

    def scan(node):
        if isinstance(node, dict):
            for key, value in list(node.items()):
                if key == "includedFrom":
                    continue
                if key == "file":
                    current[0] = value
                scan(value)
                if key == "loc" and "kind" in node:
                    node["_file"] = current[0]
        elif isinstance(node, list):
            for item in node:
                scan(item)

    sys.setrecursionlimit(100000)
    scan(ast)
    return [n for n in ast["inner"] if (n.get("_file") or "").startswith(RDMA)]


def is_anonymous(type_name):
    return "(unnamed" in type_name or "(anonymous" in type_name


def collect(decls):
    records = {}      # "struct fi_info" -> RecordDecl (the definition), in declaration order
    enums, enumerators, typedefs, functions = [], [], [], {}
    for n in decls:
        kind = n["kind"]
        if kind == "RecordDecl" and n.get("completeDefinition") and n.get("name"):
            records.setdefault("%s %s" % (n["tagUsed"], n["name"]), n)
        elif kind == "EnumDecl":
            if n.get("name"):
                enums.append("enum " + n["name"])
            enumerators += [c["name"] for c in n.get("inner", []) if c["kind"] == "EnumConstantDecl"]
        elif kind == "TypedefDecl":
            typedefs.append(n["name"])
        elif kind == "FunctionDecl":
            f = functions.setdefault(n["name"], {"type": n["type"]["qualType"], "inline": False})
            f["inline"] |= bool(n.get("inline") and n.get("storageClass") == "static")
    return records, enums, enumerators, typedefs, functions


def members(records, record, prefix=""):
    """(dotted member name, C type or None when anonymous, is flexible array) for every member."""
    result, last_anonymous = [], None
    for n in record.get("inner", []):
        if n["kind"] == "RecordDecl" and not n.get("name"):
            last_anonymous = n
            continue
        if n["kind"] != "FieldDecl":
            continue
        qual = n["type"]["qualType"]
        desugared = n["type"].get("desugaredQualType", qual)
        if not n.get("name"):                      # C11 anonymous struct/union member
            result += members(records, last_anonymous, prefix)
            continue
        name = prefix + n["name"]
        result.append((name, None if is_anonymous(qual) else qual, qual.endswith("[]")))
        if is_anonymous(qual):
            result += members(records, last_anonymous, name + ".")
        elif desugared in records:                 # embedded struct/union of ours: its members too
            result += members(records, records[desugared], name + ".")
    return result


# ---------------------------------------------------------------------- macros (gcc -dD) ------

def collect_macros(tu_path):
    out = run(["gcc", "-std=gnu11", "-E", "-dD", tu_path])
    if out.returncode != 0:
        sys.exit("gcc -E failed:\n" + out.stderr)
    macros, current = {}, None
    for line in out.stdout.splitlines():
        m = re.match(r'# \d+ "([^"]*)"', line)
        if m:
            current = m.group(1)
            continue
        if not (current or "").startswith(RDMA):
            continue
        m = re.match(r"#define (\w+)(\(?)\s*(.*)", line)
        if m and not m.group(2):                   # object-like only
            macros[m.group(1)] = m.group(3).strip()
        m = re.match(r"#undef (\w+)", line)
        if m:
            macros.pop(m.group(1), None)
    return macros


def uses_version(name, macros, seen=()):
    if name in VERSION_DEPENDENT:
        return True
    body = macros.get(name, "")
    return any(uses_version(t, macros, seen + (name,))
               for t in re.findall(r"\w+", body) if t in macros and t not in seen)


def compiles(candidates, template, tmp):
    """The subset of candidates for which `template % name` compiles (each on its own line)."""
    keep = list(candidates)
    while keep:
        src = os.path.join(tmp, "check.c")
        with open(src, "w") as f:
            f.write(includes() + "#line 1000000\n")
            f.writelines(template % (i, name) + "\n" for i, name in enumerate(keep))
        out = run(["gcc", "-std=gnu11", "-w", "-fsyntax-only", src])
        bad = {int(m) - 1000000 for m in re.findall(r"check\.c:(\d+):\d+: error", out.stderr)}
        if out.returncode == 0:
            return keep
        if not bad:
            sys.exit("unexpected compiler failure:\n" + out.stderr)
        keep = [name for i, name in enumerate(keep) if i not in bad]
    return keep


# ------------------------------------------------------------------------------- output -------

PRELUDE = r"""/* GENERATED by gen_probe.py from Debian's libfabric-dev 1.17 headers -- do not edit.
 *
 * The ABI probe of //fabric/api/abi:abi_test.  Compiled once against Debian's <rdma/...> and
 * once against ours; both binaries print the same `name=value` lines, which must be equal.
 * Compile-time part: every function of the reference must be declared with the same type, and
 * every member must have the same type.
 */
#include <stddef.h>
#include <stdio.h>

%(includes)s
/* Not compared: FI_MINOR_VERSION (and anything defined from it) is 17 in Debian's headers and 18
 * in ours, because we implement API 1.18; see VERSION_DEPENDENT in gen_probe.py. */

/* -DABI_NO_TYPE_CHECKS turns the compile-time checks off, to see the printed differences too. */
#ifndef ABI_NO_TYPE_CHECKS
#define ABI_SAME_TYPE(expr, type) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(expr), type), "type of " #expr)
#else
#define ABI_SAME_TYPE(expr, type) _Static_assert(1, "")
#endif
#define ABI_MEMBER(T, m) (((T *) 0)->m)

static void abi_int(const char *name, unsigned long long value, size_t size, int is_signed)
{
	if (is_signed)
		printf("%%s=%%lld [s%%zu]\n", name, (long long) value, size * 8);
	else
		printf("%%s=0x%%llx [u%%zu]\n", name, value, size * 8);
}

/* An integer constant: its value, and the size and signedness of its type. */
#define INT(x) abi_int(#x, (unsigned long long) (x), sizeof(x), (0 ? (x) : -1) < 0)
#define STR(x) printf("%%s=\"%%s\"\n", #x, x)
#define TYPE(T) printf("sizeof(%%s)=%%zu\nalignof(%%s)=%%zu\n", #T, sizeof(T), #T, _Alignof(T))
#define MEMBER(T, m) printf("offsetof(%%s, %%s)=%%zu\nmembersize(%%s, %%s)=%%zu\n", \
			    #T, #m, offsetof(T, m), #T, #m, sizeof(ABI_MEMBER(T, m)))
#define FLEX_MEMBER(T, m) printf("offsetof(%%s, %%s)=%%zu\n", #T, #m, offsetof(T, m))

/* Fixtures for the function-like macros. */
/* Only sizeof reads it: unused, as far as clang is concerned. */
static int abi_array_of_7[7] __attribute__((unused));
static struct fid_ep abi_ep;
static struct fi_ops_ep abi_ops_ep = { .size = offsetof(struct fi_ops_ep, getopt) };
static struct fi_ops_ep *abi_ops_ep_p = &abi_ops_ep;
static ssize_t abi_cancel(fid_t fid, void *context) { return 0; }
"""


def generate():
    with tempfile.TemporaryDirectory() as tmp:
        tu = os.path.join(tmp, "all.c")
        with open(tu, "w") as f:
            f.write(includes())
        records, enums, enumerators, typedefs, functions = collect(parse_ast(tu))
        macros = collect_macros(tu)
        names = [m for m in macros if not uses_version(m, macros)]
        excluded = sorted(set(macros) - set(names))
        ints = compiles(names, "enum { abi_%d = ((%s) | 0) ? 1 : 0 };", tmp)
        strings = compiles([m for m in names if m not in ints],
                           "static const char abi_%d[] = %s;", tmp)
    enumerators = [e for e in enumerators if e not in macros]
    assert excluded == sorted(VERSION_DEPENDENT), excluded

    out = [PRELUDE % {"includes": includes()}]
    out.append("/* Functions: declared with the same type.  A static one declared but not defined is an")
    out.append(" * error too (-Werror=unused-function in BUILD). */")
    for name, f in functions.items():
        out.append("ABI_SAME_TYPE(%s, %s);" % (name, f["type"]))
    inline = [name for name, f in functions.items() if f["inline"]]
    out.append("")

    out.append("/* Member types. */")
    layout = []
    for tag, record in records.items():
        layout.append("\tTYPE(%s);" % tag)
        for name, ctype, flexible in members(records, record):
            layout.append("\t%s(%s, %s);" % ("FLEX_MEMBER" if flexible else "MEMBER", tag, name))
            if ctype:
                out.append("ABI_SAME_TYPE(ABI_MEMBER(%s, %s), %s);" % (tag, name, ctype))

    out.append("\nint main(void)\n{")
    out.append("\t/* Structs and unions: size, alignment, offset and size of every member. */")
    out += layout
    out.append("\n\t/* Enums and typedefs. */")
    out += ["\tTYPE(%s);" % t for t in enums + typedefs]
    out.append("\n\t/* Enumerators. */")
    out += ["\tINT(%s);" % e for e in enumerators]
    out.append("\n\t/* Object-like macros with a constant value. */")
    out += ["\tINT(%s);" % m for m in ints]
    out += ["\tSTR(%s);" % m for m in strings]
    skipped = sorted(set(names) - set(ints) - set(strings))
    out.append("\t/* Not constants, so not printed: %s. */" % ", ".join(skipped))
    out.append("\n\t/* Function-like macros on fixed arguments. */")
    out.append("\tabi_ops_ep.cancel = abi_cancel;")
    out += ["\tINT(%s);" % m for m in FUNCTION_LIKE_MACROS]
    out.append("\treturn 0;\n}\n")

    with open(os.path.join(HERE, "probe.c"), "w") as f:
        f.write("\n".join(out))
    print("probe.c: %d records, %d enums/typedefs, %d enumerators, %d integer and %d string "
          "macros, %d functions (%d static inline)" % (
              len(records), len(enums) + len(typedefs), len(enumerators), len(ints),
              len(strings), len(functions), len(inline)))


if __name__ == "__main__":
    generate()
