#!/usr/bin/env python3
"""How much of libtorch's public C++ API Ember provides, name by name.

Lists the public names of libtorch 1.13's installed headers by group (ATen functions in torch::,
Tensor methods, nn modules, their options, FuncOptions, functional, nn::init, nn::utils, optim,
data, header paths), probes each against Ember's compatibility header with one compile (a
using-declaration or a member access per name; the compiler's errors name the lines that do not
resolve), drops the names libtorch itself does not resolve the same way, and prints the counts
and, with --missing, the missing names. --overloaded prints the names libtorch overloads (several
signatures) that Ember also has: the overload audit (tests/parity/overload_parity.cpp) covers
each of them. A report, not a gate: it needs libtorch's headers (libtorch-dev) and g++.

--headers prints libtorch's public header paths, the list cmake/torch_compat_headers.txt holds
(Ember::torch_compat forwards each to ember/torch.h).

usage: scripts/compat_coverage.py [--missing] [--markdown] [--write-overloaded FILE] [--overloaded] [--headers]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = "/usr/include"
API = os.path.join(INC, "torch/csrc/api/include/torch")
TORCH_INCLUDES = [INC, os.path.join(INC, "torch/csrc/api/include")]

# Backend-specific or internal ATen ops: not part of the CPU frontend a program uses.
EXCLUDED_ATEN = re.compile(
    r"^_|cudnn|miopen|mkldnn|mps|vulkan|fbgemm|sparse|nested|_coo|_csr|_csc|_bsr|_bsc|quantize|"
    r"^q_|^int_repr|^dequantize|^fake_quantize|_xnnpack|^is_vulkan|^cufft|^batch_norm_gather|"
    r"^batch_norm_elemt|^batch_norm_stats|^batch_norm_update_stats|^batch_norm_backward|_backward$|"
    r"^to_padded_tensor|^segment_reduce|_jvp$|^align_|^refine_names|^rename|_symint$")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def aten_functions():
    """Names of at:: functions (each op's public header, as ATen/Functions.h includes them)."""
    names, overloads = set(), collections.Counter()
    for op in re.findall(r"#include <ATen/ops/(\w+)\.h>", read(os.path.join(INC, "ATen/Functions.h"))):
        text = strip_comments(read(os.path.join(INC, "ATen/ops", op + ".h")))
        body = text.split("namespace at {", 1)[-1]
        body = re.split(r"namespace symint", body)[0]
        for name in re.findall(r"^inline [^(=]*?\b(\w+)\(", body, flags=re.M):
            if name.endswith("_out") or name.endswith("_outf"):
                continue
            if EXCLUDED_ATEN.search(name):
                continue
            names.add(name)
            overloads[name] += 1
    return names, overloads


def class_body(text, header):
    start = text.index(header)
    depth, i = 0, text.index("{", start)
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j]
    raise ValueError(header)


def member_names(body):
    """Public member-function names declared at the top level of a class body."""
    names = collections.Counter()
    depth, line_start = 0, True
    flat = []
    for ch in body:  # keep only depth-0 text (drops inline bodies)
        if ch == "{":
            depth += 1
            if depth == 1:
                flat.append(";")
            continue
        if ch == "}":
            depth -= 1
            continue
        if depth == 0:
            flat.append(ch)
    public = True
    for decl in re.split(r";", "".join(flat)):
        for label in re.findall(r"\b(public|private|protected)\s*:", decl):
            public = label == "public"
        decl = re.sub(r"\b(public|private|protected)\s*:", "", decl)
        m = re.search(r"\b([a-z_][a-z0-9_]*)\s*\(", decl)
        if public and m and not decl.strip().startswith(("friend", "using", "typedef", "static_assert")):
            names[m.group(1)] += 1
    return names


def tensor_methods():
    text = strip_comments(read(os.path.join(INC, "ATen/core/TensorBody.h")))
    base = strip_comments(read(os.path.join(INC, "ATen/core/TensorBase.h")))
    names = member_names(class_body(text, "class TORCH_API Tensor: public TensorBase"))
    names.update(member_names(class_body(base, "class TORCH_API TensorBase")))
    skip = {"operator", "wrap_tensor_impl", "unsafeGetTensorImpl", "unsafeReleaseTensorImpl", "getIntrusivePtr",
            "unsafeReleaseIntrusivePtr", "_base", "_version", "_fw_grad", "_set_fw_grad", "register_hook",
            "sym_size", "sym_sizes", "sym_numel", "sym_strides", "sym_stride", "sym_storage_offset"}
    names = collections.Counter({n: c for n, c in names.items()
                                 if n not in skip and not EXCLUDED_ATEN.search(n) and not n.startswith("is_vulkan")})
    return set(names), names


def api_files(sub):
    root = os.path.join(API, sub)
    if os.path.isfile(root):
        return [root]
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".h")]
    return out


def grep_names(files, pattern, skip_detail=True):
    names = set()
    for path in files:
        text = strip_comments(read(path))
        if skip_detail:
            text = re.sub(r"namespace detail \{.*?\n\} // namespace detail", "", text, flags=re.S)
        names.update(re.findall(pattern, text, flags=re.M))
    return names


def groups():
    aten, aten_overloads = aten_functions()
    methods, method_overloads = tensor_methods()
    g = collections.OrderedDict()
    g["ATen functions (torch::)"] = ("function", "torch::", aten)
    g["Tensor methods"] = ("method", "torch::Tensor", methods)
    g["nn modules"] = ("name", "torch::nn::", grep_names(api_files("nn/modules"), r"TORCH_MODULE\((\w+)\)"))
    options = grep_names(api_files("nn/options"), r"^(?:struct|class) (?:TORCH_API )?(\w+Options)\b")
    options |= grep_names(api_files("nn/options"), r"^using (\w+Options) =")
    options |= grep_names(api_files("nn/options"), r"TORCH_NN_MODULE_OPTIONS\w*\((\w+)")
    func_options = {n for n in options if n.endswith("FuncOptions")}
    func_options |= grep_names(api_files("nn/options"), r"\b(\w+FuncOptions)\b")
    g["nn module options"] = ("name", "torch::nn::", {n for n in options if not n.endswith("FuncOptions")})
    g["FuncOptions"] = ("name", "torch::nn::functional::", func_options)
    g["nn::functional"] = ("name", "torch::nn::functional::",
                           grep_names(api_files("nn/functional"), r"^inline [^(=;]*?\b([a-z]\w*)\("))
    g["nn::init"] = ("name", "torch::nn::init::", grep_names(api_files("nn/init.h"), r"^TORCH_API [^(]*?\b(\w+)\("))
    g["nn::utils"] = ("name", "torch::nn::utils::",
                      grep_names(api_files("nn/utils/clip_grad.h") + api_files("nn/utils/convert_parameters.h"),
                                 r"^inline [^(]*?\b([a-z]\w*)\("))
    g["nn::utils::rnn"] = ("name", "torch::nn::utils::rnn::",
                           grep_names(api_files("nn/utils/rnn.h"), r"^inline [^(]*?\b([a-z]\w*)\(")
                           | {"PackedSequence"})
    g["optim"] = ("name", "torch::optim::",
                  grep_names(api_files("optim"), r"^class TORCH_API (\w+)\b") |
                  grep_names(api_files("optim"), r"^struct TORCH_API (\w+)\b"))
    g["data"] = ("name", "torch::data::",
                 {"DataLoaderOptions", "make_data_loader", "Example"} |
                 {"datasets::" + n for n in grep_names(api_files("data/datasets"), r"^class (?:TORCH_API )?(\w+)\b")} |
                 {"samplers::" + n for n in grep_names(api_files("data/samplers"), r"^class (?:TORCH_API )?(\w+)\b")} |
                 {"transforms::" + n for n in grep_names(api_files("data/transforms"), r"^(?:class|struct) (?:TORCH_API )?(\w+)\b")})
    g["serialize"] = ("name", "torch::", {"save", "load", "serialize::OutputArchive", "serialize::InputArchive"})
    overloaded = {"ATen functions (torch::)": {n for n, c in aten_overloads.items() if c > 1},
                  "Tensor methods": {n for n, c in method_overloads.items() if c > 1}}
    return g, overloaded


def public_headers():
    """The header paths a libtorch program includes: the C++ frontend's tree, torch/script.h and its
    siblings, and the top level of ATen, ATen/core, c10/util and c10/core."""
    api_root = os.path.dirname(API)
    paths = [os.path.relpath(p, api_root) for p in api_files("")
             if "/detail/" not in p and not p.endswith("/python.h")]
    for sub, skip in (("torch", ("custom_class_detail.h",)), ("ATen", ()), ("ATen/core", ()), ("c10/util", ()),
                      ("c10/core", ())):
        paths += [f"{sub}/{f}" for f in sorted(os.listdir(os.path.join(INC, sub)))
                  if f.endswith(".h") and f not in skip]
    return sorted(set(paths))


def probe_lines(kind, scope, names):
    lines = []
    for n in names:
        if kind == "method":
            lines.append(f"void probe_{len(lines)}(torch::Tensor& t) {{ (void)t.{n}; }}")
        else:
            lines.append(f"namespace probe_{len(lines)} {{ using {scope}{n}; }}")
    return lines


MISSING = re.compile(r"has not been declared|is not a member of|has no member named|was not declared|"
                     r"does not name a type|not a namespace|expected nested-name-specifier")


def probe(header, include_dirs, entries, extra_flags=()):
    """entries: list of (group, name, line). Returns the set of (group, name) that do not resolve."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "probe.cpp")
        first = 3
        with open(src, "w") as f:
            f.write(f"#include <{header}>\n#include <torch/script.h>\n" if header == "torch/torch.h"
                    else f"#include <{header}>\n\n")
            for _, _, line in entries:
                f.write(line + "\n")
        cmd = ["g++", "-std=c++20", "-fsyntax-only", "-fmax-errors=0", "-w", *extra_flags]
        cmd += [f"-I{p}" for p in include_dirs] + [src]
        out = subprocess.run(cmd, capture_output=True, text=True).stderr
    bad = set()
    for m in re.finditer(r"probe\.cpp:(\d+):\d+: error: (.*)", out):
        idx = int(m.group(1)) - first
        if 0 <= idx < len(entries) and MISSING.search(m.group(2)):
            bad.add(entries[idx][:2])
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", action="store_true", help="list the missing names of each group")
    ap.add_argument("--markdown", action="store_true", help="print the counts as a markdown table")
    ap.add_argument("--overloaded", action="store_true",
                    help="print the names libtorch overloads that Ember has, one 'group name' per line")
    ap.add_argument("--headers", action="store_true", help="print libtorch's public header paths")
    ap.add_argument("--write-overloaded", metavar="FILE",
                    help="with the report, write what --overloaded prints to FILE (one probe for both)")
    args = ap.parse_args()
    if not os.path.isdir(API):
        sys.exit("compat_coverage: libtorch's headers are not installed (apt-get install libtorch-dev)")
    if args.headers:
        print("\n".join(public_headers()))
        return
    g, overloaded = groups()
    entries = []
    for group, (kind, scope, names) in g.items():
        for n, line in zip(sorted(names), probe_lines(kind, scope, sorted(names))):
            entries.append((group, n, line))
    # A name's line must stand alone in both probes: renumber each probe line uniquely.
    entries = [(grp, n, re.sub(r"probe_\d+", f"probe_{i}", line)) for i, (grp, n, line) in enumerate(entries)]
    # the two probes (about 15 s of compiling each) run side by side
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        torch_probe = pool.submit(probe, "torch/torch.h", TORCH_INCLUDES, entries)
        ember_probe = pool.submit(probe, "ember/torch.h", [os.path.join(ROOT, "include")], entries)
        not_in_torch, not_in_ember = torch_probe.result(), ember_probe.result()
    overloaded_lines = ["method " + n if group == "Tensor methods" else "function " + n
                        for group, names in overloaded.items() for n in sorted(names)
                        if (group, n) not in not_in_ember and (group, n) not in not_in_torch]
    if args.overloaded:
        print("\n".join(overloaded_lines))
        return
    if args.write_overloaded:
        with open(args.write_overloaded, "w") as f:
            f.write("\n".join(overloaded_lines) + "\n")
    rows = []
    for group, (_, _, names) in g.items():
        names = sorted(n for n in names if (group, n) not in not_in_torch)
        missing = [n for n in names if (group, n) in not_in_ember]
        rows.append((group, len(names) - len(missing), len(names), missing))
    if args.markdown:
        print("| group | in Ember | in libtorch | coverage |\n|---|---:|---:|---:|")
    for group, have, total, missing in rows:
        pct = 100.0 * have / total if total else 100.0
        if args.markdown:
            print(f"| {group} | {have} | {total} | {pct:.0f} % |")
        else:
            print(f"{group:28s} {have:5d} of {total:5d}  ({pct:5.1f} %)")
        if args.missing and missing:
            print("    missing: " + " ".join(missing))


if __name__ == "__main__":
    main()
