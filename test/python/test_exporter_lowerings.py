"""The lowerings real exporters write (torch.export through torch_xla, timm, Keras on
TensorFlow, jax.export), as the hand-written cases of test/transforms that show them: the
lit file checks each case's IR and report, and here each is folded with the API and run
through XLA on the CPU against the original (`fold_and_compare`), its arguments standard
normal (so a scale computed in the graph meets both signs)."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, fold_and_compare, random_inputs
from jax import export

import stablehlo_bnfold
from stablehlo_bnfold.verification import run_on_cpu

TRANSFORMS = pathlib.Path(__file__).resolve().parents[1] / "transforms"


def lit_case(file: str, name: str) -> str:
    """The `// -----` case of test/transforms/`file` that defines `@name`, with `@name`
    renamed `@main` (the function the runner calls)."""
    chunks = [c for c in (TRANSFORMS / file).read_text().split("// -----") if f"func.func @{name}(" in c]
    assert len(chunks) == 1, f"{file}: {len(chunks)} cases define @{name}"
    return chunks[0].replace(f"func.func @{name}(", "func.func @main(")


# (lit file, case, folds the report counts). The symbolic-batch cases run in the
# jax.export tests below: `with_static_batch` cannot set a merged dimension's size.
CASES = [
    ("forward.mlir", "fold_through_reshape_merging_the_leading_dimensions", 1),
    ("forward.mlir", "fold_argument_norm_through_transpose", 1),
    ("forward.mlir", "fold_argument_scale_through_pad", 1),
    ("input_side.mlir", "fold_gelu_half_through_the_product_of_activations", 1),
    ("input_side.mlir", "fold_input_side_bn_operands_arguments", 1),
    ("through.mlir", "fold_transpose_scale_argument", 1),
]


@pytest.mark.parametrize("file, name, folds", CASES, ids=[name for _, name, _ in CASES])
def test_folded_lit_case_computes_what_the_original_computes(file, name, folds):
    fold_and_compare(lit_case(file, name), seed=0, batch_norms_left=0, folds=folds)


@pytest.mark.parametrize("batch", ["static", "symbolic"])
@pytest.mark.parametrize("weights", ["constants", "arguments"])
def test_an_affine_map_before_a_view_to_tokens_and_a_dense_folds_in_every_export_form(weights, batch):
    # torch.export's nn.Linear on a 4-D activation: view(-1, C), then mm. The reshape
    # merges the dimensions before the channels; with a symbolic batch it is a
    # dynamic_reshape.
    rng = np.random.default_rng(5)
    s, t = (jnp.asarray(rng.standard_normal(8), jnp.float32) for _ in range(2))
    w = jnp.asarray(rng.standard_normal((8, 5)), jnp.float32)

    def dense(x, s, t, w):
        return (x * s + t).reshape(-1, 8) @ w

    shape = export.symbolic_shape("b, 4, 4, 8") if batch == "symbolic" else (2, 4, 4, 8)
    x_spec = jax.ShapeDtypeStruct(shape, jnp.float32)
    if weights == "arguments":
        exported, parameters = export.export(jax.jit(dense))(x_spec, s, t, w), (s, t, w)
    else:
        exported, parameters = export.export(jax.jit(lambda x: dense(x, s, t, w)))(x_spec), ()
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert [(f.through, f.linear) for f in report.folds] == [
        ("stablehlo.dynamic_reshape" if batch == "symbolic" else "stablehlo.reshape", "stablehlo.dot_general")
    ]
    x = jnp.asarray(rng.standard_normal((2, 4, 4, 8)), jnp.float32)
    assert_close(np.asarray(exported.call(x, *parameters)), np.asarray(folded.call(x, *parameters)))


def test_exact_gelu_folds_its_half_into_the_next_convolution_through_the_product():
    # jax.nn.gelu(approximate=False): (x * 0.5) * (1 + erf(x / sqrt(2))), the 0.5 on x.
    rng = np.random.default_rng(6)
    k = jnp.asarray(rng.standard_normal((1, 1, 8, 4)), jnp.float32)

    def block(x):
        h = jax.nn.gelu(x, approximate=False)
        return jax.lax.conv_general_dilated(h, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    exported = export.export(jax.jit(block))(jax.ShapeDtypeStruct((1, 4, 4, 8), jnp.float32))
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert [(f.op, f.linear, f.through) for f in report.folds] == [
        ("stablehlo.multiply", "stablehlo.convolution", "stablehlo.multiply")
    ]
    x = jnp.asarray(rng.standard_normal((1, 4, 4, 8)), jnp.float32)
    assert_close(np.asarray(exported.call(x)), np.asarray(folded.call(x)))


@pytest.mark.parametrize(
    "name, op, options",
    [
        # One batch_norm_inference op would become about ten computing its scale, the
        # weights and the bias on every call: only with fold-larger-weight-arguments.
        ("fold_batch_norm_arguments_through_reshape", "stablehlo.batch_norm_inference",
         "fold-larger-weight-arguments=true"),
        ("fold_flax_batch_norm_arguments_through_reshape", "stablehlo.add", ""),
    ],
)
def test_levit_batch_norm_with_argument_statistics_folds_through_the_reshape(name, op, options):
    # dot_general -> reshape [B, T, C] -> [B * T, C] -> batch norm (torch's
    # batch_norm_inference, Flax's decomposed form), the statistics arguments (a positive
    # variance, the last: fold_and_compare's inputs are standard normal).
    text = lit_case("through.mlir", name)
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, options=options)
    assert [(f.op, f.through) for f in report.folds] == [(op, "stablehlo.reshape")]
    inputs = random_inputs(text, seed=7)
    inputs[5] = np.abs(inputs[5]) + 0.25
    (expected,), (actual,) = run_on_cpu(text, inputs), run_on_cpu(folded, inputs)
    assert_close(expected, actual)


def test_a_channels_last_layer_norm_permuted_before_a_convolution_folds_with_weights_as_arguments():
    # timm's ConvNeXt LayerNorm2d before a downsampling convolution: NCHW -> permute ->
    # LayerNorm (gamma, beta arguments) -> permute back -> 2x2 stride-2 convolution (its
    # kernel an argument). gamma's sign does not matter to a transpose.
    rng = np.random.default_rng(8)
    gamma, beta = (jnp.asarray(rng.standard_normal(16), jnp.float32) for _ in range(2))
    kernel = jnp.asarray(rng.standard_normal((32, 16, 2, 2)), jnp.float32)

    def downsample(x, gamma, beta, kernel):
        h = jnp.transpose(x, (0, 2, 3, 1))
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        h = jnp.transpose((h - mean) * jax.lax.rsqrt(var + 1e-6) * gamma + beta, (0, 3, 1, 2))
        return jax.lax.conv_general_dilated(h, kernel, (2, 2), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))

    x = jnp.asarray(rng.standard_normal((2, 16, 8, 8)), jnp.float32)
    exported = export.export(jax.jit(downsample))(x, gamma, beta, kernel)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert [(f.op, f.linear, f.through) for f in report.folds] == [
        ("stablehlo.add", "stablehlo.convolution", "stablehlo.transpose")
    ]
    parameters = (gamma, beta, kernel)
    assert_close(np.asarray(exported.call(x, *parameters)), np.asarray(folded.call(x, *parameters)))
