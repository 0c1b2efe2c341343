// einsum, PyTorch's way: every operand becomes a view over one common dim order (output dims
// first, then the summed ones; repeated subscripts become diagonals, missing ones size-1 dims),
// then operands are contracted left to right, each pair as one batched product: dims both
// keep are the batch, dims only one keeps are rows or columns, dims both sum are the inner dim.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ops/linalg_internal.h"

namespace ember {
namespace {

constexpr int kLabels = 52;  // A-Z then a-z, PyTorch's order for implicit outputs
constexpr const char* kOp = "einsum";

int label_index(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char label_char(int i) { return static_cast<char>(i < 26 ? 'A' + i : 'a' + i - 26); }
bool is_label(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

constexpr int kEllipsis = -1;

// One side of the equation for one operand (or the output): labels in order, kEllipsis where "..." is.
struct Subscripts {
  std::vector<int> items;
  bool has_ellipsis = false;
};

// Parses "ij,j...k" into per-operand subscripts; `pos` is the string offset of `part` for errors.
Subscripts parse_term(std::string_view term, size_t offset, const char* who, size_t index) {
  Subscripts s;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!s.has_ellipsis, kOp, "found '.' for ", who, index == SIZE_MAX ? "" : " ",
                  index == SIZE_MAX ? std::string() : std::to_string(index),
                  " but an ellipsis (...) was already found");
      EMBER_CHECK(i + 2 < term.size() && term[i + 1] == '.' && term[i + 2] == '.', kOp, "found '.' for ", who,
                  index == SIZE_MAX ? "" : " ", index == SIZE_MAX ? std::string() : std::to_string(index),
                  " that is not part of any ellipsis");
      s.has_ellipsis = true;
      s.items.push_back(kEllipsis);
      i += 2;
      continue;
    }
    EMBER_CHECK(is_label(c), kOp, "invalid subscript given at index ", offset + i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    s.items.push_back(label_index(c));
  }
  return s;
}

// Sum over dim d, kept as a dim of size 1 (a product with a vector of ones).
Tensor sum_keepdim(const Tensor& t, int64_t d) {
  const int64_t n = t.size(d);
  const Tensor moved = t.movedim(d, -1);
  DimVector kept(moved.sizes());
  kept.pop_back();
  int64_t rows = 1;
  for (int64_t s : kept) rows *= s;
  const Tensor sums = mv(moved.reshape({rows, n}), ones({n}, TensorOptions().dtype(t.dtype())));
  return sums.view(kept).unsqueeze(d);
}

// left and right have the same number of dims (size 1 where absent); sums the dims in sum_dims
// and keeps all dims (summed ones with size 1).
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<int64_t>& sum_dims) {
  const int64_t nd = left.dim();
  std::vector<bool> is_sum(nd, false);
  for (int64_t d : sum_dims) is_sum[d] = true;
  std::vector<int64_t> batch, lo, ro, sum;
  int64_t batch_n = 1, lo_n = 1, ro_n = 1, sum_n = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const bool l = left.size(d) != 1, r = right.size(d) != 1;  // size 0 counts as present
    if (is_sum[d]) {
      if (l && r) {
        sum.push_back(d);
        sum_n *= left.size(d);
      } else if (l) {
        left = sum_keepdim(left, d);
      } else if (r) {
        right = sum_keepdim(right, d);
      }
    } else if (l && r) {
      batch.push_back(d);
      batch_n *= left.size(d);
    } else if (l) {
      lo.push_back(d);
      lo_n *= left.size(d);
    } else if (r) {
      ro.push_back(d);
      ro_n *= right.size(d);
    }
  }
  if (sum.empty()) return mul(left, right);  // nothing to contract: a broadcast product
  // Dims of size 1 in both operands go last, they only matter for the final shape.
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < nd; ++d)
    if (left.size(d) == 1 && right.size(d) == 1 && !is_sum[d]) rest.push_back(d);
  for (int64_t d : sum_dims)
    if (left.size(d) == 1 || right.size(d) == 1) rest.push_back(d);
  auto cat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> r;
    for (const auto* p : parts) r.insert(r.end(), p->begin(), p->end());
    return r;
  };
  const Tensor l3 = left.permute(cat({&batch, &lo, &sum, &ro, &rest})).reshape({batch_n, lo_n, sum_n});
  const Tensor r3 = right.permute(cat({&batch, &sum, &ro, &lo, &rest})).reshape({batch_n, sum_n, ro_n});
  Tensor result = bmm(l3, r3);
  // Back to all dims: [batch, lo, ro, then size-1 dims for sum and rest], then the original order.
  DimVector sizes;
  const std::vector<int64_t> order = cat({&batch, &lo, &ro, &sum, &rest});
  for (int64_t d : order) {
    const bool from_left = std::find(ro.begin(), ro.end(), d) == ro.end();
    sizes.push_back(is_sum[d] ? 1 : (from_left ? left.size(d) : right.size(d)));
  }
  result = result.view(sizes);
  std::vector<int64_t> inverse(nd);
  for (int64_t i = 0; i < nd; ++i) inverse[order[i]] = i;
  return result.permute(inverse);
}

struct EinsumOp {
  static constexpr const char* name = kOp;
  static constexpr bool composite = true;  // its views and products record, as in PyTorch
  static Tensor run(std::string_view equation, TensorList operands) {
    // ---- parse ----------------------------------------------------------------------------
    const size_t arrow = equation.find("->");
    const std::string_view lhs = equation.substr(0, arrow);
    std::vector<Subscripts> terms;
    for (size_t start = 0;;) {
      const size_t comma = lhs.find(',', start);
      const size_t end = comma == std::string_view::npos ? lhs.size() : comma;
      terms.push_back(parse_term(lhs.substr(start, end - start), start, "operand", terms.size()));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    EMBER_CHECK(terms.size() <= operands.size(), kOp, "fewer operands were provided than specified in the equation");
    EMBER_CHECK(terms.size() >= operands.size(), kOp, "more operands were provided than specified in the equation");
    EMBER_CHECK(!operands.empty(), kOp, "must provide at least one operand");

    // ---- labels: counts, sizes and the ellipsis width ---------------------------------------
    std::array<int, kLabels> count{};
    std::array<int64_t, kLabels> label_size;
    label_size.fill(1);
    int64_t ell_dims = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
      const Tensor& op = operands[i];
      const int64_t nlabels = static_cast<int64_t>(terms[i].items.size()) - (terms[i].has_ellipsis ? 1 : 0);
      if (terms[i].has_ellipsis) {
        EMBER_CHECK(nlabels <= op.dim(), kOp, "the number of subscripts in the equation (", nlabels,
                    ") is more than the number of dimensions (", op.dim(), ") for operand ", i);
        ell_dims = std::max(ell_dims, op.dim() - nlabels);
      } else {
        EMBER_CHECK(nlabels == op.dim(), kOp, "the number of subscripts in the equation (", nlabels,
                    ") does not match the number of dimensions (", op.dim(), ") for operand ", i,
                    " and no ellipsis was given");
      }
      for (int l : terms[i].items)
        if (l != kEllipsis) ++count[l];
    }

    // ---- the common dim order: output dims (ellipsis where the output puts it), then summed ---
    std::array<int64_t, kLabels> position;
    position.fill(-1);
    int64_t ell_pos = -1;  // first dim of the ellipsis dims
    int64_t out_dims = 0;
    if (arrow != std::string_view::npos) {
      const Subscripts out = parse_term(equation.substr(arrow + 2), arrow + 2, "output", SIZE_MAX);
      for (int l : out.items) {
        if (l == kEllipsis) {
          ell_pos = out_dims;
          out_dims += ell_dims;
          continue;
        }
        EMBER_CHECK(count[l] > 0, kOp, "output subscript ", label_char(l),
                    " does not appear in the equation for any input operand");
        EMBER_CHECK(position[l] < 0, kOp, "output subscript ", label_char(l), " appears more than once in the output");
        position[l] = out_dims++;
      }
    } else {
      bool any_ellipsis = false;
      for (const auto& t : terms) any_ellipsis = any_ellipsis || t.has_ellipsis;
      if (any_ellipsis) {
        ell_pos = 0;
        out_dims = ell_dims;
      }
      for (int l = 0; l < kLabels; ++l)
        if (count[l] == 1) position[l] = out_dims++;
    }
    int64_t total = out_dims;
    if (ell_pos < 0) {  // ellipsis dims left out of the output are summed
      ell_pos = total;
      total += ell_dims;
    }
    for (int l = 0; l < kLabels; ++l)
      if (count[l] > 0 && position[l] < 0) position[l] = total++;

    // ---- each operand as a view over the common dims -----------------------------------------
    std::vector<Tensor> views;
    std::vector<std::vector<bool>> present;  // present[i][d]: operand i has dim d
    for (size_t i = 0; i < terms.size(); ++i) {
      const Tensor& op = operands[i];
      DimVector sizes(static_cast<size_t>(total), 1), strides(static_cast<size_t>(total), 0);
      std::vector<bool> has(static_cast<size_t>(total), false);
      std::array<int64_t, kLabels> seen_dim;
      seen_dim.fill(-1);
      int64_t dim = 0;
      for (int l : terms[i].items) {
        if (l == kEllipsis) {
          const int64_t n = op.dim() - (static_cast<int64_t>(terms[i].items.size()) - 1);
          for (int64_t j = 0; j < n; ++j, ++dim) {  // right-aligned within the ellipsis dims
            const int64_t p = ell_pos + ell_dims - n + j;
            sizes[p] = op.size(dim);
            strides[p] = op.stride(dim);
            has[p] = true;
          }
          continue;
        }
        const int64_t p = position[l];
        if (seen_dim[l] >= 0) {  // repeated subscript: the diagonal
          EMBER_CHECK(op.size(dim) == sizes[p], kOp, "subscript ", label_char(l),
                      " is repeated for operand ", i, " but the sizes don't match, ", sizes[p], " != ", op.size(dim));
          strides[p] += op.stride(dim);
        } else {
          sizes[p] = op.size(dim);
          strides[p] = op.stride(dim);
          seen_dim[l] = dim;
          has[p] = true;
        }
        ++dim;
      }
      // sizes agree across operands up to broadcasting (1)
      for (int l = 0; l < kLabels; ++l) {
        if (seen_dim[l] < 0) continue;
        const int64_t s = sizes[position[l]];
        EMBER_CHECK(label_size[l] == 1 || s == 1 || label_size[l] == s, kOp, "subscript ", label_char(l),
                    " has size ", s, " for operand ", i, " which does not broadcast with previously seen size ",
                    label_size[l]);
        if (s != 1) label_size[l] = s;
      }
      for (int64_t j = 0; j < ell_dims; ++j) {
        const int64_t p = ell_pos + j;
        for (size_t k = 0; k < i; ++k) {
          const int64_t prev = views[k].size(p);
          EMBER_CHECK(!has[p] || sizes[p] == 1 || prev == 1 || prev == sizes[p], kOp, "dimension ", j,
                      " covered by ellipsis in operand ", i, "has size ", sizes[p],
                      " which does not broadcast with previously seen ellipsis with size ", prev,
                      " for the respective dimension");
        }
      }
      for (int64_t p = 0; p < total; ++p)
        if (sizes[p] == 1) strides[p] = 0;
      views.push_back(op.as_strided(sizes, strides));
      present.push_back(std::move(has));
    }

    // ---- contract left to right ---------------------------------------------------------------
    Tensor result = views[0];
    if (views.size() == 1) {
      for (int64_t d = out_dims; d < total; ++d)
        if (result.size(d) != 1) result = sum_keepdim(result, d);
    }
    for (size_t i = 1; i < views.size(); ++i) {
      // a summed dim is contracted once no later operand has it
      std::vector<int64_t> sum_dims;
      for (int64_t d = out_dims; d < total; ++d) {
        bool later = false;
        for (size_t j = i + 1; j < views.size(); ++j) later = later || present[j][d];
        if (!later) sum_dims.push_back(d);
      }
      result = sumproduct_pair(result, views[i], sum_dims);
    }
    DimVector out_sizes(IntArrayRef(result.sizes().data(), static_cast<size_t>(out_dims)));
    return result.reshape(out_sizes);
  }
};

}  // namespace

Tensor einsum(std::string_view equation, TensorList tensors) { return dispatch::call<EinsumOp>(equation, tensors); }

}  // namespace ember
