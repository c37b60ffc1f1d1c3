"""The misconception catalogue: one short name per id, shared by feedback and the class report.

Each wrong answer in an exercise names one of these ids and carries its own explanation and
hint, written for that exercise's numbers; the names here let the class report group them.
"""

CATALOGUE: dict[str, str] = {
    "seed_required": "Non-scalar backward() needs a seed vector",
    "seed_is_vjp": "backward(v) computes a vector-Jacobian product, not the derivative",
    "seed_selects_wrt": "The backward argument does not choose what to differentiate with respect to",
    "backward_wrong_tensor": "Calling backward on the input instead of the output",
    "accumulation": "Gradients accumulate across backward calls until zeroed",
    "zero_grad_none": "zero_grad() sets .grad to None, not to zeros",
    "graph_freed": "The graph is freed after backward unless retain_graph=True",
    "nonleaf_grad": ".grad of a non-leaf tensor is None unless retain_grad() is called",
    "accidental_nonleaf": "An operation after requires_grad makes a non-leaf parameter",
    "int_requires_grad": "Only floating-point tensors can require gradients",
    "leaf_inplace": "In-place updates of a leaf that requires grad must run under no_grad",
    "out_of_place_update": "w = w - lr*grad without no_grad makes w a non-leaf",
    "saved_tensor_modified": "In-place change of a tensor saved for backward",
    "data_silent": ".data hides in-place changes from autograd and gives silent wrong gradients",
    "detach_cuts_path": "detach() removes a path from the chain rule",
    "meta_create_graph": "Differentiating through an update step needs create_graph=True",
    "second_derivative_accumulates": "backward(create_graph=True) then backward again adds into .grad",
    "linear_second_derivative": "The second derivative of a linear function is zero, not an error",
    "grad_modes": "no_grad, detach, inference_mode and eval() are different things",
    "tensor_constructor_cuts": "torch.tensor([...]) of tensors copies values and cuts the graph",
    "item_leaves_graph": ".item(), float() and .numpy() leave autograd",
    "fanout_adds": "Gradients from several uses of a tensor add up",
    "mean_scales": "mean() divides the gradient by the number of elements",
    "broadcast_sums": "Broadcasting in the forward pass is a sum in the backward pass",
    "matmul_transpose": "Matrix-product gradients: shapes and transposes",
    "repeated_index": "Repeated indices accumulate gradients",
    "kink_convention": "At a kink, PyTorch picks one specific subgradient per function",
    "max_ties": "Ties in max/min split or route the gradient",
    "where_nan": "torch.where does not protect the backward pass from NaN",
    "norm_at_zero": "sqrt and norm behave differently at zero",
    "unstable_loss": "Hand-written losses overflow where the fused ones do not",
    "gradcheck_precision": "Gradient checks need float64 and fail at kinks",
    "finite_diff_step": "Forward differences and too-small steps are inaccurate",
    "func_grad_scalar": "torch.func.grad needs a scalar output",
    "jacobian_orientation": "Jacobian shape is (outputs, inputs); VJP combines rows, JVP columns",
    "autograd_grad_tuple": "torch.autograd.grad returns a tuple and does not fill .grad",
    "no_graph": "No graph to differentiate: requires_grad set too late or forward under no_grad",
    "one_element_scalar": "A one-element tensor counts as a scalar for backward()",
    # elementary calculus and graph-reading slips
    "chain_rule_dropped": "A factor of the chain rule was dropped",
    "power_rule": "The power rule was misapplied",
    "value_not_derivative": "The function's value was given instead of its derivative",
    "sign_error": "A sign was lost",
    "leaf_definition": "What makes a tensor a leaf",
    "leaf_grad_filled": "backward() fills .grad of every leaf that requires grad",
    "grad_fn_of_leaf": "Leaves have no grad_fn",
    "requires_grad_propagation": "requires_grad propagates from any input to the output",
    "grad_fn_name": "grad_fn is named after the operation that produced the tensor",
    "descent_direction": "Gradient descent steps against the gradient",
    "relu_chain": "The ReLU factor at the corner zeroes the whole chain",
    "local_gradient_only": "Only the local gradient was used, not the whole chain",
    # chapter 2 additions
    "forward_difference": "A forward difference is first-order accurate, a central one second-order",
    "difference_quotient": "A difference quotient divides by the distance between its two points",
    "perturb_one_coordinate": "A partial derivative nudges one coordinate at a time",
    "absolute_error": "Gradient checks compare relative errors, not absolute ones",
    "signed_error": "An error without abs() can be negative and passes every threshold",
    "finite_diff_at_kink": "A central difference straddling a kink averages the two slopes",
    # chapter 3 additions
    "backward_twice_second_derivative": "A second backward() repeats the first derivative",
    "saved_tensors_freed": "Only saved tensors are freed: a graph that saved none runs again",
    "first_backward_kept": "A failed second backward() leaves the first one's gradient in .grad",
    # chapter 4 additions
    "seed_returned": "After y.backward(v), x.grad holds vᵀJ, not the seed v itself",
    "vjp_summed": "A vector-Jacobian product has the input's shape; it is not a dot product",
    "grad_is_jacobian": "backward() never builds the Jacobian; .grad has the input's shape",
    "onehot_seed": "A one-hot seed picks one row of the Jacobian; an all-ones seed sums the rows",
    "control_flow_recorded": "Autograd records the operations that ran: loop passes and branches count",
    # chapter 5 additions
    "xent_onehot": "The cross-entropy gradient on the logits is softmax minus the one-hot target",
    # chapter 6 additions
    "update_not_gradient": "A gradient step returns the new parameter, not the gradient",
    "lr_dropped": "The learning rate scales the gradient in the update",
    "detach_shares_version": "detach() shares storage and the version counter with its source",
    # chapter 7 additions
    "sqrt_slope_at_zero": "sqrt has an infinite slope at 0; clamping its input does not remove it",
    "anomaly_first_nan": "Anomaly mode names the first backward node that outputs NaN",
    # chapter 8 additions
    "hessian_rows": "Row i of the Hessian is the gradient of the i-th gradient entry, not of their sum",
    "quadratic_hessian": "The Hessian of xᵀMx is M + Mᵀ, which is 2M only for symmetric M",
    "hvp_vector": "A Hessian-vector product differentiates g·v once more; v is not applied to g",
    "inner_gradient_reported": "The inner loss's gradient was given instead of the outer loss's",
    "per_sample_summed": "vmap(grad(...)) gives one gradient per sample, not the batch sum",
    "func_grad_argnums": "torch.func.grad differentiates with respect to the first argument",
    # chapter 9 additions
    "custom_saved_output": "A custom backward must compute the derivative from what it saved",
    "softplus_overflow": "log(1 + exp(x)) overflows; nothing exponentiated may be positive",
    "backward_not_differentiable": "A backward built outside autograd cannot be differentiated again",
    "saved_intermediate": "A tensor made inside forward is a constant to double backward",
    "straight_through": "A straight-through backward passes the gradient unchanged; it is not the derivative",
    "backward_none_is_zero": "Returning None from backward means no gradient, not pass-through",
    "custom_grad_order": "backward returns one gradient per forward input, in forward's order",
    "sigmoid_derivative": "The derivative of sigmoid is sigmoid(y)(1 - sigmoid(y))",
    "hook_per_use": "A tensor hook runs once, with the gradients of all uses summed",
    "hook_return_ignored": "A hook changes the gradient only by returning a new one",
    "hook_handle_kept": "A hook stays registered until its own handle is removed",
    "post_accumulate_hook": "A tensor hook sees the incoming gradient, a post-accumulate hook the summed .grad",
    "backward_hook_in_out": "grad_output is the gradient at the module's output, grad_input at its input",
    "clip_value_vs_norm": "Clipping by value clamps each entry; clipping by norm rescales the vector",
    "frozen_param": "A frozen parameter gets no .grad (None) and optimizer.step() skips it",
    "param_group_lr": "Each parameter group steps with its own learning rate",
    "none_vs_zero_step": "A zero .grad still moves a parameter (momentum, weight decay); None skips it",
    "accumulation_not_averaged": "Each micro-batch loss must be divided by the number of micro-batches",
    "clip_returns_total_norm": "clip_grad_norm_ returns the total norm before clipping",
    "clip_norm_global": "clip_grad_norm_ uses one norm over all gradients and one scale factor",
    "logging_keeps_graph": "total_loss += loss keeps every iteration's graph alive",
    "checkpoint_recomputes": "Checkpointing reruns the block's forward during backward",
    "checkpoint_changes_grads": "Checkpointing changes what is stored, not the gradients",
    "checkpoint_keeps_inputs": "A checkpointed block keeps its input to recompute from",
    "saved_per_use": "Each operation saves what its own backward needs, once per operand",
    "jvp_vs_vjp": "Forward mode gives J v; reverse mode gives v^T J",
    "jacfwd_columns": "jacfwd needs one JVP per input, jacrev one VJP per output",
    "unused_grad_none": "An input the output does not use gets a None gradient, not zero",
    "round_zero_gradient": "round, floor and sign have zero gradient almost everywhere",
    "comparison_no_graph": "Comparisons, argmax and integer casts are not recorded: no gradient flows",
    "left_derivative_rule": "PyTorch takes the left derivative at a kink (it does not)",
    "inner_step_skipped": "A step of the forward computation was left out or used alone",
    "not_a_loss": "A mean of signed errors is not a loss: errors cancel and it has no minimum",
    "zero_grad_order": "Gradients zeroed between backward() and the update step",
    "error_purpose": "What an autograd error protects you from",
    "target_not_detached": "A constant target was left in the graph, or the prediction was detached instead",
    "prompt_requirement": "The answer does not do what the prompt requires (dtype, side effects, form)",
    # chapter 10 additions
    "tanh_derivative_input": "tanh'(n) = 1 - tanh(n)²: the output, not the input, is squared",
    "fanout_assign": "A node used several times must add (+=) each use's gradient, not assign",
    "topo_order": "backward must visit nodes in reverse topological order, each once, when complete",
    "engine_not_zeroed": "An engine's backward must start every gradient in the graph from zero",
    "local_derivative": "One operation's local derivative is wrong",
    "xent_softmax_only": "Cross-entropy's gradient at the logits is softmax minus one-hot",
    "xent_wrt_probs": "The gradient with respect to the probabilities is not the one at the logits",
    "xent_mean_dropped": "A mean loss puts 1/N into every gradient",
    "relu_mask_missing": "ReLU's backward passes the gradient only where its input was positive",
    "loop_several_bugs": "Several bugs of a training loop left in",
    "derivative_order_off": "One derivative order off: a derivative one order too high or too low",
}


def name(misconception_id: str) -> str:
    return CATALOGUE.get(misconception_id, misconception_id)


# the generic slips the judge recognises without a listed wrong answer (autograder.judge.GENERIC)
def _generic() -> dict[str, str]:
    from autograder.judge import GENERIC

    return {slip: name for slip, (name, _, _) in GENERIC.items()}


CATALOGUE.update(_generic())
