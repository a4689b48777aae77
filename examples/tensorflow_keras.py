"""Fold the batch norms of a small Keras 3 model running on TensorFlow.

    pip install tensorflow
    python3 examples/tensorflow_keras.py

Without TensorFlow it says so and exits 0. TensorFlow has no StableHLO exporter of its
own; this goes the way jax2tf's `call_tf` does: XLA's HLO of a `tf.function(jit_compile=True)`
(`experimental_get_compiler_ir(x)(stage="hlo_serialized")`, which TensorFlow documents as a
debugging API without compatibility guarantees), turned into StableHLO by
`jax.extend.mlir.hlo_to_stablehlo`. The model's variables are arguments of that module;
frozen first (`convert_variables_to_constants_v2`), they are constants. Each module is
folded, its report printed, and the original and folded modules run through XLA on the
CPU on the same seeded inputs with `stablehlo_bnfold.verify`. For a Keras model, the
tested route is Keras on JAX (examples/keras_jax.py): a `.keras` file saved on TensorFlow
loads there.
"""

import importlib.util
import os
import sys

import stablehlo_bnfold


def small_model(keras):
    """conv -> batch norm -> relu, global average pool, dense; trained-looking statistics."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((16, 16, 3)),
        keras.layers.Conv2D(8, 3, padding="same"),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
    ])
    import numpy as np

    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, variance = layer.get_weights()
            layer.set_weights([
                rng.uniform(0.5, 1.5, gamma.shape), rng.normal(0, 0.2, beta.shape),
                rng.normal(0, 0.2, mean.shape), rng.uniform(0.5, 2.0, variance.shape),
            ])
    return model


def stablehlo(function, x) -> bytes:
    """StableHLO bytecode of a jit-compiled tf.function at input x."""
    import jax.extend.mlir

    hlo = function.experimental_get_compiler_ir(x)(stage="hlo_serialized")
    return jax.extend.mlir.hlo_to_stablehlo(hlo)


def fold_and_check(name, module) -> bool:
    folded, report = stablehlo_bnfold.fold_batch_norm(module, with_report=True)
    print(f"{name}:")
    print(report.to_text())
    verification = stablehlo_bnfold.verify(module, folded)
    print("\n".join(verification.lines()))
    return verification.ok


def main() -> int:
    if importlib.util.find_spec("tensorflow") is None:
        print("skipped: tensorflow is not installed (pip install tensorflow)")
        return 0
    os.environ["KERAS_BACKEND"] = "tensorflow"  # before importing keras
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    model = small_model(keras)
    x = np.random.default_rng(1).standard_normal((2, 16, 16, 3)).astype(np.float32)

    @tf.function(jit_compile=True)
    def forward(x):
        return model(x, training=False)

    ok = fold_and_check("variables as arguments", stablehlo(forward, x))
    frozen = convert_variables_to_constants_v2(
        forward.get_concrete_function(tf.TensorSpec(x.shape, tf.float32))
    )
    ok &= fold_and_check("variables frozen to constants",
                         stablehlo(tf.function(frozen, jit_compile=True), x))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
