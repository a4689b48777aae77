"""A per-channel chain after a linear op folds in one application (issue 22).

Flax's batch norm, `(L(x, K) - mean) * c + offset`, was three folds, one pattern
application each. `decomposed.fold_chain` plans and builds the three in the application
of the first; the module it leaves, with its locations, and the report are those of the
three applications one after the other (here: the same pass with the chain fold turned
off), but for a constant bias: computed in float64 through the chain and rounded once,
where the three would round it after each.
"""

from __future__ import annotations

import re
import numpy as np
import pytest
from jaxlib.mlir import ir

from stablehlo_bnfold import io, passes
from stablehlo_bnfold.fold.rewriter import Outcome, Pattern
from stablehlo_bnfold.patterns import PATTERNS
from stablehlo_bnfold.patterns import decomposed
from stablehlo_bnfold.report import Recorder

_CONV = (
    '%y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],'
    ' window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}'
    ' : (tensor<1x4x4x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x4x4x4xf32> loc("conv")'
)
_CHAIN = """
    %mb = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32> loc("mean")
    %d = stablehlo.subtract %y, %mb : tensor<1x4x4x4xf32> loc("sub")
    %e = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<4xf32> loc("eps")
    %ve = stablehlo.add %v, %e : tensor<4xf32> loc("var_eps")
    %r = stablehlo.rsqrt %ve : tensor<4xf32> loc("rsqrt")
    %c = stablehlo.multiply %s, %r : tensor<4xf32> loc("scale_rsqrt")
    %cb = stablehlo.broadcast_in_dim %c, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32> loc("factor")
    %z = stablehlo.multiply %d, %cb : tensor<1x4x4x4xf32> loc("mul")
    %ob = stablehlo.broadcast_in_dim %o, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32> loc("offset")
    %out = stablehlo.add %z, %ob : tensor<1x4x4x4xf32> loc("add")
    return %out : tensor<1x4x4x4xf32>
"""
_PARAMETERS = {
    "k": "dense<[[[[0.5, -1.25, 2.0, 0.125], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.375, -0.5]]]]> : tensor<1x1x3x4xf32>",
    "m": "dense<[0.1, -0.2, 0.3, 0.7]> : tensor<4xf32>",
    "v": "dense<[1.5, 0.25, 2.0, 0.9]> : tensor<4xf32>",
    "s": "dense<[1.1, 0.9, -0.3, 2.5]> : tensor<4xf32>",
    "o": "dense<[0.01, 0.2, -0.3, 1.7]> : tensor<4xf32>",
}
_TYPES = {"k": "tensor<1x1x3x4xf32>", "m": "tensor<4xf32>", "v": "tensor<4xf32>",
          "s": "tensor<4xf32>", "o": "tensor<4xf32>"}


def _module(weights: str, parameters: dict[str, str] = _PARAMETERS) -> str:
    """Flax's batch norm after a convolution, its parameters constants or arguments."""
    arguments = ["%x: tensor<1x4x4x3xf32>"]
    body = ['%eps = stablehlo.constant dense<1.0e-05> : tensor<f32> loc("epsilon")']
    for name, value in parameters.items():
        if weights == "arguments":
            arguments.append(f"%{name}: {_TYPES[name]}")
        else:
            body.append(f'%{name} = stablehlo.constant {value} loc("{name}")')
    return (
        f"func.func @main({', '.join(arguments)}) -> tensor<1x4x4x4xf32> {{\n    "
        + "\n    ".join(body + [_CONV]) + _CHAIN + "}\n"
    )


def _folded(text: str) -> tuple[str, list[tuple[str, str]], list[str]]:
    """The folded module (with locations), its report's lines, and the outcome of each
    pattern application that changed it."""
    applied = []

    def counted(pattern: Pattern) -> Pattern:
        def apply(op, rw):
            outcome = pattern.apply(op, rw)
            if outcome is not Outcome.SKIPPED:
                applied.append(pattern.name)
            return outcome

        return Pattern(pattern.name, pattern.root, apply)

    context = io.make_context()
    module = ir.Module.parse(text, context)
    recorder = Recorder()
    with context, pytest.MonkeyPatch.context() as patch:
        patch.setattr(passes, "PATTERNS", tuple(counted(p) for p in PATTERNS))
        passes.run_pipeline(module, passes.ARGUMENT, recorder)
        printed = module.operation.get_asm(enable_debug_info=True)
    return printed, recorder.finish(module).entries(), applied


@pytest.mark.parametrize("weights", ["constants", "arguments"])
def test_a_flax_batch_norm_folds_in_one_application_with_its_three_report_lines(weights):
    _, entries, applied = _folded(_module(weights))
    assert applied == ["fold_subtrahend_into_bias"]
    assert [what for _, what in entries] == [
        "folded stablehlo.subtract into stablehlo.convolution [fold_subtrahend_into_bias]",
        "folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]",
        "folded stablehlo.add into stablehlo.convolution [fold_shift_into_bias]",
    ]
    # Name locations say the layer, not the op: each line also gives the op's place.
    assert [where.split(", @main op ")[0] for where, _ in entries] == ["sub", "mul", "add"]
    assert len({where for where, _ in entries}) == 3


@pytest.mark.parametrize("weights", ["constants", "arguments"])
def test_the_chain_fold_leaves_the_module_the_three_folds_leave(weights, monkeypatch):
    """The same ops, locations and report as three folds one after the other; only a
    constant bias's values may differ, rounded once instead of after each step
    (`test_a_chain_folded_whole_rounds_its_bias_once`)."""
    text = _module(weights)
    whole, whole_entries, _ = _folded(text)
    monkeypatch.setattr(decomposed, "_plan_above", lambda plans, rw: None)
    one_by_one, entries, applied = _folded(text)
    assert applied == ["fold_subtrahend_into_bias", "fold_scale_into_linear", "fold_shift_into_bias"]
    assert _bias_values_elided(whole) == _bias_values_elided(one_by_one)
    assert whole_entries == entries


def _bias_values_elided(text: str) -> str:
    """`text` with the values of each [4] constant (a bias) left out."""
    return re.sub(r"dense<\[[^\]]*\]> : tensor<4xf32>", "dense<...> : tensor<4xf32>", text)


# Statistics whose shift nearly cancels the offset (mean * c close to offset on every
# channel), as in about a fifth of MobileNetV2's and ResNet-18's channels: rounded after
# each step, (0 - mean) * c would err by half an ulp of mean * c, hundreds of ulps of the
# small bias left.
_CANCELLING = {
    **_PARAMETERS,
    "m": "dense<[3.0472865, 4.8018546, 1.5766385, 4.7945976]> : tensor<4xf32>",
    "v": "dense<[0.76129663, 0.9619876, 1.6898646, 0.9365584]> : tensor<4xf32>",
    "s": "dense<[1.3243905, 0.5413387, 1.6302696, 1.307215]> : tensor<4xf32>",
    "o": "dense<[4.625062, 2.6508527, 1.9768689, 6.476244]> : tensor<4xf32>",
}


def _values(attribute: str) -> np.ndarray:
    """The float64 values of the f32 vector `attribute` (`dense<[...]> : tensor<Nxf32>`)."""
    numbers = attribute[attribute.index("[") + 1 : attribute.index("]")].split(", ")
    return np.array(numbers, dtype=np.float32).astype(np.float64)


def _bias(folded: str) -> np.ndarray:
    """The constant the folded module's one bias add broadcasts."""
    with io.make_context():
        module = ir.Module.parse(folded)
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)
        (add,) = [op for op in ops if op.name == "stablehlo.add"]
        constant = add.operands[1].owner.operands[0].owner
        return np.array(ir.DenseElementsAttr(constant.attributes["value"]))


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "one_by_one"])
def test_a_chain_rounds_its_bias_once(whole, monkeypatch):
    """The bias of `(L - mean) * (scale * rsqrt(var + eps)) + offset` is that expression in
    float64, rounded once to f32: not rounded after the subtract and the multiply too. So
    too where the chain's ops fold one after the other (a symbolic batch, ops passed): each
    fold reads the bias the one before built as the float64 values it rounded."""
    if not whole:
        monkeypatch.setattr(decomposed, "_plan_above", lambda plans, rw: None)
    folded, _, applied = _folded(_module("constants", _CANCELLING))
    assert len(applied) == (1 if whole else 3)
    m, v, s, o = (_values(_CANCELLING[name]) for name in "mvso")
    factor = s * (1.0 / np.sqrt(v + np.float64(np.float32(1.0e-05))))
    assert _bias(folded).tolist() == ((0.0 - m) * factor + o).astype(np.float32).tolist()


def test_a_bias_an_input_side_fold_built_is_rounded_once_with_the_norm_after_the_layer():
    """conv(x + t, K) followed by Flax's batch norm: the input side adds K . t, computed in
    float64, to the layer's bias; the rest of the norm reads the float64 value, so the
    layer's bias is ((K . t) - mean) * c + offset rounded once."""
    parameters = {
        **_PARAMETERS,
        "m": "dense<[0.16432407, -0.8117427, -0.13374612, -0.041897405]> : tensor<4xf32>",
        "v": "dense<[0.73960835, 1.6018658, 0.670508, 1.0868423]> : tensor<4xf32>",
        "s": "dense<[1.2751102, 1.145942, 1.3801979, 1.6067567]> : tensor<4xf32>",
        "o": "dense<[3.8163233, -2.099706, 1.5221897, 2.9936]> : tensor<4xf32>",
    }
    shift = "dense<[-0.8287017, -0.526379, 0.60254896]> : tensor<3xf32>"
    text = _module("constants", parameters).replace(
        "%y = stablehlo.convolution(%x, %k)",
        f'%t = stablehlo.constant {shift} loc("t")\n'
        '    %tb = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32> loc("t_wide")\n'
        '    %xt = stablehlo.add %x, %tb : tensor<1x4x4x3xf32> loc("x_plus_t")\n'
        "    %y = stablehlo.convolution(%xt, %k)",
    )
    folded, _, applied = _folded(text)
    # The input side merges K . t into the bias add the subtract's fold built (alone it
    # would add one for the one it removes), then the rest of the norm folds onto it.
    assert applied == ["fold_subtrahend_into_bias", "fold_input_affine_into_conv", "fold_scale_into_linear"]
    kernel = np.array(
        [[0.5, -1.25, 2.0, 0.125], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.375, -0.5]], dtype=np.float32
    ).astype(np.float64)
    t = _values(shift) @ kernel
    m, v, s, o = (_values(parameters[name]) for name in "mvso")
    factor = s * (1.0 / np.sqrt(v + np.float64(np.float32(1.0e-05))))
    assert _bias(folded).tolist() == ((t - m) * factor + o).astype(np.float32).tolist()


def test_a_bias_a_norm_fold_built_is_rounded_once_with_the_shift_before_the_layer():
    """batch_norm_inference(conv(x + t, K)): the norm's fold gives the layer the weights
    K' = K * s and the bias offset - mean * s, in float64 and rounded; the input side then
    merges K' . t into that bias add, reading the float64 value: the bias is K' . t +
    (offset - mean * s) rounded once."""
    vector = "tensor<4xf32>"
    statistics = {
        "m": "[-0.42839724, -0.8921386, -0.23326224, -0.18305358]",
        "v": "[0.5679128, 0.57313657, 1.9987642, 1.4785537]",
        "s": "[0.8517653, 1.1524214, 1.9612793, 1.8465164]",
        "o": "[-1.6510314, -0.7803638, -1.0932038, -2.1861951]",
    }
    shift = "dense<[0.61000586, 0.61588156, 0.030651122]> : tensor<3xf32>"
    text = "\n    ".join([
        "func.func @main(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x4xf32> {",
        f"%k = stablehlo.constant {_PARAMETERS['k']}",
        f"%t = stablehlo.constant {shift}",
        "%tb = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>",
        "%xt = stablehlo.add %x, %tb : tensor<1x4x4x3xf32>",
        _CONV.replace("(%x, %k)", "(%xt, %k)"),
        *(f"%{name} = stablehlo.constant dense<{values}> : {vector}" for name, values in statistics.items()),
        '%bn = "stablehlo.batch_norm_inference"(%y, %s, %o, %m, %v) {epsilon = 1.0e-05 : f32, '
        f"feature_index = 3 : i64}} : (tensor<1x4x4x4xf32>, {vector}, {vector}, {vector}, {vector})"
        " -> tensor<1x4x4x4xf32>",
        "return %bn : tensor<1x4x4x4xf32>",
    ]) + "\n}\n"
    folded, _, applied = _folded(text)
    assert applied == ["fold_bn_into_linear", "fold_input_affine_into_conv"]
    kernel = np.array(
        [[0.5, -1.25, 2.0, 0.125], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.375, -0.5]], dtype=np.float32
    ).astype(np.float64)
    m, v, s, o = (_values(f"dense<{statistics[name]}>") for name in "mvso")
    factor = s / np.sqrt(v + np.float64(np.float32(1.0e-05)))
    scaled = (kernel * factor).astype(np.float32).astype(np.float64)  # K', as stored
    expected = _values(shift) @ scaled + (o + (0.0 - m) * factor)
    assert _bias(folded).tolist() == expected.astype(np.float32).tolist()
