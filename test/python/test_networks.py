"""Whole networks (test/python/networks.py), exported for real by Keras 3 on JAX, Flax and
Equinox, folded with the public API, and held to issue 18's rules. docs/dev/networks.md lists
the same table, with the reason for every norm op left.

For each network and export variant, against the table below (and for weights passed as
arguments, folded again with `fold-larger-weight-arguments=true`, against EXPECTED_LARGER):

- `norm_ops` / `left`: how many norm ops the export has before and after folding, exactly;
- `activation_ops`: how many activation-sized ops the folded network has, exactly, and
  never more than the original; the report's `activation_ops_removed` is the difference;
- `folds`: how many folds the report counts;
- the folded module has no more ops than the original, counting every op (parameter
  arithmetic in the graph included; not asked of `fold-larger-weight-arguments`, which
  scales the weights in the graph whatever it costs), and fewer activation-sized ops when
  the report counts a fold;
- the weights stay parameters: every linear op that read weights (constants or weight
  arguments) still reads a value computed from weights only, never from the data;
- the folded network computes what the original computes, through XLA on the CPU.

What is counted, in `@main` (private functions a call reaches are not looked into; a call's
result depends on the data when an operand does; the data input is `@main`'s last
argument):

- *data-dependent*: a value computed from the data input. Sizes are not values: the shape
  operand of a `dynamic_broadcast_in_dim` and `shape` dialect ops (torch-mlir reads the
  activation's shape before each step of a symbolic batch) make nothing data-dependent.
- *activation-sized*: an op whose (single, ranked tensor) result is data-dependent and has,
  apart from dimension 0 (the batch), at least two dimensions larger than one: a feature
  map (H, W, C) or a sequence (T, D). A per-example vector (a squeeze-excite gate, pooled
  features, logits) or a per-token statistic (T, 1) is not. The size rule is the
  package's (`analysis.activations.activation_sized`, what the report's
  `activation_ops_removed` counts).
- *norm op*: an activation-sized `batch_norm_inference`, or an activation-sized multiply,
  divide, subtract or add with exactly one data-independent operand that is a per-feature
  value: broadcast (through broadcast_in_dim, dynamic_broadcast_in_dim, reshape, convert)
  from a tensor with exactly one dimension larger than one. An add whose other
  operand is a linear op's result (seen through convert and reshape) is a bias add and
  not a norm op; scalars (GELU's 0.5, attention's 1/sqrt(d)) and maps (an average pool's
  divisor per window position, H x W) are not per-feature. So a
  batch norm, a norm's scale and shift, an input normalization and a layer scale are norm
  ops; a squeeze-excite gate (data-dependent) is not.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import helpers
import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir
from networks import EQUINOX, FLAX, KERAS, TORCHVISION, Variant, export_network, run

import stablehlo_bnfold
from stablehlo_bnfold.analysis.activations import activation_sized
from stablehlo_bnfold.io import load, make_context
from stablehlo_bnfold.report import describe_location
from stablehlo_bnfold.verification import TOLERANCE

pytestmark = pytest.mark.networks

BF16_DTYPE = np.dtype(ml_dtypes.bfloat16)
C, A = "constants", "arguments"
ST, SY = "static", "symbolic"
F32, MIXED, BF16 = "f32", "mixed_bf16", "bf16"


@dataclass(frozen=True)
class Expected:
    """What one network in one variant must give (see the module docstring): norm ops in
    the export, norm ops left after folding, activation-sized ops after folding, folds in
    the report."""

    norm_ops: int
    left: int
    activation_ops: int
    folds: int


# (network, Variant(weights, batch, dtype)): Expected(norm_ops, left, activation_ops, folds).
# Why each norm op left stays: the comment under its line, and docs/dev/networks.md. "issue 18:"
# marks a fold issue 18 asks for that is still missing.
EXPECTED: dict[tuple[str, Variant], Expected] = {
    # Keras: each BatchNormalization is 2 norm ops (x * inv + shift); an input Normalization
    # 2 (subtract, divide); a LayerNormalization 2 (rsqrt * gamma, + beta); a layer scale 1.
    ("keras_efficientnet_b0", Variant(C, ST, F32)): Expected(100, 2, 179, 68),
    # left: the input Normalization (a pad follows it, not a linear op). The 16
    # squeeze-excite gates are computed from the data: not folded into the projections.
    # Each squeeze's mean 1 / (H * W) folds into the excite convolution through the
    # reshape to 1x1xC (16 folds, on C-sized values; with a symbolic batch through the
    # `dynamic_reshape`, which keeps the channels whole).
    ("keras_efficientnet_b0", Variant(A, ST, F32)): Expected(100, 66, 213, 17),
    # left: 64 more, the 32 BNs (mul, add) whose kernels (arguments) have more elements
    # than their 64x64-image activations at batch 1 ("weights the graph would scale or
    # contract on every call have more elements than the activation"): scaled on every call
    # they would cost more than the norm ops they remove (fold-larger-weight-arguments
    # folds them, EXPECTED_LARGER). One add more stays: block1a_project_bn's shift, whose
    # scale folds back into its projection, before block2a's expanding convolution: folded
    # forward it would be contracted with that kernel (an argument) on every call, three
    # ops for its add and broadcast ("folding in the graph would build more ops than it
    # removes"; the total stays 1427 ops, 1447 with it folded).
    ("keras_efficientnet_b0", Variant(C, SY, F32)): Expected(100, 2, 179, 68),
    ("keras_efficientnet_b0", Variant(C, ST, MIXED)): Expected(100, 2, 197, 50),
    # left: the input Normalization. The depthwise BNs fold through the kernel's
    # reshape(convert(W_f32)): the f32 master seen through the reshape.
    ("keras_mobilenet_v2", Variant(C, ST, F32)): Expected(104, 0, 151, 55),
    ("keras_mobilenet_v2", Variant(A, ST, MIXED)): Expected(104, 58, 242, 23),
    # left: 58, the BNs whose kernels (arguments) are larger than their activations, as
    # above. One add more: a shift an output-side fold keeps before the next convolution is
    # not contracted with its kernel in the graph (more ops than it removes, as above).
    # The 17 depthwise BNs fold as convert(reshape(W_f32) * s): the kernel is a reshape of
    # its bf16 convert, the f32 master argument reshaped before it is scaled.
    ("keras_mobilenet_v3_small", Variant(C, ST, F32)): Expected(68, 1, 119, 64),
    # left: the Rescaling's shift in front of the padded stem convolution.
    ("keras_mobilenet_v3_small", Variant(A, SY, F32)): Expected(68, 52, 147, 17),
    # left: 52, BNs whose kernels are larger than their activations, the symbolic batch
    # counted as 1 (the smallest it can be). One add more stays, a shift alone before a
    # convolution, as in EfficientNetB0 (more ops than it removes: 1636 ops with it, 1620
    # without).
    # issue 21: 9 more folds, the squeeze-excite gates' hard sigmoid relu6(x + 3) * (1 / 6):
    # the 1 / 6 goes into the expanding convolution through jax.nn.relu6's call (an inline
    # clamp with the bounds moved; the gates are not activation-sized).
    ("keras_resnet50", Variant(C, ST, F32)): Expected(106, 0, 174, 107),
    ("keras_resnet50", Variant(A, SY, F32)): Expected(106, 90, 264, 16),
    # left: 90, BNs whose kernels are larger than their activations (batch counted as 1).
    ("keras_resnet50", Variant(C, ST, MIXED)): Expected(106, 0, 176, 54),
    ("keras_resnet50_v2", Variant(C, ST, F32)): Expected(98, 17, 210, 50),
    # left: the 17 pre-activation BNs' shifts (16 before a conv, post_bn before the global
    # average pool and Dense), one add x + t / s each before the ReLU: their scales fold
    # forward into the linear ops after it (negative ones turn the ReLU into a clamp).
    ("keras_densenet121", Variant(C, ST, F32)): Expected(242, 62, 426, 125),
    # left: the 62 pre-activation BNs' shifts (the last before the global average pool),
    # one add each before the ReLU. Each transition's average pool divide (by 4) folds
    # back into its 1x1 convolution through the sum pool (3 folds, 3 ops fewer; issue 21).
    ("keras_densenet121", Variant(C, SY, F32)): Expected(242, 62, 426, 125),
    ("keras_inception_v3", Variant(C, ST, F32)): Expected(188, 0, 319, 95),
    ("keras_convnext_tiny", Variant(C, ST, F32)): Expected(64, 44, 1630, 37),
    # left: 22 LayerNormalizations (gamma multiplied into the per-token rsqrt: not a
    # candidate).
    ("keras_convnext_tiny", Variant(C, SY, F32)): Expected(64, 44, 1630, 37),
    # left: the same 22 LayerNormalizations.
    # Flax: each BatchNorm is 3 norm ops ((x - mean) * (rsqrt(var + eps) * scale) + bias), a
    # LayerNorm 2 (* scale, + bias), an RMSNorm 1 (* scale).
    ("flax_resnet", Variant(C, ST, F32)): Expected(18, 0, 19, 19),
    ("flax_resnet", Variant(A, ST, F32)): Expected(18, 6, 23, 12),
    # left: block 2's two BNs (6), kernels larger than their activations; their mean
    # subtraction stays too (alone it would only become an add of 0 - mean in the graph).
    ("flax_resnet", Variant(C, SY, F32)): Expected(18, 0, 19, 19),
    ("flax_resnet", Variant(A, SY, F32)): Expected(18, 6, 23, 12),
    # left: 6, as with a static batch. The two means' subtractions stay too: alone each
    # would only become add(conv, dynamic_broadcast_in_dim(0 - mean)), a fold that removes
    # no op.
    ("flax_resnet", Variant(C, ST, MIXED)): Expected(18, 0, 21, 7),
    ("flax_resnet", Variant(A, SY, MIXED)): Expected(18, 6, 29, 4),
    # left: 6, as above (batch counted as 1).
    ("flax_resnet", Variant(C, ST, BF16)): Expected(18, 0, 20, 19),
    # One fold more than the norms (C-sized, no norm op): the global average pool's divide,
    # computed in f32 between converts, folds into the classifier's bf16 weights (stored
    # only in bf16: "rounded again in bf16", `fold-narrow-weights`; one op fewer).
    ("flax_se_net", Variant(C, ST, F32)): Expected(21, 0, 24, 24),
    ("flax_se_net", Variant(A, ST, F32)): Expected(21, 0, 24, 21),
    # 3 folds fewer, C-sized (no norm op): the squeeze-excite Dense layers' scalings, their
    # weights larger than the pooled vectors they read.
    ("flax_se_net", Variant(C, SY, F32)): Expected(21, 0, 24, 24),
    ("flax_se_net", Variant(C, ST, MIXED)): Expected(21, 0, 28, 10),
    ("flax_preact_resnet", Variant(C, ST, F32)): Expected(15, 2, 18, 10),
    # left: the shifts of the 3 pre-activation BNs (block 2's and the last, before the
    # global average pool; block 1's is added to the stem convolution, a bias add), one add
    # x + t / s each before the ReLU: their scales fold forward (issue 21).
    ("flax_preact_resnet", Variant(C, SY, F32)): Expected(15, 2, 18, 10),
    ("flax_preact_resnet", Variant(A, ST, F32)): Expected(15, 12, 26, 3),
    # left: the 3 pre-activation BNs (9): their scales are arguments, of unknown sign, and
    # a ReLU follows ("per-channel scale or shift is not a constant: the scale's sign is
    # unknown"); and block 2's second BN (3), its kernel larger than its activation.
    ("flax_weight_norm", Variant(C, ST, F32)): Expected(6, 0, 6, 7),
    # Both BNs fold into their weight-normalized kernels g * v / |v|, computed from
    # constants: the fold scales the computed kernel (and the pool's divide folds into
    # the classifier).
    ("flax_weight_norm", Variant(A, ST, F32)): Expected(6, 3, 8, 3),
    # left: the strided block's BN (3): its kernel, computed from arguments, is larger
    # than its activation at batch 1 (the cost rule).
    ("flax_repnet", Variant(C, ST, F32)): Expected(51, 0, 18, 52),
    # Each block's branches merged into one convolution + bias add (6 convolutions, what
    # the blocks' deploy form has), the identity branches' batch norms folded into them;
    # unmerged, the 3 identity norms stay (9 ops) and 54 activation-sized ops.
    ("flax_repnet", Variant(C, SY, F32)): Expected(51, 0, 18, 52),
    ("flax_repnet", Variant(C, ST, MIXED)): Expected(51, 0, 20, 24),
    # The identity norms computed in f32 between converts merge as the others do.
    ("flax_repnet", Variant(A, ST, F32)): Expected(51, 9, 36, 42),
    # left: 9, the BNs of the three 3x3 convolutions whose kernels (arguments) are larger
    # than their activations at batch 1 (the cost rule). The branches whose norms folded
    # merge in the graph (the smaller kernels padded and added to the host's on every call,
    # the identity norms' scales computed from their statistics): 4 sums, RepVGG's first
    # block's 3x3 and 1x1, the second's 1x1 and identity, MobileOne's two stages whole;
    # ACNet's 1x3 and 3x1 alone do not merge (unmerged: 18 left, 60 activation-sized ops).
    ("flax_vit_layer", Variant(C, ST, F32)): Expected(4, 0, 45, 4),
    ("flax_vit_layer", Variant(A, ST, F32)): Expected(4, 4, 51, 0),
    # left: both LayerNorms: each Dense kernel (arguments) is larger than the tokens at
    # batch 1.
    ("flax_vit_layer", Variant(C, SY, F32)): Expected(4, 1, 47, 3),
    # left: LayerNorm 1's shift, kept as one add x + t / s before q, k and v ("folding
    # would add as many activation-sized ops as it removes": with a symbolic batch it does
    # not merge into the [heads, head_dim] biases as with a static one).
    ("flax_vit_layer", Variant(C, ST, MIXED)): Expected(4, 2, 53, 4),
    # left: both LayerNorms' shifts, kept in f32 before the narrowing convert as one add
    # x + t / s each (as a bias after the bf16 Dense they would cancel at the size of x);
    # their scales fold.
    ("flax_prenorm_transformer", Variant(C, ST, F32)): Expected(4, 0, 50, 3),
    ("flax_prenorm_transformer", Variant(A, SY, F32)): Expected(4, 4, 55, 0),
    # left: both LayerNorms, as above (batch counted as 1).
    ("flax_prenorm_transformer", Variant(C, ST, BF16)): Expected(4, 2, 60, 3),
    # left: both LayerNorms' shifts, kept in f32 before the narrowing convert as one add
    # x + t / s each, as in the mixed rows; their scales, computed in f32, fold into the
    # Dense layers whose weights are stored only in bf16, W * s rounded to bf16 again
    # (`fold-narrow-weights`, the report's "rounded again in bf16"). With
    # fold-narrow-weights=false: Expected(4, 4, 62, 1), "weights have no wider master copy".
    ("flax_llama", Variant(C, ST, F32)): Expected(2, 0, 37, 2),
    ("flax_llama", Variant(A, ST, F32)): Expected(2, 2, 39, 0),
    # left: both RMSNorm scales, as above.
    ("flax_llama", Variant(C, SY, F32)): Expected(2, 0, 37, 2),
    ("flax_llama", Variant(A, ST, BF16)): Expected(2, 2, 47, 0),
    # left: both RMSNorm scales, computed in f32 before Dense layers whose weights are
    # bf16 arguments, with no wider master ("weights have no wider master copy").
    ("flax_levit", Variant(C, ST, F32)): Expected(6, 0, 35, 4),
    # issue 21: each Dense -> reshape / transpose -> BatchNorm folds whole into the Dense
    # layer through the reshape or transpose. The flattened form's norm ops ([B * T, C])
    # are not activation-sized by the rule above; the channels-first form's 6 are.
    ("flax_levit", Variant(A, ST, F32)): Expected(6, 6, 39, 0),
    # left: the 6 channels-first norm ops ("weights the graph would scale or contract on
    # every call have more elements than the activation": each Dense kernel, an argument,
    # is two to four times its norm's activation at batch 1; with
    # fold-larger-weight-arguments they fold, the statistics computed in the graph:
    # EXPECTED_LARGER).
    ("flax_levit", Variant(C, SY, F32)): Expected(6, 0, 37, 4),
    # the flattened form through a dynamic_reshape; its pair stays (no identity pattern
    # for dynamic reshapes).
    ("flax_levit", Variant(C, ST, MIXED)): Expected(6, 0, 43, 4),
    # issue 21: each norm, computed in f32 between the bf16 Dense layer's converts, folds
    # into the Dense layer through the reshape or transpose in bf16 below the widening
    # convert (the f32 master weights scaled and rounded to bf16 once).
    # Equinox: each BatchNorm(mode="batch") is 4 norm ops ((x - mean / d) / sqrt(var / d +
    # eps) * weight + bias), d = where(count == 0, 1, 1 - 0.99 ** count) from the counter in
    # its state (compare, power, call @_where): a parameter computed through any ops.
    ("equinox_resnet", Variant(C, ST, F32)): Expected(16, 0, 21, 17),
    ("equinox_resnet", Variant(A, ST, F32)): Expected(16, 4, 24, 12),
    # left: the strided convolution's BN (4): its kernel (an argument, 1152 elements) is
    # larger than its activation (16x8x8 at batch 1).
    ("equinox_resnet", Variant(C, SY, F32)): Expected(16, 0, 29, 5),
    # jax's vmap puts a dynamic_reshape pair (?x8x16x16 -> ?x1x8x16x16 -> back) between
    # each convolution and its BN, which the output side does not see through; the BNs fold
    # forward instead, through the relu into the next convolution.
    ("equinox_resnet", Variant(A, SY, F32)): Expected(16, 16, 41, 0),
    # left: all 16, behind the dynamic_reshape pairs as above ("no convolution or
    # dot_general next to the chain"), and forward the scales are arguments of unknown sign
    # before a relu.
    # torchvision through torch-mlir (test/testdata/torchvision): each BatchNorm2d is 4 norm
    # ops ((x - mean) * rsqrt(var + eps) * weight + bias).
    ("torchvision_densenet", Variant(C, ST, F32)): Expected(84, 12, 74, 53),
    # left: the 12 pre-activation BNs keep their shift as one add x + t / s each before
    # the ReLU (their scales fold forward, issue 21): 11 before a convolution, and the last
    # one -> ReLU -> pool -> Linear, whose weights, a `transpose` of a constant, are
    # constant weights (W^T * s one new constant). The pool's divide folds into the Linear
    # through the reshapes (one fold). Each transition's average pool divide folds back
    # into its convolution through the sum pool (3 folds, 3 ops fewer; issue 21).
    ("torchvision_densenet", Variant(C, SY, F32)): Expected(84, 12, 89, 50),
    # left: as with a static batch, the 12 pre-activation BNs keep one add x + t / s each
    # (torch-mlir's broadcasts of each step onto its own shape are removed, its shape reads
    # are no users). The last one's scale passes the pool's `dynamic_reshape`s (they keep
    # the channels whole; the first reads the batch size from the ReLU, which stays) and
    # the broadcast onto its own shape, after the pool's divide by a broadcast scalar
    # folds into the Linear the same way.
    ("torchvision_efficientnet", Variant(C, ST, F32)): Expected(88, 0, 83, 97),
    # The average pool's divide folds into the classifier through the flattening reshape.
    ("torchvision_mobilenet_v3", Variant(C, ST, F32)): Expected(136, 0, 177, 168),
    # The same, and hardswish's / 6 before the pool into the classifier through the pool's
    # sum and reshapes (one activation-sized op fewer).
    ("torchvision_regnet_y", Variant(C, ST, F32)): Expected(92, 0, 83, 100),
    # The average pool's divide, as in EfficientNet.
    ("torchvision_regnet_y", Variant(C, SY, F32)): Expected(92, 0, 101, 100),
    # The average pool's divide too, through the flattening `dynamic_reshape`.
}

LARGER = "fold-larger-weight-arguments=true"
"""The pass option for backends that need every linear op + bias form, whatever it costs."""

# The rows above whose folds the cost rule refuses, folded with LARGER: what issue 18 asked
# of weights passed as arguments (the graph scales them on every call).
EXPECTED_LARGER: dict[tuple[str, Variant], Expected] = {
    ("keras_efficientnet_b0", Variant(A, ST, F32)): Expected(100, 2, 179, 68),
    ("keras_mobilenet_v2", Variant(A, ST, MIXED)): Expected(104, 0, 153, 53),
    ("keras_mobilenet_v3_small", Variant(A, SY, F32)): Expected(68, 0, 120, 63),
    ("keras_resnet50", Variant(A, SY, F32)): Expected(106, 0, 174, 107),
    ("flax_resnet", Variant(A, ST, F32)): Expected(18, 0, 19, 19),
    ("flax_resnet", Variant(A, SY, MIXED)): Expected(18, 0, 21, 7),
    ("flax_se_net", Variant(A, ST, F32)): Expected(21, 0, 24, 24),
    ("flax_preact_resnet", Variant(A, ST, F32)): Expected(15, 9, 24, 7),
    ("flax_vit_layer", Variant(A, ST, F32)): Expected(4, 0, 45, 4),
    ("flax_prenorm_transformer", Variant(A, SY, F32)): Expected(4, 0, 50, 3),
    ("flax_llama", Variant(A, ST, F32)): Expected(2, 0, 37, 2),
    ("flax_levit", Variant(A, ST, F32)): Expected(6, 0, 35, 4),
    # each norm, its statistics arguments, through the reshape or transpose into the Dense
    # layer, computed in the graph (it stayed: "only constants pass a reshape").
}


# --- analysis ---------------------------------------------------------------------------

LINEAR_OPS = (*helpers.LINEAR_OPS, "stablehlo.dot")


@dataclass(frozen=True)
class Counts:
    """What `count` found in one module."""

    norm_ops: tuple[str, ...]
    """The location of each norm op, as the report writes it."""
    activation_ops: int
    weighted_linear_ops: collections.Counter
    """(op name, result type) of each data-dependent linear op that also reads a
    data-independent operand (its weights), counted."""
    data_only_linear_ops: collections.Counter
    """The same of each linear op that reads the data only (attention's q . k)."""
    total_ops: int
    """Every op of the module, in every function and region (the module itself aside):
    what the folded graph computes on every call, parameter arithmetic included."""
    not_literal: tuple[str, ...]
    """Each weight operand of such a linear op that is not one `stablehlo.constant`, and
    each bias of a bias add that is not one broadcast (static or dynamic) of one: its op
    name and location (`_not_literal`)."""


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _see_through(value: ir.Value) -> ir.Value:
    while (op := _owner(value)) is not None and op.name in helpers._SEE_THROUGH:
        value = op.operands[0]
    return value


def count(module: ir.Module) -> Counts:
    """Norm ops, activation-sized ops and weighted linear ops of `module`'s `@main` (with a
    symbolic batch, of the `@_wrapped_jax_export_main` it calls, whose first argument is
    the batch size and last the data)."""
    functions = {op.sym_name.value: op for op in module.body.operations}
    main = functions.get("_wrapped_jax_export_main", functions["main"])
    block = main.regions[0].blocks[0]
    data = block.arguments[len(block.arguments) - 1]
    dependent: set = set()

    def depends(value: ir.Value) -> bool:
        return value == data or _owner(value) in dependent

    norm_ops: list[str] = []
    activation_ops = 0
    weighted: collections.Counter = collections.Counter()
    data_only: collections.Counter = collections.Counter()
    not_literal: list[str] = []
    pending = list(block.operations)
    while pending:
        item = pending.pop(0)
        if isinstance(item, _Yielded):
            if any(depends(v) for v in item.terminator.operands):
                dependent.add(item.assuming)
            continue
        op = item.operation
        if op.name == "shape.assuming":
            # torch-mlir's symbolic batch wraps steps in `shape.assuming` regions: their ops
            # count where they stand, and the op's results are what its region yields.
            inner = list(op.regions[0].blocks[0].operations)
            pending[:0] = [*inner, _Yielded(op, inner[-1])]
            continue
        if op.name.startswith("shape."):
            continue  # sizes, not values: torch-mlir's shape_of of the activation
        # A dynamic broadcast's shape operand is sizes too (read from the activation by
        # torch-mlir, from the batch-size argument by jax.export).
        operands = op.operands[:1] if op.name == "stablehlo.dynamic_broadcast_in_dim" else op.operands
        depending = [depends(v) for v in operands]
        if not any(depending):
            continue
        dependent.add(op)
        if op.name in LINEAR_OPS:
            (data_only if all(depending) else weighted)[(op.name, str(op.results[0].type))] += 1
        not_literal.extend(_not_literal(op, operands, depending))
        if len(op.results) != 1 or not activation_sized(op.results[0]):
            continue
        activation_ops += 1
        if _is_norm_op(op, depending):
            norm_ops.append(describe_location(op.location))
    return Counts(
        tuple(norm_ops), activation_ops, weighted, data_only, _total_ops(module.operation), tuple(not_literal)
    )


def _total_ops(op: ir.Operation) -> int:
    """The ops nested in `op`'s regions, at every depth."""
    total = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                total += 1 + _total_ops(inner.operation)
    return total


@dataclass(frozen=True)
class _Yielded:
    """Marks the end of a `shape.assuming` region in `count`'s walk."""

    assuming: ir.Operation
    terminator: ir.OpView


def _not_literal(op: ir.Operation, operands, depending: list[bool]) -> list[str]:
    """For a data-dependent linear op: its data-independent operands (weights) that are not
    one `stablehlo.constant`. For a bias add (an add of a linear op's result, seen through
    convert and reshape, and a data-independent value): that value, when it is not a
    constant or a broadcast of one. Each as its op name and location."""
    if op.name in LINEAR_OPS:
        weights = [v for v, d in zip(operands, depending) if not d]
    elif op.name == "stablehlo.add" and sum(depending) == 1:
        activation = _owner(_see_through(operands[depending.index(True)]))
        if activation is None or activation.name not in LINEAR_OPS:
            return []
        weights = [operands[depending.index(False)]]
        owner = _owner(weights[0])
        if owner is not None and owner.name in _BROADCASTS:
            weights = [owner.operands[0]]
    else:
        return []
    where = f"{op.name} at {describe_location(op.location)}"
    found = []
    for value in weights:
        owner = _owner(value)
        if owner is None or owner.name != "stablehlo.constant":
            found.append(f"{where} reads {owner.name if owner else 'an argument'}")
    return found


_BROADCASTS = ("stablehlo.broadcast_in_dim", "stablehlo.dynamic_broadcast_in_dim")


def _is_norm_op(op: ir.Operation, depending: list[bool]) -> bool:
    if op.name == "stablehlo.batch_norm_inference":
        return True
    if op.name not in helpers.AFFINE_OPS or sum(depending) != 1:
        return False
    source = _see_through(op.operands[depending.index(False)])
    if sum(n != 1 for n in ir.RankedTensorType(source.type).shape) != 1:
        return False
    activation = _owner(_see_through(op.operands[depending.index(True)]))
    return not (op.name == "stablehlo.add" and activation is not None and activation.name in LINEAR_OPS)


# --- the cases --------------------------------------------------------------------------


@dataclass(frozen=True)
class Folded:
    """One network, exported, folded, and counted before and after."""

    network: object
    folded: object
    report: stablehlo_bnfold.FoldReport
    before: Counts
    after: Counts


def _counts(exported) -> Counts:
    data = exported if isinstance(exported, str) else exported.mlir_module_serialized
    with make_context() as context:
        return count(load(data, context).module)


def fold_network(name: str, variant: Variant, options: str = "") -> Folded:
    """`name` exported in `variant`, folded with the pass `options`, and counted before
    and after."""
    network = export_network(name, variant)
    folded, report = stablehlo_bnfold.fold_batch_norm(network.exported, with_report=True, options=options)
    return Folded(network, folded, report, _counts(network.exported), _counts(folded))


CASES = [(name, variant, "") for name, variant in EXPECTED] + [
    (name, variant, LARGER) for name, variant in EXPECTED_LARGER
]


def _id(case) -> str:
    name, variant, options = case
    return f"{name}-{variant}" + ("-larger" if options else "")


def expected(key: tuple[str, Variant, str]) -> Expected:
    """The row of `key` = (network, variant, pass options)."""
    name, variant, options = key
    return (EXPECTED_LARGER if options else EXPECTED)[name, variant]


@pytest.fixture(scope="module", params=CASES, ids=_id)
def case(request):
    """One (network, variant, options) at a time: pytest runs every test of a case before
    it builds the next, so one network's weights are held at a time."""
    name, variant, options = request.param
    return request.param, fold_network(name, variant, options)


def test_every_network_the_issue_names_is_in_the_table():
    names = {name for name, _ in EXPECTED}
    assert names == set(KERAS) | set(FLAX) | set(EQUINOX) | set(TORCHVISION)
    variants = {v for _, v in EXPECTED}
    assert {v.weights for v in variants} == {C, A}
    assert {v.batch for v in variants} == {ST, SY}
    assert {v.dtype for v in variants} == {F32, MIXED, BF16}


def test_the_norm_ops_left_after_folding_are_the_expected_ones(case):
    key, folded = case
    row = expected(key)
    counts = (len(folded.before.norm_ops), len(folded.after.norm_ops))
    assert counts == (row.norm_ops, row.left), f"left: {folded.after.norm_ops}"


def test_the_report_counts_the_expected_folds(case):
    key, folded = case
    assert folded.report.folded == expected(key).folds


def test_activation_sized_ops_never_increase_and_match_the_table(case):
    key, folded = case
    assert folded.after.activation_ops <= folded.before.activation_ops
    assert folded.after.activation_ops == expected(key).activation_ops
    # The report counts them the same way, in every function (those of private
    # functions, not counted here, do not change).
    removed = folded.before.activation_ops - folded.after.activation_ops
    assert folded.report.summary()["activation_ops_removed"] == removed


def test_no_fold_adds_ops_and_a_folded_network_has_fewer_activation_sized_ops(case):
    # Every reported fold removes an activation-sized op, and none adds ops in all, in
    # every export form: folds in the graph (weights as arguments) build weight- and
    # C-sized ops for the ones they remove. What one fold removes cannot be told apart
    # in the folded module; what they remove together can. With
    # fold-larger-weight-arguments the weights are scaled in the graph whatever it costs
    # (a multiply per linear op that reads a norm): only the activation-sized ops count.
    (_, _, options), folded = case
    if not options:
        assert folded.after.total_ops <= folded.before.total_ops
    if folded.report.folded:
        assert folded.after.activation_ops < folded.before.activation_ops


def test_weights_stay_parameters_of_every_linear_op(case):
    _, folded = case
    # A linear op that read weights and the data before folding (counted by op name and
    # result type: folding changes neither) must still read a data-independent operand.
    assert folded.before.weighted_linear_ops
    lost = folded.before.weighted_linear_ops - folded.after.weighted_linear_ops
    # Parallel branches merged leave one convolution of several, with literal weights.
    # Parallel branches merged leave one convolution of several (at most branches - 1 go
    # per merge); none of those left reads only the data.
    merged = sum(m.branches - 1 for m in folded.report.merges if not m.reason)
    assert sum(lost.values()) <= merged, f"linear ops whose weights now depend on the data: {dict(lost)}"
    gained = folded.after.data_only_linear_ops - folded.before.data_only_linear_ops
    assert not gained, f"linear ops whose weights now depend on the data: {dict(gained)}"


def test_every_linear_op_reads_literal_weights_and_bias_where_weights_are_constants(case):
    (name, variant, _), folded = case
    if variant.weights != C:
        pytest.skip("weights passed as arguments stay computed in the graph")
    # Every one, ConvNeXt's stem too: the input Normalization folded into it leaves
    # W * (1 / max(sqrt(var), eps)) and the bias b + L(t, W), a dot_general reading W as
    # well (evaluated together); and the weight-normalized kernels g * v / |v|, |v| a reduce.
    left = folded.after.not_literal
    assert not left, "\n".join(left)


# Relative to the largest output, by the type the network computes in. bf16 (pure or
# mixed, whatever the output type: a mixed network's f32 output carries its bf16
# roundings): `stablehlo_bnfold.verify`'s 4 ulps of 1.0. f32: 1e-5, not verify's 1e-6: a
# whole network adds up roundings over tens of layers (the folded ResNet50 with a symbolic
# batch differs by 1.1e-6).
NETWORK_TOLERANCE = {F32: 1e-5, MIXED: TOLERANCE[BF16_DTYPE], BF16: TOLERANCE[BF16_DTYPE]}


def test_the_folded_network_computes_what_the_original_computes(case):
    (_, variant, _), folded = case
    arguments = folded.network.arguments(seed=3)
    reference = run(folded.network.exported, arguments)
    actual = run(folded.folded, arguments)
    assert actual.shape == reference.shape and actual.dtype == reference.dtype
    assert helpers.relative_error(reference, actual) <= NETWORK_TOLERANCE[variant.dtype]
