"""Parallel convolution branches merged into one convolution (structural
re-parameterization: RepVGG, MobileOne, ACNet, RT-DETR's RepVggBlock).

    (conv(x, A) + a) + (conv(x, B) + b) + (x * s + t) = conv(x, A + embed(B) + embed(s)) + (a + b + t)

A convolution is linear in its kernel, and zero padding reads zeros in every branch: a
branch whose window taps land on the taps of another's kernel is that kernel with zeros
around its own. Per spatial dimension, output position p of a convolution with stride S,
low padding lo and kernel dilation D reads input p * S - lo + k * D at tap k; tap k of a
branch B lands on tap j = (lo_A - lo_B + k * D_B) / D_A of the host A. An identity branch
`x * s + t` (a batch norm of the input, or x itself) is the kernel tap that reads input p
at output p, j = lo_A / D_A, with s on output feature o at input index o mod (I / groups):
it needs stride one, the input's size and layout kept, and I = O features.

After the patterns reach their fixed point (each branch's batch norm folded into its
convolution), `merge_branches` finds each sum of values read by no other op (any order
or nesting of adds), groups its terms by the input x they read, and merges each group of
two or more terms with a convolution among them into one convolution, `L(x, K') +
broadcast_in_dim(b')`: the kernels summed in float64, the biases and identity shifts
alike, each rounded once to its element type. A kernel or bias that a branch's fold built
is summed as the float64 values that fold rounded it from (its weights times its norm's
scale), so the merged ones are rounded once from the branches' parameters; others from
their stored values (the wider master weights of a mixed-precision `convert(W)`). The
merged convolution costs what the largest branch did. The other terms of the sum stay, added after it. With weights passed as
arguments (`fold-weight-arguments`), the graph computes the merged kernel on every call
(each other kernel `pad`ded to its taps and added, in the master weights' wider type
where every kernel is a convert of one, an identity's scale as a constant mask times
the scale) and the merged bias on [C] vectors, where that builds no more ops
than go (`fold_parameters` computes them once).

Holds when, in this order (each failure a `fold.reasons` constant, reported at the sum):
no branch is transposed (lhs dilation) or reverses its window (`BRANCH_TRANSPOSED`); the
convolutions have the same strides (`BRANCH_STRIDES`), feature and batch group counts
(`BRANCH_GROUPS`), dimension numbers (`BRANCH_LAYOUT`) and precision config
(`BRANCH_PRECISION`) (their element types are alike: those of one input and one sum);
every op of a branch is in the sum's block (`BRANCH_OTHER_BLOCK`) and read only by the
next (`BRANCH_USERS`); one branch's kernel holds every other's taps (`BRANCH_TAPS`); an
identity branch's convolution has stride one and the input's shape (`IDENTITY_RESIZES`),
a tap at offset zero (`IDENTITY_NO_CENTRE`), and maps input feature o to output feature
o (`IDENTITY_FEATURES`); with `fold-narrow-weights` off, the kernels are not narrow
(bf16, f16) with no wider master copy (`NO_MASTER_WEIGHTS`; with it on, the report marks
the identity branches' folds `rounded again`); every weight, bias and identity scale and
shift is a constant, or with `fold-weight-arguments` each bias is a per-channel value
(`BRANCH_NOT_CONSTANT`); the merged kernel and bias are finite in their element types
(`BRANCH_NOT_FINITE`); in the graph, the merge builds no more ops than go
(`BRANCH_MORE_OPS`). The report has one line per sum merged (`merged 3 branches into
stablehlo.convolution`) or left, and the identity branch's norm as folded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from ..analysis.per_channel import per_channel_f64
from ..analysis.users import single_user
from ..analysis.walk import ops_named
from ..constants import dimensions, float_dtype, round_to
from ..report import Recorder
from . import reasons
from .affine_map import (
    AffineChain, BiasedLinear, PerChannel, affine_chain, biased_linear, per_channel, per_channel_op, unrounded_bias,
)
from .literals import float64_value
from .reasons import Reason
from .rewriter import SHORT_NAMES, FoldRewriter, going_with, unrounded_bias_of, unrounded_weights

__all__ = ["MERGE_NAMES", "PATTERN", "merge_branches"]

PATTERN = "merge_parallel_branches"
"""The name report lines of merges carry in place of a pattern's."""

_BROADCASTS = (stablehlo.BroadcastInDimOp, stablehlo.DynamicBroadcastInDimOp)


@dataclass(frozen=True)
class _Conv:
    """A convolution branch: `conv(x, K)` or `conv(x, K) + b`."""

    term: ir.Value
    chain: BiasedLinear

    @property
    def conv(self) -> stablehlo.ConvolutionOp:
        return self.chain.linear


@dataclass(frozen=True)
class _Identity:
    """An identity branch: x itself (`chain` None) or a per-channel affine chain on x."""

    term: ir.Value
    chain: AffineChain | None


@dataclass(frozen=True)
class _Merged:
    """What a merge writes. With constants: the host convolution's new `kernel` and `bias`
    (rounded). With weights in the graph (`kernel` None): the other branches' kernels and
    where they are `padded` into the host's, the identities' `scales` and the `bias`, for
    the build step to compute."""

    host: stablehlo.ConvolutionOp
    kernel: np.ndarray | None
    bias: PerChannel | None
    padded: tuple[tuple[ir.Value, tuple[slice, ...]], ...] = ()
    scales: tuple[PerChannel, ...] = ()
    rounded_again: str = ""
    """The narrow type (`bf16`, `f16`) of kernels with no wider master copy that the merge
    rounds again (the report marks the identity branches' folds with it)."""


def merge_branches(
    root: ir.Operation, recorder: Recorder, fold_weight_arguments: bool = True, fold_narrow_weights: bool = True,
    ops: list[ir.Operation] | None = None,
) -> bool:
    """Merge the parallel convolution branches of every sum under `root` (this module's
    docstring), recording each merge and each sum left with its reason; with
    `fold_weight_arguments`, branches whose weights are arguments too, in the graph; with
    `fold_narrow_weights`, narrow kernels with no wider master copy too. `ops`: the ops
    named `MERGE_NAMES` under `root` in walk order, where the caller has them
    (`analysis.walk.ops_named`). Whether it merged any (and so changed the IR)."""
    if ops is None:
        (ops,) = ops_named(root, MERGE_NAMES)
    if not any(_may_join(op.opview) for op in ops if op.name == _CONVOLUTION):
        return False  # no sum has a group of two or more terms: nothing to merge or report
    adds = (op.opview for op in ops if op.name == _ADD)
    sums = [view for view in adds if _is_sum(view) and not _inner(view)]
    merged = False
    for add in sums:
        try:
            merged |= _merge_sum(add, recorder, fold_weight_arguments, fold_narrow_weights)
        except Exception as error:  # a bug: the pass fails with it, as a pattern's does
            recorder.error(add, PATTERN, error)
            return True
    return merged


_ADD, _CONVOLUTION = stablehlo.AddOp.OPERATION_NAME, stablehlo.ConvolutionOp.OPERATION_NAME

MERGE_NAMES = frozenset({_ADD, _CONVOLUTION})
"""The ops `merge_branches` reads: the sums branches meet in, and the convolutions."""


def _may_join(conv: stablehlo.ConvolutionOp) -> bool:
    """Whether `conv` may be a branch in a group of two or more (`_groups`): another op
    reads its input (`_read_elsewhere`: every other branch on that input does), and its
    result or an add of it (its bias add) is a term of a sum, or it is returned from a
    region (a `stablehlo.case` branch: the case's result is the term)."""
    if not _read_elsewhere(conv):
        return False
    for use in conv.result.uses:
        reader = use.owner
        if type(reader) is stablehlo.ReturnOp:
            return True
        if type(reader) is stablehlo.AddOp and (_is_sum(reader) or _read_by_a_sum(reader.result)):
            return True
    return False


def _read_by_a_sum(value: ir.Value) -> bool:
    for use in value.uses:
        reader = use.owner
        if type(reader) is stablehlo.AddOp and _is_sum(reader):
            return True
    return False


def _is_sum(op: ir.OpView) -> bool:
    """Whether `op` adds two activations: an add neither of whose operands is a broadcast
    (a bias or shift) or a constant, with a float element type."""
    for operand in op.operands:  # (asked first: it decides most adds, bias adds)
        if type(operand.owner) in _NOT_TERMS:
            return False
    return float_dtype(ir.ShapedType(op.result.type).element_type) is not None


_NOT_TERMS = frozenset({*_BROADCASTS, stablehlo.ConstantOp})
"""What a bias or shift is (`_is_sum`): `value.owner` is the registered class itself."""


def _inner(op: stablehlo.AddOp) -> bool:
    """Whether `op` is a term of a larger sum: its one reader is a sum."""
    if not single_user(op.result):
        return False
    reader = next(iter(op.result.uses)).owner
    return isinstance(reader, stablehlo.AddOp) and _is_sum(reader)


def _terms(add: stablehlo.AddOp) -> list[ir.Value]:
    """The terms of the sum `add`, in order: its operands, and those of each sum among them
    that only it reads."""
    terms: list[ir.Value] = []
    for operand in add.operands:
        owner = operand.owner
        if isinstance(owner, stablehlo.AddOp) and _is_sum(owner) and single_user(operand):
            terms += _terms(owner)
        else:
            terms.append(operand)
    return terms


def _groups(terms: list[ir.Value], fold_weight_arguments: bool) -> list[list[_Conv | _Identity]]:
    """The terms grouped by the input they read: each convolution branch (a convolution,
    with its bias add) by its lhs, then each other term that is that input or an affine
    chain on it along the convolution's input feature. Groups of two or more only."""
    groups: dict[tuple[ir.Value, str], list[_Conv | _Identity]] = {}
    rest = []
    for term in terms:
        chain = biased_linear(term)
        if chain is not None and isinstance(chain.linear, stablehlo.ConvolutionOp) and len(chain.branches) == 1:
            groups.setdefault(_input(chain.linear.lhs), []).append(_Conv(term, chain))
        else:
            rest.append(term)
    # Each other branch on x reads x or its convert too: a convolution whose input only it
    # reads has none (residual sums: the cost of `_identity`'s affine chain spared).
    open_groups = [
        (x, members) for x, members in groups.items() if len(members) > 1 or _read_elsewhere(members[0].conv)
    ]
    for term in rest if open_groups else ():
        for x, members in open_groups:
            identity = _identity(term, x, members[0].conv, fold_weight_arguments)
            if identity is not None:
                members.append(identity)
                break
    return [members for members in groups.values() if len(members) > 1]


def _read_elsewhere(conv: stablehlo.ConvolutionOp) -> bool:
    """Whether an op other than `conv` reads its input (`_input`): its lhs, or the value
    that lhs converts."""
    lhs = conv.lhs
    if len(list(lhs.uses)) > 1:
        return True
    owner = lhs.owner
    return isinstance(owner, stablehlo.ConvertOp) and len(list(owner.operand.uses)) > 1


def _input(value: ir.Value) -> tuple[ir.Value, str]:
    """What a convolution reads, seen through a convert (mixed precision converts the
    input once per layer): the value converted, and the type read."""
    owner = value.owner
    return (owner.operand if isinstance(owner, stablehlo.ConvertOp) else value, str(value.type))


def _identity(
    term: ir.Value, x: tuple[ir.Value, str], conv: stablehlo.ConvolutionOp, fold_weight_arguments: bool
) -> _Identity | None:
    """`term` as an identity branch on `x` (`_input`) of `conv`: x itself, or an affine
    chain on x along the convolution's input feature dimension, or such a chain computed
    in a wider type between a convert pair (mixed precision's `convert(bn(convert(x)))`)."""
    if _input(term) == x:
        return _Identity(term, None)
    feature = stablehlo.ConvDimensionNumbers(conv.dimension_numbers).input_feature_dimension
    shape = ir.ShapedType(term.type)
    if feature >= shape.rank or shape.is_dynamic_dim(feature):
        return None
    widened = isinstance(term.owner, stablehlo.ConvertOp)
    chain = affine_chain(
        term.owner.operand if widened else term, feature, shape.get_dim_size(feature), fold_weight_arguments
    )
    if not isinstance(chain, AffineChain):
        return None
    source = chain.x
    if widened and isinstance(source.owner, stablehlo.ConvertOp):
        source = source.owner.operand
    return _Identity(term, chain) if _input(source) == x else None


def _merge_sum(
    add: stablehlo.AddOp, recorder: Recorder, fold_weight_arguments: bool, fold_narrow_weights: bool
) -> bool:
    """Merge each group of `add`'s terms, or record why it stays; whether it merged one."""
    for members in _groups(_terms(add), fold_weight_arguments):
        merged = _plan(members, add, recorder, fold_weight_arguments, fold_narrow_weights)
        if not isinstance(merged, Reason):
            with add.location:
                merged = _build(members, merged, add, recorder)
        if isinstance(merged, Reason):
            recorder.merge(add, PATTERN, len(members), "stablehlo.convolution", merged)
            continue
        owner = merged.owner
        if isinstance(owner, stablehlo.AddOp) and _is_sum(owner):
            _merge_sum(owner, recorder, fold_weight_arguments, fold_narrow_weights)  # the sum rebuilt
        return True
    return False


_SAME = (
    (lambda conv: _window(conv, "window_strides", 1), reasons.BRANCH_STRIDES),
    (lambda conv: (str(conv.feature_group_count), str(conv.batch_group_count)), reasons.BRANCH_GROUPS),
    (lambda conv: str(conv.dimension_numbers), reasons.BRANCH_LAYOUT),
    (lambda conv: str(conv.precision_config), reasons.BRANCH_PRECISION),
)
"""What every branch's convolution has alike (strides absent are ones), and the reason
when one differs."""


def _plan(
    members: list[_Conv | _Identity], add: stablehlo.AddOp, recorder: Recorder, fold_weight_arguments: bool,
    fold_narrow_weights: bool,
) -> _Merged | Reason:
    """The merged kernel and bias of one group, or the first condition of this module's
    docstring that fails; `recorder` holds what this run's folds rounded the branches'
    kernels and biases from."""
    convs = [m for m in members if isinstance(m, _Conv)]
    reason = _attributes_reason(convs) or _placement_reason(members, add)
    if reason is not None:
        return reason
    host = next((c.conv for c in convs if all(_taps(c.conv, o.conv) is not None for o in convs)), None)
    if host is None:
        return reasons.BRANCH_TAPS
    if any(isinstance(m, _Identity) for m in members):
        reason = _identity_reason(host)
        if reason is not None:
            return reason
    narrow = _rounded_again(convs)
    if narrow and not fold_narrow_weights:
        return reasons.NO_MASTER_WEIGHTS
    merged = _values(members, host, recorder)
    if merged is None and fold_weight_arguments:
        merged = _graph_values(members, host)
    if merged is None:
        return reasons.BRANCH_NOT_CONSTANT
    return merged if isinstance(merged, Reason) else replace(merged, rounded_again=narrow)


def _rounded_again(convs: list[_Conv]) -> str:
    """The short name of the kernels' type where it is narrow (bf16, f16) and they are no
    converts of wider master weights, which merging rounds again; else ""."""
    rhs = convs[0].conv.rhs
    dtype = float_dtype(ir.ShapedType(rhs.type).element_type)
    if dtype is None or dtype.itemsize >= 4 or _masters([c.conv.rhs for c in convs]):
        return ""
    return SHORT_NAMES.get(dtype.name, dtype.name)


def _attributes_reason(convs: list[_Conv]) -> Reason | None:
    """`BRANCH_TRANSPOSED`, then the first of `_SAME` where the convolutions differ. (Their
    element types are alike: each reads the same input, as its weights' type, and gives
    the sum's.)"""
    for branch in convs:
        conv = branch.conv
        if any(d != 1 for d in _window(conv, "lhs_dilation", 1)) or any(_window(conv, "window_reversal", 0)):
            return reasons.BRANCH_TRANSPOSED
    first = convs[0].conv
    for branch in convs[1:]:
        for read, reason in _SAME:
            if read(branch.conv) != read(first):
                return reason
    return None


def _placement_reason(members: list[_Conv | _Identity], add: stablehlo.AddOp) -> Reason | None:
    """`BRANCH_OTHER_BLOCK` where an op a branch computes is in another block than the
    sum, then `BRANCH_USERS` where one is read by another op than the next."""
    block = add.operation.block
    ops, shared = [], False
    for member in members:
        if isinstance(member, _Conv):
            chain = member.chain
            ops += [chain.linear] + ([chain.bias_add] if chain.bias_add is not None else [])
            shared |= chain.bias_add is not None and not single_user(chain.linear_value)
        elif member.chain is not None:
            ops += [step.op for step in member.chain.steps]
            if isinstance(member.term.owner, stablehlo.ConvertOp):  # the convert pair's
                shared |= not single_user(member.chain.x) or not single_user(member.chain.steps[0].op.result)
        shared |= member.chain is not None and not single_user(member.term)  # x itself: read by all
    if any(op.operation.block != block for op in ops):
        return reasons.BRANCH_OTHER_BLOCK
    return reasons.BRANCH_USERS if shared else None


def _window(conv: stablehlo.ConvolutionOp, name: str, default: int) -> list[int]:
    """A convolution's per-spatial-dimension attribute `name` (strides, dilations, window
    reversal as 0 / 1), its default where absent."""
    attr = getattr(conv, name)
    count = len(stablehlo.ConvDimensionNumbers(conv.dimension_numbers).kernel_spatial_dimensions)
    if attr is None:
        return [default] * count
    if name == "window_reversal":
        return [int(v) for v in ir.DenseBoolArrayAttr(attr)]
    return dimensions(ir.DenseI64ArrayAttr(attr))


def _low_padding(conv: stablehlo.ConvolutionOp) -> list[int]:
    padding = conv.padding
    count = len(stablehlo.ConvDimensionNumbers(conv.dimension_numbers).kernel_spatial_dimensions)
    if padding is None:
        return [0] * count
    return [int(row[0]) for row in np.asarray(ir.DenseIntElementsAttr(padding)).reshape(count, 2)]


def _kernel_sizes(conv: stablehlo.ConvolutionOp) -> list[int]:
    shape = ir.ShapedType(conv.rhs.type).shape
    return [shape[d] for d in stablehlo.ConvDimensionNumbers(conv.dimension_numbers).kernel_spatial_dimensions]


def _taps(host: stablehlo.ConvolutionOp, other: stablehlo.ConvolutionOp) -> tuple[slice, ...] | None:
    """Where `other`'s kernel taps land in `host`'s, one slice per spatial dimension (in
    the order of the kernel's spatial dimensions); None where one lands between or outside
    the host's taps. Tap k lands on j = (lo_host - lo_other + k * D_other) / D_host."""
    sizes, dilations, low = _kernel_sizes(host), _window(host, "rhs_dilation", 1), _low_padding(host)
    other_sizes, other_dilations = _kernel_sizes(other), _window(other, "rhs_dilation", 1)
    slices = []
    for size, dilation, lo, other_size, other_dilation, other_lo in zip(
        sizes, dilations, low, other_sizes, other_dilations, _low_padding(other)
    ):
        offset = lo - other_lo
        if other_size < 1 or offset % dilation or (other_size > 1 and other_dilation % dilation):
            return None
        start, step = offset // dilation, max(other_dilation // dilation, 1)
        last = start + (other_size - 1) * step
        if start < 0 or last >= size:
            return None
        slices.append(slice(start, last + 1, step))
    return tuple(slices)


def _identity_reason(host: stablehlo.ConvolutionOp) -> Reason | None:
    """Why the identity x -> x is no tap of `host`: `IDENTITY_RESIZES`, `IDENTITY_NO_CENTRE`
    or `IDENTITY_FEATURES`, in that order."""
    lhs, result = ir.ShapedType(host.lhs.type), ir.ShapedType(host.result.type)
    if any(s != 1 for s in _window(host, "window_strides", 1)) or lhs.shape != result.shape:
        return reasons.IDENTITY_RESIZES
    if _centre(host) is None:
        return reasons.IDENTITY_NO_CENTRE
    dims = stablehlo.ConvDimensionNumbers(host.dimension_numbers)
    same_layout = (
        dims.input_batch_dimension == dims.output_batch_dimension
        and dims.input_feature_dimension == dims.output_feature_dimension
        and list(dims.input_spatial_dimensions) == list(dims.output_spatial_dimensions)
    )
    if not same_layout or ir.IntegerAttr(host.batch_group_count).value != 1 or lhs.is_dynamic_dim(dims.input_feature_dimension):
        return reasons.IDENTITY_FEATURES
    return None


def _centre(host: stablehlo.ConvolutionOp) -> list[int] | None:
    """The kernel index, per spatial dimension, of the tap that reads input p at output p
    (j * D = lo), when there is one."""
    centre = []
    for size, dilation, lo in zip(_kernel_sizes(host), _window(host, "rhs_dilation", 1), _low_padding(host)):
        if lo % dilation or not 0 <= lo // dilation < size:
            return None
        centre.append(lo // dilation)
    return centre


def _values(
    members: list[_Conv | _Identity], host: stablehlo.ConvolutionOp, recorder: Recorder
) -> _Merged | Reason | None:
    """The host's kernel plus every other branch's, embedded at its taps, plus each
    identity's scale at the centre tap; the biases plus the identities' shifts: summed in
    float64, rounded once; None where a value is not a constant, `BRANCH_NOT_FINITE`
    where the sums are not finite in their types. A kernel or bias a fold of this run
    built is read as the float64 values it was rounded from (`_kernel_f64`, `_bias_f64`),
    so that the merged ones are rounded once from the branches' batch norms."""
    dims = stablehlo.ConvDimensionNumbers(host.dimension_numbers)
    channels = ir.ShapedType(host.result.type).get_dim_size(dims.output_feature_dimension)
    kernel = _kernel_f64(host.rhs, recorder)
    if kernel is None:
        return None
    kernel, bias, biased = np.array(kernel, dtype=np.float64), np.zeros(channels), False
    for member in members:
        if isinstance(member, _Conv):
            added = _branch_values(member, host, kernel, dims.output_feature_dimension, channels, recorder)
        else:
            added = _identity_values(member, host, kernel, channels)
        if added is None:
            return None
        if added is not False:
            bias += added
            biased = True
    rounded = round_to(float_dtype(ir.ShapedType(host.rhs.type).element_type), kernel)
    result_dtype = float_dtype(ir.ShapedType(host.result.type).element_type)
    rounded_bias = round_to(result_dtype, bias) if biased else None
    if rounded is None or (biased and rounded_bias is None):
        return reasons.BRANCH_NOT_FINITE
    return _Merged(host, rounded, rounded_bias)


def _branch_values(
    member: _Conv, host: stablehlo.ConvolutionOp, kernel: np.ndarray, feature: int, channels: int,
    recorder: Recorder,
) -> np.ndarray | bool | None:
    """Add a convolution branch's kernel into `kernel` (the host's own is there); its
    bias, False without one, None where either is not a constant."""
    if member.conv != host:
        values = _kernel_f64(member.conv.rhs, recorder)
        if values is None:
            return None
        index = list(_taps(host, member.conv))
        spatial = list(stablehlo.ConvDimensionNumbers(host.dimension_numbers).kernel_spatial_dimensions)
        kernel[tuple(index[spatial.index(a)] if a in spatial else slice(None) for a in range(kernel.ndim))] += values
    if member.chain.bias_value is None:
        return False
    return _bias_f64(member.chain.bias_value, feature, channels, recorder)


def _kernel_f64(value: ir.Value, recorder: Recorder) -> np.ndarray | None:
    """A branch's kernel in float64: what a fold of this run rounded it from
    (`unrounded_weights`), else its value (`float64_value`)."""
    exact = unrounded_weights(recorder, value)
    return exact if exact is not None else float64_value(value)


def _bias_f64(value: ir.Value, feature: int, channels: int, recorder: Recorder) -> np.ndarray | None:
    """A branch's bias along `feature` in float64 (`per_channel_f64`), or what a fold of
    this run rounded it from (`unrounded_bias`)."""
    bias = per_channel_f64(value, feature, channels)
    if bias is None:
        return None
    return unrounded_bias(value, feature, bias, lambda v, f: unrounded_bias_of(recorder, v, f))


def _identity_values(
    member: _Identity, host: stablehlo.ConvolutionOp, kernel: np.ndarray, channels: int
) -> np.ndarray | bool | None:
    """Add an identity branch's scale at `kernel`'s centre tap, output feature o at input
    index o mod (I / groups); its shift, False for x itself, None where the chain is not
    constant."""
    if member.chain is not None and not member.chain.constant:
        return None
    scale, shift = member.chain.affine() if member.chain is not None else (np.ones(channels), False)
    kernel[_centre_taps(host, kernel.shape, channels)] += scale
    return shift


def _centre_taps(host: stablehlo.ConvolutionOp, shape, channels: int) -> tuple:
    """The index of the host kernel's elements an identity sets: the centre tap, output
    feature o at input index o mod (I / groups)."""
    dims = stablehlo.ConvDimensionNumbers(host.dimension_numbers)
    outputs = np.arange(channels)
    index: list = [None] * len(shape)
    for axis, tap in zip(dims.kernel_spatial_dimensions, _centre(host)):
        index[axis] = tap
    index[dims.kernel_input_feature_dimension] = outputs % shape[dims.kernel_input_feature_dimension]
    index[dims.kernel_output_feature_dimension] = outputs
    return tuple(index)


def _graph_values(members: list[_Conv | _Identity], host: stablehlo.ConvolutionOp) -> _Merged | Reason:
    """With weights passed as arguments: what the graph adds to the host's kernel (the
    other kernels padded to its taps, the identities' scales at the centre tap) and the
    bias (the branches' biases and the identities' shifts), as per-channel values the
    build computes; `BRANCH_NOT_CONSTANT` where a bias is not per-channel."""
    feature = stablehlo.ConvDimensionNumbers(host.dimension_numbers).output_feature_dimension
    channels = ir.ShapedType(host.result.type).get_dim_size(feature)
    padded, scales, bias = [], [], None
    for member in members:
        if isinstance(member, _Conv):
            if member.conv != host:
                padded.append((member.conv.rhs, _taps(host, member.conv)))
            shift = None
            if member.chain.bias_value is not None:
                shift = per_channel(member.chain.bias_value, feature, channels, True)
                if shift is None:
                    return reasons.BRANCH_NOT_CONSTANT
        elif member.chain is None:
            scales.append(np.ones(channels))
            shift = None
        else:
            scale, shift = member.chain.affine(host.result)
            scales.append(scale)
        if shift is not None:
            bias = shift if bias is None else per_channel_op(np.add, bias, shift, host.result)
    return _Merged(host, None, bias, tuple(padded), tuple(scales))


def _build(
    members: list[_Conv | _Identity], merged: _Merged, add: stablehlo.AddOp, recorder: Recorder
) -> ir.Value | Reason:
    """Write the merged convolution and bias add before the sum, add the sum's other terms
    to it, replace the sum and erase what only it read; record the merge and each identity
    branch's norm as folded. In the graph, `BRANCH_NOT_FINITE` where a constant does not
    fit its type, and `BRANCH_MORE_OPS` where the ops built outnumber those that go."""
    rw = FoldRewriter(add, None, recorder, PATTERN)
    try:
        value = _merged_sum(members, merged, add, rw)
    except Exception:
        rw.discard_created()  # nothing half-built stays
        raise
    reason = reasons.BRANCH_NOT_FINITE if value is None else None
    if reason is None and merged.kernel is None and rw.adds_ops([add]):
        reason = reasons.BRANCH_MORE_OPS
    if reason is not None:
        rw.discard_created()
        return reason
    for member in members:
        if isinstance(member, _Identity) and member.chain is not None:
            norm = recorder.new_norm()
            for step in reversed(member.chain.steps):
                recorder.fold(step.op, PATTERN, "stablehlo.convolution", rounded_again=merged.rounded_again, norm=norm)
    recorder.merge(add, PATTERN, len(members), "stablehlo.convolution")
    add.result.replace_all_uses_with(value)
    _erase_unread(add)
    return value


def _merged_sum(
    members: list[_Conv | _Identity], merged: _Merged, add: stablehlo.AddOp, rw: FoldRewriter
) -> ir.Value | None:
    """The merged convolution, its bias add and the sum's other terms added to it, built
    before the sum; None where a constant does not fit its type."""
    host = merged.host
    if merged.kernel is not None:
        kernel = rw.constant(merged.kernel, host.rhs.type, host.location)
    else:
        kernel = _graph_kernel(merged, rw)
    if kernel is None:
        return None
    value = rw.with_operand(host, 1, kernel)
    if merged.bias is not None:
        feature = stablehlo.ConvDimensionNumbers(host.dimension_numbers).output_feature_dimension
        channels = ir.ShapedType(value.type).get_dim_size(feature)
        element_type = ir.ShapedType(value.type).element_type
        bias = rw.vector(*rw.realize(merged.bias), channels, element_type)
        if bias is None:
            return None
        value = rw.elementwise(stablehlo.AddOp, value, rw.broadcast(bias, value, feature, _shape(members)))
    merged_terms = [m.term for m in members]
    for term in _terms(add):
        if not any(term == t for t in merged_terms):
            value = rw.elementwise(stablehlo.AddOp, value, term)
    return value


def _graph_kernel(merged: _Merged, rw: FoldRewriter) -> ir.Value | None:
    """The host's kernel plus, in the graph, each other kernel padded to its taps (zeros
    around and between them) and each identity's scale at the centre tap (a constant
    mask times the scale broadcast along the output features); None where a constant
    scale does not fit the kernel's type."""
    host = merged.host
    masters = _masters([host.rhs, *(rhs for rhs, _ in merged.padded)])
    kernel = masters[0] if masters else host.rhs
    kernel_type = ir.RankedTensorType(kernel.type)
    dtype = float_dtype(kernel_type.element_type)
    spatial = list(stablehlo.ConvDimensionNumbers(host.dimension_numbers).kernel_spatial_dimensions)
    zero = None
    for index, (rhs, taps) in enumerate(merged.padded, start=1):
        rhs = masters[index] if masters else rhs
        shape = ir.RankedTensorType(rhs.type).shape
        low, high, interior = [0] * kernel_type.rank, [0] * kernel_type.rank, [0] * kernel_type.rank
        for axis, tap in zip(spatial, taps):
            low[axis], interior[axis] = tap.start, tap.step - 1
            high[axis] = kernel_type.shape[axis] - (tap.start + (shape[axis] - 1) * tap.step + 1)
        if any(low) or any(high) or any(interior):  # else the kernel is the host's shape already
            if zero is None:
                zero = rw.constant(np.zeros((), dtype), ir.RankedTensorType.get([], kernel_type.element_type), host.location)
            rhs = rw.build(stablehlo.PadOp, rhs, zero, low, high, interior)
        kernel = rw.elementwise(stablehlo.AddOp, kernel, rhs)
    output = stablehlo.ConvDimensionNumbers(host.dimension_numbers).kernel_output_feature_dimension
    channels = kernel_type.shape[output]
    for scale in merged.scales:
        mask = np.zeros(kernel_type.shape)
        taps = _centre_taps(host, kernel_type.shape, channels)
        if isinstance(scale, np.ndarray):
            mask[taps] = scale
            identity = round_to(dtype, mask)
            if identity is None:
                return None
            kernel = rw.elementwise(stablehlo.AddOp, kernel, rw.constant(identity, kernel_type, host.location))
            continue
        mask[taps] = 1.0
        vector = rw.vector(*rw.realize(scale), channels, kernel_type.element_type)
        scaled = rw.elementwise(
            stablehlo.MulOp, rw.constant(mask.astype(dtype), kernel_type, host.location), rw.broadcast(vector, kernel, output)
        )
        kernel = rw.elementwise(stablehlo.AddOp, kernel, scaled)
    if masters:
        kernel = rw.build(stablehlo.ConvertOp, host.rhs.type, kernel)
    return kernel


def _masters(kernels: list[ir.Value]) -> list[ir.Value]:
    """The wider master weights each of `kernels` is a convert of (mixed precision's
    `convert(W_f32)`), when every one is, from one wider type: summed there, the merged
    kernel is rounded once. Else []."""
    owners = [kernel.owner for kernel in kernels]
    if not all(isinstance(owner, stablehlo.ConvertOp) for owner in owners):
        return []
    wide = {str(ir.ShapedType(owner.operand.type).element_type) for owner in owners}
    narrow = float_dtype(ir.ShapedType(kernels[0].type).element_type)
    source = float_dtype(ir.ShapedType(owners[0].operand.type).element_type)
    if len(wide) != 1 or source is None or narrow is None or source.itemsize <= narrow.itemsize:
        return []
    return [owner.operand for owner in owners]


def _shape(members: list[_Conv | _Identity]) -> ir.Value | None:
    """The shape operand of a branch's dynamic bias broadcast, for the merged one."""
    for member in members:
        if isinstance(member, _Conv) and member.chain.bias_value is not None:
            owner = member.chain.bias_value.owner
            if isinstance(owner, stablehlo.DynamicBroadcastInDimOp):
                return owner.output_dimensions
    return None


def _erase_unread(root: ir.OpView) -> None:
    """Erase `root`, which nothing reads now, and every op only the ops erased read
    (`going_with`), users before their operands."""
    for op in going_with([root]):
        op.erase()
