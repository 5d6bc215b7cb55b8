// FLOP formulas of ATen ops (tfdebug/profile/flops.hpp). Argument positions follow the ATen
// schemas of LibTorch 1.13 (ATen/ops/*_ops.h, schema_str).
#include "tfdebug/profile/flops.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tfdebug::profile {
namespace {

using Args = std::span<const OpArg>;
using Formula = std::optional<double> (*)(Args);

bool is_tensor(Args a, std::size_t i) {
  return i < a.size() && a[i].kind == OpArg::Kind::kTensor;
}

double numel(const OpArg& t) {
  double n = 1;
  for (auto d : t.shape()) n *= double(d);
  return n;
}

// The last `count` dims of a shape, padded with 1 on the left.
std::int64_t dim_from_end(const OpArg& t, std::size_t from_end) {
  return from_end < t.size ? t.values[t.size - 1 - from_end] : 1;
}

// Elements of the broadcast of the tensor arguments' shapes; nullopt without a tensor or when
// the shapes do not broadcast.
std::optional<double> broadcast_numel(Args a) {
  std::array<std::int64_t, OpArg::kMaxValues> out{};
  std::size_t rank = 0;
  bool any = false;
  for (const auto& arg : a) {
    if (arg.kind != OpArg::Kind::kTensor) continue;
    any = true;
    rank = std::max<std::size_t>(rank, arg.size);
  }
  if (!any) return std::nullopt;
  out.fill(1);
  for (const auto& arg : a) {
    if (arg.kind != OpArg::Kind::kTensor) continue;
    for (std::size_t i = 0; i < arg.size; ++i) {
      const auto d = dim_from_end(arg, i);
      auto& o = out[i];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  double n = 1;
  for (std::size_t i = 0; i < rank; ++i) n *= double(out[i]);
  return n;
}

// [m,k] x [k,n] with any broadcast batch dims (torch.matmul semantics): 2 * batch * m * k * n.
std::optional<double> matmul_flops(const OpArg& a, const OpArg& b) {
  if (a.size == 0 || b.size == 0) return std::nullopt;
  const std::int64_t k = a.values[a.size - 1];
  const std::int64_t kb = b.size == 1 ? b.values[0] : b.values[b.size - 2];
  if (k != kb) return std::nullopt;
  const std::int64_t m = a.size == 1 ? 1 : a.values[a.size - 2];
  const std::int64_t n = b.size == 1 ? 1 : b.values[b.size - 1];
  // Batch dims: everything before the matrix dims, broadcast.
  const std::size_t batch_a = a.size > 2 ? a.size - 2 : 0;
  const std::size_t batch_b = b.size > 2 ? b.size - 2 : 0;
  double batch = 1;
  for (std::size_t i = 0; i < std::max(batch_a, batch_b); ++i) {
    const std::int64_t da = i < batch_a ? a.values[batch_a - 1 - i] : 1;
    const std::int64_t db = i < batch_b ? b.values[batch_b - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    batch *= double(std::max(da, db));
  }
  return 2.0 * batch * double(m) * double(k) * double(n);
}

std::optional<double> mm(Args a) {
  if (!is_tensor(a, 1) || a[0].size != 2 || a[1].size != 2) return std::nullopt;
  return matmul_flops(a[0], a[1]);
}
std::optional<double> addmm(Args a) {  // addmm(self, mat1, mat2, beta, alpha)
  if (!is_tensor(a, 2) || a[1].size != 2 || a[2].size != 2) return std::nullopt;
  return matmul_flops(a[1], a[2]);
}
std::optional<double> bmm(Args a) {
  if (!is_tensor(a, 1) || !is_tensor(a, 0) || a[0].size != 3 || a[1].size != 3) return std::nullopt;
  if (a[0].values[0] != a[1].values[0]) return std::nullopt;
  return matmul_flops(a[0], a[1]);
}
std::optional<double> baddbmm(Args a) {  // baddbmm(self, batch1, batch2, beta, alpha)
  if (a.size() < 3) return std::nullopt;
  return bmm(a.subspan(1, 2));
}
std::optional<double> matmul(Args a) {
  if (!is_tensor(a, 0) || !is_tensor(a, 1)) return std::nullopt;
  return matmul_flops(a[0], a[1]);
}
std::optional<double> linear(Args a) {  // linear(input, weight [out, in], bias)
  if (!is_tensor(a, 0) || !is_tensor(a, 1) || a[1].size != 2 || a[0].size == 0) return std::nullopt;
  if (a[0].values[a[0].size - 1] != a[1].values[1]) return std::nullopt;
  return 2.0 * numel(a[0]) * double(a[1].values[0]);
}

// One entry of an int list that may hold one value for every spatial dim.
std::optional<std::int64_t> spatial(const OpArg& list, std::size_t i) {
  if (list.kind != OpArg::Kind::kInts || list.size == 0) return std::nullopt;
  return list.size == 1 ? list.values[0] : (i < list.size ? std::optional(list.values[i]) : std::nullopt);
}

// Forward convolution FLOPs: 2 * output elements * (in channels / groups) * kernel elements, or
// for a transposed convolution 2 * input elements * (out channels / groups) * kernel elements.
// The weight is [out, in/groups, k...] ([in, out/groups, k...] when transposed): both are
// 2 * elements * prod(weight dims after the first).
std::optional<double> conv_core(const OpArg& input, const OpArg& weight, const OpArg& stride,
                                const OpArg& padding, const OpArg& dilation, bool transposed) {
  if (input.kind != OpArg::Kind::kTensor || weight.kind != OpArg::Kind::kTensor || weight.size < 3 ||
      input.size != weight.size) {
    return std::nullopt;
  }
  double per_element = 1;
  for (std::size_t i = 1; i < weight.size; ++i) per_element *= double(weight.values[i]);
  if (transposed) return 2.0 * numel(input) * per_element;
  double out = double(input.values[0]) * double(weight.values[0]);
  for (std::size_t i = 0; i + 2 < weight.size; ++i) {
    auto s = spatial(stride, i);
    auto p = spatial(padding, i);
    auto d = spatial(dilation, i);
    if (!s || !p || !d || *s <= 0) return std::nullopt;
    const auto extent = input.values[i + 2] + 2 * *p - *d * (weight.values[i + 2] - 1) - 1;
    if (extent < 0) return std::nullopt;
    const std::int64_t outputs = extent / *s + 1;  // floor division: the last partial window is dropped
    out *= double(outputs);
  }
  return 2.0 * out * per_element;
}

// convolution / _convolution(input, weight, bias, stride, padding, dilation, transposed, ...)
std::optional<double> convolution(Args a) {
  if (a.size() < 7 || a[6].kind != OpArg::Kind::kBool) return std::nullopt;
  return conv_core(a[0], a[1], a[3], a[4], a[5], a[6].values[0] != 0);
}
// conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups); a string padding
// ("same", "valid") gives nullopt.
std::optional<double> conv_nd(Args a) {
  if (a.size() < 6) return std::nullopt;
  return conv_core(a[0], a[1], a[3], a[4], a[5], false);
}
// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask): the forward FLOPs for the input gradient,
// again for the weight gradient, and grad_output's elements for the bias gradient.
std::optional<double> convolution_backward(Args a) {
  if (a.size() < 11 || !is_tensor(a, 0) || !is_tensor(a, 1) || !is_tensor(a, 2) ||
      a[7].kind != OpArg::Kind::kBool || a[10].kind != OpArg::Kind::kInts || a[10].size != 3) {
    return std::nullopt;
  }
  const bool transposed = a[7].values[0] != 0;
  double per_element = 1;
  for (std::size_t i = 1; i < a[2].size; ++i) per_element *= double(a[2].values[i]);
  const double forward = 2.0 * (transposed ? numel(a[1]) : numel(a[0])) * per_element;
  const auto& mask = a[10].values;
  return (mask[0] ? forward : 0.0) + (mask[1] ? forward : 0.0) + (mask[2] ? numel(a[0]) : 0.0);
}

std::optional<double> per_element(Args a, double flops) {
  if (!is_tensor(a, 0)) return std::nullopt;
  return flops * numel(a[0]);
}
std::optional<double> softmax(Args a) {
  return per_element(a, 5);
}
std::optional<double> softmax_backward(Args a) {  // y * (g - sum(g * y)); log: g - exp(y) * sum(g)
  return per_element(a, 4);
}

// layer_norm / native_layer_norm(input, normalized_shape, weight, bias, ...): mean (1), centre
// (1), variance (2), scale by rstd (1) per element; +1 with a weight, +1 with a bias.
std::optional<double> layer_norm(Args a) {
  if (!is_tensor(a, 0)) return std::nullopt;
  const double n = numel(a[0]);
  return n * (5.0 + (is_tensor(a, 2) ? 1.0 : 0.0) + (is_tensor(a, 3) ? 1.0 : 0.0));
}
// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask): input gradient xhat (2), g*w (1 with a weight), two row sums (1 + 2), and
// rstd * (g' - (sum + xhat * sum2) / D) (5) per element; weight gradient sum(g * xhat) (2);
// bias gradient sum(g) (1).
std::optional<double> layer_norm_backward(Args a) {
  if (a.size() < 8 || !is_tensor(a, 0) || a[7].kind != OpArg::Kind::kInts || a[7].size != 3)
    return std::nullopt;
  const double n = numel(a[0]);
  const auto& mask = a[7].values;
  double per = 0;
  if (mask[0]) per += 10.0 + (is_tensor(a, 5) ? 1.0 : 0.0);
  if (mask[1]) per += 2.0;
  if (mask[2]) per += 1.0;
  return n * per;
}

// gelu(self, approximate): erf form 0.5 * x * (1 + erf(x / sqrt 2)) = 5 per element; tanh form
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) = 9.
std::optional<double> gelu(Args a) {
  if (!is_tensor(a, 0)) return std::nullopt;
  const bool tanh = a.size() > 1 && a[1].kind == OpArg::Kind::kString && a[1].text == "tanh";
  if (a.size() > 1 && a[1].kind == OpArg::Kind::kString && !tanh && a[1].text != "none") return std::nullopt;
  return numel(a[0]) * (tanh ? 9.0 : 5.0);
}
// gelu_backward(grad_output, self, approximate), erf form: the cdf 0.5 * (1 + erf(x / sqrt 2))
// (4), the pdf term x * exp(-x^2 / 2) / sqrt(2 pi) (5), their sum (1), times grad (1) = 11.
// The tanh form has no formula here.
std::optional<double> gelu_backward(Args a) {
  if (!is_tensor(a, 0)) return std::nullopt;
  if (a.size() > 2 && a[2].kind == OpArg::Kind::kString && a[2].text != "none") return std::nullopt;
  return numel(a[0]) * 11.0;
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
// one add per element of grad_output (scattered into the weight's rows), one more multiply each
// when scaling by frequency.
std::optional<double> embedding_dense_backward(Args a) {
  if (!is_tensor(a, 0)) return std::nullopt;
  const bool scale = a.size() > 4 && a[4].kind == OpArg::Kind::kBool && a[4].values[0] != 0;
  return numel(a[0]) * (scale ? 2.0 : 1.0);
}

// _scaled_dot_product_attention(query [..., L, E], key [..., S, E], value [..., S, Ev],
// attn_mask, ...): Q K^T (2 L S E), scaling (L S), the mask add (L S, with a mask), softmax
// (5 L S) and the product with V (2 L S Ev), per batch element.
std::optional<double> attention(Args a) {
  if (!is_tensor(a, 0) || !is_tensor(a, 1) || !is_tensor(a, 2) || a[0].size < 2 || a[1].size < 2 ||
      a[2].size < 2) {
    return std::nullopt;
  }
  const auto& q = a[0];
  const double l = double(dim_from_end(q, 1));
  const double e = double(dim_from_end(q, 0));
  const double s = double(dim_from_end(a[1], 1));
  const double ev = double(dim_from_end(a[2], 0));
  if (dim_from_end(a[1], 0) != dim_from_end(q, 0) || dim_from_end(a[2], 1) != dim_from_end(a[1], 1))
    return std::nullopt;
  const double batch = numel(q) / (l * e);
  const bool mask = is_tensor(a, 3);
  return batch * (2 * l * s * e + l * s + (mask ? l * s : 0.0) + 5 * l * s + 2 * l * s * ev);
}

// Elementwise: `per` FLOPs per element of the broadcast of the tensor arguments.
template <int Per>
std::optional<double> elementwise(Args a) {
  auto n = broadcast_numel(a);
  if (!n) return std::nullopt;
  return double(Per) * *n;
}
// Reductions over the first argument: one per input element.
std::optional<double> reduction(Args a) {
  return per_element(a, 1);
}
// nll_loss_forward/backward(self, target, ...): a gather and one add per target.
std::optional<double> per_target(Args a) {
  if (!is_tensor(a, 1)) return std::nullopt;
  return numel(a[1]);
}
std::optional<double> nll_loss_backward(Args a) {  // (grad_output, self, target, ...)
  if (!is_tensor(a, 2)) return std::nullopt;
  return numel(a[2]);
}

const std::unordered_map<std::string_view, Formula>& formulas() {
  static const auto* table = new std::unordered_map<std::string_view, Formula>{
      {"mm", mm},
      {"addmm", addmm},
      {"bmm", bmm},
      {"baddbmm", baddbmm},
      {"matmul", matmul},
      {"linear", linear},
      {"convolution", convolution},
      {"_convolution", convolution},
      {"conv1d", conv_nd},
      {"conv2d", conv_nd},
      {"conv3d", conv_nd},
      {"convolution_backward", convolution_backward},
      {"softmax", softmax},
      {"_softmax", softmax},
      {"log_softmax", softmax},
      {"_log_softmax", softmax},
      {"_softmax_backward_data", softmax_backward},
      {"_log_softmax_backward_data", softmax_backward},
      {"layer_norm", layer_norm},
      {"native_layer_norm", layer_norm},
      {"native_layer_norm_backward", layer_norm_backward},
      {"gelu", gelu},
      {"gelu_backward", gelu_backward},
      {"embedding_dense_backward", embedding_dense_backward},
      {"_scaled_dot_product_attention", attention},
      {"scaled_dot_product_attention", attention},
      {"nll_loss_forward", per_target},
      {"nll_loss", per_target},
      {"nll_loss_backward", nll_loss_backward},
      {"sum", reduction},
      {"mean", reduction},
      {"norm", elementwise<2>},
      {"linalg_vector_norm", elementwise<2>},
      {"addcmul", elementwise<3>},
      {"addcmul_", elementwise<3>},
      {"addcdiv", elementwise<3>},
      {"addcdiv_", elementwise<3>},
      {"lerp_", elementwise<3>},
      {"lerp", elementwise<3>},
  };
  return *table;
}

constexpr std::array<std::string_view, 40> kElementwise = {"add",
                                                           "add_",
                                                           "sub",
                                                           "sub_",
                                                           "mul",
                                                           "mul_",
                                                           "div",
                                                           "div_",
                                                           "neg",
                                                           "neg_",
                                                           "relu",
                                                           "relu_",
                                                           "sqrt",
                                                           "sqrt_",
                                                           "rsqrt",
                                                           "log",
                                                           "log_",
                                                           "exp",
                                                           "exp_",
                                                           "pow",
                                                           "tanh",
                                                           "sigmoid",
                                                           "abs",
                                                           "reciprocal",
                                                           "clamp",
                                                           "clamp_",
                                                           "maximum",
                                                           "minimum",
                                                           "threshold_backward",
                                                           "erf",
                                                           "sigmoid_backward",
                                                           "tanh_backward",
                                                           "ge",
                                                           "square",
                                                           "rsub",
                                                           "masked_fill_",
                                                           "masked_fill",
                                                           "where",
                                                           "eq",
                                                           "ne"};

// Data movement, views, allocation, gathers and random fills: no arithmetic.
constexpr std::array<std::string_view, 53> kZero = {"view",
                                                    "reshape",
                                                    "_reshape_alias",
                                                    "t",
                                                    "transpose",
                                                    "permute",
                                                    "expand",
                                                    "expand_as",
                                                    "contiguous",
                                                    "clone",
                                                    "copy_",
                                                    "slice",
                                                    "select",
                                                    "unsqueeze",
                                                    "squeeze",
                                                    "as_strided",
                                                    "detach",
                                                    "detach_",
                                                    "empty",
                                                    "empty_like",
                                                    "empty_strided",
                                                    "zeros",
                                                    "zeros_like",
                                                    "zero_",
                                                    "fill_",
                                                    "ones_like",
                                                    "full",
                                                    "arange",
                                                    "cat",
                                                    "stack",
                                                    "index_select",
                                                    "embedding",
                                                    "_unsafe_view",
                                                    "to",
                                                    "_to_copy",
                                                    "resize_",
                                                    "new_empty_strided",
                                                    "split",
                                                    "chunk",
                                                    "narrow",
                                                    "unbind",
                                                    "alias",
                                                    "lift_fresh",
                                                    "randint",
                                                    "random_",
                                                    "triu",
                                                    "item",
                                                    "_local_scalar_dense",
                                                    "new_zeros",
                                                    "ones",
                                                    "flatten",
                                                    "argmax",
                                                    "slice_backward"};

std::string_view strip(std::string_view op) {
  constexpr std::string_view kPrefix = "aten::";
  if (op.substr(0, kPrefix.size()) == kPrefix) op.remove_prefix(kPrefix.size());
  return op;
}

bool in(std::span<const std::string_view> list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

OpArg OpArg::tensor(std::initializer_list<std::int64_t> shape) {
  OpArg a = ints(shape);
  if (a.kind == Kind::kInts) a.kind = Kind::kTensor;
  return a;
}
OpArg OpArg::ints(std::initializer_list<std::int64_t> list) {
  OpArg a;
  if (list.size() > kMaxValues) {
    a.kind = Kind::kOther;
    return a;
  }
  a.kind = Kind::kInts;
  a.size = std::uint8_t(list.size());
  std::copy(list.begin(), list.end(), a.values.begin());
  return a;
}
OpArg OpArg::integer(std::int64_t value) {
  OpArg a;
  a.kind = Kind::kInt;
  a.size = 1;
  a.values[0] = value;
  return a;
}
OpArg OpArg::boolean(bool value) {
  OpArg a = integer(value ? 1 : 0);
  a.kind = Kind::kBool;
  return a;
}
OpArg OpArg::string(std::string_view text) {
  OpArg a;
  a.kind = Kind::kString;
  a.text = text;
  return a;
}

std::optional<double> op_flops(std::string_view op, std::span<const OpArg> args) {
  const auto name = strip(op);
  const auto& table = formulas();
  if (auto it = table.find(name); it != table.end()) return it->second(args);
  if (in(kElementwise, name)) return elementwise<1>(args);
  if (in(kZero, name)) return 0.0;
  return std::nullopt;
}

bool has_flops_formula(std::string_view op) {
  const auto name = strip(op);
  return formulas().count(name) > 0 || in(kElementwise, name) || in(kZero, name);
}

}  // namespace tfdebug::profile
