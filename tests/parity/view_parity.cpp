// Views and shape ops against libtorch. Every case runs the same expression on an Ember tensor
// and on a libtorch tensor with the same storage layout, and requires: both accept or both
// reject it; equal sizes, strides and storage offset; equal values; the result aliases its base
// in both or in neither; and a write through the result lands in the same places of the base.
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::random;
using parity::to_torch;

namespace {

struct Pair {
  ember::Tensor e;
  torch::Tensor t;
};

// Bases over fresh storage laid out identically in both libraries (offset 0, same strides).
Pair root(std::vector<int64_t> sizes, uint64_t seed, ember::ScalarType dt = ember::kFloat) {
  ember::Tensor e = random(sizes, dt, seed);
  return {e, to_torch(e)};
}

// The tensors every view case runs on: 120 elements in several layouts, plus edge shapes.
std::vector<std::pair<const char*, Pair>> bases() {
  std::vector<std::pair<const char*, Pair>> out;
  out.emplace_back("contiguous", root({2, 3, 4, 5}, 1));
  Pair p = root({5, 4, 2, 3}, 2);
  out.emplace_back("permuted", Pair{p.e.permute({2, 3, 1, 0}), p.t.permute({2, 3, 1, 0})});
  Pair s = root({4, 3, 8, 5}, 3);
  out.emplace_back("sliced", Pair{s.e.slice(0, 1, 3).slice(2, 0, 8, 2), s.t.slice(0, 1, 3).slice(2, 0, 8, 2)});
  ember::Tensor cl = random({2, 3, 4, 5}, ember::kFloat, 4).contiguous(ember::MemoryFormat::ChannelsLast);
  out.emplace_back("channels_last", Pair{cl, to_torch(cl)});
  Pair x = root({3, 1, 5}, 5);
  out.emplace_back("expanded", Pair{x.e.expand({2, 3, 4, 5}), x.t.expand({2, 3, 4, 5})});
  out.emplace_back("0-dim", root({}, 6));
  out.emplace_back("empty", root({0, 3, 1}, 7));
  out.emplace_back("ones", root({1, 3, 1, 5}, 8));
  Pair m = root({6, 4}, 9);
  out.emplace_back("matrix^T", Pair{m.e.t(), m.t.t()});
  out.emplace_back("vector", root({7}, 10));
  return out;
}

std::string message(const std::exception& e) {
  std::string s = e.what();
  return s.substr(0, s.find('\n'));
}

::testing::AssertionResult SameView(const ember::Tensor& e, const torch::Tensor& t, const Pair& base) {
  std::vector<int64_t> es(e.sizes().begin(), e.sizes().end()), est(e.strides().begin(), e.strides().end());
  if (es != t.sizes().vec() || est != t.strides().vec() || e.storage_offset() != t.storage_offset()) {
    return ::testing::AssertionFailure() << "ember " << e.sizes() << " strides " << e.strides() << " offset "
                                         << e.storage_offset() << " vs libtorch " << t.sizes() << " strides "
                                         << t.strides() << " offset " << t.storage_offset();
  }
  const bool e_alias = e.impl()->storage() == base.e.impl()->storage();
  if (e_alias != t.is_alias_of(base.t))
    return ::testing::AssertionFailure() << "aliasing: ember " << e_alias << " vs libtorch " << !e_alias;
  return Close(e, t);
}

// Runs `op` on both; see the file comment for what must agree.
template <class Op>
void check(const std::string& what, Op op) {
  for (auto& [name, base] : bases()) {
    const std::string where = what + " on " + name;
    ember::Tensor e;
    torch::Tensor t;
    std::string e_err, t_err;
    try {
      e = op(base.e);
    } catch (const ember::Error& err) {
      e_err = message(err);
    }
    try {
      t = op(base.t);
    } catch (const std::exception& err) {  // libtorch throws std::runtime_error for some shapes
      t_err = message(err);
    }
    EXPECT_EQ(e_err.empty(), t_err.empty()) << where << ": ember '" << e_err << "' vs libtorch '" << t_err << "'";
    if (!e_err.empty() || !t_err.empty()) continue;
    EXPECT_TRUE(SameView(e, t, base)) << where;
    // a write through the view lands in the same places of the base (views whose elements
    // share memory are left out: Ember's fill_ refuses them, libtorch's allows them)
    bool overlapping = false;
    for (int64_t d = 0; d < e.dim(); ++d) overlapping = overlapping || (e.stride(d) == 0 && e.size(d) > 1);
    if (overlapping) continue;
    e.fill_(9);
    t.fill_(9);
    EXPECT_TRUE(Close(base.e, base.t)) << where << " (base after a write through the view)";
  }
}

}  // namespace

#define VIEW_CASE(expr) check(#expr, [](auto x) { return expr; })

TEST(ViewParity, ReshapeFamily) {
  VIEW_CASE(x.view({-1}));
  VIEW_CASE(x.view({2, -1}));
  VIEW_CASE(x.view({6, 20}));
  VIEW_CASE(x.view({1, 2, 1, 60, 1}));
  VIEW_CASE(x.view({2, 3, 20}));
  VIEW_CASE(x.view({0, -1}));
  VIEW_CASE(x.view({-1, -1}));
  VIEW_CASE(x.view({-2, 60}));
  VIEW_CASE(x.view({7, 3}));
  VIEW_CASE(x.view(std::vector<int64_t>{}));
  VIEW_CASE(x.view({1, 1}));
  VIEW_CASE(x.reshape({-1}));
  VIEW_CASE(x.reshape({5, 24}));
  VIEW_CASE(x.reshape({2, 3, 20}));
  VIEW_CASE(x.reshape({120, 1}));
  VIEW_CASE(x.reshape({0, 3, 2}));
  VIEW_CASE(x.reshape({}));
  VIEW_CASE(x.flatten());
  VIEW_CASE(x.flatten(1));
  VIEW_CASE(x.flatten(1, 2));
  VIEW_CASE(x.flatten(-2, -1));
  VIEW_CASE(x.flatten(2, 1));
  VIEW_CASE(x.flatten(0, 5));
  VIEW_CASE(x.unflatten(1, {3, 1}));
  VIEW_CASE(x.unflatten(-1, {-1, 1}));
  VIEW_CASE(x.unflatten(0, {2, 2}));
  VIEW_CASE(x.unflatten(0, {1, -1, 1}));
  VIEW_CASE(x.unflatten(1, {-2, -1}));
  VIEW_CASE(x.unflatten(0, {-1, 0}));
}

TEST(ViewParity, DimShuffles) {
  VIEW_CASE(x.permute({3, 1, 0, 2}));
  VIEW_CASE(x.permute({0, 1, 2, 3}));
  VIEW_CASE(x.permute({-1, 0, 1, 2}));
  VIEW_CASE(x.permute({0, 0, 1, 2}));
  VIEW_CASE(x.permute({1, 0}));
  VIEW_CASE(x.permute({0}));
  VIEW_CASE(x.permute({}));
  VIEW_CASE(x.transpose(0, 3));
  VIEW_CASE(x.transpose(-1, 1));
  VIEW_CASE(x.transpose(1, 1));
  VIEW_CASE(x.transpose(0, 4));
  VIEW_CASE(x.transpose(0, -1));
  VIEW_CASE(x.t());
  VIEW_CASE(x.mT());
  VIEW_CASE(x.movedim({0}, {3}));
  VIEW_CASE(x.movedim({0, 1}, {2, 3}));
  VIEW_CASE(x.movedim({-1}, {0}));
  VIEW_CASE(x.movedim({0}, {0}));
  VIEW_CASE(x.movedim({0, 0}, {1, 2}));
  VIEW_CASE(x.movedim({0, 1}, {1, 1}));
  VIEW_CASE(x.movedim({0}, {1, 2}));
  VIEW_CASE(x.movedim({4}, {0}));
}

TEST(ViewParity, Selecting) {
  VIEW_CASE(x.select(0, 1));
  VIEW_CASE(x.select(-1, -2));
  VIEW_CASE(x.select(2, 4));
  VIEW_CASE(x.select(1, -4));
  VIEW_CASE(x.select(0, 0));
  VIEW_CASE(x[0]);
  VIEW_CASE(x.slice(0, 0, 1));
  VIEW_CASE(x.slice(1, 1, 100, 2));
  VIEW_CASE(x.slice(-1, -3, -1));
  VIEW_CASE(x.slice(3, 7, 9));
  VIEW_CASE(x.slice(0, -100, 100));
  VIEW_CASE(x.slice(1, 2, 1));
  VIEW_CASE(x.slice(3, 0, 5, 3));
  VIEW_CASE(x.slice(0, 0, 2, -1));
  VIEW_CASE(x.slice(0, 0, 2, 0));
  VIEW_CASE(x.narrow(1, 1, 2));
  VIEW_CASE(x.narrow(-1, -2, 2));
  VIEW_CASE(x.narrow(0, 1, 5));
  VIEW_CASE(x.narrow(1, 3, 0));
  VIEW_CASE(x.narrow(0, 0, 0));
  VIEW_CASE(x.narrow(0, -7, 1));
  VIEW_CASE(x.diagonal());
  VIEW_CASE(x.diagonal(1));
  VIEW_CASE(x.diagonal(-1, 1, 3));
  VIEW_CASE(x.diagonal(2, 2, -1));
  VIEW_CASE(x.diagonal(10));
  VIEW_CASE(x.diagonal(-10, 0, 2));
  VIEW_CASE(x.diagonal(0, 1, 1));
}

TEST(ViewParity, ExpandSqueezeUnfold) {
  VIEW_CASE(x.expand({2, 3, 4, 5}));
  VIEW_CASE(x.expand({3, 2, 3, 4, 5}));
  VIEW_CASE(x.expand({1, 1, 2, 3, 4, 5}));
  VIEW_CASE(x.expand({-1, 3, -1, 5}));
  VIEW_CASE(x.expand({2, 3, 4, 6}));
  VIEW_CASE(x.expand({3, 4, 5}));
  VIEW_CASE(x.expand({-1, 2, 3, 4, 5}));
  VIEW_CASE(x.expand({1}));
  VIEW_CASE(x.expand({4, 7}));
  VIEW_CASE(x.expand({6, 3, 1, 5}));
  VIEW_CASE(x.expand_as(x));
  VIEW_CASE(x.squeeze());
  VIEW_CASE(x.squeeze(1));
  VIEW_CASE(x.squeeze(-1));
  VIEW_CASE(x.squeeze(2));
  VIEW_CASE(x.squeeze(0));
  VIEW_CASE(x.squeeze(4));
  VIEW_CASE(x.unsqueeze(0));
  VIEW_CASE(x.unsqueeze(-1));
  VIEW_CASE(x.unsqueeze(2));
  VIEW_CASE(x.unsqueeze(4));
  VIEW_CASE(x.unsqueeze(5));
  VIEW_CASE(x.unfold(1, 2, 1));
  VIEW_CASE(x.unfold(-1, 5, 2));
  VIEW_CASE(x.unfold(0, 3, 1));
  VIEW_CASE(x.unfold(2, 0, 1));
  VIEW_CASE(x.unfold(3, 1, 4));
  VIEW_CASE(x.unfold(0, 1, 1));
  VIEW_CASE(x.unfold(0, 1, 0));
}

TEST(ViewParity, AsStrided) {
  VIEW_CASE(x.as_strided({2, 2}, {1, 2}));
  VIEW_CASE(x.as_strided({3}, {2}, 1));
  VIEW_CASE(x.as_strided({2, 2}, {100, 1}));
  VIEW_CASE(x.as_strided({0, 5}, {1000, 1}));
  VIEW_CASE(x.as_strided({2, 2}, {1, 1}));
  VIEW_CASE(x.as_strided({2, 2}, {0, 1}, 3));
  VIEW_CASE(x.as_strided({}, {}, 5));
  VIEW_CASE(x.as_strided({2}, {1}, -1));
  VIEW_CASE(x.as_strided({2, 2}, {1}));
  VIEW_CASE(x.as_strided({2, 2}, {-1, 1}, 3));
  VIEW_CASE(x.as_strided({4, 30}, {30, 1}));
  VIEW_CASE(x.as_strided({121}, {1}));
}

TEST(ViewParity, InPlaceViews) {
  check("transpose_(0, -1)", [](auto x) { return x.transpose_(0, -1); });
  check("t_()", [](auto x) { return x.t_(); });
  check("squeeze_()", [](auto x) { return x.squeeze_(); });
  check("squeeze_(0)", [](auto x) { return x.squeeze_(0); });
  check("unsqueeze_(1)", [](auto x) { return x.unsqueeze_(1); });
  check("unsqueeze_(9)", [](auto x) { return x.unsqueeze_(9); });
  check("as_strided_", [](auto x) { return x.as_strided_({3, 2}, {1, 3}, 2); });
  check("as_strided_ out of bounds", [](auto x) { return x.as_strided_({3, 2}, {100, 3}); });
  // the in-place form changes the tensor itself, not a copy of its handle
  for (auto& [name, base] : bases()) {
    if (base.e.dim() < 2) continue;
    ember::Tensor e = base.e;
    torch::Tensor t = base.t;
    e.transpose_(0, 1);
    t.transpose_(0, 1);
    EXPECT_TRUE(SameView(base.e, base.t, base)) << name;
  }
}

TEST(ViewParity, Splitting) {
  struct Case {
    const char* name;
    std::function<std::vector<ember::Tensor>(ember::Tensor)> e;
    std::function<std::vector<torch::Tensor>(torch::Tensor)> t;
  };
#define SPLIT_CASE(expr) \
  Case { #expr, [](ember::Tensor x) { return std::vector<ember::Tensor>(expr); }, [](torch::Tensor x) { return std::vector<torch::Tensor>(expr); } }
  const Case cases[] = {
      SPLIT_CASE(x.split(2, 1)),       SPLIT_CASE(x.split(1, -1)),      SPLIT_CASE(x.split(0, 1)),
      SPLIT_CASE(x.split(100, 0)),     SPLIT_CASE(x.split(-1, 1)),      SPLIT_CASE(x.split({1, 2}, 1)),
      SPLIT_CASE(x.split_with_sizes({1, 1, 1}, 1)), SPLIT_CASE(x.split_with_sizes({1, 1}, 1)),
      SPLIT_CASE(x.split_with_sizes({1, -1, 3}, 1)), SPLIT_CASE(x.chunk(2, 1)), SPLIT_CASE(x.chunk(3, -1)),
      SPLIT_CASE(x.chunk(5, 0)),       SPLIT_CASE(x.chunk(0, 1)),       SPLIT_CASE(x.unbind(1)),
      SPLIT_CASE(x.unbind(-1)),        SPLIT_CASE(x.unbind(0)),
  };
#undef SPLIT_CASE
  for (const Case& c : cases) {
    for (auto& [name, base] : bases()) {
      const std::string where = std::string(c.name) + " on " + name;
      std::vector<ember::Tensor> e;
      std::vector<torch::Tensor> t;
      std::string e_err, t_err;
      try {
        e = c.e(base.e);
      } catch (const ember::Error& err) {
        e_err = message(err);
      }
      try {
        t = c.t(base.t);
      } catch (const std::exception& err) {
        t_err = message(err);
      }
      EXPECT_EQ(e_err.empty(), t_err.empty()) << where << ": ember '" << e_err << "' vs libtorch '" << t_err << "'";
      if (!e_err.empty() || !t_err.empty()) continue;
      ASSERT_EQ(e.size(), t.size()) << where;
      for (size_t i = 0; i < e.size(); ++i) EXPECT_TRUE(SameView(e[i], t[i], base)) << where << " part " << i;
    }
  }
}

TEST(ViewParity, BroadcastAndDtypeViews) {
  for (auto& [name, base] : bases()) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3, 4, 5}, {3, 2, 3, 4, 5}, {4, 7}, {1, 1}}) {
      ember::Tensor e;
      torch::Tensor t;
      bool e_ok = true, t_ok = true;
      try {
        e = ember::broadcast_to(base.e, shape);
      } catch (const ember::Error&) {
        e_ok = false;
      }
      try {
        t = torch::broadcast_to(base.t, shape);
      } catch (const std::exception&) {
        t_ok = false;
      }
      EXPECT_EQ(e_ok, t_ok) << name << " broadcast_to " << ember::IntArrayRef(shape);
      if (e_ok && t_ok) EXPECT_TRUE(SameView(e, t, base)) << name;
    }
    Pair other = root({4, 1}, 11);
    bool e_ok = true, t_ok = true;
    std::vector<ember::Tensor> eb;
    std::vector<torch::Tensor> tb;
    try {
      eb = ember::broadcast_tensors({base.e, other.e});
    } catch (const ember::Error&) {
      e_ok = false;
    }
    try {
      tb = torch::broadcast_tensors({base.t, other.t});
    } catch (const std::exception&) {
      t_ok = false;
    }
    EXPECT_EQ(e_ok, t_ok) << name << " broadcast_tensors";
    if (e_ok && t_ok) {
      EXPECT_TRUE(SameView(eb[0], tb[0], base)) << name;
      EXPECT_TRUE(SameView(eb[1], tb[1], other)) << name;
    }
    for (ember::ScalarType dt : {ember::kFloat, ember::kInt, ember::kShort, ember::kChar, ember::kDouble,
                                 ember::kLong, ember::kBFloat16, ember::kBool}) {
      ember::Tensor ev;
      torch::Tensor tv;
      std::string e_err, t_err;
      try {
        ev = base.e.view(dt);
      } catch (const ember::Error& err) {
        e_err = message(err);
      }
      try {
        tv = base.t.view(parity::to_torch(dt));
      } catch (const std::exception& err) {
        t_err = message(err);
      }
      EXPECT_EQ(e_err.empty(), t_err.empty()) << name << " view(" << dt << "): '" << e_err << "' vs '" << t_err << "'";
      if (!e_err.empty() || !t_err.empty()) continue;
      std::vector<int64_t> es(ev.sizes().begin(), ev.sizes().end()), est(ev.strides().begin(), ev.strides().end());
      EXPECT_EQ(es, tv.sizes().vec()) << name << " view(" << dt << ")";
      EXPECT_EQ(est, tv.strides().vec()) << name << " view(" << dt << ")";
      EXPECT_EQ(ev.storage_offset(), tv.storage_offset()) << name << " view(" << dt << ")";
      if (dt != ember::kBool) EXPECT_TRUE(Close(ev, tv)) << name << " view(" << dt << ")";  // bytes other than 0/1 are no bool
    }
  }
}

TEST(ViewParity, ContiguousMemoryFormats) {
  for (auto& [name, base] : bases()) {
    const std::pair<ember::MemoryFormat, torch::MemoryFormat> formats[] = {
        {ember::MemoryFormat::Contiguous, torch::MemoryFormat::Contiguous},
        {ember::MemoryFormat::ChannelsLast, torch::MemoryFormat::ChannelsLast},
        {ember::MemoryFormat::ChannelsLast3d, torch::MemoryFormat::ChannelsLast3d}};
    for (auto [ef, tf] : formats) {
      ember::Tensor e;
      torch::Tensor t;
      bool e_ok = true, t_ok = true;
      try {
        e = base.e.contiguous(ef);
      } catch (const ember::Error&) {
        e_ok = false;
      }
      try {
        t = base.t.contiguous(tf);
      } catch (const std::exception&) {
        t_ok = false;
      }
      EXPECT_EQ(e_ok, t_ok) << name << " contiguous(" << ef << ")";
      if (!e_ok || !t_ok) continue;
      std::vector<int64_t> est(e.strides().begin(), e.strides().end());
      EXPECT_EQ(est, t.strides().vec()) << name << " contiguous(" << ef << ")";
      EXPECT_TRUE(Close(e, t)) << name;
      // already in the format: the same tensor back, no copy
      EXPECT_EQ(e.is_same(base.e), t.is_same(base.t)) << name << " contiguous(" << ef << ")";
      EXPECT_EQ(e.is_contiguous(ef), t.is_contiguous(tf)) << name;
    }
  }
}

#undef VIEW_CASE

}  // namespace EMBER_UNITY_FILE
