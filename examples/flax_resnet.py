"""Fold the batch norms of a small Flax (linen) residual network exported with jax.export.

    python3 examples/flax_resnet.py

The model is exported twice, as JAX users do: with the weights baked in as constants
(`model.apply(variables, x)` closed over the variables), and with the weights as arguments
(`model.apply` exported with the variables as its first argument). Each export is folded,
its report printed, and the folded model called and compared with the original.
Plain JAX code (`jax.lax.conv_general_dilated` followed by `(y - mean) * scale + bias`)
exports to the same operations and folds the same way.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

import stablehlo_bnfold


class ResidualBlock(nn.Module):
    """conv -> batch norm -> relu -> conv -> batch norm, plus the input, then relu."""

    @nn.compact
    def __call__(self, x):
        y = nn.Conv(8, (3, 3), use_bias=False)(x)
        y = nn.relu(nn.BatchNorm(use_running_average=True)(y))
        y = nn.Conv(8, (3, 3), use_bias=False)(y)
        y = nn.BatchNorm(use_running_average=True)(y)
        return nn.relu(y + x)


class TinyResNet(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=True)(x))
        x = ResidualBlock()(x)
        return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))


def trained_variables(model, x):
    """Initialized variables with batch statistics that look trained (seeded)."""
    variables = model.init(jax.random.key(0), x)
    rng = np.random.default_rng(0)

    def perturb(path, value):
        name = path[-1].key
        if name == "var":
            return jnp.asarray(rng.uniform(0.5, 2.0, value.shape), value.dtype)
        return jnp.asarray(rng.normal(0.0, 0.2, value.shape), value.dtype) + value

    stats = jax.tree_util.tree_map_with_path(perturb, variables["batch_stats"])
    params = jax.tree_util.tree_map_with_path(perturb, variables["params"])
    return {"params": params, "batch_stats": stats}


def check(name, original, folded, *args):
    """Call both exports on the same inputs; they must agree to float32 rounding."""
    want, got = np.asarray(original.call(*args)), np.asarray(folded.call(*args))
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error < 1e-5, f"{name}: the folded model differs: {error:.2e}"
    print(f"{name}: the folded model matches the original (max relative difference {error:.1e})")


def main():
    model = TinyResNet()
    x = jnp.asarray(np.random.default_rng(1).standard_normal((2, 16, 16, 3)), jnp.float32)
    variables = trained_variables(model, x)

    # Weights as constants: the variables are closed over.
    exported = jax.export.export(jax.jit(lambda x: model.apply(variables, x)))(x)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    print("weights as constants:")
    print(report.to_text())
    check("weights as constants", exported, folded, x)

    # Weights as arguments: the folded weights are computed in the graph, on every call.
    exported = jax.export.export(jax.jit(model.apply))(variables, x)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    print("weights as arguments:")
    print(report.to_text())
    check("weights as arguments", exported, folded, variables, x)


if __name__ == "__main__":
    main()
