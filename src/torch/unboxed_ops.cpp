// Note [Unboxed hot ops]
// The boxed fallback boxes every argument onto a stack (IntArrayRefs and Scalars into
// heap-allocated IValues), and the kernel it redispatches to unboxes them again: ~3% of the demo
// step for its 189 intercepted ops, with on_op doing nothing but redispatch (measured against the
// same build without the mode key). The ops a transformer's training step calls most (linear
// algebra, elementwise arithmetic, norms, softmax, activations and their backward ops) get an
// unboxed kernel for kModeKey instead, generated from the op's at::_ops signature: it puts only
// the tensor arguments on a small stack of IValues for prepare (a reference count each, no
// allocation; a list of tensors, cat's and stack's, as one IValue list), calls the op through its
// typed redispatch, and observes the returned tensors as they are. The ops found boxed in
// the steps of the zoo's models (the batch's comparisons and gathers, conv2d and batch_norm,
// fill_ from zero_grad, cat) get one too. Every other op still reaches on_op.
#include <ATen/SequenceNumber.h>
#include <ATen/core/boxing/impl/boxing.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_local_scalar_dense_ops.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/_to_copy_ops.h>
#include <ATen/ops/_unsafe_view_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/any_ops.h>
#include <ATen/ops/arange_ops.h>
#include <ATen/ops/batch_norm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/cat_ops.h>
#include <ATen/ops/clamp_min_ops.h>
#include <ATen/ops/clone_ops.h>
#include <ATen/ops/conv2d_ops.h>
#include <ATen/ops/convolution_backward_ops.h>
#include <ATen/ops/cross_entropy_loss_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/dropout_ops.h>
#include <ATen/ops/embedding_backward_ops.h>
#include <ATen/ops/embedding_ops.h>
#include <ATen/ops/eq_ops.h>
#include <ATen/ops/equal_ops.h>
#include <ATen/ops/eye_ops.h>
#include <ATen/ops/fill_ops.h>
#include <ATen/ops/ge_ops.h>
#include <ATen/ops/gelu_backward_ops.h>
#include <ATen/ops/gelu_ops.h>
#include <ATen/ops/gt_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <ATen/ops/is_nonzero_ops.h>
#include <ATen/ops/item_ops.h>
#include <ATen/ops/layer_norm_ops.h>
#include <ATen/ops/linear_ops.h>
#include <ATen/ops/log_softmax_ops.h>
#include <ATen/ops/logical_not_ops.h>
#include <ATen/ops/lt_ops.h>
#include <ATen/ops/masked_fill_ops.h>
#include <ATen/ops/matmul_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/native_batch_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/new_ones_ops.h>
#include <ATen/ops/new_zeros_ops.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/ones_like_ops.h>
#include <ATen/ops/ones_ops.h>
#include <ATen/ops/rand_like_ops.h>
#include <ATen/ops/rand_ops.h>
#include <ATen/ops/randint_like_ops.h>
#include <ATen/ops/randint_ops.h>
#include <ATen/ops/randn_like_ops.h>
#include <ATen/ops/randn_ops.h>
#include <ATen/ops/randperm_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/select_backward_ops.h>
#include <ATen/ops/sigmoid_backward_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/slice_backward_ops.h>
#include <ATen/ops/softmax_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/stack_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/sum_ops.h>
#include <ATen/ops/tanh_backward_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <ATen/ops/where_ops.h>
#include <ATen/ops/zeros_like_ops.h>
#include <ATen/ops/zeros_ops.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "interception.hpp"
#include "op_info.hpp"
#include "op_override.hpp"
#include "op_path.hpp"

namespace tfdebug::torch::detail {

namespace {

// kObserve false: an op with nothing to observe (Note [Nothing to observe] in op_info.cpp),
// redispatched at once, outer ops only, as a step's ops are outside a step.
template <class Op, bool kObserve = true, class Signature = typename Op::schema>
struct Unboxed;

template <class Op, bool kObserve, class R, class... A>
struct Unboxed<Op, kObserve, R(A...)> {
  static constexpr std::size_t kArguments = sizeof...(A);

  // The tensors among the arguments, by position; every other argument is None.
  template <typename T>
  static c10::IValue tensor_only(const T& value) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same_v<U, at::Tensor>) {
      return c10::IValue(value);
    } else if constexpr (std::is_same_v<U, c10::optional<at::Tensor>>) {
      return value.has_value() ? c10::IValue(*value) : c10::IValue();
    } else if constexpr (std::is_same_v<U, at::ITensorListRef> || std::is_same_v<U, at::TensorList>) {
      // cat's and stack's inputs, as the boxed fallback's stack holds them (one allocation)
      c10::List<at::Tensor> list;
      list.reserve(value.size());
      for (const at::Tensor& t : value) list.push_back(t);
      return c10::IValue(std::move(list));
    } else {
      return c10::IValue();
    }
  }

  template <typename F>
  static void for_each_tensor(const R& result, const F& f) {
    using U = std::decay_t<R>;
    if constexpr (std::is_same_v<U, at::Tensor>) {
      f(result, 0);
    } else {
      std::size_t index = 0;
      std::apply([&](const auto&... parts) { ((f(parts, index++)), ...); }, result);
    }
  }

  static const c10::FunctionSchema& schema() {
    static const c10::FunctionSchema& s =
        c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name).schema();
    return s;
  }

  static R call(c10::DispatchKeySet keys, A... args) {
    if (OpOverride* o = current_override(); o != nullptr) [[unlikely]] {  // Note [Op overrides]
      static const c10::OperatorHandle kHandle =
          c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
      ::torch::jit::Stack stack = c10::impl::boxArgs<A...>(std::forward<A>(args)...);
      call_override(*o, kHandle, keys, &stack);
      if constexpr (std::is_lvalue_reference_v<R>) {
        return std::get<0>(std::forward_as_tuple(args...));  // in-place ops return self
      } else {
        return c10::impl::PopResult<R>::call(stack);
      }
    }
    AttachState* s = live_attachment().load(std::memory_order_acquire);
    std::optional<c10::impl::ExcludeDispatchKeyGuard> outer_only;  // Note [Outer ops only]
    if (s == nullptr || !s->options.nested_ops) outer_only.emplace(kModeKey);
    if constexpr (!kObserve) {
      return Op::redispatch(keys & kAfterMode, std::forward<A>(args)...);
    } else {
      if (s == nullptr || !s->in_step.load(std::memory_order_relaxed)) {
        return Op::redispatch(keys & kAfterMode, std::forward<A>(args)...);
      }
      ThreadState& t = thread_state();
      OpCall call;
      {
        const std::array<c10::IValue, kArguments> tensors{tensor_only(args)...};
        begin_op(*s, t, schema(), tensors, call);
      }
      const std::uint64_t first_sequence = at::sequence_number::peek();
      const EnclosingOp enclosing(*s, t, call);
      R result = Op::redispatch(keys & kAfterMode, std::forward<A>(args)...);
      after_op(*s, t, call, first_sequence, [&](const auto& observe) { for_each_tensor(result, observe); });
      return result;
    }
  }

  static void register_in(::torch::Library& library) {
    // describe_op is the one decision (Note [Nothing to observe]): a quiet kernel for an op it
    // does not clear is left out, and the boxed fallback observes that op.
    if constexpr (!kObserve) {
      if (!describe_op(schema()).nothing_to_observe) return;
    }
    std::string name = std::string(Op::name).substr(std::string_view("aten::").size());
    if (std::string_view(Op::overload_name).size() > 0) name += std::string(".") + Op::overload_name;
    library.impl(name.c_str(), ::torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(call)));
  }
};

// Each registration on its own: an op this LibTorch lacks or rejects stays with on_op.
template <bool kObserve, class... Ops>
void register_unboxed(::torch::Library& library) {
  (
      [&] {
        try {
          Unboxed<Ops, kObserve>::register_in(library);
        } catch (const std::exception&) {
          // Left to on_op: the op is observed all the same, through the boxed fallback.
        }
      }(),
      ...);
}

}  // namespace

// Note [Unboxed hot ops]: what the demo model's step and Adam (with optimizer_ops) call most, and
// the other common activations and losses.
void register_hot_ops(::torch::Library& library) {
  register_unboxed<
      /*kObserve=*/true, at::_ops::add_Tensor, at::_ops::add__Tensor, at::_ops::sub_Tensor,
      at::_ops::mul_Tensor, at::_ops::mul__Tensor, at::_ops::mul__Scalar, at::_ops::div_Tensor,
      at::_ops::div_Scalar, at::_ops::mm, at::_ops::bmm, at::_ops::matmul, at::_ops::addmm, at::_ops::linear,
      at::_ops::sum_dim_IntList, at::_ops::mean_dim, at::_ops::clone, at::_ops::_unsafe_view,
      at::_ops::layer_norm, at::_ops::native_layer_norm_backward, at::_ops::relu, at::_ops::gelu,
      at::_ops::gelu_backward, at::_ops::threshold_backward, at::_ops::tanh, at::_ops::tanh_backward,
      at::_ops::sigmoid, at::_ops::sigmoid_backward, at::_ops::softmax_int, at::_ops::_softmax_backward_data,
      at::_ops::log_softmax_int, at::_ops::_log_softmax_backward_data, at::_ops::embedding,
      at::_ops::embedding_backward, at::_ops::dropout, at::_ops::cross_entropy_loss,
      at::_ops::nll_loss_backward, at::_ops::sqrt, at::_ops::addcmul_, at::_ops::addcdiv_,
      // the other ops the zoo's models call every step (bench/torch_overhead --model zoo)
      at::_ops::cat, at::_ops::stack, at::_ops::where_self, at::_ops::lt_Scalar, at::_ops::lt_Tensor,
      at::_ops::gt_Scalar, at::_ops::gt_Tensor, at::_ops::ge_Scalar, at::_ops::ge_Tensor, at::_ops::eq_Scalar,
      at::_ops::eq_Tensor, at::_ops::index_select, at::_ops::neg, at::_ops::masked_fill_Scalar,
      at::_ops::masked_fill__Scalar, at::_ops::fill__Scalar, at::_ops::fill__Tensor, at::_ops::add__Scalar,
      at::_ops::mul_Scalar, at::_ops::clamp_min, at::_ops::_to_copy, at::_ops::logical_not, at::_ops::any,
      at::_ops::any_dim, at::_ops::conv2d, at::_ops::convolution_backward, at::_ops::batch_norm,
      at::_ops::native_batch_norm_backward, at::_ops::select_backward, at::_ops::slice_backward>(library);
  // Note [Nothing to observe] (op_info.cpp): the finite factories and the ops that return no tensor.
  register_unboxed</*kObserve=*/false, at::_ops::zeros, at::_ops::zeros_like, at::_ops::new_zeros,
                   at::_ops::ones, at::_ops::ones_like, at::_ops::new_ones, at::_ops::arange,
                   at::_ops::arange_start, at::_ops::arange_start_step, at::_ops::eye, at::_ops::eye_m,
                   at::_ops::rand, at::_ops::rand_generator, at::_ops::randn, at::_ops::randn_generator,
                   at::_ops::randint, at::_ops::randint_generator, at::_ops::randint_low,
                   at::_ops::randint_low_generator, at::_ops::randperm, at::_ops::randperm_generator,
                   at::_ops::rand_like, at::_ops::randn_like, at::_ops::randint_like,
                   at::_ops::randint_like_low_dtype, at::_ops::item, at::_ops::_local_scalar_dense,
                   at::_ops::equal, at::_ops::is_nonzero>(library);
}

}  // namespace tfdebug::torch::detail
