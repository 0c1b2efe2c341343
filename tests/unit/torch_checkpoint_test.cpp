// PyTorch checkpoint import against files that Debian's python3-torch writes at test time, and
// the restricted unpickler against checkpoints that would run a command under plain pickle.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "ember/ember.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
using Dict = ember::OrderedDict<std::string, Tensor>;

const TempDir& dir() {
  static TempDir d("torch_checkpoint_test");
  return d;
}

// Writes the script and runs it with the temp dir as argument; returns the exit status.
int run_python(const std::string& name, const std::string& script) {
  const std::string path = dir().file(name);
  write_bytes(path, script);
  const std::string cmd = python() + " " + path + " " + dir().file("") + " > " + path + ".log 2>&1";
  return run_python_in(cmd, dir().file(""));
}

const char* kWriteCheckpoints = R"PY(
import collections, json, os, struct, sys, torch, zipfile
out = sys.argv[1]
torch.manual_seed(0)

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3)
        self.bn = torch.nn.BatchNorm2d(2)
        self.fc = torch.nn.Linear(4, 3)
        self.head = torch.nn.Linear(3, 2).double()
        self.register_buffer('ids', torch.arange(5, dtype=torch.int64) * 1000000007)
        self.register_buffer('scale', torch.randn(2, 3).bfloat16())

net = Net()
net.bn.running_mean.uniform_()
net.bn.num_batches_tracked += 3
sd = net.state_dict()
torch.save(sd, os.path.join(out, 'model.pt'))

# The same tensors in a safetensors file written by hand: u64 header length, JSON, raw bytes.
names = {torch.float32: 'F32', torch.float64: 'F64', torch.float16: 'F16', torch.bfloat16: 'BF16',
         torch.int64: 'I64', torch.int32: 'I32', torch.int16: 'I16', torch.int8: 'I8', torch.uint8: 'U8',
         torch.bool: 'BOOL'}
def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for k, t in tensors.items():
        b = bytes(t.contiguous().reshape(-1).view(torch.uint8).numpy()) if t.numel() else b''
        header[k] = {'dtype': names[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    header['__metadata__'] = {'writer': 'python'}
    h = json.dumps(header).encode()
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))
write_safetensors(os.path.join(out, 'model.safetensors'), sd)
extra = collections.OrderedDict(
    [('f16', torch.randn(4).half()), ('i32', torch.tensor([-5, 7], dtype=torch.int32)),
     ('i16', torch.tensor([[300, -2]], dtype=torch.int16)), ('i8', torch.tensor([-128, 127], dtype=torch.int8)),
     ('u8', torch.tensor([0, 255], dtype=torch.uint8)), ('b', torch.tensor([True, False, True])),
     ('empty', torch.zeros(0, 3)), ('scalar', torch.tensor(2.5, dtype=torch.float64))])
write_safetensors(os.path.join(out, 'dtypes.safetensors'), extra)

base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
d = collections.OrderedDict()
d['base'] = base
d['t'] = base.t()
d['row'] = base[2]
d['strided'] = base[1:, ::2]
d['nested'] = collections.OrderedDict([
    ('inner', collections.OrderedDict([('x', torch.tensor([1, -2, 3 << 40], dtype=torch.int64))])),
    ('y', torch.tensor([1.5, -2.25], dtype=torch.float64))])
d['list'] = [torch.tensor([True, False]), torch.tensor(3.0, dtype=torch.bfloat16), torch.zeros(0, 2)]
d['param'] = torch.nn.Parameter(torch.full((2,), 0.5))
d['tied'] = d['param']
d['epoch'] = 7
d['lr'] = 0.125
d['name'] = 'run'
torch.save(d, os.path.join(out, 'views.pt'))

# Complex storages (ComplexFloatStorage, ComplexDoubleStorage), a transposed view among them.
c64 = torch.tensor([[1 + 2j, -3.5 - 0.25j, 0.5j], [4, -1j, 2.25 + 1j]], dtype=torch.complex64)
torch.save(collections.OrderedDict([('c64', c64), ('c64_t', c64.t()),
                                    ('c128', torch.arange(6, dtype=torch.float64).reshape(2, 3) * (1 - 0.5j))]),
           os.path.join(out, 'complex.pt'))

# views.pt again as a ZIP64 archive (Python's zipfile only writes ZIP64 records for huge files):
# sizes and offsets in zip64 extra fields, zip64 end of directory record and locator.
import zlib
def zip64_copy(src, dst):
    with zipfile.ZipFile(src) as z:
        entries = [(i.filename.encode(), z.read(i.filename)) for i in z.infolist()]
    body, central = b'', b''
    for name, data in entries:
        crc, offset = zlib.crc32(data), len(body)
        extra = struct.pack('<HHQQ', 1, 16, len(data), len(data))
        body += struct.pack('<IHHHHHIIIHH', 0x04034b50, 45, 0, 0, 0, 0, crc, 0xffffffff, 0xffffffff, len(name),
                            len(extra)) + name + extra + data
        extra = struct.pack('<HHQQQ', 1, 24, len(data), len(data), offset)
        central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 45, 45, 0, 0, 0, 0, crc, 0xffffffff, 0xffffffff,
                               len(name), len(extra), 0, 0, 0, 0, 0xffffffff) + name + extra
    n, cd_offset = len(entries), len(body)
    body += central
    z64 = len(body)
    body += struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, n, n, len(central), cd_offset)
    body += struct.pack('<IIQI', 0x07064b50, 0, z64, 1)
    body += struct.pack('<IHHHHIIH', 0x06054b50, 0xffff, 0xffff, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    with open(dst, 'wb') as f:
        f.write(body)
zip64_copy(os.path.join(out, 'views.pt'), os.path.join(out, 'views64.pt'))
)PY";

// A pickle that runs `touch <marker>` when unpickled plainly, in a zip laid out like torch.save's,
// written three ways: plain pickle protocol 2 and 4 (STACK_GLOBAL), and through torch.save.
const char* kWriteMalicious = R"PY(
import pickle, zipfile
class Evil:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (os.system, ('touch ' + self.marker,))
def archive(path, payload):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        z.writestr('evil/data.pkl', payload)
        z.writestr('evil/version', '3\n')
marker = os.path.join(out, 'pwned')
for proto in (2, 4):
    archive(os.path.join(out, 'evil%d.pt' % proto), pickle.dumps({'w': Evil(marker)}, protocol=proto))
torch.save({'w': torch.ones(2), 'x': Evil(marker)}, os.path.join(out, 'evil_torch.pt'))
# The payload is live: plain unpickling runs it (against another marker).
pickle.loads(pickle.dumps(Evil(os.path.join(out, 'proof'))))

class Eval:
    def __reduce__(self): return (eval, ('1',))
archive(os.path.join(out, 'eval.pt'), pickle.dumps({'w': Eval()}, protocol=2))
archive(os.path.join(out, 'proto0.pt'), pickle.dumps({'w': 1}, protocol=0))
)PY";

// Checkpoints that lie: pickles that torch.save would never write, made with pickle's
// persistent_id hook, with the storage bytes given separately.
const char* kWriteLyingCheckpoints = R"PY(
import io
class Storage:
    def __init__(self, key, numel, kind=torch.FloatStorage): self.key, self.numel, self.kind = key, numel, kind
class View:
    def __init__(self, storage, offset, size, stride): self.args = (storage, offset, size, stride)
    def __reduce__(self): return (torch._utils._rebuild_tensor_v2, self.args + (False, collections.OrderedDict()))
class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        return ('storage', obj.kind, obj.key, 'cpu', obj.numel) if isinstance(obj, Storage) else None
def lying(name, obj, storages):
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(obj)
    with zipfile.ZipFile(os.path.join(out, name), 'w') as z:
        z.writestr('lie/data.pkl', buf.getvalue())
        for key, data in storages.items():
            z.writestr('lie/data/' + key, data)
four = {'0': bytes(16)}
lying('honest.pt', {'w': View(Storage('0', 4), 1, (3,), (1,))}, four)
lying('out_of_range.pt', {'w': View(Storage('0', 4), 2, (3,), (1,))}, four)
lying('strides_out_of_range.pt', {'w': View(Storage('0', 4), 0, (2, 2), (1, 3))}, four)
lying('storage_too_big.pt', {'w': View(Storage('0', 5), 0, (4,), (1,))}, four)
lying('no_data.pt', {'w': View(Storage('1', 4), 0, (4,), (1,))}, four)
lying('bad_bool.pt', {'w': View(Storage('0', 2, torch.BoolStorage), 0, (2,), (1,))}, {'0': b'\x01\x05'})
lying('negative_size.pt', {'w': View(Storage('0', 4), 0, (-1,), (1,))}, four)
)PY";

// Runs the writers once (one interpreter: importing torch takes seconds); "" or what went wrong.
const std::string& python_files_error() {
  static const std::string error = [] {
    if (run_python("write.py", std::string(kWriteCheckpoints) + kWriteMalicious + kWriteLyingCheckpoints) == 0)
      return std::string();
    return python() + " failed to write the test checkpoints. It needs Debian's python3-torch (installed by " +
           "scripts/install-deps.sh), or EMBER_PYTHON naming a python3 with torch. Its output:\n" +
           read_bytes(dir().file("write.py.log"));
  }();
  return error;
}

// Every test fails (none is skipped) when Python with torch is missing.
class TorchCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(python_files_error().empty()) << python_files_error(); }
};

::testing::AssertionResult Identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) return ::testing::AssertionFailure() << "dtype " << a.dtype() << " vs " << b.dtype();
  if (a.sizes() != b.sizes()) return ::testing::AssertionFailure() << "shape " << a.sizes() << " vs " << b.sizes();
  const Tensor x = a.contiguous(), y = b.contiguous();
  if (x.nbytes() && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0)
    return ::testing::AssertionFailure() << "values differ";
  return ::testing::AssertionSuccess();
}

bool same_storage(const Tensor& a, const Tensor& b) {
  return a.unsafeGetTensorImpl()->storage().get() == b.unsafeGetTensorImpl()->storage().get();
}

TEST_F(TorchCheckpoint, StateDictMatchesTheSameTensorsSavedAsSafetensors) {
  const Dict ck = ember::load_torch_checkpoint(dir().file("model.pt"));
  const Dict st = ember::load_tensors(dir().file("model.safetensors"));
  EXPECT_EQ(ember::load_metadata(dir().file("model.safetensors")), (ember::StringPairs{{"writer", "python"}}));
  ASSERT_EQ(ck.keys(), st.keys());
  EXPECT_EQ(ck.keys(), (std::vector<std::string>{"ids", "scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias",
                                                  "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                                                  "fc.weight", "fc.bias", "head.weight", "head.bias"}));
  for (const auto& item : ck) EXPECT_TRUE(Identical(item.value(), st[item.key()])) << item.key();
  EXPECT_EQ(ck["head.weight"].dtype(), ember::kDouble);
  EXPECT_EQ(ck["scale"].dtype(), ember::kBFloat16);
  EXPECT_EQ(ck["bn.num_batches_tracked"].item<int64_t>(), 3);
  EXPECT_TRUE(Identical(ck["ids"], ember::arange(5, ember::TensorOptions().dtype(ember::kLong)) * 1000000007));
}

TEST_F(TorchCheckpoint, ViewsNestingAndParametersKeepTheirLayout) {
  const Dict d = ember::load_torch_checkpoint(dir().file("views.pt"));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"base", "t", "row", "strided", "nested.inner.x", "nested.y", "list.0",
                                                "list.1", "list.2", "param", "tied"}));
  const Tensor base = ember::arange(24, ember::TensorOptions().dtype(ember::kFloat)).view({4, 6});
  EXPECT_TRUE(Identical(d["base"], base));
  EXPECT_TRUE(Identical(d["t"], base.t()));
  EXPECT_EQ(d["t"].strides(), (std::vector<int64_t>{1, 6}));
  EXPECT_TRUE(Identical(d["row"], base[2]));
  EXPECT_EQ(d["row"].storage_offset(), 12);
  EXPECT_TRUE(Identical(d["strided"], base.slice(0, 1).slice(1, 0, 6, 2)));
  EXPECT_EQ(d["strided"].strides(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(d["strided"].storage_offset(), 6);
  for (const char* view : {"t", "row", "strided"}) EXPECT_TRUE(same_storage(d["base"], d[view])) << view;
  Tensor(d["base"]).fill_(-1);  // one storage, as in Python: the views see the write
  EXPECT_EQ(d["strided"].sum().item<float>(), -9.0f);

  EXPECT_TRUE(Identical(d["nested.inner.x"], ember::tensor(std::vector<int64_t>{1, -2, int64_t{3} << 40})));
  EXPECT_TRUE(Identical(d["nested.y"], ember::tensor(std::vector<double>{1.5, -2.25})));
  EXPECT_TRUE(Identical(d["list.0"], ember::tensor(std::vector<bool>{true, false})));
  EXPECT_TRUE(Identical(d["list.1"], ember::full({}, 3.0, ember::TensorOptions().dtype(ember::kBFloat16))));
  EXPECT_EQ(d["list.2"].sizes(), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(Identical(d["param"], ember::full({2}, 0.5f)));
  EXPECT_TRUE(same_storage(d["param"], d["tied"]));
}

TEST_F(TorchCheckpoint, ComplexStorages) {
  const Dict d = ember::load_torch_checkpoint(dir().file("complex.pt"));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"c64", "c64_t", "c128"}));
  using C = ember::complex<double>;
  const Tensor c64 = ember::tensor(std::vector<C>{{1, 2}, {-3.5, -0.25}, {0, 0.5}, {4, 0}, {0, -1}, {2.25, 1}})
                         .to(ember::kComplexFloat)
                         .view({2, 3});
  // (equal, not bitwise: Python's -1j has a real part of -0)
  EXPECT_EQ(d["c64"].dtype(), ember::kComplexFloat);
  EXPECT_TRUE(d["c64"].equal(c64));
  EXPECT_TRUE(d["c64_t"].equal(c64.t()));
  EXPECT_TRUE(same_storage(d["c64"], d["c64_t"]));
  EXPECT_EQ(d["c64_t"].strides(), (std::vector<int64_t>{1, 3}));
  const Tensor c128 = ember::arange(6, ember::TensorOptions().dtype(ember::kDouble)).view({2, 3}) * C(1, -0.5);
  EXPECT_EQ(d["c128"].dtype(), ember::kComplexDouble);
  EXPECT_TRUE(Identical(d["c128"], c128));
}

TEST_F(TorchCheckpoint, Zip64ArchiveReadsLikeTheOriginal) {
  const Dict d = ember::load_torch_checkpoint(dir().file("views.pt"));
  const Dict d64 = ember::load_torch_checkpoint(dir().file("views64.pt"));
  ASSERT_EQ(d64.keys(), d.keys());
  for (const auto& item : d) {
    EXPECT_TRUE(Identical(d64[item.key()], item.value())) << item.key();
    EXPECT_EQ(d64[item.key()].strides(), item.value().strides()) << item.key();
  }
}

TEST_F(TorchCheckpoint, SafetensorsWrittenByPythonReadsEveryDtype) {
  const Dict d = ember::load_tensors(dir().file("dtypes.safetensors"));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"f16", "i32", "i16", "i8", "u8", "b", "empty", "scalar"}));
  EXPECT_EQ(d["f16"].dtype(), ember::kHalf);
  EXPECT_TRUE(Identical(d["i32"], ember::tensor(std::vector<int32_t>{-5, 7})));
  EXPECT_TRUE(Identical(d["i16"], ember::tensor(std::vector<int16_t>{300, -2}).view({1, 2})));
  EXPECT_TRUE(Identical(d["i8"], ember::tensor(std::vector<int8_t>{-128, 127})));
  EXPECT_TRUE(Identical(d["u8"], ember::tensor(std::vector<uint8_t>{0, 255})));
  EXPECT_TRUE(Identical(d["b"], ember::tensor(std::vector<bool>{true, false, true})));
  EXPECT_EQ(d["empty"].sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(Identical(d["scalar"], ember::full({}, 2.5, ember::TensorOptions().dtype(ember::kDouble))));
}

// Stand-in for an nn::Module: named parameters and buffers of the right shapes and dtypes.
struct StateModule {
  Dict params, buffers;
  Dict named_parameters(bool recurse = true) const { return params; }
  Dict named_buffers(bool recurse = true) const { return buffers; }
};

TEST_F(TorchCheckpoint, LoadsIntoAModule) {
  const Dict ck = ember::load_torch_checkpoint(dir().file("model.pt"));
  StateModule m;
  for (const auto& item : ck) {
    const bool buffer = item.key().find("running") != std::string::npos || item.key() == "bn.num_batches_tracked" ||
                        item.key() == "ids" || item.key() == "scale";
    (buffer ? m.buffers : m.params).insert(item.key(), ember::zeros_like(item.value()));
  }
  ember::load_state_dict(m, ck);
  for (const auto& item : ck) EXPECT_TRUE(Identical(m.params.contains(item.key()) ? m.params[item.key()]
                                                                                  : m.buffers[item.key()],
                                                    item.value()))
      << item.key();
  m.params.insert("extra.weight", ember::zeros({1}));
  EXPECT_ERROR(ember::load_state_dict(m, ck), "missing key \"extra.weight\"");
  ember::load_state_dict(m, ck, /*strict=*/false);
}

TEST_F(TorchCheckpoint, MaliciousPicklesAreRejectedWithoutRunningAnything) {
  ASSERT_TRUE(std::filesystem::exists(dir().file("proof"))) << "the payload should run under plain pickle";
  for (const char* name : {"evil2.pt", "evil4.pt", "evil_torch.pt"}) {
    const std::string path = dir().file(name);
    EXPECT_ERROR(ember::load_torch_checkpoint(path), "load_torch_checkpoint('" + path + "')",
                 "global 'posix.system' is not allowed", "nothing in the file is executed");
  }
  EXPECT_FALSE(std::filesystem::exists(dir().file("pwned")));
  EXPECT_ERROR(ember::load_torch_checkpoint(dir().file("eval.pt")), "global '__builtin__.eval' is not allowed");
  EXPECT_ERROR(ember::load_torch_checkpoint(dir().file("proto0.pt")),
               "data.pkl byte 2: pickle opcode 0x70 is not allowed");
}

TEST_F(TorchCheckpoint, LyingCheckpointsNameTheTensorAndTheProblem) {
  const Dict honest = ember::load_torch_checkpoint(dir().file("honest.pt"));
  EXPECT_EQ(honest["w"].storage_offset(), 1);
  EXPECT_EQ(honest["w"].numel(), 3);
  auto error = [](const char* name) { return error_of([&] { ember::load_torch_checkpoint(dir().file(name)); }); };
  for (const auto& [file, piece] : std::vector<std::pair<const char*, std::string>>{
           {"out_of_range.pt", "tensor \"w\": offset 2, size and stride reach element 4 of storage '0' which holds 4"},
           {"strides_out_of_range.pt", "tensor \"w\": offset 0, size and stride reach element 4 of storage '0'"},
           {"storage_too_big.pt", "storage '0' of tensor \"w\" claims 5 elements but its entry holds 16 bytes"},
           {"no_data.pt", "storage '1' of tensor \"w\" has no data entry"},
           {"bad_bool.pt", "tensor \"w\": byte 1 is 5, not a bool"},
           {"negative_size.pt", "tensor size must hold non-negative ints"}})
    EXPECT_NE(error(file).find(piece), std::string::npos) << file << ": " << error(file);
}

// Damaged copies of a real checkpoint: every one is an ember::Error, none a crash.
TEST_F(TorchCheckpoint, DamagedCheckpointsRaise) {
  const std::string good = read_bytes(dir().file("views.pt"));
  const std::string path = dir().file("damaged.pt");
  auto error_for = [&](const std::string& bytes) {
    write_bytes(path, bytes);
    return error_of([&] { ember::load_torch_checkpoint(path); });
  };
  EXPECT_NE(error_for(good.substr(0, good.size() / 2)).find("no zip end of central directory"), std::string::npos);
  EXPECT_NE(error_for("").find("too short for a zip archive"), std::string::npos);
  std::string flipped = good;
  flipped[good.find("storage") + 2] ^= 1;  // inside data.pkl: the CRC catches it
  EXPECT_NE(error_for(flipped).find("fails its CRC-32 check"), std::string::npos);
  for (size_t cut = 1; cut < good.size(); cut += 97) EXPECT_FALSE(error_for(good.substr(0, cut)).empty());
  EXPECT_ERROR(ember::load_torch_checkpoint(dir().file("model.safetensors")), "no zip end of central directory");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
