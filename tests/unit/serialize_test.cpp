#include "ember/serialize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>

#include "ember/ember.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
using Dict = ember::OrderedDict<std::string, Tensor>;

const TempDir& dir() {
  static TempDir d("serialize_test");
  return d;
}

constexpr ember::ScalarType kAllTypes[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16, ember::kByte,
                                           ember::kChar,  ember::kShort,  ember::kInt,  ember::kLong,     ember::kBool};

Tensor sample(ember::IntArrayRef sizes, ember::ScalarType dtype, uint64_t seed) {
  ember::Generator g(seed);
  if (ember::is_floating_type(dtype)) return ember::randn(sizes, &g).to(dtype);
  if (dtype == ember::kBool) return ember::randint(0, 2, sizes, &g, ember::TensorOptions().dtype(dtype));
  return ember::randint(0, 100, sizes, &g, ember::TensorOptions().dtype(dtype));
}

// Same dtype, shape and bytes (bitwise, so NaNs and signed zeros count).
::testing::AssertionResult Identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) return ::testing::AssertionFailure() << "dtype " << a.dtype() << " vs " << b.dtype();
  if (a.sizes() != b.sizes()) return ::testing::AssertionFailure() << "shape " << a.sizes() << " vs " << b.sizes();
  const Tensor x = a.contiguous(), y = b.contiguous();
  if (x.nbytes() && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0)
    return ::testing::AssertionFailure() << "values differ";
  return ::testing::AssertionSuccess();
}

// A little-endian u64 prefix and a header, as a safetensors file starts.
std::string with_header(const std::string& json, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

std::string load_error(const std::string& bytes) {
  const std::string path = dir().file("bad.safetensors");
  write_bytes(path, bytes);
  return error_of([&] { ember::load_tensors(path); });
}

#define EXPECT_LOAD_ERROR(bytes, ...)                                                      \
  do {                                                                                     \
    const std::string msg_ = load_error(bytes);                                            \
    for (const char* piece_ : {__VA_ARGS__})                                               \
      EXPECT_NE(msg_.find(piece_), std::string::npos) << "'" << piece_ << "' not in: " << msg_; \
  } while (0)

TEST(Safetensors, RoundTripsEveryDtypeAndShape) {
  Dict d;
  uint64_t seed = 1;
  for (ember::ScalarType t : kAllTypes)
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {0}, {3, 0, 2}, {7}, {2, 3, 5}})
      d.insert(std::string(ember::to_string(t)) + "_" + std::to_string(shape.size()) + "_" + std::to_string(seed),
               sample(shape, t, seed++));
  const std::string path = dir().file("all.safetensors");
  ember::save(d, path);
  const Dict back = ember::load_tensors(path);
  ASSERT_EQ(back.keys(), d.keys());
  for (size_t i = 0; i < d.size(); ++i) EXPECT_TRUE(Identical(back[i].value(), d[i].value())) << d[i].key();
}

TEST(Safetensors, NonContiguousTensorsAreSavedContiguous) {
  const Tensor base = sample({4, 6}, ember::kFloat, 3);
  Dict d;
  d.insert("transposed", base.t());
  d.insert("strided", base.slice(1, 1, 6, 2));
  d.insert("expanded", sample({1, 3}, ember::kLong, 4).expand({5, 3}));
  d.insert("channels_last", sample({2, 3, 4, 5}, ember::kDouble, 5).contiguous(ember::MemoryFormat::ChannelsLast));
  const std::string path = dir().file("views.safetensors");
  ember::save(d, path);
  const Dict back = ember::load_tensors(path);
  for (const auto& item : d) {
    EXPECT_TRUE(back[item.key()].is_contiguous()) << item.key();
    EXPECT_TRUE(Identical(back[item.key()], item.value())) << item.key();
  }
}

TEST(Safetensors, SingleTensorAndMetadata) {
  const std::string path = dir().file("one.safetensors");
  const Tensor t = sample({3, 2}, ember::kBFloat16, 6);
  ember::save(t, path);
  Tensor back;
  ember::load(back, path);
  EXPECT_TRUE(Identical(back, t));

  Dict d;
  d.insert("a", t);
  d.insert("b \"quoted\" \xc3\xa9", t);
  const ember::StringPairs meta = {{"format", "pt"}, {"note", "line\nbreak \\ \x01"}};
  ember::save(d, path, meta);
  EXPECT_EQ(ember::load_metadata(path), meta);
  EXPECT_EQ(ember::load_tensors(path).keys(), d.keys());
  EXPECT_ERROR(ember::load(back, path), "load('" + path + "')", "expected a file holding one tensor, it holds 2");
}

// Quantized tensors keep their integers, scheme and parameters; their metadata stays out of the
// user's, and a file whose quantization metadata is inconsistent is refused.
TEST(Safetensors, QuantizedTensorsRoundTrip) {
  const std::string path = dir().file("quantized.safetensors");
  const Tensor x = sample({4, 5}, ember::kFloat, 9);
  Dict d;
  d.insert("per_tensor", ember::quantize_per_tensor(x, 0.037, 121, ember::kQUInt8));
  d.insert("qint8", ember::quantize_per_tensor(x.t(), 0.02, -3, ember::kQInt8));  // saved contiguous
  d.insert("qint32", ember::quantize_per_tensor(x, 1e-3, 7, ember::kQInt32));
  const Tensor scales = ember::tensor({0.1, 0.2, 0.3, 0.05, 0.01}, ember::kDouble);
  d.insert("per_channel", ember::quantize_per_channel(x, scales, ember::tensor({0, 1, -2, 3, 0}), 1, ember::kQInt8));
  d.insert("plain", x);
  const ember::StringPairs meta = {{"format", "pt"}};
  ember::save(d, path, meta);
  const Dict back = ember::load_tensors(path);
  EXPECT_EQ(back.keys(), d.keys());
  for (const auto& item : d) {
    SCOPED_TRACE(item.key());
    const Tensor& got = back[item.key()];
    const Tensor& want = item.value();
    ASSERT_EQ(got.is_quantized(), want.is_quantized());
    if (!want.is_quantized()) {
      EXPECT_TRUE(Identical(got, want));
      continue;
    }
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.qscheme(), want.qscheme());
    EXPECT_TRUE(Identical(got.int_repr(), want.int_repr()));
    if (want.qscheme() == ember::kPerTensorAffine) {
      EXPECT_EQ(got.q_scale(), want.q_scale());
      EXPECT_EQ(got.q_zero_point(), want.q_zero_point());
    } else {
      EXPECT_EQ(got.q_per_channel_axis(), 1);
      EXPECT_TRUE(got.q_per_channel_scales().equal(want.q_per_channel_scales()));
      EXPECT_TRUE(got.q_per_channel_zero_points().equal(want.q_per_channel_zero_points()));
    }
  }
  EXPECT_EQ(ember::load_metadata(path), meta);

  // the integers with metadata that does not describe them
  Dict bad;
  bad.insert("w", ember::zeros({2}, ember::TensorOptions().dtype(ember::kFloat)));
  ember::save(bad, path, {{"ember.quantized.w", "per_tensor_affine quint8 0.1 3"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "does not fit the tensor's dtype Float");
  bad = Dict();
  bad.insert("w", ember::zeros({2}, ember::TensorOptions().dtype(ember::kByte)));
  ember::save(bad, path, {{"ember.quantized.w", "per_tensor_affine quint8 x"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "is not \"per_tensor_affine");
  ember::save(bad, path, {{"ember.quantized.v", "per_tensor_affine quint8 0.1 3"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "the file does not hold");
  bad = Dict();
  bad.insert("w", ember::zeros({2}, ember::TensorOptions().dtype(ember::kChar)));
  ember::save(bad, path, {{"ember.quantized.w", "per_channel_affine qint8 0"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "per-channel parameters of \"w\" are missing");
}

// safetensors has no complex dtype: a complex tensor is written as its real view with a flag in
// the metadata (hidden from load_metadata), and read back complex; conjugate views are resolved.
TEST(Safetensors, ComplexTensorsRoundTripAsTheirRealViews) {
  const std::string path = dir().file("complex.safetensors");
  const Tensor c64 = ember::make_complex(sample({3, 4}, ember::kFloat, 11), sample({3, 4}, ember::kFloat, 12));
  Dict d;
  d.insert("c64", c64);
  d.insert("c128", c64.to(ember::kComplexDouble).t());  // saved contiguous
  d.insert("conj", c64.conj());                         // saved conjugated
  d.insert("scalar", ember::full({}, ember::complex<double>(1.5, -2), ember::TensorOptions().dtype(ember::kComplexDouble)));
  d.insert("plain", sample({2}, ember::kFloat, 13));
  const ember::StringPairs meta = {{"format", "pt"}};
  ember::save(d, path, meta);
  const Dict back = ember::load_tensors(path);
  EXPECT_EQ(back.keys(), d.keys());
  for (const auto& item : d) EXPECT_TRUE(Identical(back[item.key()], item.value().resolve_conj())) << item.key();
  EXPECT_FALSE(back["conj"].is_conj());
  EXPECT_EQ(ember::load_metadata(path), meta);
  // what another reader sees: float32/float64 with a trailing dim of 2, and the flag
  const std::string bytes = read_bytes(path);
  EXPECT_NE(bytes.find(R"("ember.complex.c64":"complex64")"), std::string::npos);
  EXPECT_NE(bytes.find(R"("c128":{"dtype":"F64","shape":[4,3,2])"), std::string::npos);
  // through a stream and an archive as well
  std::stringstream stream;
  ember::save(c64, stream);
  Tensor one;
  ember::load(one, stream);
  EXPECT_TRUE(Identical(one, c64));

  // a flag that does not fit its tensor
  Dict bad;
  bad.insert("w", ember::zeros({3}));  // no trailing dim of 2
  ember::save(bad, path, {{"ember.complex.w", "complex64"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "does not fit tensor \"w\"");
  bad = Dict();
  bad.insert("w", ember::zeros({3, 2}, ember::kDouble));  // complex128's parts
  ember::save(bad, path, {{"ember.complex.w", "complex64"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "does not fit tensor \"w\"");
  ember::save(bad, path, {{"ember.complex.v", "complex128"}});
  EXPECT_ERROR(ember::load_tensors(path), "load_tensors('" + path + "')", "complex tensor the file does not hold");
}

// The exact bytes the safetensors spec prescribes for a small file.
TEST(Safetensors, WritesTheSpecifiedBytes) {
  Dict d;
  d.insert("w", ember::tensor(std::vector<float>{1.5f, -2.0f}));
  d.insert("n", ember::tensor(std::vector<int64_t>{7}).view({1, 1}));
  const std::string path = dir().file("spec.safetensors");
  ember::save(d, path, {{"format", "pt"}});
  std::string json =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("n":{"dtype":"I64","shape":[1,1],"data_offsets":[8,16]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  const std::string data("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x07\x00\x00\x00\x00\x00\x00\x00", 16);
  EXPECT_EQ(read_bytes(path), with_header(json, data));
}

// A file as another writer might lay it out: keys out of data order, spaces, no padding.
TEST(Safetensors, ReadsAHandBuiltFile) {
  const std::string json =
      R"( {"b": {"data_offsets": [2, 6], "shape": [2], "dtype": "I16"}, "__metadata__": {},)"
      R"( "a\u00e9\ud83d\ude00": {"dtype": "U8", "shape": [1, 2], "data_offsets": [0, 2]}, "e": {"dtype": "BOOL",)"
      R"( "shape": [0], "data_offsets": [6, 6]}, "h": {"dtype": "F16", "shape": [], "data_offsets": [6, 8]}})";
  const std::string path = dir().file("hand.safetensors");
  write_bytes(path, with_header(json.substr(1), std::string("\x05\xff\x01\x00\xfe\xff\x00\x3c", 8)));
  const Dict d = ember::load_tensors(path);
  ASSERT_EQ(d.keys(), (std::vector<std::string>{"a\xc3\xa9\xf0\x9f\x98\x80", "b", "e", "h"}));
  EXPECT_TRUE(Identical(d[0].value(), ember::tensor(std::vector<uint8_t>{5, 255}).view({1, 2})));
  EXPECT_TRUE(Identical(d[1].value(), ember::tensor(std::vector<int16_t>{1, -2})));
  EXPECT_EQ(d[2].value().dtype(), ember::kBool);
  EXPECT_EQ(d[2].value().numel(), 0);
  EXPECT_EQ(d[3].value().dim(), 0);
  EXPECT_EQ(d[3].value().item<float>(), 1.0f);
}

TEST(Safetensors, TruncatedOrNotSafetensors) {
  EXPECT_LOAD_ERROR("", "load_tensors('", "0 bytes long, too short");
  EXPECT_LOAD_ERROR(std::string("\x10\x00\x00", 3), "3 bytes long, too short");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})").substr(0, 20),
                    "exceeds the 12 bytes after the length prefix");
  EXPECT_LOAD_ERROR("PK\x03\x04 this is a zip file, not safetensors", "exceeds the limit");
  EXPECT_LOAD_ERROR(with_header("[1, 2]  "), "does not start with '{'");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "1234"),
                    "tensor \"a\"", "out of range of the 4-byte data buffer");
  EXPECT_ERROR(ember::load_tensors(dir().file("absent.safetensors")), "cannot open the file for reading");
}

TEST(Safetensors, HeaderLyingAboutSizesOrOffsets) {
  const std::string data(16, '\0');
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", data), "tensor \"a\"",
                    "hold 16 bytes but dtype F32 and shape need 3 elements of 4 bytes");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                data.substr(0, 12)),
                    "tensor \"b\"", "overlap tensor \"a\"");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data), "tensor \"a\"",
                    "leaving a hole after byte 0");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data),
                    "the tensors cover 8 of the 16 bytes");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data),
                    "data_offsets [8, 0] out of range");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})", data),
                    "out of range");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999]}})", data),
                    "data_offsets must be two non-negative integers");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data),
                    "data_offsets must be two");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"U8","shape":[4611686018427387904,4],"data_offsets":[0,16]}})", data),
                    "tensor \"a\": shape overflows");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,16]}})", data),
                    "shape entries must be non-negative integers, got -1");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"U8","shape":[2.5],"data_offsets":[0,16]}})", data),
                    "non-negative integers, got 2.5");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"BOOL","shape":[16],"data_offsets":[0,16]}})", data + "\x02"),
                    "cover 16 of the 17 bytes");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", "\x01\x02"),
                    "tensor \"a\": byte 1 is 2, not a bool");
}

TEST(Safetensors, UnknownDtypesAndFields) {
  const std::string data(8, '\0');
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", data),
                    "tensor \"a\": unknown or unsupported dtype \"F8_E4M3\"");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", data),
                    "unsupported dtype \"C64\"");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":3,"shape":[1],"data_offsets":[0,8]}})", data),
                    "dtype must be a string");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8],"x":1}})", data),
                    "unknown field \"x\"");
  EXPECT_LOAD_ERROR(with_header(R"({"a":{"dtype":"F64","data_offsets":[0,8]}})", data), "tensor \"a\": missing shape");
  EXPECT_LOAD_ERROR(with_header(R"({"a":[]})", data), "expected an object");
  EXPECT_LOAD_ERROR(with_header(R"({"__metadata__":{"k":1}})"), "__metadata__ value of \"k\" must be a string");
}

TEST(Safetensors, MalformedJson) {
  for (const std::string& json : {R"({"a":1,})", R"({"a":1)", R"({"a" 1})", R"({"a":1}})", R"({"a":01})",
                                  R"({"a":tru})", R"({"a":"\x"})", "{\"a\":\"\x01\"}", "{\"a\":\"\xc3\"}",
                                  "{\"a\":\"\xc0\xaf\"}", R"({"a":"\ud800"})", R"({"a":"unterminated})", R"({'a':1})"})
    EXPECT_LOAD_ERROR(with_header(json), "malformed JSON at byte");
  EXPECT_LOAD_ERROR(with_header(R"({"a":1,"a":2})"), "malformed JSON at byte 7: duplicate key \"a\"");
  EXPECT_LOAD_ERROR(with_header("{\"a\":" + std::string(100000, '[')), "nesting too deep");
}

// Something with named_parameters(recurse) / named_buffers(recurse), as nn::Module has.
struct TinyModule {
  Tensor weight = ember::randn({3, 2}).set_requires_grad(true);
  Tensor bias = ember::zeros({3}).set_requires_grad(true);
  Tensor steps = ember::zeros({}, ember::TensorOptions().dtype(ember::kLong));
  Dict named_parameters(bool recurse = true) const {
    Dict d;
    d.insert("fc.weight", weight);
    d.insert("fc.bias", bias);
    return d;
  }
  Dict named_buffers(bool recurse = true) const {
    Dict d;
    d.insert("steps", steps);
    return d;
  }
};

// A libtorch-style module holder.
struct TinyHolder {
  std::shared_ptr<TinyModule> impl = std::make_shared<TinyModule>();
  TinyModule* operator->() const { return impl.get(); }
};

TEST(ModuleSerialize, RoundTripIntoAnotherModule) {
  static_assert(ember::detail::ModuleLike<TinyModule&> && ember::detail::ModuleLike<std::shared_ptr<TinyModule>&> &&
                ember::detail::ModuleLike<const TinyHolder&> && !ember::detail::ModuleLike<Tensor&>);
  TinyHolder a;
  a->steps.fill_(41);
  const std::string path = dir().file("module.safetensors");
  ember::save(a, path);
  auto b = std::make_shared<TinyModule>();
  const Tensor w = b->weight;
  ember::load(b, path);
  EXPECT_TRUE(w.is_same(b->weight));  // loaded in place: optimizers holding the tensors see it
  EXPECT_TRUE(Identical(b->weight, a->weight));
  EXPECT_TRUE(Identical(b->bias, a->bias));
  EXPECT_EQ(b->steps.item<int64_t>(), 41);
  EXPECT_TRUE(b->weight.requires_grad());
  EXPECT_TRUE(b->weight.is_leaf());
  EXPECT_EQ(ember::load_tensors(path).keys(), (std::vector<std::string>{"fc.weight", "fc.bias", "steps"}));
}

// Every problem is reported by key, and a failed load changes nothing.
TEST(ModuleSerialize, MismatchesNameTheKeyAndLeaveTheModuleUntouched) {
  TinyModule m;
  const Tensor before_w = m.weight.clone(), before_b = m.bias.clone();
  const std::string path = dir().file("mismatch.safetensors");
  auto expect_rejected = [&](const Dict& file, std::initializer_list<std::string> pieces) {
    ember::save(file, path);
    expect_error([&] { ember::load(m, path); }, pieces);
    EXPECT_TRUE(Identical(m.weight, before_w));
    EXPECT_TRUE(Identical(m.bias, before_b));
    EXPECT_EQ(m.steps.item<int64_t>(), 0);
  };
  Dict good;
  good.insert("fc.weight", ember::ones({3, 2}));
  good.insert("fc.bias", ember::ones({3}));
  good.insert("steps", ember::full({}, 5, ember::TensorOptions().dtype(ember::kLong)));

  Dict shape = good;
  shape["fc.weight"] = ember::ones({2, 3});
  expect_rejected(shape, {"load: '" + path + "'", "nothing loaded",
                          "shape mismatch for \"fc.weight\": the file has [2, 3], the module [3, 2]"});
  Dict dtype = good;
  dtype["fc.bias"] = ember::ones({3}, ember::TensorOptions().dtype(ember::kDouble));
  expect_rejected(dtype, {"dtype mismatch for \"fc.bias\": the file has Double, the module Float"});
  Dict missing = good;
  missing.erase("steps");
  expect_rejected(missing, {"missing key \"steps\""});
  Dict extra = good;
  extra.insert("fc2.weight", ember::ones({1}));
  expect_rejected(extra, {"unexpected key \"fc2.weight\""});
  Dict several = missing;
  several.insert("other", ember::ones({1}));
  expect_rejected(several, {"missing key \"steps\"; unexpected key \"other\""});

  ember::save(good, path);
  ember::load(m, path);
  EXPECT_EQ(m.steps.item<int64_t>(), 5);
  EXPECT_TRUE(Identical(m.weight, ember::ones({3, 2})));
}

TEST(ModuleSerialize, LoadStateDictStrictAndNot) {
  TinyModule m;
  Dict sd;
  sd.insert("fc.weight", ember::full({3, 2}, 2.0, ember::TensorOptions().dtype(ember::kDouble)));
  sd.insert("unused", ember::ones({1}));
  EXPECT_ERROR(ember::load_state_dict(m, sd), "load_state_dict", "missing key \"fc.bias\"",
               "unexpected key \"unused\"");
  ember::load_state_dict(m, sd, /*strict=*/false);
  EXPECT_EQ(m.weight.dtype(), ember::kFloat);  // cast to the module's dtype, as PyTorch's copy_
  EXPECT_TRUE(Identical(m.weight, ember::full({3, 2}, 2.0f)));
  sd["fc.weight"] = ember::ones({3});
  EXPECT_ERROR(ember::load_state_dict(m, sd, false), "shape mismatch for \"fc.weight\"");
}

// Stand-in for an ember::optim optimizer: state_dict() / load_state_dict() of that shape.
struct TinyStateDict {
  Dict state;
  std::vector<ember::OrderedDict<std::string, double>> param_groups;
};
struct TinyOptimizer {
  TinyStateDict sd;
  TinyStateDict state_dict() const { return sd; }
  void load_state_dict(const TinyStateDict& d) { sd = d; }
};

TEST(OptimizerSerialize, StateAndHyperparametersRoundTrip) {
  static_assert(ember::detail::OptimizerLike<TinyOptimizer> && !ember::detail::OptimizerLike<TinyModule>);
  TinyOptimizer a;
  a.sd.state.insert("0.exp_avg", sample({3, 2}, ember::kFloat, 8));
  a.sd.state.insert("0.step", ember::full({}, 12.0));
  a.sd.param_groups.resize(2);
  a.sd.param_groups[0].insert("lr", 0.1);
  a.sd.param_groups[0].insert("params", 1);
  a.sd.param_groups[1].insert("lr", 1.0 / 3);
  a.sd.param_groups[1].insert("eps", 1e-300);
  const std::string path = dir().file("optim.safetensors");
  ember::save(a, path);
  TinyOptimizer b;
  ember::load(b, path);
  EXPECT_EQ(b.sd.state.keys(), a.sd.state.keys());
  for (const auto& item : a.sd.state) EXPECT_TRUE(Identical(b.sd.state[item.key()], item.value())) << item.key();
  ASSERT_EQ(b.sd.param_groups.size(), 2u);
  for (size_t g = 0; g < 2; ++g) {
    EXPECT_EQ(b.sd.param_groups[g].keys(), a.sd.param_groups[g].keys());
    EXPECT_EQ(b.sd.param_groups[g].values(), a.sd.param_groups[g].values());  // exact
  }

  ember::save(a.sd.state, path, {{"param_groups.0.lr", "fast"}});
  EXPECT_ERROR(ember::load(b, path), "metadata \"param_groups.0.lr\" = \"fast\" is not a number");
  ember::save(a.sd.state, path, {{"param_groups.1.lr", "0.1"}});
  EXPECT_ERROR(ember::load(b, path), "metadata key \"param_groups.1.lr\" skips a param group");
  ember::save(a.sd.state, path, {{"param_groups.x.lr", "0.1"}});
  EXPECT_ERROR(ember::load(b, path), "is not param_groups.<index>.<name>");
}

TEST(Safetensors, SaveRejectsUndefinedAndReservedNames) {
  Dict d;
  d.insert("__metadata__", ember::ones({1}));
  EXPECT_ERROR(ember::save(d, dir().file("x.safetensors")), "\"__metadata__\" is reserved");
  Dict u;
  u.insert("t", Tensor());
  EXPECT_ERROR(ember::save(u, dir().file("x.safetensors")), "tensor \"t\" is undefined");
  EXPECT_ERROR(ember::save(ember::ones({1}), dir().file("no/such/dir/x")), "cannot open the file for writing");
}

}  // namespace

// libtorch's archives: tensors, numbers, strings and nested archives by name, through a file, a
// stream, a byte buffer or reader functions.
TEST(Archive, WriteAndReadBackEveryKindOfValue) {
  namespace es = ember::serialize;
  es::OutputArchive child;
  child.write("w", ember::arange(6).reshape({2, 3}));
  child.write("depth", ember::jit::IValue(int64_t{3}));
  es::OutputArchive out;
  out.write("x", ember::tensor({1.5, -2.0}));
  out("lr", ember::jit::IValue(0.1));  // operator() writes, as libtorch's
  out.write("flag", ember::jit::IValue(true));
  out.write("name", ember::jit::IValue(std::string("net: v2")));
  out.write("child", child);
  EXPECT_ERROR(out.write("x", ember::ones({1})), "OutputArchive::write", "'x' was written already");
  // tuples and lists of values (libtorch's optimizers write betas as a tuple), nested, with None
  // and a string holding the separators
  out.write("list", ember::jit::IValue(std::vector<int64_t>{1, -2}));
  out.write("betas", ember::jit::IValue(std::make_tuple(0.9, std::optional<int64_t>(), std::string("a|3:b"),
                                                        std::make_tuple(true, 0.1))));
  EXPECT_ERROR(out.write("pair", ember::jit::IValue::tuple(1.0, ember::ones({1}))), "OutputArchive::write", "'pair'",
               "tensor inside a tuple or list");

  const std::string path = dir().file("archive.safetensors");
  out.save_to(path);
  std::ostringstream stream;
  out.save_to(stream);
  std::string via_func;
  out.save_to([&](const void* data, size_t n) {
    via_func.append(static_cast<const char*>(data), n);
    return n;
  });
  EXPECT_EQ(stream.str(), via_func);

  auto check = [&](es::InputArchive& in) {
    EXPECT_EQ(in.keys(), (std::vector<std::string>{"x", "child", "lr", "flag", "name", "list", "betas"}));
    Tensor x;
    in.read("x", x);
    EXPECT_TRUE(Identical(x, ember::tensor({1.5, -2.0})));
    ember::jit::IValue v;
    in.read("lr", v);
    EXPECT_EQ(v.toDouble(), 0.1);  // exact
    in("flag", v);
    EXPECT_TRUE(v.toBool());
    in.read("name", v);
    EXPECT_EQ(v.toStringRef(), "net: v2");
    in.read("list", v);
    EXPECT_EQ(v.to<std::vector<int64_t>>(), (std::vector<int64_t>{1, -2}));
    in.read("betas", v);
    const auto betas = v.to<std::tuple<double, std::optional<int64_t>, std::string, std::tuple<bool, double>>>();
    EXPECT_EQ(betas, std::make_tuple(0.9, std::optional<int64_t>(), std::string("a|3:b"), std::make_tuple(true, 0.1)));
    EXPECT_ERROR((v.to<std::tuple<double, double>>()), "IValue::to", "a tuple of 2 elements, got one of 4");
    es::InputArchive nested;
    in.read("child", nested);
    Tensor w = ember::zeros({2, 3}, ember::TensorOptions().dtype(ember::kLong));
    const Tensor same = w;
    nested.read("w", w);
    EXPECT_TRUE(same.is_same(w));  // read into the existing tensor
    EXPECT_TRUE(Identical(w, ember::arange(6).reshape({2, 3})));
    nested.read("depth", v);
    EXPECT_EQ(v.toInt(), 3);
    Tensor missing;
    EXPECT_FALSE(nested.try_read("nope", missing));
    EXPECT_ERROR(nested.read("nope", missing), "InputArchive::read", "No such serialized tensor 'child.nope'");
    Tensor wrong = ember::zeros({3});
    EXPECT_ERROR(nested.read("w", wrong), "InputArchive::read", "'child.w' has shape [2, 3]", "[3]");
    EXPECT_ERROR(in.read("other", nested), "InputArchive::read", "No such serialized submodule: 'other'");
  };
  es::InputArchive from_file, from_stream, from_bytes, from_reader;
  from_file.load_from(path);
  check(from_file);
  std::istringstream is(stream.str());
  from_stream.load_from(is);
  check(from_stream);
  from_bytes.load_from(via_func.data(), via_func.size());
  check(from_bytes);
  from_reader.load_from(
      [&](uint64_t pos, void* buf, size_t n) {
        std::memcpy(buf, via_func.data() + pos, n);
        return n;
      },
      [&] { return via_func.size(); });
  check(from_reader);
  // the file is a plain safetensors file: tensors under their dotted names
  EXPECT_EQ(ember::load_tensors(path).keys(), (std::vector<std::string>{"x", "child.w"}));

  es::InputArchive bad;
  EXPECT_ERROR(bad.load_from(via_func.data(), via_func.size() - 3), "InputArchive::load_from");
  EXPECT_ERROR(bad.load_from(via_func.data(), via_func.size(), ember::Device("cuda:0")), "InputArchive::load_from",
               "only the CPU");
  EXPECT_ERROR(bad.load_from(dir().file("absent.pt")), "InputArchive::load_from", "cannot open");

  // Values a crafted file may hold: lists nested past 64 levels and element lengths past the end
  // are refused when the archive loads, before anything reads them.
  auto nest = [](int levels) {
    ember::jit::IValue v(int64_t{12345});
    for (int i = 0; i < levels; ++i) v = ember::jit::IValue(std::vector<ember::jit::IValue>{v});
    return v;
  };
  auto saved = [](const char* key, const ember::jit::IValue& v) {
    es::OutputArchive a;
    a.write(key, v);
    std::ostringstream os;
    a.save_to(os);
    return os.str();
  };
  const std::string fine = saved("v", nest(64)), deep = saved("v", nest(65));
  es::InputArchive ok;
  ok.load_from(fine.data(), fine.size());
  ember::jit::IValue v;
  ok.read("v", v);
  for (int i = 0; i < 64; ++i) v = ember::jit::IValue(v.toList().get(0));
  EXPECT_EQ(v.toInt(), 12345);
  EXPECT_ERROR(bad.load_from(deep.data(), deep.size()), "InputArchive::load_from",
               "'v' nests tuples or lists more "
               "than 64 deep");
  std::string overlong = saved("v", nest(1));
  const size_t at = overlong.find("9|int:12345");
  ASSERT_NE(at, std::string::npos);
  overlong.replace(at, 11, "99|int:1234");
  EXPECT_ERROR(bad.load_from(overlong.data(), overlong.size()), "InputArchive::load_from",
               "'v' holds a bad tuple "
               "or list");
}

// Module::save/load through archives as libtorch programs write them, and save/load of modules,
// tensors and tensor lists through streams.
TEST(Archive, ModulesTensorsAndListsThroughArchivesAndStreams) {
  namespace es = ember::serialize;
  namespace nn = ember::nn;
  auto make = [] {
    return nn::Sequential(nn::Linear(4, 3), nn::ReLU(), nn::BatchNorm1d(3), nn::Linear(3, 2));
  };
  nn::Sequential a = make(), b = make();
  a->named_buffers()["2.running_mean"].fill_(0.25);
  es::OutputArchive archive;
  a->save(archive);
  std::ostringstream os;
  archive.save_to(os);
  std::istringstream is(os.str());
  es::InputArchive in;
  in.load_from(is);
  const Tensor w = b->named_parameters()["0.weight"];
  b->load(in);
  EXPECT_TRUE(w.is_same(b->named_parameters()["0.weight"]));
  for (const auto& p : a->named_parameters()) EXPECT_TRUE(Identical(p.value(), b->named_parameters()[p.key()]));
  for (const auto& p : a->named_buffers()) EXPECT_TRUE(Identical(p.value(), b->named_buffers()[p.key()]));

  // a module of another shape: rejected by name before anything changes
  nn::Sequential c(nn::Linear(4, 3), nn::ReLU(), nn::BatchNorm1d(3), nn::Linear(3, 5));
  const Tensor before = c->named_parameters()["0.weight"].clone();
  std::istringstream again(os.str());
  EXPECT_ERROR(ember::load(c, again), "Module::load", "'3.weight' has shape [2, 3]", "[5, 3]");
  EXPECT_TRUE(Identical(c->named_parameters()["0.weight"], before));
  nn::Sequential d(nn::Linear(4, 3), nn::ReLU(), nn::BatchNorm1d(3), nn::Linear(3, 2), nn::Linear(2, 2));
  std::istringstream third(os.str());
  EXPECT_ERROR(ember::load(d, third), "Module::load", "No such serialized tensor '4.weight'");

  // ember::save(module, stream) writes the same names as save(module, path)
  std::stringstream ms;
  ember::save(a, ms);
  nn::Sequential e = make();
  ember::load(e, ms);
  for (const auto& p : a->named_parameters()) EXPECT_TRUE(Identical(p.value(), e->named_parameters()[p.key()]));

  std::stringstream ts;
  ember::save(ember::arange(5.0), ts);
  Tensor t;
  ember::load(t, ts);
  EXPECT_TRUE(Identical(t, ember::arange(5.0)));

  const std::string path = dir().file("list.safetensors");
  ember::save(std::vector<Tensor>{ember::ones({2}), ember::arange(3)}, path);
  std::vector<Tensor> list = {ember::zeros({9})};
  ember::load(list, path);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(Identical(list[1], ember::arange(3)));
}

#undef EXPECT_LOAD_ERROR

}  // namespace EMBER_UNITY_FILE
