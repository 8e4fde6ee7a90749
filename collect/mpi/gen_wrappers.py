#!/usr/bin/env python3
"""Generates the PMPI wrappers of libscalea-mpi.so from mpi_spec.txt (see its header).

usage: gen_wrappers.py SPEC FORMAT_HPP OUT.cpp

The MPI classes a spec line may name are those of SCALEA_MPI_CLASSES in FORMAT_HPP
(drg/include/scalea/format.hpp, its `spec` column). Writes one C++ file holding: the table of
wrapped functions (name, MPI class), the C wrappers
MPI_Xxx -> PMPI_Xxx for every line not flagged H, and the Fortran wrappers mpi_xxx_ -> pmpi_xxx_
and mpi_xxx_f08_ -> pmpi_xxx_f08_ (`use mpi_f08`) for lines flagged F. Every wrapper has the same shape:

    Call c(id, __builtin_return_address(0));  // region of this call site (nothing when off or
                                              // nested: per-thread guard)
    rc = PMPI_Xxx(...);                       // the real call
    c.stop();                                 // leave timestamp, right after the call
    bytes from the clauses;                   // outside the timed interval
    c.record(sent, recv, steps, alone);       // visits, time, bytes, wait/transfer split; alone()
                                              // (from the peer clause) says there was no partner
"""
import re
import sys

CLASSES = {}  # spec name -> format::MpiClass enumerator, from format.hpp (read_classes)
CLAUSES = ("send", "recv", "peer", "before", "after")


class Param:
    def __init__(self, text):
        text = " ".join(text.split())
        self.text = text
        self.array = text.endswith("]")
        base = re.sub(r"(\s*\[\s*\w*\s*\])+\s*$", "", text)
        m = re.match(r"^(.*?)([A-Za-z_]\w*)$", base)
        if not m:
            raise SystemExit(f"cannot parse parameter '{text}'")
        self.type = " ".join(m.group(1).replace("*", " * ").split())
        self.name = m.group(2)


class Func:
    def __init__(self, lineno, line):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3:
            raise SystemExit(f"mpi_spec.txt:{lineno}: expected 'CLASS FLAGS | prototype | clauses'")
        head = parts[0].split()
        if len(head) != 2 or head[0] not in CLASSES or not set(head[1]) <= set("-FHN"):
            raise SystemExit(f"mpi_spec.txt:{lineno}: bad class/flags '{parts[0]}' (classes: "
                         f"{', '.join(CLASSES)})")
        self.cls, self.flags = head[0], head[1]
        m = re.match(r"^(int|double)\s+(MPI_\w+)\s*\((.*)\)$", parts[1])
        if not m:
            raise SystemExit(f"mpi_spec.txt:{lineno}: bad prototype '{parts[1]}'")
        self.ret, self.name, plist = m.group(1), m.group(2), m.group(3).strip()
        self.proto_params = plist
        self.params = [] if plist in ("", "void") else [Param(p) for p in split_params(plist)]
        self.clauses = {}
        for c in filter(None, (c.strip() for c in parts[2].split(";"))):
            key, _, expr = c.partition("=")
            key = key.strip()
            if key not in CLAUSES or not expr.strip():
                raise SystemExit(f"mpi_spec.txt:{lineno}: bad clause '{c}'")
            self.clauses[key] = expr.strip()
        # Every identifier a clause uses as a value must be a parameter (helpers are calls).
        names = {p.name for p in self.params}
        for key, expr in self.clauses.items():
            for m in re.finditer(r"\b([A-Za-z_]\w*)\b(?!\s*\()", expr):
                ident = m.group(1)
                if ident not in names and not ident.startswith("MPI_"):
                    raise SystemExit(f"mpi_spec.txt:{lineno}: {self.name}: '{ident}' in the {key} "
                                     "clause is not a parameter")
        self.comm = next((p.name for p in self.params if p.name == "comm" and p.type == "MPI_Comm"),
                         None)
        if "peer" in self.clauses and not self.comm:
            raise SystemExit(f"mpi_spec.txt:{lineno}: {self.name}: a peer clause needs an "
                             "'MPI_Comm comm' parameter")
        if "N" in self.flags and self.cls in ("io", "mgmt"):
            raise SystemExit(f"mpi_spec.txt:{lineno}: {self.name}: flag N is for communication")
        self.lower = self.name.lower()
        self.id = "k_" + self.name

    def split(self):
        """How the call's time splits (mpi_layer.hpp, Split)."""
        if self.cls == "mgmt":
            return "Split::None"
        if self.cls == "io" or "N" in self.flags:
            return "Split::Transfer"
        return "Split::Model"

    def alone(self):
        """The expression telling record() the call had no partner, or None (only the world rule
        applies: mpi_layer.hpp, g_world_alone)."""
        if self.split() != "Split::Model":
            return None
        if "peer" in self.clauses:
            peers = ", ".join(split_params(self.clauses["peer"]))
            return f"self_only({self.comm}, {{{peers}}})"
        if self.cls in ("coll", "sync") and self.comm:
            return f"comm_alone({self.comm})"
        return None

    def uses(self, ident, keys=CLAUSES):
        return any(re.search(r"\b%s\b" % re.escape(ident), self.clauses.get(k, "")) for k in keys)


def read_classes(path):
    """The rows of SCALEA_MPI_CLASSES: X(Id, value, "name", "spec")."""
    text = open(path).read()
    start = text.find("#define SCALEA_MPI_CLASSES(X)")
    if start < 0:
        raise SystemExit(f"{path}: no SCALEA_MPI_CLASSES table")
    body = []
    for line in text[start:].splitlines()[1:]:
        body.append(line)
        if not line.rstrip().endswith("\\"):
            break
    rows = re.findall(r'X\(\s*(\w+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)', "\n".join(body))
    if not rows:
        raise SystemExit(f"{path}: SCALEA_MPI_CLASSES has no rows")
    return {spec: f"format::MpiClass::{ident}" for ident, _value, _name, spec in rows}


def split_params(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out]


def steps_expr(f, comm_var):
    # Message steps of the latency model: ceil(log2 p) for collectives and barriers, else 1 (and
    # for calls the model does not split).
    if f.split() == "Split::Model" and f.cls in ("coll", "sync") and comm_var:
        return f"lg({comm_var})"
    return "1"


def byte_block(f, rc_ok):
    send = f.clauses.get("send", "0")
    recv = f.clauses.get("recv", "0")
    after = f.clauses.get("after")
    lines = []
    if "send" in f.clauses or "recv" in f.clauses or after:
        lines.append(f"  if ({rc_ok}) {{")
        if "send" in f.clauses:
            lines.append(f"    sent = uint64_t({send});")
        if "recv" in f.clauses:
            lines.append(f"    recv = uint64_t({recv});")
        if after:
            lines.append(f"    {after};")
        lines.append("  }")
    return lines


def record_call(f, steps, ok):
    """The c.record(...) statement; `ok`: the call succeeded (the peers are only asked then)."""
    alone = f.alone()
    if not alone:
        return f"c.record(sent, recv, {steps});"
    cond = alone if ok == "true" else f"{ok} && {alone}"
    return f"c.record(sent, recv, {steps}, [&] {{ return {cond}; }});"


def c_wrapper(f):
    args = ", ".join(p.name for p in f.params)
    out = [f"extern \"C\" SCALEA_EXPORT {f.ret} {f.name}({f.proto_params}) {{",
           f"  Call c({f.id}, __builtin_return_address(0));",
           f"  if (!c.on()) return P{f.name}({args});"]
    for p in f.params:
        if p.type == "MPI_Status *" and not p.array and f.uses(p.name, ("send", "recv", "peer")):
            out.append(f"  MPI_Status scalea_status_;")
            out.append(f"  if ({p.name} == MPI_STATUS_IGNORE) {p.name} = &scalea_status_;")
    if "before" in f.clauses:
        out.append(f"  {f.clauses['before']};")
    out.append(f"  {f.ret} rc = P{f.name}({args});")
    out.append("  c.stop();")
    out.append("  uint64_t sent = 0, recv = 0;")
    out += byte_block(f, "rc == MPI_SUCCESS")
    out.append("  " + record_call(f, steps_expr(f, f.comm), "rc == MPI_SUCCESS"))
    out.append("  return rc;")
    out.append("}")
    return "\n".join(out)


def fortran_local(p, i):
    """A C local with the parameter's C value, from the Fortran argument (all by reference)."""
    t = p.type
    if p.array and t in ("const int", "int"):
        return f"  const int* {p.name} = static_cast<const int*>(a{i});"
    if t == "int":
        return f"  int {p.name} = *static_cast<const MPI_Fint*>(a{i});"
    if t == "MPI_Datatype":
        return f"  MPI_Datatype {p.name} = PMPI_Type_f2c(*static_cast<const MPI_Fint*>(a{i}));"
    if t == "MPI_Comm":
        return f"  MPI_Comm {p.name} = PMPI_Comm_f2c(*static_cast<const MPI_Fint*>(a{i}));"
    if t == "MPI_Status *":
        return f"  MPI_Status* {p.name} = nullptr;  // Fortran status: bytes from count x type"
    raise SystemExit(f"{p.text}: no Fortran conversion for this parameter type")


def f_wrapper(f, suffix="_"):
    """The Fortran wrapper mpi_xxx<suffix> -> pmpi_xxx<suffix>. suffix "_f08_": the `use mpi_f08`
    binding (Open MPI: same arguments by reference, a handle type holds one integer, and the
    error argument is optional, so it may be null)."""
    n = len(f.params)
    formals = ", ".join([f"void* a{i}" for i in range(n)] + ["MPI_Fint* ierr"])
    actuals = ", ".join([f"a{i}" for i in range(n)] + ["ierr"])
    ftype = ", ".join(["void*"] * n + ["MPI_Fint*"])
    out = [f"extern \"C\" SCALEA_EXPORT void {f.lower}{suffix}({formals}) {{",
           f"  using Real = void (*)({ftype});",
           f"  static Real real = reinterpret_cast<Real>(fortran_symbol(\"p{f.lower}{suffix}\"));",
           f"  Call c({f.id}, __builtin_return_address(0));",
           f"  if (!c.on()) return real({actuals});",
           f"  real({actuals});",
           "  c.stop();",
           "  uint64_t sent = 0, recv = 0;"]
    needed = [(i, p) for i, p in enumerate(f.params)
              if f.uses(p.name, ("send", "recv", "peer")) or (p.name == f.comm and f.alone())]
    body = []
    for i, p in needed:
        body.append(fortran_local(p, i))
        body.append(f"  (void){p.name};")
    out.append("  if (!ierr || *ierr == MPI_SUCCESS) {")
    out += ["  " + b for b in body]
    send = f.clauses.get("send")
    recv = f.clauses.get("recv")
    if send:
        out.append(f"    sent = uint64_t({send});")
    if recv:
        out.append(f"    recv = uint64_t({recv});")
    out.append("    " + record_call(f, steps_expr(f, f.comm), "true"))
    out.append("  } else {")
    out.append("    c.record(0, 0, 1);")
    out.append("  }")
    out.append("}")
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: gen_wrappers.py SPEC FORMAT_HPP OUT.cpp")
    spec, format_hpp, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
    CLASSES.update(read_classes(format_hpp))
    funcs = []
    for lineno, raw in enumerate(open(spec), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        funcs.append(Func(lineno, line))
    names = [f.name for f in funcs]
    if len(set(names)) != len(names):
        raise SystemExit("mpi_spec.txt: a function is listed twice")
    for f in funcs:
        if "F" in f.flags and any(k in f.clauses for k in ("before", "after")):
            raise SystemExit(f"{f.name}: before/after clauses are not supported for Fortran")
    o = []
    o.append("// GENERATED by collect/mpi/gen_wrappers.py from collect/mpi/mpi_spec.txt. Do not edit.")
    o.append('#include "mpi_layer.hpp"\n')
    o.append("namespace scalea::mpi {")
    o.append("enum FnId : uint32_t {")
    for i, f in enumerate(funcs):
        o.append(f"  {f.id} = {i},")
    o.append("};")
    o.append(f"const uint32_t kFunctionCount = {len(funcs)};")
    o.append("const FnInfo kFunctions[] = {")
    for f in funcs:
        o.append(f'  {{"{f.name}", {CLASSES[f.cls]}, {f.split()}}},')
    o.append("};")
    for f in funcs:
        if "H" in f.flags:
            o.append(f"const uint32_t kFn_{f.name[4:]} = {f.id};")
    o.append("}  // namespace scalea::mpi\n")
    o.append("using namespace scalea::mpi;\n")
    for f in funcs:
        if "H" in f.flags:
            continue
        o.append(c_wrapper(f) + "\n")
    for f in funcs:
        if "F" in f.flags:
            o.append(f_wrapper(f) + "\n")
            o.append(f_wrapper(f, "_f08_") + "\n")
    text = "\n".join(o) + "\n"
    try:
        if open(out_path).read() == text:
            return
    except OSError:
        pass
    with open(out_path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
