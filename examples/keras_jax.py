"""Fold the batch norms of a small Keras 3 model, on the JAX backend, exported with jax.export.

    python3 examples/keras_jax.py

Keras 3 runs on JAX only when KERAS_BACKEND=jax is set before `import keras` (without it,
Keras looks for TensorFlow). The function to export is `model.stateless_call`, which takes
the variables explicitly and returns (outputs, non-trainable variables): with
`training=False` the batch norms use their moving statistics, which is what folds.
The model is exported with its weights as constants and as arguments; each export is
folded, its report printed, and the folded model compared with Keras's own output.
"""

import os

os.environ.setdefault("KERAS_BACKEND", "jax")  # before importing keras

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

import stablehlo_bnfold  # noqa: E402


def small_model():
    """conv -> batch norm -> relu, twice, then global average pool and a dense layer."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((16, 16, 3)),
        keras.layers.Conv2D(8, 3, padding="same", name="conv1"),
        keras.layers.BatchNormalization(name="bn1"),
        keras.layers.ReLU(),
        keras.layers.Conv2D(8, 3, padding="same", name="conv2"),
        keras.layers.BatchNormalization(name="bn2"),
        keras.layers.ReLU(),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10, name="head"),
    ])
    rng = np.random.default_rng(0)
    for layer in model.layers:  # moving statistics that look trained
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, variance = layer.get_weights()
            layer.set_weights([
                rng.uniform(0.5, 1.5, gamma.shape), rng.normal(0, 0.2, beta.shape),
                rng.normal(0, 0.2, mean.shape), rng.uniform(0.5, 2.0, variance.shape),
            ])
    return model


def check(name, want, folded, *args):
    got = np.asarray(folded.call(*args))
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error < 1e-5, f"{name}: the folded model differs: {error:.2e}"
    print(f"{name}: the folded model matches Keras (max relative difference {error:.1e})")


def main():
    model = small_model()
    x = np.random.default_rng(1).standard_normal((2, 16, 16, 3)).astype(np.float32)
    want = np.asarray(model(x, training=False))
    trainable = [v.value for v in model.trainable_variables]
    non_trainable = [v.value for v in model.non_trainable_variables]

    # Weights as constants: the variables are closed over.
    def forward(x):
        outputs, _ = model.stateless_call(trainable, non_trainable, x, training=False)
        return outputs

    exported = jax.export.export(jax.jit(forward))(x)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    print("weights as constants:")
    print(report.to_text())
    check("weights as constants", want, folded, x)

    # Weights as arguments: the folded weights are computed in the graph, on every call.
    def forward_with_weights(trainable, non_trainable, x):
        outputs, _ = model.stateless_call(trainable, non_trainable, x, training=False)
        return outputs

    exported = jax.export.export(jax.jit(forward_with_weights))(trainable, non_trainable, x)
    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    print("weights as arguments:")
    print(report.to_text())
    check("weights as arguments", want, folded, trainable, non_trainable, x)


if __name__ == "__main__":
    main()
