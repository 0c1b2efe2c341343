#include "ember/nn/modules/vision.h"

#include <cmath>

#include "ember/nn_ops.h"

namespace ember::nn {
namespace functional {
namespace {

// (*, C * r * r, H, W) <-> (*, C, H * r, W * r): a view, a permute and a reshape.
Tensor shuffle(const char* op, const Tensor& input, int64_t r, bool up) {
  EMBER_CHECK(input.defined() && input.dim() >= 3, op, op, " expects input to have at least 3 dimensions, but got input with ",
              input.defined() ? input.dim() : 0, " dimension(s)");
  EMBER_CHECK(r > 0, op, op, (up ? " expects a positive upscale_factor, but got " : " expects a positive downscale_factor, but got "), r);
  const int64_t d = input.dim();
  const int64_t c = input.size(d - 3), h = input.size(d - 2), w = input.size(d - 1);
  DimVector lead(IntArrayRef(input.sizes().data(), static_cast<size_t>(input.dim() - 3)));
  DimVector shape = lead, out = lead;
  const int64_t nl = static_cast<int64_t>(lead.size());
  DimVector perm;
  for (int64_t i = 0; i < nl; ++i) perm.push_back(i);
  if (up) {
    EMBER_CHECK(c % (r * r) == 0, op, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=",
                c, " is not divisible by ", r * r);
    for (int64_t s : {c / (r * r), r, r, h, w}) shape.push_back(s);
    for (int64_t i : {0, 3, 1, 4, 2}) perm.push_back(nl + i);
    for (int64_t s : {c / (r * r), h * r, w * r}) out.push_back(s);
  } else {
    EMBER_CHECK(h % r == 0 && w % r == 0, op, "pixel_unshuffle expects height and width to be divisible by downscale_factor, but input sizes are ",
                input.sizes(), " and downscale_factor=", r);
    for (int64_t s : {c, h / r, r, w / r, r}) shape.push_back(s);
    for (int64_t i : {0, 2, 4, 1, 3}) perm.push_back(nl + i);
    for (int64_t s : {c * r * r, h / r, w / r}) out.push_back(s);
  }
  return input.reshape(shape).permute(perm).reshape(out);
}

const char* mode_name(const InterpolateFuncOptions::mode_t& mode) {
  if (std::holds_alternative<enumtype::kNearest>(mode)) return "nearest";
  if (std::holds_alternative<enumtype::kBilinear>(mode) || std::holds_alternative<enumtype::kLinear>(mode)) {
    return "bilinear";
  }
  return nullptr;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  return shuffle("pixel_shuffle", input, options.upscale_factor(), true);
}
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  return shuffle("pixel_unshuffle", input, options.downscale_factor(), false);
}

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  EMBER_CHECK(input.defined() && input.dim() >= 3, "interpolate", "expected a 3-D or 4-D input, got ",
              input.defined() ? input.sizes() : IntArrayRef());
  EMBER_CHECK(o.size().has_value() != o.scale_factor().has_value(), "interpolate",
              "only one of size or scale_factor should be defined");
  const int64_t spatial = input.dim() - 2;
  const bool linear = std::holds_alternative<enumtype::kLinear>(o.mode());
  const bool bilinear = std::holds_alternative<enumtype::kBilinear>(o.mode());
  EMBER_CHECK(!o.align_corners() || linear || bilinear, "interpolate",
              "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  EMBER_CHECK(!linear || input.dim() == 3, "interpolate", "Got ", input.dim(), "D input, but linear mode needs 3D input");
  EMBER_CHECK(!bilinear || input.dim() == 4, "interpolate", "Got ", input.dim(), "D input, but bilinear mode needs 4D input");
  EMBER_CHECK(!o.antialias(), "interpolate", "antialias is not supported");
  // Output sizes from size or from floor(input size * scale).
  DimVector out_size;
  for (int64_t i = 0; i < spatial; ++i) {
    if (o.size()) {
      const auto& s = *o.size();
      EMBER_CHECK(s.size() == 1 || static_cast<int64_t>(s.size()) == spatial, "interpolate", "size shape must match input shape. Input is ",
                  spatial, "D, size is ", s.size());
      out_size.push_back(s.size() == 1 ? s[0] : s[i]);
    } else {
      const auto& f = *o.scale_factor();
      EMBER_CHECK(f.size() == 1 || static_cast<int64_t>(f.size()) == spatial, "interpolate",
                  "scale_factor shape must match input shape. Input is ", spatial, "D, scale_factor is ", f.size());
      out_size.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + i)) * (f.size() == 1 ? f[0] : f[i]))));
    }
  }
  if (std::holds_alternative<enumtype::kArea>(o.mode())) {
    if (spatial == 1) return ember::adaptive_avg_pool1d(input, out_size);
    EMBER_CHECK(spatial == 2, "interpolate", "area mode supports 3-D and 4-D inputs, got ", input.sizes());
    return ember::adaptive_avg_pool2d(input, out_size);
  }
  const char* mode = mode_name(o.mode());
  EMBER_CHECK(mode != nullptr, "interpolate", "mode ", enum_name(o.mode()), " is not supported (nearest, linear, bilinear and area are)");
  std::optional<std::vector<double>> scales;
  if (o.scale_factor() && !o.recompute_scale_factor().value_or(false)) {
    scales = *o.scale_factor();
    if (scales->size() == 1) scales->assign(static_cast<size_t>(spatial), (*scales)[0]);
  }
  if (linear) {
    // Linear along L is bilinear on (N, C, 1, L).
    if (scales) scales->insert(scales->begin(), 1.0);
    const DimVector size2{1, out_size[0]};
    return ember::interpolate(input.unsqueeze(2), scales ? OptionalIntArrayRef() : OptionalIntArrayRef(size2), scales,
                              "bilinear", o.align_corners())
        .squeeze(2);
  }
  return ember::interpolate(input, scales ? OptionalIntArrayRef() : OptionalIntArrayRef(out_size), scales, mode,
                            bilinear ? o.align_corners() : std::nullopt);
}

}  // namespace functional

void PixelShuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}
void PixelUnshuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  functional::InterpolateFuncOptions o;
  o.size(options.size()).scale_factor(options.scale_factor()).align_corners(options.align_corners());
  std::visit([&](auto tag) { o.mode(tag); }, options.mode());
  return functional::interpolate(input, o);
}
void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Upsample(";
  if (options.scale_factor()) {
    stream << "scale_factor=[";
    for (size_t i = 0; i < options.scale_factor()->size(); ++i) stream << (i ? ", " : "") << (*options.scale_factor())[i];
    stream << "]";
  } else if (options.size()) {
    stream << "size=" << IntArrayRef(*options.size());
  }
  stream << ", mode=k" << enum_name(options.mode()) << ")";
}

void CosineSimilarityImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ")";
}
void PairwiseDistanceImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::PairwiseDistance(p=" << options.p() << ", eps=" << options.eps()
         << ", keepdim=" << options.keepdim() << ")";
}

}  // namespace ember::nn
