"""fold_parameters: weights passed as arguments, folded once by prepare.

`folded.call(prepare.call(weights), x)` must equal `exported.call(weights, x)` for two
different weight sets (the second catches anything that baked the first set's values in),
with every norm of the constant-weight form folded, no weight arithmetic left in folded
(every linear op reads its weights and its bias add's bias as arguments), and no more
ops than the original.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax import export
from helpers import op_count, relative_error, run_on_cpu
from jaxlib.mlir import ir
from networks import Variant, export_network, run
from test_networks import EXPECTED, count

import stablehlo_bnfold
from stablehlo_bnfold.io import load, make_context
from stablehlo_bnfold.report import FoldError

# (network, batch, the positional arguments holding the weights)
NETWORKS = [
    ("flax_resnet", "static", 0),
    ("flax_resnet", "symbolic", 0),
    ("flax_vit_layer", "static", 0),
    ("keras_mobilenet_v2", "static", (0, 1)),
    ("keras_efficientnet_b0", "static", (0, 1)),
]


def _counts(exported: export.Exported):
    with make_context() as context:
        return count(load(exported.mlir_module_serialized, context).module)


def _other_weights(weights: tuple) -> tuple:
    """A second weight set: every float leaf moved (its sign and size both)."""
    rng = np.random.default_rng(7)

    def moved(leaf):
        leaf = np.asarray(leaf)
        if not np.issubdtype(leaf.dtype, np.floating):
            return leaf
        return (leaf * rng.uniform(0.5, 1.5, leaf.shape) + rng.normal(0, 0.05, leaf.shape)).astype(leaf.dtype)

    return jax.tree_util.tree_map(moved, weights)


@pytest.fixture(scope="module", params=NETWORKS, ids=lambda n: f"{n[0]}-{n[1]}")
def folded(request):
    name, batch, positions = request.param
    network = export_network(name, Variant(weights="arguments", batch=batch))
    prepare, folded, report = stablehlo_bnfold.fold_parameters(network.exported, positions, with_report=True)
    return name, batch, positions, network, prepare, folded, report


@pytest.mark.networks
def test_folded_computes_what_the_original_computes_for_two_weight_sets(folded):
    name, _, positions, network, prepare, module, _ = folded
    arguments = network.arguments(3)
    count_weights = len(positions) if isinstance(positions, tuple) else 1
    for weights in (arguments[:count_weights], _other_weights(arguments[:count_weights])):
        data = arguments[count_weights:]
        expected = np.asarray(run(network.exported, (*weights, *data)), np.float64)
        actual = np.asarray(module.call(prepare.call(*weights), *data), np.float64)
        error = np.max(np.abs(actual - expected)) / np.max(np.abs(expected))
        assert error < 1e-5, (name, error)


@pytest.mark.networks
def test_folded_keeps_the_norms_of_the_constant_weight_form_and_fewer_ops(folded):
    name, batch, _, network, _, module, _ = folded
    before, after = _counts(network.exported), _counts(module)
    expected = EXPECTED[(name, Variant("constants", batch, "f32"))]
    assert (len(before.norm_ops), len(after.norm_ops), after.activation_ops) == (
        expected.norm_ops, expected.left, expected.activation_ops
    )
    assert after.total_ops < before.total_ops


@pytest.mark.networks
def test_every_linear_op_of_folded_reads_its_weights_as_arguments(folded):
    # `count` lists each weight operand of a data-dependent linear op, and each bias a bias
    # add broadcasts, that is not one constant: here each must be an argument of @main.
    not_literal = _counts(folded[5]).not_literal
    assert not_literal and [line for line in not_literal if not line.endswith("reads an argument")] == []


def _flax_block():
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(8, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=True)(x)
            return nn.Conv(4, (1, 1))(nn.relu(x))

    model = Block()
    x = np.random.default_rng(0).standard_normal((1, 8, 8, 3)).astype(np.float32)
    variables = model.init(jax.random.PRNGKey(0), x)
    return model, variables, x


def test_prepare_takes_the_weights_and_folded_the_folded_ones_in_their_place():
    model, variables, x = _flax_block()
    exported = export.export(jax.jit(model.apply))(variables, x)
    prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=0, trusted=True)
    new_params = prepare.call(variables)
    # The conv kernel and bias, scaled; the second conv's kernel and bias (reshaped) as they are. The
    # norm's own parameters (mean, var, scale, offset) are gone.
    assert sorted(a.shape for a in new_params) == [(1, 1, 1, 4), (1, 1, 8, 4), (3, 3, 3, 8), (8,)]
    assert folded.in_tree == jax.tree_util.tree_structure(((tuple(range(4)), 0), {}))
    np.testing.assert_allclose(folded.call(new_params, x), exported.call(variables, x), rtol=1e-5, atol=1e-6)
    restored = export.deserialize(folded.serialize())
    np.testing.assert_allclose(restored.call(new_params, x), exported.call(variables, x), rtol=1e-5, atol=1e-6)


def test_a_set_of_flat_indices_names_the_weights_leaf_by_leaf():
    model, variables, x = _flax_block()
    leaves, tree = jax.tree_util.tree_flatten(variables)
    exported = export.export(jax.jit(lambda *a: model.apply(jax.tree_util.tree_unflatten(tree, a[:-1]), a[-1])))(
        *leaves, x
    )
    prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=set(range(len(leaves))))
    new_params = prepare.call(tuple(leaves))
    np.testing.assert_allclose(folded.call(new_params, x), exported.call(*leaves, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("parameters", [2, (0, 5), set(), {99}, "variables"])
def test_parameters_that_name_no_argument_are_a_fold_error(parameters):
    model, variables, x = _flax_block()
    exported = export.export(jax.jit(model.apply))(variables, x)
    with pytest.raises(FoldError, match="fold_parameters"):
        stablehlo_bnfold.fold_parameters(exported, parameters=parameters)


def test_anything_but_an_exported_is_a_fold_error():
    with pytest.raises(FoldError, match="expected jax.export.Exported"):
        stablehlo_bnfold.fold_parameters("module {}")


SHARDED_EXPORT = pathlib.Path(__file__).with_name("sharded_export.py")


def test_the_weights_shardings_carry_over_to_prepare_and_folded(tmp_path):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2"
    run = subprocess.run(
        [sys.executable, str(SHARDED_EXPORT), "2", "parameters", str(tmp_path)],
        env={**os.environ, "XLA_FLAGS": flags.strip()}, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["error"] < 1e-5
    assert "'batch'" in seen["sharding"]
    assert seen["folded_params"] == 2  # the kernel scaled, the bias
    assert "spec=P()" in seen["prepare_out"] and "None" not in seen["prepare_out"]
    assert seen["folded_in"].count("spec=P()") == 2 and "P('batch',)" in seen["folded_in"]
    assert seen["folded_module"].count("sdy.sharding = #sdy.sharding<@mesh") == 4  # 3 inputs, 1 result


def _command(work: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stablehlo_bnfold", *args], cwd=work, capture_output=True, text=True, timeout=300
    )


def test_the_command_writes_prepare_and_folded_as_the_kind_it_read(tmp_path):
    model, variables, x = _flax_block()
    exported = export.export(jax.jit(model.apply))(variables, x)
    (tmp_path / "model.jax").write_bytes(exported.serialize())
    (tmp_path / "model.mlir").write_text(exported.mlir_module())
    done = _command(tmp_path, "model.jax", "--stablehlo-fold-batch-norm", "--fold-parameters=0",
                    "--prepare-output", "prepare.jax", "-o", "folded.jax", "--report")
    assert done.returncode == 0, done.stderr
    assert "1 norm: 1 folded whole" in done.stderr
    prepare = export.deserialize(bytearray((tmp_path / "prepare.jax").read_bytes()))
    folded = export.deserialize(bytearray((tmp_path / "folded.jax").read_bytes()))
    np.testing.assert_allclose(folded.call(prepare.call(variables), x), exported.call(variables, x), rtol=1e-5, atol=1e-6)
    # MLIR text: the positions are @main's arguments (the 7 weights, then the image).
    done = _command(tmp_path, "model.mlir", "--stablehlo-fold-batch-norm", "--fold-parameters=0,1,2,3,4,5,6",
                    "--prepare-output", "prepare.mlir", "-o", "folded.mlir")
    assert done.returncode == 0, done.stderr
    folded_text = (tmp_path / "folded.mlir").read_text()
    assert "rsqrt" not in folded_text and "batch_norm" not in folded_text
    assert "rsqrt" in (tmp_path / "prepare.mlir").read_text()


@pytest.mark.parametrize("flags, message", [
    (["--fold-parameters=0"], "go together"),
    (["--fold-parameters=0", "--prepare-output", "p.mlir"], "give -o FILE"),
    (["--fold-parameters=0", "--prepare-output", "p.mlir", "-o", "f.mlir", "--verify"], "--verify"),
    (["--fold-parameters=x", "--prepare-output", "p.mlir", "-o", "f.mlir"], "argument positions"),
])
def test_the_command_refuses_fold_parameters_flags_that_do_not_fit(tmp_path, flags, message):
    (tmp_path / "m.mlir").write_text("module {}")
    done = _command(tmp_path, "m.mlir", "--stablehlo-fold-batch-norm", *flags)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_multi_platform_export_stays_multi_platform_and_prepare_takes_the_platform_index():
    # The module's @main takes the platform index first; prepare's must too, or jax cannot
    # call it (its first weight would be read as the index).
    model, variables, x = _flax_block()
    exported = export.export(jax.jit(model.apply), platforms=["cpu", "cuda"])(variables, x)
    prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=0, trusted=True)
    assert prepare.platforms == folded.platforms == ("cpu", "cuda")
    assert "_platform_index" in prepare.mlir_module()
    np.testing.assert_allclose(folded.call(prepare.call(variables), x), exported.call(variables, x), rtol=1e-5, atol=1e-6)


def _torch_with_weight_arguments(name: str) -> tuple[str, list[np.ndarray]]:
    """A torchvision network as torch-mlir exported it (NCHW, `dense_resource` weights),
    each weight constant of more than one element made an argument of @main after the
    image, as an export that lifts its parameters writes it; and the weights' values."""
    from stablehlo_bnfold.constants import read_dense
    from stablehlo_bnfold.io import load

    from helpers import read_testdata

    with make_context() as context:
        module = load(read_testdata(f"torchvision/{name}.mlir"), context).module
        main = module.body.operations[0]
        block = main.regions[0].blocks[0]
        weights = []
        for op in list(block.operations):
            if op.operation.name != "stablehlo.constant" or np.prod(op.result.type.shape) <= 1:
                continue
            weights.append(np.array(read_dense(op.value)))
            argument = block.add_argument(op.result.type, op.location)
            op.result.replace_all_uses_with(argument)
            op.operation.erase()
        inputs = [a.type for a in block.arguments]
        results = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
        return str(module), weights


def test_a_torch_mlir_network_with_weights_as_arguments_folds_once_from_the_command(tmp_path):
    text, weights = _torch_with_weight_arguments("mobilenet_v3")
    (tmp_path / "model.mlir").write_text(text)
    positions = ",".join(str(i) for i in range(1, len(weights) + 1))
    done = _command(tmp_path, "model.mlir", "--stablehlo-fold-batch-norm", f"--fold-parameters={positions}",
                    "--prepare-output", "prepare.mlir", "-o", "folded.mlir", "--report")
    assert done.returncode == 0, done.stderr[-2000:]
    prepare, folded = (tmp_path / "prepare.mlir").read_text(), (tmp_path / "folded.mlir").read_text()
    assert "rsqrt" not in folded and "sqrt" not in folded  # no norm arithmetic per call
    assert op_count(folded) < op_count(text)
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    rng = np.random.default_rng(2)
    other = [w * rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) for w in weights]
    for values in (weights, other):
        (expected,) = run_on_cpu(text, [x, *values])
        new_params = run_on_cpu(prepare, list(values))
        (actual,) = run_on_cpu(folded, [x, *new_params])
        assert relative_error(expected, actual) < 1e-5  # a whole network, as test_networks



@pytest.mark.networks
def test_mixed_precision_weights_are_converted_once_by_prepare():
    # Keras mixed_bfloat16 keeps f32 weights and converts them to bf16 on every call;
    # folded takes the bf16 weights prepare made (scaled in f32, rounded once).
    network = export_network("keras_mobilenet_v2", Variant("arguments", "static", "mixed_bf16"))
    prepare, folded = stablehlo_bnfold.fold_parameters(network.exported, (0, 1))
    arguments = network.arguments(3)
    expected = np.asarray(run(network.exported, arguments), np.float64)
    actual = np.asarray(folded.call(prepare.call(*arguments[:2]), *arguments[2:]), np.float64)
    assert np.max(np.abs(actual - expected)) / np.max(np.abs(expected)) <= 4 * 2.0**-8  # 4 ulps of 1.0
    after = _counts(folded)
    assert after.norm_ops == () and not [line for line in after.not_literal if not line.endswith("reads an argument")]
    linear_weights = [a for a in folded.in_avals[:-1] if len(a.shape) == 4]  # the image last
    assert linear_weights and all(a.dtype == jax.numpy.bfloat16 for a in linear_weights)
