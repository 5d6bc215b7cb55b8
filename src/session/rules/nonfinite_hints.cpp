// Note [What the op says]
// A producer's name says most of why it made a NaN or Inf: log's -Inf is log(0), its NaN a
// negative input; div's NaN is 0 / 0 and its Inf x / 0; exp's +Inf an overflow; a NaN out of a
// mean-reduced cross-entropy from finite logits is a batch with no target left (all ignore_index);
// a NaN or Inf made in backward from finite values is a derivative that is infinite where the
// forward was evaluated (sqrt or a norm at 0, log at 0: their backward divides by it); a
// normalisation's NaN from finite inputs is a constant row normalised with an epsilon of 0. The
// nonfinite rule gives that reason and
// its usual fix instead of the general list, when the op's name and what it made identify it.
#include "nonfinite_hints.hpp"

#include <array>

namespace tfdebug::detail {
namespace {

// "aten::log_" and "aten::log.out" are log: the namespace, an in-place underscore and an overload
// name dropped.
std::string_view base_name(std::string_view op) {
  if (const auto colons = op.rfind("::"); colons != std::string_view::npos) op.remove_prefix(colons + 2);
  if (const auto dot = op.find('.'); dot != std::string_view::npos) op = op.substr(0, dot);
  if (op.size() > 1 && op.back() == '_') op.remove_suffix(1);
  return op;
}

template <std::size_t N>
bool one_of(std::string_view name, const std::array<std::string_view, N>& names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 3> kLogs{"log", "log2", "log10"};
constexpr std::array<std::string_view, 3> kExps{"exp", "exp2", "expm1"};
constexpr std::array<std::string_view, 2> kDivisions{"div", "reciprocal"};
constexpr std::array<std::string_view, 4> kUnitDomain{"acos", "asin", "atanh", "arccos"};
constexpr std::array<std::string_view, 4> kMeanLosses{"cross_entropy_loss", "nll_loss", "nll_loss_nd",
                                                      "nll_loss2d"};
constexpr std::array<std::string_view, 9> kNorms{
    "layer_norm",        "native_layer_norm",      "group_norm",    "native_group_norm", "batch_norm",
    "native_batch_norm", "_batch_norm_impl_index", "instance_norm", "rms_norm"};
constexpr std::array<std::string_view, 5> kSoftmaxes{"softmax", "_softmax", "log_softmax", "_log_softmax",
                                                     "scaled_dot_product_attention"};

// The forward op a generated autograd node differentiates, as the node names it: "SqrtBackward0"
// -> "Sqrt"; "" for another node (AccumulateGrad, a custom function's).
std::string_view forward_of(std::string_view node) {
  const auto at = node.rfind("Backward");
  if (at == std::string_view::npos || at == 0) return {};
  for (const char c : node.substr(at + 8)) {
    if (c < '0' || c > '9') return {};
  }
  return node.substr(0, at);
}

// Note [The node says which derivative]
// A backward op that makes an Inf from finite values is a derivative that is infinite where the
// forward evaluated it, and its node names which forward op that was: a gradient penalty written
// as sqrt(sum(g * g)) (WGAN-GP) is NaN once a slope is 0, made by aten::div in SqrtBackward0.
// Which derivative, and its fix; "" for a forward op not among these.
std::string derivative_hint(std::string_view forward) {
  if (forward == "Sqrt")
    return "the derivative of sqrt at 0 (1 / (2 sqrt(0))): a sqrt met a 0, often a norm written as "
           "sqrt(sum(x * x)) over a vector of zeros (a WGAN-GP penalty's slopes); add an epsilon inside "
           "(sqrt(x + 1e-12)), or take the norm with Tensor::norm or linalg_vector_norm, whose gradient at "
           "0 is 0";
  if (forward == "Rsqrt") return "the derivative of rsqrt at 0: add an epsilon to its input";
  if (forward == "Log" || forward == "Log2" || forward == "Log10")
    return "the derivative of log at 0 (1 / 0): a log met a 0 (it made -inf there, unless a later op "
           "masked it); take log(x + eps), log(where(x > 0, x, 1)), or log_softmax / logsigmoid instead "
           "of the log of a probability";
  if (forward == "Pow")
    return "the derivative of pow with an exponent below 1 at 0 (x^0.5 at 0): add an epsilon to the base, "
           "or use sqrt(x + eps)";
  if (forward == "Div" || forward == "Reciprocal")
    return "the derivative of a division where its denominator is 0: add an epsilon to the denominator, or "
           "clamp it away from 0";
  if (forward == "Acos" || forward == "Asin" || forward == "Atanh")
    return "the derivative of " +
           std::string(forward == "Acos"   ? "acos"
                       : forward == "Asin" ? "asin"
                                           : "atanh") +
           " at +-1: a cosine or correlation that reached 1; clamp its input to [-1 + eps, 1 - eps]";
  return "";
}

std::string forward_hint(std::string_view name, MadeValues made) {
  const bool nan = made.nan > 0;
  const bool inf = made.pos_inf + made.neg_inf > 0;
  if (one_of(name, kLogs)) {
    if (made.neg_inf > 0 && !nan)
      return "log of 0: an input is exactly 0, a probability or a norm that underflowed "
             "(log(softmax(x)) is -inf where softmax rounds to 0: take log_softmax); or clamp the "
             "input to a small positive minimum";
    return "log of a negative value: an input meant to be positive went below 0; clamp it to a small "
           "positive minimum, or find why it went negative";
  }
  if (name == "log1p") return "log1p of a value at or below -1: clamp the input above -1";
  if (name == "sqrt" && nan && !inf)
    return "sqrt of a negative value (a variance computed as E[x^2] - E[x]^2 rounds below 0): "
           "clamp the input at 0, and add an epsilon if its gradient matters";
  if (name == "rsqrt")
    return nan ? "rsqrt of a negative value: clamp the input at 0 and add an epsilon"
               : "rsqrt of 0: add an epsilon to its input (as LayerNorm's eps does)";
  if (one_of(name, kDivisions)) {
    if (nan && !inf)
      return "0 / 0: a numerator and a denominator both 0 (a norm, standard deviation or count of a "
             "constant or empty row); add an epsilon to the denominator";
    return "division by 0: a denominator (a norm, standard deviation or count) is 0 for some rows; add "
           "an epsilon to it or clamp it away from 0";
  }
  if (one_of(name, kExps) && made.pos_inf > 0)
    return "exp overflowed: an input above ~88 (float32) or ~11 (float16); subtract the maximum first "
           "(softmax and logsumexp do), or clamp the input";
  if (name == "pow" && inf && !nan)
    return "pow overflowed: a large base or exponent, or 0 to a negative power; clamp the base away "
           "from 0 or bound the exponent";
  if (name == "pow" && nan)
    return "pow of a negative base to a fractional exponent: clamp the base at 0, or take abs first";
  if (one_of(name, kUnitDomain) && nan)
    return "an input outside [-1, 1]: a cosine or correlation that rounded past 1; clamp it to "
           "[-1 + eps, 1 - eps]";
  if (one_of(name, kMeanLosses) && nan && !inf)
    return "a mean over no targets: every target of the batch is ignore_index, so the loss is 0 / 0; "
           "skip such batches, or divide a summed loss by a count that cannot be 0";
  if (one_of(name, kNorms) && nan && !inf)
    return "a normalisation over values that are all equal (a blank or padded row, a constant "
           "channel) with an epsilon of 0: (x - mean) / sqrt(0) is 0 / 0; give the norm an epsilon "
           "(LayerNorm's default is 1e-5)";
  if (name == "mean" && nan && !inf)
    return "a mean over no values (an empty selection, 0 / 0): check the selection is not empty";
  if ((name == "var" || name == "std") && nan && !inf)
    return "the variance of a single value with Bessel's correction (0 / 0): use unbiased=false, or "
           "more than one value";
  return "";
}

}  // namespace

std::string producer_hint(std::string_view op, Phase phase, MadeValues made, bool from_infinities,
                          std::string_view node) {
  const std::string_view name = base_name(op);
  if (phase == Phase::backward && !from_infinities) {
    if (const std::string which = derivative_hint(forward_of(node)); !which.empty())
      return "a derivative that is infinite where the forward evaluated it: " + which +
             ". A where() after the op does not keep it out (where(x > 0, f(x), 0) still differentiates "
             "f at 0): select the inputs before the op";
  }
  if (from_infinities) {
    if (one_of(name, kSoftmaxes))
      return "an infinity met another (-inf - -inf): a softmax over a row whose every entry is masked "
             "to -inf gives NaN; make sure every row keeps one unmasked entry (a sequence of padding "
             "only), or mask with a large finite negative value";
    if (name == "mul")
      return "0 * inf: a 0 (a mask, a one-hot target, a weight of 0) multiplied an infinity made "
             "upstream (see the finding for the op that made it); mask with where or masked_fill, "
             "or keep the infinity from being made";
    if (name == "add" || name == "sub")
      return "inf - inf: infinities of opposite signs met (see the finding for the op that made "
             "them); keep them from being made, or mask with a large finite value";
    return "";
  }
  if (phase == Phase::backward && (one_of(name, kDivisions) || name == "pow"))
    return "a derivative that is infinite where the forward evaluated it: sqrt, or a norm, at 0; "
           "log or a division at 0; pow with an exponent below 1 at 0. Add an epsilon inside "
           "(sqrt(x + eps)), or select the inputs before the op rather than after (where(x > 0, "
           "f(x), 0) still differentiates f at 0)";
  return forward_hint(name, made);
}

}  // namespace tfdebug::detail
