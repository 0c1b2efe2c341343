// Indexing and joining ops against libtorch: every dtype, odd and empty shapes, inputs laid out
// contiguous, transposed, sliced with a step and channels_last, and sizes above 64K elements so
// the threaded loops run. Results must match in values, dtype, shape and (where PyTorch fixes
// one) strides.
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::random;
using parity::to_torch;
namespace ei = ember::indexing;
namespace ti = torch::indexing;

namespace {

const ember::ScalarType kAllTypes[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16, ember::kByte,
                                       ember::kChar, ember::kShort, ember::kInt, ember::kLong, ember::kBool};

enum class Layout { Contiguous, Transposed, Strided, ChannelsLast };
const Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::ChannelsLast};
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "strided";
    case Layout::ChannelsLast: return "channels_last";
  }
  return "?";
}

// The same values in both libraries, with the same strides (views built the same way on each).
struct Pair {
  ember::Tensor e;
  torch::Tensor t;
};

// `src`'s values laid out as `layout` (layouts that need more dims fall back to contiguous).
Pair relayout(const ember::Tensor& src, Layout layout) {
  std::vector<int64_t> sizes = src.sizes().vec();
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const auto eo = ember::TensorOptions().dtype(src.dtype());
  const auto to = torch::TensorOptions().dtype(parity::to_torch(src.dtype()));
  ember::Tensor e;
  torch::Tensor t;
  if (layout == Layout::Transposed && nd >= 2) {
    std::vector<int64_t> rev(sizes.rbegin(), sizes.rend()), perm;
    for (int64_t d = nd - 1; d >= 0; --d) perm.push_back(d);
    e = ember::empty(rev, eo).permute(perm);
    t = torch::empty(rev, to).permute(perm);
  } else if (layout == Layout::Strided && nd >= 1) {
    std::vector<int64_t> wide = sizes;
    wide.back() = 2 * wide.back() + 1;
    e = ember::empty(wide, eo).slice(-1, 1, std::nullopt, 2);
    t = torch::empty(wide, to).slice(-1, 1, c10::nullopt, 2);
  } else if (layout == Layout::ChannelsLast && nd == 4) {
    e = ember::empty(sizes, eo.memory_format(ember::MemoryFormat::ChannelsLast));
    t = torch::empty(sizes, to.memory_format(torch::MemoryFormat::ChannelsLast));
  } else {
    e = ember::empty(sizes, eo);
    t = torch::empty(sizes, to);
  }
  e.copy_(src);
  t.copy_(to_torch(src));
  return {e, t};
}

Pair make(std::vector<int64_t> sizes, ember::ScalarType dt, uint64_t seed, Layout layout = Layout::Contiguous) {
  return relayout(random(sizes, dt, seed), layout);
}

ember::Tensor rand_index(int64_t high, std::vector<int64_t> sizes, uint64_t seed, ember::ScalarType dt = ember::kLong) {
  ember::Generator g(seed);
  return ember::randint(0, high, sizes, &g, ember::TensorOptions().dtype(dt));
}

ember::Tensor longs(std::vector<int64_t> v) { return ember::tensor(v); }

// Sizes and strides agree (strides of size-1 dims, and of tensors without elements, carry no
// meaning and are skipped).
::testing::AssertionResult SameLayout(const ember::Tensor& e, const torch::Tensor& t) {
  std::vector<int64_t> es(e.sizes().begin(), e.sizes().end());
  if (es != t.sizes().vec()) return ::testing::AssertionFailure() << "sizes " << e.sizes() << " vs " << t.sizes();
  if (e.numel() == 0) return ::testing::AssertionSuccess();
  for (int64_t d = 0; d < e.dim(); ++d) {
    if (e.size(d) > 1 && e.stride(d) != t.stride(d)) {
      return ::testing::AssertionFailure() << "strides " << e.strides() << " vs " << t.strides() << " (sizes "
                                           << e.sizes() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Same(const ember::Tensor& e, const torch::Tensor& t) {
  auto c = Close(e, t);
  if (!c) return c;
  return SameLayout(e, t);
}

}  // namespace

// ---- cat / stack ------------------------------------------------------------------------------

TEST(IndexingParity, CatDtypesDimsLayouts) {
  uint64_t seed = 1;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      for (int64_t dim : {0, 1, 2, 3, -1}) {
        std::vector<Pair> parts;
        std::vector<ember::Tensor> es;
        std::vector<torch::Tensor> ts;
        for (int64_t len : {2, 0, 3}) {
          std::vector<int64_t> shape = {2, 3, 4, 5};
          shape[dim < 0 ? dim + 4 : dim] = len;
          Pair p = make(shape, dt, seed++, layout);
          es.push_back(p.e);
          ts.push_back(p.t);
        }
        EXPECT_TRUE(Same(ember::cat(es, dim), torch::cat(ts, dim))) << dt << " " << layout_name(layout) << " " << dim;
        EXPECT_TRUE(Same(ember::stack(es.front(), dim), torch::stack(ts.front(), dim)));
      }
    }
  }
}

TEST(IndexingParity, CatPromotesSkipsEmptyAndKeepsChannelsLast) {
  uint64_t seed = 50;
  for (auto da : kAllTypes) {
    for (auto db : kAllTypes) {
      Pair a = make({3, 4}, da, seed++), b = make({2, 4}, db, seed++);
      EXPECT_TRUE(Same(ember::cat({a.e, b.e}), torch::cat({a.t, b.t}))) << da << " " << db;
      // legacy rule: a 1-D empty tensor joins anything (and still takes part in promotion)
      Pair empty = make({0}, db, seed++);
      EXPECT_TRUE(Same(ember::cat({a.e, empty.e}, 1), torch::cat({a.t, empty.t}, 1))) << da << " " << db;
    }
  }
  Pair e1 = make({0}, ember::kDouble, 1), e2 = make({0}, ember::kFloat, 2);
  EXPECT_TRUE(Same(ember::cat({e1.e, e2.e}, 3), torch::cat({e1.t, e2.t}, 3)));
  Pair cl1 = make({2, 3, 4, 5}, ember::kFloat, 3, Layout::ChannelsLast);
  Pair cl2 = make({2, 1, 4, 5}, ember::kFloat, 4, Layout::ChannelsLast);
  Pair plain = make({2, 3, 4, 5}, ember::kFloat, 5);
  for (int64_t dim = 0; dim < 4; ++dim) {
    EXPECT_TRUE(Same(ember::cat({cl1.e, cl1.e}, dim), torch::cat({cl1.t, cl1.t}, dim))) << dim;
    EXPECT_TRUE(Same(ember::cat({cl1.e, plain.e}, dim), torch::cat({cl1.t, plain.t}, dim))) << dim;
    EXPECT_TRUE(Same(ember::stack({cl1.e, cl1.e}, dim), torch::stack({cl1.t, cl1.t}, dim))) << dim;
  }
  EXPECT_TRUE(Same(ember::cat({cl1.e, cl2.e}, 1), torch::cat({cl1.t, cl2.t}, 1)));
  ember::Tensor r = ember::cat({cl1.e, cl1.e}, 1);
  EXPECT_TRUE(r.is_contiguous(ember::MemoryFormat::ChannelsLast));
}

TEST(IndexingParity, CatLargeThreaded) {
  for (auto dt : {ember::kFloat, ember::kHalf, ember::kLong, ember::kBool}) {
    Pair a = make({40000}, dt, 11), b = make({30001}, dt, 12);
    EXPECT_TRUE(Same(ember::cat({a.e, b.e}), torch::cat({a.t, b.t}))) << dt;
    Pair c = make({300, 130}, dt, 13, Layout::Transposed), d = make({300, 257}, dt, 14);
    EXPECT_TRUE(Same(ember::cat({c.e, d.e}, 1), torch::cat({c.t, d.t}, 1))) << dt;
    EXPECT_TRUE(Same(ember::cat({d.e, d.e}, 0), torch::cat({d.t, d.t}, 0))) << dt;
    EXPECT_TRUE(Same(ember::stack({d.e, d.e}, 1), torch::stack({d.t, d.t}, 1))) << dt;
  }
}

TEST(IndexingParity, CatOut) {
  Pair a = make({3, 4}, ember::kFloat, 21), b = make({2, 4}, ember::kInt, 22);
  // out of another dtype and size: resized and cast
  ember::Tensor out = ember::empty({0}, ember::kDouble);
  torch::Tensor tout = torch::empty({0}, torch::kDouble);
  ember::cat_out(out, {a.e, b.e});
  torch::cat_out(tout, {a.t, b.t});
  EXPECT_TRUE(Same(out, tout));
  // out of the right size keeps its strides
  Pair tr = make({5, 4}, ember::kFloat, 23, Layout::Transposed);
  ember::cat_out(tr.e, {a.e, b.e});
  torch::cat_out(tr.t, {a.t, b.t});
  EXPECT_TRUE(Same(tr.e, tr.t));
}

// ---- index_select / gather / scatter / index_add -----------------------------------------------

TEST(IndexingParity, IndexSelect) {
  uint64_t seed = 100;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({3, 4, 5, 6}, dt, seed++, layout);
      for (int64_t dim : {0, 1, 2, 3, -1}) {
        const int64_t size = x.e.size(dim);
        for (auto it : {ember::kLong, ember::kInt}) {
          ember::Tensor idx = rand_index(size, {7}, seed++, it);
          EXPECT_TRUE(Same(ember::index_select(x.e, dim, idx), torch::index_select(x.t, dim, to_torch(idx))))
              << dt << " " << layout_name(layout) << " dim " << dim;
        }
        ember::Tensor scalar_idx = rand_index(size, {}, seed++);
        EXPECT_TRUE(Same(x.e.index_select(dim, scalar_idx), x.t.index_select(dim, to_torch(scalar_idx))));
        ember::Tensor none = rand_index(size, {0}, seed++);
        EXPECT_TRUE(Same(x.e.index_select(dim, none), x.t.index_select(dim, to_torch(none))));
      }
    }
    Pair z = make({}, dt, seed++);
    ember::Tensor i0 = longs({0, 0});
    EXPECT_TRUE(Same(z.e.index_select(0, i0), z.t.index_select(0, to_torch(i0))));
  }
  for (Layout layout : {Layout::Contiguous, Layout::Transposed}) {
    Pair big = make({300, 300}, ember::kFloat, 7, layout);
    ember::Tensor idx = rand_index(300, {250}, 8);
    for (int64_t dim : {0, 1})
      EXPECT_TRUE(Same(big.e.index_select(dim, idx), big.t.index_select(dim, to_torch(idx))));
  }
  Pair v = make({70000}, ember::kDouble, 9);
  ember::Tensor vi = rand_index(70000, {66000}, 10, ember::kInt);
  EXPECT_TRUE(Same(v.e.index_select(0, vi), v.t.index_select(0, to_torch(vi))));
}


TEST(IndexingParity, Gather) {
  uint64_t seed = 200;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({4, 5, 6, 3}, dt, seed++, layout);
      for (int64_t dim : {0, 1, 2, 3, -2}) {
        std::vector<int64_t> shape = {3, 4, 5, 2};
        shape[dim < 0 ? dim + 4 : dim] = 8;  // along `dim` the index may be longer than self
        Pair idx = relayout(rand_index(x.e.size(dim), shape, seed++), layout);
        EXPECT_TRUE(Same(ember::gather(x.e, dim, idx.e), torch::gather(x.t, dim, idx.t)))
            << dt << " " << layout_name(layout) << " dim " << dim;
        // an index of self's shape but along dim (contiguous operands: the loop without an iterator)
        std::vector<int64_t> full_shape = {4, 5, 6, 3};
        full_shape[dim < 0 ? dim + 4 : dim] = 7;
        Pair full = relayout(rand_index(x.e.size(dim), full_shape, seed++), layout);
        EXPECT_TRUE(Same(ember::gather(x.e, dim, full.e), torch::gather(x.t, dim, full.t)))
            << dt << " " << layout_name(layout) << " dim " << dim << ", index of self's shape";
        // the same index contiguous (self in the layout: the loop without an iterator where the
        // dims before and after dim collapse, else the iterator)
        Pair dense = relayout(full.e, Layout::Contiguous);
        EXPECT_TRUE(Same(ember::gather(x.e, dim, dense.e), torch::gather(x.t, dim, dense.t)))
            << dt << " " << layout_name(layout) << " dim " << dim << ", contiguous index of self's shape";
      }
    }
    Pair z = make({}, dt, seed++);
    for (std::vector<int64_t> s : {std::vector<int64_t>{}, std::vector<int64_t>{1}}) {
      ember::Tensor i = rand_index(1, s, seed++);
      EXPECT_TRUE(Same(z.e.gather(0, i), z.t.gather(0, to_torch(i))));
    }
  }
  Pair big = make({300, 257}, ember::kFloat, 5, Layout::Transposed);
  for (int64_t dim : {0, 1}) {
    ember::Tensor i = rand_index(big.e.size(dim), {300, 257}, 6 + dim);
    EXPECT_TRUE(Same(big.e.gather(dim, i), big.t.gather(dim, to_torch(i))));
  }
}

TEST(IndexingParity, ScatterAndScatterAdd) {
  uint64_t seed = 300;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair self = make({4, 5, 6, 3}, dt, seed++, layout);
      Pair src = make({4, 5, 6, 3}, dt, seed++, layout);
      for (int64_t dim : {0, 1, 2, 3, -1}) {
        std::vector<int64_t> shape = {3, 4, 5, 2};
        shape[dim < 0 ? dim + 4 : dim] = 3;  // index values repeat: the last write (or every add) counts
        Pair idx = relayout(rand_index(self.e.size(dim), shape, seed++), layout);
        const std::string what = std::string(layout_name(layout)) + " dim " + std::to_string(dim);
        EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, src.e), self.t.scatter(dim, idx.t, src.t))) << dt << what;
        EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, 1), self.t.scatter(dim, idx.t, 1))) << dt << what;
        EXPECT_TRUE(Same(self.e.scatter_add(dim, idx.e, src.e), self.t.scatter_add(dim, idx.t, src.t))) << dt << what;
        // in place on the caller's layout
        Pair a = relayout(self.e, layout), b = relayout(self.e, layout);
        a.e.scatter_(dim, idx.e, src.e);
        a.t.scatter_(dim, idx.t, src.t);
        EXPECT_TRUE(Same(a.e, a.t)) << dt << what;
        b.e.scatter_add_(dim, idx.e, src.e);
        b.t.scatter_add_(dim, idx.t, src.t);
        EXPECT_TRUE(Same(b.e, b.t)) << dt << what;
      }
    }
  }
  Pair big = make({300, 257}, ember::kFloat, 5);
  Pair bsrc = make({300, 257}, ember::kFloat, 6);
  for (int64_t dim : {0, 1}) {
    ember::Tensor i = rand_index(big.e.size(dim), {300, 257}, 7 + dim);
    EXPECT_TRUE(Same(big.e.scatter_add(dim, i, bsrc.e), big.t.scatter_add(dim, to_torch(i), bsrc.t)));
    EXPECT_TRUE(Same(big.e.scatter(dim, i, bsrc.e), big.t.scatter(dim, to_torch(i), bsrc.t)));
  }
  EXPECT_TRUE(Same(big.e.scatter(0, rand_index(300, {0, 3}, 9), 2.5), big.t.scatter(0, torch::zeros({0, 3}, torch::kLong), 2.5)));
  // An index that reaches every line along `dim` (its other sizes self's, as gather's backward and
  // one_hot make it): shorter and longer than self along `dim`, every dim, an index expanded (stride
  // 0) across lines, the reductions, and a bad index value (refused, self untouched).
  for (auto dt : kAllTypes) {
    Pair self = make({4, 5, 6}, dt, seed++);
    Pair src = make({9, 9, 9}, dt, seed++);
    for (int64_t dim : {0, 1, 2}) {
      for (int64_t len : {2, 8}) {
        std::vector<int64_t> shape = {4, 5, 6};
        shape[dim] = len;
        Pair idx = relayout(rand_index(self.e.size(dim), shape, seed++), Layout::Contiguous);
        const std::string what = " dim " + std::to_string(dim) + " len " + std::to_string(len);
        EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, src.e), self.t.scatter(dim, idx.t, src.t))) << dt << what;
        EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, 1), self.t.scatter(dim, idx.t, 1))) << dt << what;
        EXPECT_TRUE(Same(self.e.scatter_add(dim, idx.e, src.e), self.t.scatter_add(dim, idx.t, src.t))) << dt << what;
        // src of the index's shape (contiguous operands: the loop without an iterator)
        Pair exact = make(shape, dt, seed++);
        EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, exact.e), self.t.scatter(dim, idx.t, exact.t))) << dt << what;
        EXPECT_TRUE(Same(self.e.scatter_add(dim, idx.e, exact.e), self.t.scatter_add(dim, idx.t, exact.t)))
            << dt << what;
        for (Layout layout : {Layout::Transposed, Layout::Strided}) {  // src of the index's shape, strided
          Pair laid = relayout(exact.e, layout);
          EXPECT_TRUE(Same(self.e.scatter(dim, idx.e, laid.e), self.t.scatter(dim, idx.t, laid.t)))
              << dt << what << " src " << layout_name(layout);
          EXPECT_TRUE(Same(self.e.scatter_add(dim, idx.e, laid.e), self.t.scatter_add(dim, idx.t, laid.t)))
              << dt << what << " src " << layout_name(layout);
        }
        if (dt != ember::kBool) {
          for (const char* reduce : {"add", "multiply"}) {
            EXPECT_TRUE(Same(ember::scatter(self.e, dim, idx.e, src.e, reduce),
                             torch::scatter(self.t, dim, idx.t, src.t, reduce)))
                << dt << what << " " << reduce;
            EXPECT_TRUE(Same(ember::scatter(self.e, dim, idx.e, exact.e, reduce),
                             torch::scatter(self.t, dim, idx.t, exact.t, reduce)))
                << dt << what << " " << reduce << ", src of the index's shape";
          }
        }
        std::vector<int64_t> one = shape;
        one[dim == 2 ? 1 : 2] = 1;
        const ember::Tensor expanded = rand_index(self.e.size(dim), one, seed++).expand(shape);
        EXPECT_TRUE(Same(self.e.scatter_add(dim, expanded, src.e), self.t.scatter_add(dim, to_torch(expanded), src.t)))
            << dt << what << " expanded index";
        EXPECT_TRUE(Same(self.e.scatter(dim, expanded, src.e), self.t.scatter(dim, to_torch(expanded), src.t)))
            << dt << what << " expanded index";
        ember::Tensor bad = idx.e.clone();
        bad.view({-1})[bad.numel() / 2].fill_(self.e.size(dim));
        const ember::Tensor before = self.e.clone();
        EXPECT_THROW(self.e.scatter(dim, bad, src.e), ember::Error) << dt << what;
        EXPECT_THROW(self.e.scatter_add(dim, bad, src.e), ember::Error) << dt << what;
        EXPECT_THROW(self.e.scatter_add(dim, bad, exact.e), ember::Error) << dt << what;
        EXPECT_THROW(self.e.scatter(dim, bad, 1), ember::Error) << dt << what;
        ember::Tensor into = self.e.clone();
        EXPECT_THROW(into.scatter_(dim, bad, exact.e), ember::Error) << dt << what;
        EXPECT_TRUE(ember::equal(into, before)) << dt << what << " scatter_ with a bad index";
        EXPECT_TRUE(ember::equal(self.e, before)) << dt << what;
      }
    }
  }
}

TEST(IndexingParity, IndexAdd) {
  uint64_t seed = 400;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair self = make({4, 5, 6, 3}, dt, seed++, layout);
      for (int64_t dim : {0, 1, 2, 3, -1}) {
        std::vector<int64_t> shape = {4, 5, 6, 3};
        shape[dim < 0 ? dim + 4 : dim] = 9;
        Pair src = make(shape, dt, seed++, layout);
        for (auto it : {ember::kLong, ember::kInt}) {
          ember::Tensor idx = rand_index(self.e.size(dim), {9}, seed++, it);
          torch::Tensor tidx = to_torch(idx);
          EXPECT_TRUE(Same(self.e.index_add(dim, idx, src.e), self.t.index_add(dim, tidx, src.t)))
              << dt << " " << layout_name(layout) << " dim " << dim;
          ember::Scalar alpha = ember::is_floating_type(dt) ? ember::Scalar(0.5) : dt == ember::kBool ? ember::Scalar(true) : ember::Scalar(3);
          torch::Scalar talpha = ember::is_floating_type(dt) ? torch::Scalar(0.5) : dt == ember::kBool ? torch::Scalar(true) : torch::Scalar(3);
          Pair a = relayout(self.e, layout);
          a.e.index_add_(dim, idx, src.e, alpha);
          a.t.index_add_(dim, tidx, src.t, talpha);
          EXPECT_TRUE(Same(a.e, a.t)) << dt << " alpha " << layout_name(layout) << " dim " << dim;
        }
      }
    }
  }
  // a source slice broadcasts to self's slice (PyTorch 1.13); 0-dim self and source
  Pair x = make({3, 4}, ember::kFloat, 1), row = make({2}, ember::kFloat, 2);
  ember::Tensor i = longs({0, 2});
  EXPECT_TRUE(Same(x.e.index_add(0, i, row.e), x.t.index_add(0, to_torch(i), row.t)));
  Pair z = make({}, ember::kDouble, 3), zs = make({}, ember::kDouble, 4);
  EXPECT_TRUE(Same(z.e.index_add(0, longs({0}), zs.e, 2), z.t.index_add(0, torch::tensor({0}), zs.t, 2)));
  Pair big = make({300, 257}, ember::kFloat, 5, Layout::Transposed);
  Pair bsrc = make({300, 200}, ember::kFloat, 6);
  ember::Tensor bi = rand_index(257, {200}, 7);
  EXPECT_TRUE(Same(big.e.index_add(1, bi, bsrc.e, 2), big.t.index_add(1, to_torch(bi), bsrc.t, 2)));
}

// Whole rows added at indexed rows (index_add along dim 0, index_put_ accumulate with a row
// index), the vector row loop: rows around the SIMD widths, repeated indices (added in order),
// a source row broadcast along the row (stride 0), every dtype that has the loop and one without.
TEST(IndexingParity, AccumulateWholeRows) {
  uint64_t seed = 900;
  const ember::ScalarType types[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16,
                                     ember::kInt,   ember::kLong,   ember::kShort};
  for (auto dt : types) {
    for (int64_t len : {16, 17, 33, 64, 100, 257}) {
      Pair self = make({7, len}, dt, seed++);
      ember::Tensor idx = ember::cat({rand_index(7, {9}, seed++), longs({3, 3, 3})});
      const torch::Tensor tidx = to_torch(idx);
      Pair src = make({12, len}, dt, seed++), col = make({12}, dt, seed++);
      EXPECT_TRUE(Same(self.e.index_add(0, idx, src.e), self.t.index_add(0, tidx, src.t))) << dt << " " << len;
      EXPECT_TRUE(Same(self.e.index_add(0, idx, col.e), self.t.index_add(0, tidx, col.t))) << dt << " " << len
                                                                                          << " broadcast";
      using OT = std::optional<ember::Tensor>;
      Pair a = relayout(self.e, Layout::Contiguous);
      ember::index_put_(a.e, {OT(idx)}, src.e, true);
      a.t.index_put_(c10::List<c10::optional<torch::Tensor>>({c10::optional<torch::Tensor>(tidx)}), src.t, true);
      EXPECT_TRUE(Same(a.e, a.t)) << dt << " " << len << " index_put_ accumulate";
      Pair row = make({len}, dt, seed++);
      ember::index_put_(a.e, {OT(idx)}, row.e, true);
      a.t.index_put_(c10::List<c10::optional<torch::Tensor>>({c10::optional<torch::Tensor>(tidx)}), row.t, true);
      EXPECT_TRUE(Same(a.e, a.t)) << dt << " " << len << " index_put_ accumulate, one row for all";
    }
  }
}

// ---- masks -----------------------------------------------------------------------------------

TEST(IndexingParity, MaskedSelectAndNonzero) {
  uint64_t seed = 500;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({3, 4, 5, 6}, dt, seed++, layout);
      for (std::vector<int64_t> ms : {std::vector<int64_t>{3, 4, 5, 6}, {5, 6}, {3, 1, 5, 1}, {2, 3, 4, 5, 6}}) {
        for (auto mt : {ember::kBool, ember::kByte}) {
          Pair m = relayout(random(ms, ember::kBool, seed++).to(mt), layout);
          EXPECT_TRUE(Same(x.e.masked_select(m.e), x.t.masked_select(m.t))) << dt << " " << layout_name(layout);
        }
      }
      EXPECT_TRUE(Same(x.e.nonzero(), x.t.nonzero())) << dt << " " << layout_name(layout);
    }
    for (std::vector<int64_t> s : {std::vector<int64_t>{}, {0}, {7}, {0, 3}}) {
      Pair p = make(s, dt, seed++);
      EXPECT_TRUE(Same(p.e.nonzero(), p.t.nonzero())) << dt;
      Pair m = make(s, ember::kBool, seed++);
      EXPECT_TRUE(Same(p.e.masked_select(m.e), p.t.masked_select(m.t))) << dt;
    }
    ember::Tensor zero = ember::zeros({}, ember::TensorOptions().dtype(dt));
    EXPECT_TRUE(Same(zero.nonzero(), to_torch(zero).nonzero()));
  }
  // zeros of both signs, NaN, infinities and subnormals (the 16-bit floats are tested on their bits)
  for (auto dt : {ember::kHalf, ember::kBFloat16, ember::kFloat, ember::kDouble}) {
    const ember::Tensor v = ember::tensor({0.0, -0.0, NAN, 1.0, -INFINITY, 1e-40, -2.5, 3e-8}).to(dt).reshape({2, 4});
    EXPECT_TRUE(Same(v.nonzero(), to_torch(v).nonzero())) << dt;
    EXPECT_TRUE(Same(v.t().nonzero(), to_torch(v).t().nonzero())) << dt;
    const ember::Tensor r = v.reshape({8}).repeat({37}).reshape({37, 8});  // through whole vectors too
    EXPECT_TRUE(Same(r.nonzero(), to_torch(r).nonzero())) << dt;
  }
  // integers with only high bits set, and the minimum, through whole vectors
  const std::vector<int64_t> ints = {0, int64_t{1} << 40, std::numeric_limits<int64_t>::min(), 0, 1 << 30, -1, 0, 0};
  for (auto dt : {ember::kLong, ember::kInt, ember::kShort, ember::kChar}) {
    const ember::Tensor v = ember::tensor(ints).to(dt).repeat({37}).reshape({37, 8});
    EXPECT_TRUE(Same(v.nonzero(), to_torch(v).nonzero())) << dt;
  }
  Pair big = make({300, 300}, ember::kShort, 1, Layout::Transposed);
  Pair bm = make({300, 300}, ember::kBool, 2);
  EXPECT_TRUE(Same(big.e.nonzero(), big.t.nonzero()));
  EXPECT_TRUE(Same(big.e.masked_select(bm.e), big.t.masked_select(bm.t)));
  Pair fl = make({70001}, ember::kFloat, 3);
  EXPECT_TRUE(Same(fl.e.nonzero(), fl.t.nonzero()));
}

TEST(IndexingParity, OneHot) {
  for (std::vector<int64_t> s : {std::vector<int64_t>{}, {7}, {3, 4}, {0}, {300, 250}}) {
    ember::Tensor x = rand_index(6, s, 3);
    torch::Tensor t = to_torch(x);
    if (x.numel() > 0) EXPECT_TRUE(Same(ember::one_hot(x), torch::nn::functional::one_hot(t)));
    EXPECT_TRUE(Same(ember::one_hot(x, 9), torch::nn::functional::one_hot(t, 9)));
    EXPECT_TRUE(Same(ember::one_hot(x.t(), 6), torch::nn::functional::one_hot(t.t(), 6)));
  }
}

// ---- repeat / flip / roll / tril / triu ------------------------------------------------------

TEST(IndexingParity, RepeatFlipRoll) {
  uint64_t seed = 600;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({2, 3, 4, 5}, dt, seed++, layout);
      const std::string what = std::string(layout_name(layout));
      for (std::vector<int64_t> r : {std::vector<int64_t>{1, 1, 1, 1}, {2, 1, 3, 1}, {2, 1, 2, 3, 1}, {1, 0, 2, 1}})
        EXPECT_TRUE(Same(x.e.repeat(r), x.t.repeat(r))) << dt << what;
      for (std::vector<int64_t> d : {std::vector<int64_t>{}, {0}, {1, 3}, {-1, 0, 2}, {0, 1, 2, 3}})
        EXPECT_TRUE(Same(x.e.flip(d), x.t.flip(d))) << dt << what;
      EXPECT_TRUE(Same(x.e.roll({3}), x.t.roll({3}))) << dt << what;
      EXPECT_TRUE(Same(x.e.roll({-7}), x.t.roll({-7}))) << dt << what;
      for (int64_t d = -4; d < 4; ++d) {
        EXPECT_TRUE(Same(x.e.roll({2}, {d}), x.t.roll({2}, {d}))) << dt << what << d;
        EXPECT_TRUE(Same(x.e.roll({-1}, {d}), x.t.roll({-1}, {d}))) << dt << what << d;
      }
      EXPECT_TRUE(Same(x.e.roll({1, 13}, {0, 3}), x.t.roll({1, 13}, {0, 3}))) << dt << what;
      EXPECT_TRUE(Same(x.e.roll({0, -3, 4}, {1, 2, 2}), x.t.roll({0, -3, 4}, {1, 2, 2}))) << dt << what;
    }
    for (std::vector<int64_t> s : {std::vector<int64_t>{}, {0}, {5}, {0, 3}}) {
      Pair p = make(s, dt, seed++);
      std::vector<int64_t> r(s.size() + 1, 2);
      EXPECT_TRUE(Same(p.e.repeat(r), p.t.repeat(r))) << dt;
      EXPECT_TRUE(Same(p.e.flip({0}), p.t.flip({0}))) << dt;
      EXPECT_TRUE(Same(p.e.roll({1}), p.t.roll({1}))) << dt;
    }
  }
  Pair big = make({300, 257}, ember::kFloat, 1, Layout::Transposed);
  EXPECT_TRUE(Same(big.e.flip({0}), big.t.flip({0})));
  EXPECT_TRUE(Same(big.e.roll({100}, {1}), big.t.roll({100}, {1})));
  EXPECT_TRUE(Same(big.e.repeat({2, 1}), big.t.repeat({2, 1})));
  Pair narrow = make({300, 257}, ember::kFloat, 2, Layout::Strided);
  EXPECT_TRUE(Same(narrow.e.flip({1}), narrow.t.flip({1})));
  ember::Tensor expanded = random({257}, ember::kInt, 3).expand({300, 257});
  EXPECT_TRUE(Same(expanded.flip({0, 1}), to_torch(random({257}, ember::kInt, 3)).expand({300, 257}).flip({0, 1})));
}

TEST(IndexingParity, TrilTriu) {
  uint64_t seed = 700;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      for (std::vector<int64_t> s : {std::vector<int64_t>{5, 7}, {7, 5}, {2, 3, 4, 6}, {3, 0, 4}}) {
        Pair x = make(s, dt, seed++, layout);
        for (int64_t k : {-100, -2, -1, 0, 1, 3, 100}) {
          const std::string what = std::string(layout_name(layout)) + " k " + std::to_string(k);
          EXPECT_TRUE(Same(x.e.tril(k), x.t.tril(k))) << dt << what;
          EXPECT_TRUE(Same(x.e.triu(k), x.t.triu(k))) << dt << what;
          Pair a = relayout(x.e, layout), b = relayout(x.e, layout);
          a.e.tril_(k);
          a.t.tril_(k);
          EXPECT_TRUE(Same(a.e, a.t)) << dt << what;
          b.e.triu_(k);
          b.t.triu_(k);
          EXPECT_TRUE(Same(b.e, b.t)) << dt << what;
        }
      }
    }
  }
  Pair big = make({3, 200, 150}, ember::kDouble, 1, Layout::Transposed);
  EXPECT_TRUE(Same(big.e.tril(5), big.t.tril(5)));
  EXPECT_TRUE(Same(big.e.triu(-5), big.t.triu(-5)));
}

// ---- advanced indexing -----------------------------------------------------------------------

namespace {

// One index written once for both libraries.
struct Ix {
  enum Kind { Int, Sl, None, Ell, Bool, Ten } kind;
  int64_t i = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  ember::Tensor t;
};
Ix I(int64_t i) { return {Ix::Int, i}; }
Ix S(std::optional<int64_t> a = std::nullopt, std::optional<int64_t> b = std::nullopt, int64_t step = 1) {
  Ix x{Ix::Sl};
  x.start = a;
  x.stop = b;
  x.step = step;
  return x;
}
Ix N() { return {Ix::None}; }
Ix E() { return {Ix::Ell}; }
Ix B(bool b) { return {Ix::Bool, b}; }
Ix T(ember::Tensor t) {
  Ix x{Ix::Ten};
  x.t = std::move(t);
  return x;
}

std::vector<ei::TensorIndex> to_ember(const std::vector<Ix>& v) {
  std::vector<ei::TensorIndex> out;
  for (const Ix& x : v) {
    switch (x.kind) {
      case Ix::Int: out.emplace_back(x.i); break;
      case Ix::Sl: out.emplace_back(ei::Slice(x.start, x.stop, x.step)); break;
      case Ix::None: out.emplace_back(ei::None); break;
      case Ix::Ell: out.emplace_back(ei::Ellipsis); break;
      case Ix::Bool: out.emplace_back(x.i != 0); break;
      case Ix::Ten: out.emplace_back(x.t); break;
    }
  }
  return out;
}
std::vector<ti::TensorIndex> to_torch(const std::vector<Ix>& v) {
  std::vector<ti::TensorIndex> out;
  out.reserve(v.size());  // libtorch's TensorIndex copies/moves an uninitialised bool (UBSan): build in place
  for (const Ix& x : v) {
    auto opt = [](std::optional<int64_t> o) { return o ? c10::optional<int64_t>(*o) : c10::nullopt; };
    switch (x.kind) {
      case Ix::Int: out.emplace_back(x.i); break;
      case Ix::Sl: out.emplace_back(ti::Slice(opt(x.start), opt(x.stop), x.step)); break;
      case Ix::None: out.emplace_back(ti::None); break;
      case Ix::Ell: out.emplace_back(ti::Ellipsis); break;
      case Ix::Bool: out.emplace_back(x.i != 0); break;
      case Ix::Ten: out.emplace_back(parity::to_torch(x.t)); break;
    }
  }
  return out;
}

// Index expressions on a [5, 6, 7, 8] tensor.
std::vector<std::vector<Ix>> index_cases(uint64_t seed) {
  auto L = [&](std::vector<int64_t> shape, int64_t high) { return T(rand_index(high, shape, seed++)); };
  auto M = [&](std::vector<int64_t> shape) { return T(random(shape, ember::kBool, seed++)); };
  return {
      {L({3}, 5)},
      {L({2, 2}, 5)},
      {S(), L({4}, 6)},
      {L({3}, 5), L({3}, 6)},
      {L({3}, 5), S(), L({3}, 7)},                // separated: advanced dims go first
      {L({3, 1}, 5), S(1, 4), L({2}, 7)},         // separated and broadcast
      {I(1), S(), L({2}, 7)},
      {L({2}, 5), I(2), L({2}, 7)},               // libtorch: the int is a select, the rest adjacent
      {E(), L({3}, 8)},
      {N(), L({2}, 5), N(), S(1, std::nullopt, 2)},
      {L({2}, 5), N(), L({2}, 6)},
      {M({5, 6})},
      {S(), M({6, 7})},
      {T(ember::tensor({true, false, true, true, true})), L({4}, 6)},  // 4 set: broadcasts with [4]
      {B(true)},
      {B(false)},
      {S(), B(true), L({2}, 6)},
      {T(ember::full({}, true, ember::TensorOptions().dtype(ember::kBool)))},
      {T(ember::full({}, 3, ember::TensorOptions().dtype(ember::kLong)))},
      {T(ember::tensor({-1, -5, 2}))},
      {T(ember::empty({0}, ember::kLong))},
      {T(ember::tensor({1, 0, 1, 0, 1}, ember::TensorOptions().dtype(ember::kByte))), S(), S(), L({3}, 8)},
      {S(1, 5, 2), L({3}, 6), S(std::nullopt, std::nullopt, 3)},
      {I(-1), I(2), S(), L({2, 3}, 8)},
      {E(), L({2}, 6), S()},
  };
}

}  // namespace

TEST(IndexingParity, AdvancedIndexGet) {
  uint64_t seed = 800;
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({5, 6, 7, 8}, dt, seed++, layout);
      int n = 0;
      for (const auto& c : index_cases(seed++)) {
        EXPECT_TRUE(Same(x.e.index(to_ember(c)), x.t.index(to_torch(c))))
            << dt << " " << layout_name(layout) << " case " << n;
        ++n;
      }
    }
  }
  // basic indexing alone gives a view
  Pair x = make({5, 6}, ember::kFloat, 1);
  ember::Tensor v = x.e.index({1, ei::Slice(1, std::nullopt, 2)});
  EXPECT_EQ(v.impl()->storage(), x.e.impl()->storage());
  EXPECT_TRUE(Same(v, x.t.index({1, ti::Slice(1, c10::nullopt, 2)})));
  // the free function with optional index tensors
  ember::Tensor i0 = rand_index(5, {4}, 2), i1 = rand_index(6, {4}, 3);
  EXPECT_TRUE(Same(ember::index(x.e, {i0, i1}), torch::index(x.t, {to_torch(i0), to_torch(i1)})));
  EXPECT_TRUE(Same(ember::index(x.e, {std::nullopt, i1}), torch::index(x.t, {c10::nullopt, to_torch(i1)})));
  // large: threaded offsets and copies
  for (Layout layout : {Layout::Contiguous, Layout::Transposed}) {
    Pair big = make({300, 300}, ember::kFloat, 4, layout);
    ember::Tensor r = rand_index(300, {250}, 5);
    EXPECT_TRUE(Same(big.e.index({ei::Slice(), r}), big.t.index({ti::Slice(), to_torch(r)})));
    EXPECT_TRUE(Same(big.e.index({r}), big.t.index({to_torch(r)})));
    ember::Tensor rr = rand_index(300, {70000}, 7), cc = rand_index(300, {70000}, 8);
    EXPECT_TRUE(Same(big.e.index({rr, cc}), big.t.index({to_torch(rr), to_torch(cc)})));
  }
}

TEST(IndexingParity, AdvancedIndexPut) {
  ember::manual_seed(900);
  uint64_t seed = 900;
  // distinct positions: with a repeated one the result would keep whichever write came last
  auto U = [](int64_t n, int64_t high) { return T(ember::randperm(high).slice(0, 0, n)); };
  for (auto dt : kAllTypes) {
    for (Layout layout : kLayouts) {
      Pair x = make({5, 6, 7, 8}, dt, seed++, layout);
      int n = 0;
      for (const auto& c : index_cases(seed++)) {  // a scalar is well defined even at repeated positions
        Pair a = relayout(x.e, layout);
        a.e.index_put_(to_ember(c), ember::Scalar(true));
        a.t.index_put_(to_torch(c), torch::Scalar(true));
        EXPECT_TRUE(Same(a.e, a.t)) << dt << " " << layout_name(layout) << " case " << n++;
      }
      const std::vector<std::vector<Ix>> unique_cases = {
          {U(3, 5)},
          {S(), U(4, 6)},
          {U(3, 5), U(3, 6)},
          {U(3, 5), S(), U(3, 7)},
          {E(), U(3, 8)},
          {T(random({5, 6}, ember::kBool, seed++))},
          {I(1), S(), U(2, 7)},
          {N(), U(2, 5), S(1, 3)},
          {S(2, 4), S(), I(3), I(-1)},
      };
      n = 0;
      for (const auto& c : unique_cases) {
        std::vector<int64_t> shape = x.t.index(to_torch(c)).sizes().vec();
        std::vector<int64_t> lead_ones = shape;
        lead_ones.insert(lead_ones.begin(), {1, 1});
        for (const auto& vs : {shape, std::vector<int64_t>{shape.back()}, lead_ones}) {
          ember::Tensor val = random(vs, dt, seed++);
          Pair a = relayout(x.e, layout);
          a.e.index_put_(to_ember(c), val);
          a.t.index_put_(to_torch(c), to_torch(val));
          EXPECT_TRUE(Same(a.e, a.t)) << dt << " " << layout_name(layout) << " unique case " << n << " values "
                                      << ember::IntArrayRef(vs);
        }
        ++n;
      }
      // accumulate (free function): repeated positions add up
      ember::Tensor i0 = rand_index(5, {9}, seed++), i1 = rand_index(6, {9}, seed++), i2 = rand_index(5, {3, 1}, seed++);
      ember::Tensor mask = random({5, 6}, ember::kBool, seed++);
      using OT = std::optional<ember::Tensor>;
      const std::vector<std::vector<OT>> lists = {{i0}, {std::nullopt, i1}, {i0, i1}, {OT(i2), std::nullopt, OT(i2)}, {mask}};
      n = 0;
      for (const auto& list : lists) {
        c10::List<c10::optional<torch::Tensor>> tlist;
        for (const OT& o : list) tlist.push_back(o ? c10::optional<torch::Tensor>(to_torch(*o)) : c10::nullopt);
        std::vector<int64_t> shape = torch::index(x.t, tlist).sizes().vec();
        ember::Tensor val = random(shape, dt, seed++);
        Pair a = relayout(x.e, layout);
        ember::index_put_(a.e, list, val, true);
        a.t.index_put_(tlist, to_torch(val), true);
        EXPECT_TRUE(Same(a.e, a.t)) << dt << " " << layout_name(layout) << " accumulate " << n;
        EXPECT_TRUE(Same(ember::index(x.e, list), torch::index(x.t, tlist))) << dt << " index list " << n;
        // the Tensor methods of the list form, as libtorch's t.index(list) and t.index_put_(list, v, true)
        EXPECT_TRUE(Same(x.e.index(list), x.t.index(tlist))) << dt << " method index list " << n;
        Pair b = relayout(x.e, layout);
        b.e.index_put_(list, val, true);
        EXPECT_TRUE(Same(b.e, a.t)) << dt << " " << layout_name(layout) << " method accumulate " << n;
        ++n;
      }
    }
  }
  Pair big = make({300, 300}, ember::kFloat, 1, Layout::Transposed);
  ember::Tensor r = rand_index(300, {70000}, 2), c = rand_index(300, {70000}, 3);
  ember::Tensor val = random({70000}, ember::kFloat, 4);
  c10::List<c10::optional<torch::Tensor>> tl;
  tl.push_back(to_torch(r));
  tl.push_back(to_torch(c));
  ember::index_put_(big.e, {r, c}, val, true);
  big.t.index_put_(tl, to_torch(val), true);
  EXPECT_TRUE(Same(big.e, big.t));
}

}  // namespace EMBER_UNITY_FILE
