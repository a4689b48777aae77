"""The rules that keep a fold from doing harm (issue 18, item 2), on real exports.

- A fold never makes weights depend on the data: a squeeze-excite gate (global mean,
  dense layers, sigmoid, times the activation) is per channel but computed from the image;
  it stays where it is, and the batch norm after the projection convolution still folds.
- A scalar factor after a dense layer goes onto its weights, never onto the other
  (activation) operand, whichever result dimension it is found along.

Each model is exported for real by Flax or Keras 3 (on JAX) with seeded weights and
non-trivial batch-norm statistics, folded with the API, and run through XLA against the
original.
"""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, fold_and_compare
from jax import export
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold.fold.reasons import (
    DATA_DEPENDENT,
    SHIFT_KEPT_PASSED,
    WEIGHTS_ARE_ACTIVATIONS,
)


def _activation_ops(text: str, name: str, at_least: int) -> int:
    """How many `name` ops of `@main` have a result of at least `at_least` elements."""
    with make_ir_context():
        module = ir.Module.parse(text)
        count = 0

        def visit(op: ir.Operation) -> ir.WalkResult:
            nonlocal count
            if op.name == name and len(op.results) == 1:
                shaped = ir.ShapedType(op.results[0].type)
                count += shaped.has_static_shape and int(np.prod(shaped.shape)) >= at_least
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return count


class FlaxSqueezeExcite(nn.Module):
    """EfficientNet's MBConv tail: expand conv + BN + swish, squeeze-excite gate, project
    conv + BN."""

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(16, (1, 1), use_bias=False)(x)
        x = nn.swish(nn.BatchNorm(use_running_average=True)(x))
        gate = jnp.mean(x, axis=(1, 2), keepdims=True)
        gate = nn.swish(nn.Dense(4)(gate))
        gate = nn.sigmoid(nn.Dense(16)(gate))
        x = x * gate
        x = nn.Conv(8, (1, 1), use_bias=False)(x)
        return nn.BatchNorm(use_running_average=True)(x)


def _flax_variables(model: nn.Module, shape: tuple[int, ...]):
    x = np.zeros(shape, np.float32)
    variables = model.init(jax.random.PRNGKey(0), x)
    rng = np.random.default_rng(1)
    moved = jax.tree.map(lambda a: a + rng.uniform(-0.25, 0.25, a.shape).astype(a.dtype), variables)
    # Variances kept positive and away from zero.
    moved["batch_stats"] = jax.tree.map(
        lambda a: np.abs(a) + 0.5 if a.ndim == 1 else a, moved["batch_stats"]
    )
    return moved


def _keras_squeeze_excite():
    """The same block as Keras 3's EfficientNet writes it (`block2a_se_excite`)."""
    import keras
    from keras import layers

    keras.utils.set_random_seed(0)
    x_in = keras.Input((8, 8, 16), batch_size=1)
    x = layers.Conv2D(16, 1, use_bias=False, name="expand")(x_in)
    x = layers.Activation("swish")(layers.BatchNormalization(name="expand_bn")(x))
    gate = layers.GlobalAveragePooling2D(keepdims=True)(x)
    gate = layers.Conv2D(4, 1, activation="swish", name="se_reduce")(gate)
    gate = layers.Conv2D(16, 1, activation="sigmoid", name="se_expand")(gate)
    x = layers.multiply([x, gate], name="se_excite")
    x = layers.Conv2D(8, 1, use_bias=False, name="project")(x)
    x = layers.BatchNormalization(name="project_bn")(x)
    model = keras.Model(x_in, x)
    _keras_statistics(model, seed=2)
    return model


def _keras_statistics(model, seed: int, negative_gamma: str = "") -> None:
    """Seeded non-trivial statistics for each BatchNormalization of a Keras `model`: the
    layer named `negative_gamma` gets one negative gamma (its channel 2)."""
    from keras import layers

    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            n = layer.moving_mean.shape
            layer.moving_mean.assign(rng.standard_normal(n).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            gamma = rng.uniform(0.5, 1.5, n).astype(np.float32)
            if layer.name == negative_gamma:
                gamma[2] = -gamma[2]
            layer.gamma.assign(gamma)
            layer.beta.assign(rng.standard_normal(n).astype(np.float32))


SHAPE = (1, 8, 8, 16)


def _exports():
    flax_model = FlaxSqueezeExcite()
    variables = _flax_variables(flax_model, SHAPE)
    spec = jax.ShapeDtypeStruct(SHAPE, np.float32)
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    keras_model = _keras_squeeze_excite()
    return {
        "flax-constants": (
            export.export(jax.jit(lambda v: flax_model.apply(variables, v)))(spec), (x,)
        ),
        "flax-arguments": (
            export.export(jax.jit(flax_model.apply))(variables, spec), (variables, x)
        ),
        "keras-constants": (
            export.export(jax.jit(lambda v: keras_model(v, training=False)))(spec), (x,)
        ),
    }


@pytest.fixture(scope="module")
def exports():
    return _exports()


@pytest.mark.parametrize("form", ["flax-constants", "flax-arguments", "keras-constants"])
def test_squeeze_excite_gate_stays_and_the_batch_norm_after_the_projection_folds(exports, form):
    exported, args = exports[form]
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    reasons = [s.reason for s in report.skips]

    assert WEIGHTS_ARE_ACTIVATIONS not in reasons
    assert DATA_DEPENDENT in reasons
    # Both batch norms fold: one multiply each was on the [1, 8, 8, C] activation before.
    text = folded.mlir_module()
    # Left: swish's x * sigmoid(x) and the gate's multiply, nothing of a batch norm.
    assert _activation_ops(text, "stablehlo.multiply", 512) == 2
    assert _activation_ops(text, "stablehlo.subtract", 512) == 0
    # No kernel computed at run time from the gate: every convolution's kernel is a
    # constant or (weights as arguments) computed from the arguments without a linear op.
    assert _activation_ops(text, "stablehlo.convolution", 512) == 2
    expected, actual = exported.call(*args), folded.call(*args)
    assert_close(np.asarray(expected), np.asarray(actual), what=f"{form} output")


def test_scalar_after_a_dense_layer_on_the_argument_goes_into_its_constant_weights():
    # torch's addmm: alpha * (x @ W^T + b) with x the function's argument. The scalar is
    # per-channel along result dimension 0 too, which is x's.
    w = np.random.default_rng(4).standard_normal((32, 8)).astype(np.float32)
    spec = jax.ShapeDtypeStruct((4, 32), np.float32)
    exported = export.export(jax.jit(lambda x: (x @ w) * np.float32(0.5)))(spec)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    assert report.folded == 1
    text = folded.mlir_module()
    assert "stablehlo.multiply" not in text
    x = np.random.default_rng(5).standard_normal((4, 32)).astype(np.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


TF_DENSE = """
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w1 = stablehlo.constant dense<[[0.5, -1.0, 0.75], [2.0, 1.5, -0.5], [0.25, -0.75, 1.25]]> : tensor<3x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 1.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.5]> : tensor<3xf32>
  %h = stablehlo.dot %x, %w1 : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %n = "stablehlo.batch_norm_inference"(%h, %scale, %offset, %mean, %var) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = stablehlo.tanh %n : tensor<4x3xf32>
  %m = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %w2 = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5], [0.25, -0.75]]> : tensor<3x2xf32>
  %y = stablehlo.dot %m, %w2 : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
"""


def test_batch_norms_after_and_before_a_tf_dense_dot_fold_and_compute_the_same():
    # TensorFlow's Dense lowers to stablehlo.dot: one batch norm after it, one before.
    compared = fold_and_compare(TF_DENSE, seed=6, batch_norms_left=0)
    assert {f.linear for f in compared.report.folds} == {"stablehlo.dot"}


def test_every_pre_activation_batch_norm_folds_through_its_relu():
    # ResNetV2 / DenseNet: BN -> relu -> conv. The first batch norm follows the input:
    # its scale moves forward through the relu into the convolution after it (issue 21),
    # its shift stays in front as one add, with a report line. The second follows a
    # conv -> relu: its scale moves back into that convolution (patterns/through.py).
    import keras
    from keras import layers

    keras.utils.set_random_seed(0)
    x_in = keras.Input((8, 8, 4), batch_size=1)
    x = x_in
    for i in range(2):
        y = layers.BatchNormalization(name=f"block{i}_preact_bn")(x)
        y = layers.Activation("relu")(y)
        x = layers.Conv2D(4, 3, padding="same", activation="relu", name=f"block{i}_conv")(y)
    model = keras.Model(x_in, x)
    rng = np.random.default_rng(7)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, 4).astype(np.float32))
            layer.moving_mean.assign(rng.standard_normal(4).astype(np.float32))
    spec = jax.ShapeDtypeStruct((1, 8, 8, 4), np.float32)
    exported = export.export(jax.jit(lambda v: model(v, training=False)))(spec)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)

    folds = {f.location.split("/")[-2]: (f.pattern, f.through) for f in report.folds}
    assert folds == {
        "block0_preact_bn": ("fold_input_affine_into_conv", "stablehlo.maximum"),
        "block1_preact_bn": ("fold_scale_through_relu", "stablehlo.maximum"),
    }
    assert [s.reason for s in report.skips] == [SHIFT_KEPT_PASSED]
    x = np.random.default_rng(8).standard_normal((1, 8, 8, 4)).astype(np.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


def _keras_conv_relu_batch_norm(batch: int | str = 1):
    """Keras 3's `Conv2D(activation="relu")` -> `BatchNormalization` three times: two
    convolutions and a Dense layer, the second norm with one negative gamma; exported
    with `batch`, a size or a symbolic dimension's name."""
    import keras
    from keras import layers

    keras.utils.set_random_seed(0)
    x_in = keras.Input((8, 8, 3), batch_size=batch if isinstance(batch, int) else None)
    x = layers.Conv2D(8, 3, padding="same", activation="relu", name="conv0")(x_in)
    x = layers.BatchNormalization(name="bn0")(x)
    x = layers.Conv2D(8, 3, padding="same", activation="relu", name="conv1")(x)
    x = layers.BatchNormalization(name="bn1")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(6, activation="relu", name="dense")(x)
    x = layers.BatchNormalization(name="bn2")(x)
    model = keras.Model(x_in, x)
    _keras_statistics(model, seed=7, negative_gamma="bn1")
    (size,) = (batch,) if isinstance(batch, int) else export.symbolic_shape(batch)
    spec = jax.ShapeDtypeStruct((size, 8, 8, 3), np.float32)
    return export.export(jax.jit(lambda v: model(v, training=False)))(spec)


def test_keras_conv_relu_batch_norm_folds_its_positive_scale_through_the_relu():
    # relu(L(x, K) + b) * s + t = relu(L(x, K * s) + b * s) + t for s > 0: bn2 folds
    # into the Dense layer before its relu (a call of jax.nn.relu), one add left behind
    # it. bn0 is read only by conv1, so the input side takes it (its scale into conv1,
    # its shift kept as one add: conv1 pads); bn1 has a negative gamma: not through
    # conv1's relu, but forward through the global average pool into the Dense layer
    # (issue 21), its shift too (as 16 * t through the pool's sum). Computed through XLA.
    text = _keras_conv_relu_batch_norm().mlir_module()
    compared = fold_and_compare(text, seed=8, batch_norms_left=0, folds=4)
    report = compared.report
    folds = {f.location.split("/")[-2]: (f.pattern, f.linear, f.through) for f in report.folds}
    assert folds["bn2"] == ("fold_scale_through_relu", "stablehlo.dot_general", "stablehlo.maximum")
    assert folds["bn0"] == ("fold_input_affine_into_conv", "stablehlo.convolution", "")
    assert folds["bn1"] == ("fold_input_affine_into_dot_general", "stablehlo.dot_general", "stablehlo.reduce")
    for name in ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide"):
        # Ops on the convolutions' activations (512 elements; the Dense layer's and the
        # per-channel values' are too small to tell apart) never increase.
        assert _activation_ops(compared.folded, name, 64) <= _activation_ops(text, name, 64), name
    # bn0's and bn1's multiplies are gone.
    assert (_activation_ops(text, "stablehlo.multiply", 64), _activation_ops(compared.folded, "stablehlo.multiply", 64)) == (2, 0)


def test_keras_conv_relu_batch_norm_with_a_symbolic_batch_folds_through_the_relu_call():
    # A symbolic batch makes jax.export write the relu as `call @relu(%b, %x)`, the
    # dimension size first: the data operand is the second. The same folds as with a
    # static batch, computed through XLA with a batch of 2.
    exported = _keras_conv_relu_batch_norm("b")
    assert "call @relu(%arg0, " in exported.mlir_module()
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert len(report.folds) == 4
    folds = {f.location.split("/")[-2]: (f.pattern, f.linear, f.through) for f in report.folds}
    assert folds["bn2"] == ("fold_scale_through_relu", "stablehlo.dot_general", "stablehlo.maximum")
    assert folds["bn1"] == ("fold_input_affine_into_dot_general", "stablehlo.dot_general", "stablehlo.reduce")
    # XLA on the CPU cannot run the symbolic shape assertion as text: the Exporteds run.
    x = np.random.default_rng(8).standard_normal((2, 8, 8, 3)).astype(np.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


def test_keras_max_pool_between_the_relu_and_the_batch_norm_lets_the_scale_through():
    # maxpool(v) * s = maxpool(v * s) for s > 0 with a window of one along the channels:
    # conv -> relu -> max-pool -> BN (a VGG or ResNet stem) and conv -> max-pool -> BN fold
    # their scale into the convolution, one add left behind the max-pool. Through XLA.
    import keras
    from keras import layers

    keras.utils.set_random_seed(0)
    x_in = keras.Input((8, 8, 3), batch_size=1)
    x = layers.Conv2D(8, 3, padding="same", activation="relu", name="conv0")(x_in)
    x = layers.MaxPooling2D(3, 2, padding="same")(x)
    x = layers.BatchNormalization(name="bn0")(x)
    x = layers.Activation("relu")(x)
    x = layers.Conv2D(8, 3, padding="same", name="conv1")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.BatchNormalization(name="bn1")(x)
    model = keras.Model(x_in, x)
    _keras_statistics(model, seed=9)
    spec = jax.ShapeDtypeStruct((1, 8, 8, 3), np.float32)
    text = export.export(jax.jit(lambda v: model(v, training=False)))(spec).mlir_module()
    compared = fold_and_compare(text, seed=10, batch_norms_left=0, folds=2)
    folds = {f.location.split("/")[-2]: (f.pattern, f.through) for f in compared.report.folds}
    assert folds == {
        "bn0": ("fold_scale_through_relu", "stablehlo.maximum, stablehlo.reduce_window"),
        "bn1": ("fold_scale_through_relu", "stablehlo.reduce_window"),
    }
    assert _activation_ops(compared.folded, "stablehlo.multiply", 32) == 0

