#!/usr/bin/env python3
"""Writes the nn options audit: a parity test comparing every libtorch nn options struct's
defaults with Ember's.

Reads libtorch's installed headers torch/nn/options/*.h, finds each options struct (`struct
TORCH_API XxxOptions`, `XxxFuncOptions`, the templates such as ConvOptions<D> through their
`using Conv2dOptions = ConvOptions<2>` aliases, and every `using XFuncOptions = XOptions` alias),
its TORCH_ARG(type, name) fields and its constructors, and writes one C++ test source. For each
public name and each constructor it builds libtorch's and Ember's options from the same
arguments (chosen by parameter type: distinct ints 6, 3, 2, ..., doubles 0.375, 0.625, ...,
ExpandingArrays of distinct sizes, vectors, tensors, enum tags, nested options and module
holders) and compares every field as a canonical description (tests/parity/nn_options_describe.h):
numbers with their kind, ExpandingArrays and vectors element by element, optionals, enum
variants by the tag's name, tensors by definedness and values, std::function and module fields
by whether they are set (and a held module's options field by field). Constructors run in both
libraries, so defaults set in libtorch's .cpp files (kdim = embed_dim, stride = kernel_size) are
compared as well as the in-class ones.

What cannot be compared generically is listed in EXCEPTIONS below with the reason; the test
prints those entries, and the generator fails when an entry no longer matches anything.

usage: gen_nn_options_parity.py [--options-dir DIR] OUTPUT.cpp
"""
import argparse
import os
import re
import sys

DEFAULT_OPTIONS_DIR = "/usr/include/torch/csrc/api/include/torch/nn/options"

# What the audit leaves out, and why. A key names a whole struct ("nn::detail::ConvNdOptions"),
# one field ("nn::UnflattenOptions.namedshape") or one constructor, written as the generated
# case prints it ("nn::UnflattenOptions(std::string, namedshape_t)"). Names are relative to
# namespace torch (Ember's are the same under namespace ember). Keep this table small: a
# difference that is a bug belongs fixed in Ember, not listed here.
EXCEPTIONS = {
    # libtorch's ConvNdImpl stores its options as this detail template, built from
    # ConvOptions<D> or ConvTransposeOptions<D>; no public alias names it, so no user code
    # constructs it. Ember's conv modules keep ConvOptions<D> / ConvTransposeOptions<D>, whose
    # every field is compared through their aliases.
    "nn::detail::ConvNdOptions": "internal template of libtorch's ConvNdImpl with no public alias "
                                 "(Ember's modules keep ConvOptions<D>/ConvTransposeOptions<D>, compared)",
}


class Struct:
    def __init__(self, ns, name, tparams):
        self.ns = ns              # ["nn", "functional"]
        self.name = name
        self.tparams = tparams    # ["D"] or ["output_size_t"]
        self.fields = []          # [(type, name)]
        self.ctors = []           # [[(type, name, default or None)], ...]
        self.tag_ctors = []       # [(field, [tag, ...])]: TORCH_OPTIONS_CTOR_VARIANT_ARGn
        self.typedefs = {}        # local typedef name -> underlying type

    @property
    def qual(self):
        return "::".join(self.ns + [self.name])


class Entry:
    """A public name a user constructs: a non-template struct or an alias of one."""

    def __init__(self, qual, struct, targs):
        self.qual = qual          # "nn::functional::AvgPool2dFuncOptions"
        self.struct = struct
        self.targs = targs        # {"D": "2"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # preprocessor lines, with their continuations
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)


def match_close(text, i, open_ch, close_ch):
    """Index just past the bracket closing the one at text[i]."""
    assert text[i] == open_ch, text[i:i + 40]
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_ch:
            depth += 1
        elif text[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError("unbalanced %s at %r" % (open_ch, text[i:i + 60]))


def split_top(text, sep=","):
    """Splits at `sep` outside (), <>, {} and []."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def norm_type(t):
    t = re.sub(r"\s+", " ", t.strip())
    t = re.sub(r"\s*([<>,*&])\s*", r"\1", t)
    return t.replace(",", ", ")


def parse_param(p):
    default = None
    eq = split_top(p, "=")
    if len(eq) == 2:
        p, default = eq[0], eq[1]
    m = re.match(r"(.*?)(\w+)\s*$", p, re.S)
    ptype = norm_type(m.group(1))
    return (ptype, m.group(2), default)


def parse_struct_body(st, body):
    for m in re.finditer(r"\bTORCH_ARG\s*\(", body):
        start = m.end() - 1
        args = split_top(body[start + 1:match_close(body, start, "(", ")") - 1])
        st.fields.append((norm_type(args[0]), args[1]))
    for m in re.finditer(r"\bTORCH_OPTIONS_CTOR_VARIANT_ARG\d\s*\(", body):
        start = m.end() - 1
        args = split_top(body[start + 1:match_close(body, start, "(", ")") - 1])
        st.tag_ctors.append((args[1], args[2:]))
    for m in re.finditer(r"\btypedef\s+([^;]*?)\s*(\w+)\s*;", body):
        st.typedefs[m.group(2)] = norm_type(m.group(1))
    for m in re.finditer(r"\busing\s+(\w+)\s*=\s*([^;]*);", body):
        st.typedefs[m.group(1)] = norm_type(m.group(2))
    for m in re.finditer(r"(?<![\w:~])%s\s*\(" % st.name, body):
        start = m.end() - 1
        end = match_close(body, start, "(", ")")
        params = [parse_param(p) for p in split_top(body[start + 1:end - 1])]
        st.ctors.append(params)


def parse_header(path, structs, aliases):
    text = strip_comments(open(path).read())
    ns = []
    i = 0
    n = len(text)
    while i < n:
        m = re.compile(r"\s+").match(text, i)
        if m:
            i = m.end()
            continue
        m = re.compile(r"namespace\s+(\w+)\s*\{").match(text, i)
        if m:
            ns.append(m.group(1))
            i = m.end()
            continue
        if text[i] == "}":
            ns.pop()
            i += 1
            continue
        m = re.compile(r"(?:template\s*<([^>]*)>\s*)?struct\s+(?:TORCH_API\s+)?(\w+)\s*\{").match(text, i)
        if m:
            tparams = [p.split()[-1] for p in split_top(m.group(1))] if m.group(1) else []
            st = Struct(ns[1:], m.group(2), tparams)  # ns[0] is "torch"
            brace = m.end() - 1
            end = match_close(text, brace, "{", "}")
            parse_struct_body(st, text[brace + 1:end - 1])
            if st.name in structs:  # the tables below go by the struct's simple name
                raise SystemExit("%s: a second struct %s" % (path, st.name))
            structs[st.name] = st
            i = text.index(";", end) + 1
            continue
        m = re.compile(r"(?:template\s*<[^>]*>\s*)?using\s+(\w+)\s*=\s*([^;]*);").match(text, i)
        if m:
            aliases.append((ns[1:], m.group(1), norm_type(m.group(2))))
            i = m.end()
            continue
        m = re.compile(r"typedef\b[^;]*;").match(text, i)
        if m:
            i = m.end()
            continue
        raise SystemExit("%s: cannot parse at %r" % (path, text[i:i + 80]))


def collect(options_dir):
    structs, aliases = {}, []
    for f in sorted(os.listdir(options_dir)):
        if f.endswith(".h"):
            parse_header(os.path.join(options_dir, f), structs, aliases)
    entries = [Entry(st.qual, st, {}) for st in structs.values() if not st.tparams]
    by_name = {st.name: (st, {}) for st in structs.values()}
    for ns, name, target in aliases:
        m = re.match(r"(?:[\w:]*::)?(\w+)\s*(?:<(.*)>)?$", target)
        if not m or m.group(1) not in by_name:
            if name.endswith("Options"):
                raise SystemExit("gen_nn_options_parity: cannot resolve %s = %s" % (name, target))
            continue  # a type alias (padding_t, activation_t), not an options struct
        st, targs = by_name[m.group(1)]
        if m.group(2) is not None:
            targs = dict(zip(st.tparams, split_top(m.group(2))))
        by_name[name] = (st, targs)
        entries.append(Entry("::".join(ns + [name]), st, targs))
    # templates no alias names
    named = {e.struct.name for e in entries}
    orphans = [st for st in structs.values() if st.name not in named]
    return structs, entries, orphans


class Values:
    """Argument expressions by parameter type, the same values for both libraries."""

    INTS = [6, 3, 2, 4, 5, 7, 8, 9, 10, 11]
    DOUBLES = [0.375, 0.625, 0.875, 1.25, 2.5, 0.0625]  # exact in binary, no usual default

    def __init__(self, structs):
        self.structs = structs

    def reset(self):
        self.ni = 0
        self.nd = 0
        self.nt = 0

    def next_int(self):
        v = self.INTS[self.ni % len(self.INTS)]
        self.ni += 1
        return v

    def next_double(self):
        v = self.DOUBLES[self.nd % len(self.DOUBLES)]
        self.nd += 1
        return v

    def expr(self, ptype, st, targs, lib):
        """The C++ expression of an argument of type ptype in library lib ("torch"/"ember");
        None when the type is unknown."""
        t = re.sub(r"\bconst\b|&", "", ptype).strip()
        for k, v in targs.items():
            t = re.sub(r"\b%s\b" % k, v, t)
        if t in st.typedefs:
            under = st.typedefs[t]
            variant = re.match(r"(?:c10|std)::variant<(.*)>$", under)
            if variant:  # an enum variant: its last tag (not the usual default, the first)
                tag = split_top(variant.group(1))[-1].split("::")[-1]
                return "%s::%s" % (lib, tag)
            t = under
        if t in ("int64_t", "int", "size_t"):
            return str(self.next_int())
        if t in ("double", "float"):
            return repr(self.next_double())
        if t == "bool":
            return "true"
        if t == "std::string":
            return 'std::string("dim")'
        if t == "char*":
            return '"dim"'
        if t in ("std::vector<int64_t>", "IntArrayRef", "torch::IntArrayRef"):
            return "std::vector<int64_t>{%d, %d}" % (self.next_int(), self.next_int())
        if t == "std::vector<std::pair<std::string, int64_t>>":
            return 'std::vector<std::pair<std::string, int64_t>>{{"a", %d}, {"b", %d}}' % (
                self.next_int(), self.next_int())
        m = re.match(r"(?:torch::)?(ExpandingArray|ExpandingArrayWithOptionalElem)<([^,>]*)(?:, (double))?>$", t)
        if m:
            if not re.fullmatch(r"[\d\s*+]+", m.group(2)):
                return None
            size = int(eval(m.group(2), {}))  # "2 * 2" once D is substituted
            if m.group(3) == "double":
                vals = [repr(self.next_double()) for _ in range(size)]
            else:
                vals = [str(self.next_int()) for _ in range(size)]
            return vals[0] if size == 1 else "{%s}" % ", ".join(vals)
        if t in ("Tensor", "torch::Tensor", "at::Tensor"):
            self.nt += 1
            return "nn_options::%s_tensor(%d)" % (lib, self.nt)
        name = t.split("::")[-1]
        for nested, holder in ((name, False), (name + "Options", True)):
            if nested in self.structs and not self.structs[nested].tparams:
                sub = self.structs[nested]
                ctor = next((c for c in sub.ctors if any(p[2] is None for p in c)), [])
                args = [self.expr(p[0], sub, {}, lib) for p in ctor if p[2] is None]
                if None in args:
                    return None
                opts = "%s::%s(%s)" % (lib, sub.qual, ", ".join(args))
                if holder:  # a module holder (TransformerEncoderLayer) built from its options
                    return "%s::%s(%s)" % (lib, "::".join(sub.ns + [name]), opts)
                return opts
        return None


def cpp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(options_dir):
    structs, entries, orphans = collect(options_dir)
    values = Values(structs)
    used = set()
    cases = []      # (entry qual, case label, [torch args], [ember args], [fields])
    skipped = []    # (what, reason)

    def excepted(key):
        if key not in EXCEPTIONS:
            return False
        if key not in used:
            used.add(key)
            skipped.append((key, EXCEPTIONS[key]))
        return True

    for st in orphans:
        if not excepted(st.qual):
            raise SystemExit("gen_nn_options_parity: %s has no public alias to instantiate; "
                             "add it to EXCEPTIONS with the reason" % st.qual)
    entries.sort(key=lambda e: e.qual)
    for e in entries:
        if excepted(e.qual):
            continue
        st = e.struct
        fields = []  # (field, the fields of its module's options when it holds a module)
        for ftype, fname in st.fields:
            if excepted("%s.%s" % (e.qual, fname)):
                continue
            held = structs.get(ftype.split("::")[-1] + "Options")
            fields.append((fname, [f for _, f in held.fields] if held and not held.tparams else None))
        # one case per constructor: the required parameters, and again with every parameter
        # given when some have defaults; one per enum tag a TORCH_OPTIONS_CTOR_VARIANT_ARG
        # constructor takes; a default-constructed one when the struct declares no constructor.
        calls = []
        for ctor in st.ctors:
            sig = "%s(%s)" % (e.qual, ", ".join(p[0] for p in ctor))
            required = [p for p in ctor if p[2] is None]
            for params in ([required, ctor] if len(required) < len(ctor) else [ctor]):
                calls.append((sig, params))
        if not st.ctors or st.tag_ctors:
            calls.append(("%s()" % e.qual, []))
        for field, tags in st.tag_ctors:
            for tag in tags:
                calls.append(("%s(%s)" % (e.qual, tag), [("tag", tag, None)]))
        for sig, params in calls:
            if excepted(sig):
                continue
            args = {}
            for lib in ("torch", "ember"):
                values.reset()
                args[lib] = []
                for ptype, pname, _ in params:
                    if ptype == "tag":
                        a = "%s::%s" % (lib, pname)
                    else:
                        a = values.expr(ptype, st, e.targs, lib)
                    if a is None:
                        raise SystemExit("gen_nn_options_parity: no argument value for %s %s of %s; "
                                         "teach Values.expr the type or add the constructor to "
                                         "EXCEPTIONS" % (ptype, pname, sig))
                    args[lib].append(a)
            label = "%s(%s)" % (e.qual, ", ".join(args["torch"]).replace("nn_options::torch_", ""))
            cases.append((e.qual, label, args["torch"], args["ember"], fields))
    stale = sorted(set(EXCEPTIONS) - used)
    if stale:
        raise SystemExit("gen_nn_options_parity: EXCEPTIONS entries that match nothing: %s" % ", ".join(stale))

    n_structs = len({c[0] for c in cases})
    n_fields = sum(1 + len(held or []) for c in cases for _, held in c[4])
    n_defs = len({e.struct.name for e in entries if e.qual not in EXCEPTIONS})
    out = []
    w = out.append
    w("// Generated by scripts/gen_nn_options_parity.py from libtorch's torch/nn/options/*.h: do not edit.")
    w("// Each case builds libtorch's and Ember's options with the same arguments and compares every field.")
    w('#include "parity/parity.h"')
    w('#include "parity/nn_options_describe.h"')
    w("")
    w("namespace nn_options {")
    w("constexpr int kStructs = %d;       // public names (structs and their aliases)" % n_structs)
    w("constexpr int kDefinitions = %d;   // distinct libtorch struct definitions behind them" % n_defs)
    w("constexpr int kCases = %d;         // constructor calls" % len(cases))
    w("constexpr int kFields = %d;        // field comparisons over all cases" % n_fields)
    w("const char* const kExceptions[][2] = {")
    for what, why in skipped:
        w("    {%s, %s}," % (cpp_str(what), cpp_str(why)))
    if not skipped:
        w('    {"", ""},')
    w("};")
    w("constexpr int kNumExceptions = %d;" % len(skipped))
    w("}  // namespace nn_options")
    w("")
    by_struct = {}
    for c in cases:
        by_struct.setdefault(c[0], []).append(c)
    for qual, group in by_struct.items():
        test = qual.replace("nn::", "", 1).replace("::", "_")
        w("TEST(NnOptionsParity, %s) {" % test)
        for _, label, targs, eargs, fields in group:
            w("  {")
            w("    nn_options::Case c(%s, %s);" % (cpp_str(qual), cpp_str(label)))
            w("    const torch::%s t%s;" % (qual, "(%s)" % ", ".join(targs) if targs else "{}"))
            w("    const ember::%s e%s;" % (qual, "(%s)" % ", ".join(eargs) if eargs else "{}"))
            for f, held in fields:
                w("    c.field(%s, nn_options::describe(t.%s()), nn_options::describe(e.%s()));" % (cpp_str(f), f, f))
                if held:  # a module holder (TransformerEncoderLayer): its options, field by field
                    w("    if (!t.%s().is_empty() && !e.%s().is_empty()) {" % (f, f))
                    for h in held:
                        path = "%s()->options.%s" % (f, h)
                        w("      c.field(%s, nn_options::describe(t.%s()), nn_options::describe(e.%s()));" % (
                            cpp_str(path), path, path))
                    w("    }")
            w("  }")
        w("}")
        w("")
    w("namespace nn_options {")
    w("// Prints what the run compared and the exceptions table; a full run must compare every case.")
    w("class Summary : public ::testing::Environment {")
    w(" public:")
    w("  void TearDown() override {")
    w("    const Tally& t = tally();")
    w("    if (t.cases == 0) return;  // a run of parity_tests that selected other suites")
    w('    std::printf("nn options audit: %d structs (%d libtorch definitions), %d constructor calls, %d fields compared\\n",')
    w("                t.structs, kDefinitions, t.cases, t.fields);")
    w('    std::printf("not compared (scripts/gen_nn_options_parity.py EXCEPTIONS): %d\\n", kNumExceptions);')
    w("    for (int i = 0; i < kNumExceptions; ++i) std::printf(\"  %s: %s\\n\", kExceptions[i][0], kExceptions[i][1]);")
    w("    // (a run filtered to some of its tests, or repeated, compares a different number)")
    w("    const std::string filter = ::testing::GTEST_FLAG(filter);")
    w('    if ((filter == "*" || filter == "NnOptionsParity.*") && ::testing::GTEST_FLAG(repeat) == 1) {')
    w("      EXPECT_EQ(t.structs, kStructs);")
    w("      EXPECT_EQ(t.cases, kCases);")
    w("      EXPECT_EQ(t.fields, kFields);")
    w("    }")
    w("  }")
    w("};")
    w("[[maybe_unused]] const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new Summary);")
    w("}  // namespace nn_options")
    w("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--options-dir", default=DEFAULT_OPTIONS_DIR)
    ap.add_argument("output")
    a = ap.parse_args()
    text = generate(a.options_dir)
    with open(a.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
