"""Peer tools that fold batch norm into convolutions, each through its own public API.

Every peer gets the same network (the equivalent `nn.Module`, or that module exported to
ONNX once with torch's TorchScript exporter, constant folding off so the BatchNormalization
nodes survive) and reports what it offers:

- `pass`: the fold alone on an in-memory model;
- `e2e`: serialized model in, serialized model out, where the tool can write one;
- `folded`: batch norms gone afterwards.

| peer          | pass                                               | e2e                          |
| ------------- | -------------------------------------------------- | ---------------------------- |
| torch.fx      | `fuse(module)` (symbolic trace, copy, fuse)         | none: no serialized form     |
| torch         | `fuse_conv_bn_eval(conv, bn)` on every pair, no trace or copy of the rest | none |
| onnxoptimizer | `optimize(proto, ["fuse_bn_into_conv"])`           | bytes -> proto -> bytes      |
| onnxruntime   | none: folding happens inside session creation      | `InferenceSession(bytes)` at ORT_ENABLE_BASIC writing `optimized_model_filepath` |
| onnxscript    | `rewriter.rewrite(ir_model, [fuse_batchnorm_*])`   | bytes -> ir -> bytes         |
| tvm           | `FoldBatchnormToConv2D` then `FoldConstant`        | bytes -> `from_onnx` -> pass (TVM writes no ONNX) |
| onnxsim       | none: `simplify(proto)` runs all its passes         | proto -> `simplify` -> bytes |
| onnxslim      | none: `slim(proto)` runs all its passes             | proto -> `slim` -> bytes     |

A peer that is not installed, or that fails, is reported with its error instead of times.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable

import numpy as np

from measure import Case, interleaved_medians

__all__ = ["PEERS", "onnx_export", "run_peer"]


def onnx_export(net, image_nchw: np.ndarray) -> bytes:
    """`net` as ONNX bytes (opset 17), BatchNormalization nodes kept."""
    import torch

    buffer = io.BytesIO()
    torch.onnx.export(net, (torch.from_numpy(image_nchw),), buffer, dynamo=False,
                      opset_version=17, do_constant_folding=False, input_names=["x"])
    return buffer.getvalue()


def _bn_nodes(proto) -> int:
    return sum(1 for node in proto.graph.node if node.op_type == "BatchNormalization")


def _torch_fx(net, onnx_bytes, repeats):
    import torch
    from torch.fx.experimental.optimization import fuse

    before = sum(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())
    fused = fuse(net)
    after = sum(isinstance(m, torch.nn.BatchNorm2d) for m in fused.modules())
    del fused
    times = interleaved_medians({"pass": Case(lambda _: fuse(net))}, repeats)
    return {"pass": times["pass"], "e2e": None, "folded": before - after,
            "version": torch.__version__}


def torch_pairs(net) -> list:
    """(conv, bn) module pairs of `net` in call order (models.torch_module's naming)."""
    import torch

    modules = dict(net.named_modules())
    return [(modules[name[: -len("_bn")] + "_conv"], module)
            for name, module in modules.items()
            if isinstance(module, torch.nn.BatchNorm2d)]


def torch_fuse_pairs(pairs) -> list:
    """torch's own per-pair fold, `fuse_conv_bn_eval`, on every pair: the fold without
    tracing or copying the model (each call deep-copies the convolution it returns)."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    return [fuse_conv_bn_eval(conv, bn) for conv, bn in pairs]


def _torch(net, onnx_bytes, repeats):
    import torch

    pairs = torch_pairs(net)
    times = interleaved_medians({"pass": Case(lambda _: torch_fuse_pairs(pairs))}, repeats)
    return {"pass": times["pass"], "e2e": None, "folded": len(pairs),
            "version": torch.__version__}


def _onnxsim(net, onnx_bytes, repeats):
    import onnx
    import onnxsim

    def e2e(_):
        model, _ok = onnxsim.simplify(onnx.load_from_string(onnx_bytes))
        return model.SerializeToString()

    folded = _bn_nodes(onnx.load_from_string(onnx_bytes)) - _bn_nodes(
        onnx.load_from_string(e2e(None)))
    times = interleaved_medians({"e2e": Case(e2e)}, repeats)
    return {"pass": None, **times, "folded": folded, "version": onnxsim.__version__}


def _onnxslim(net, onnx_bytes, repeats):
    import onnx
    import onnxslim

    def e2e(_):
        return onnxslim.slim(onnx.load_from_string(onnx_bytes)).SerializeToString()

    folded = _bn_nodes(onnx.load_from_string(onnx_bytes)) - _bn_nodes(
        onnx.load_from_string(e2e(None)))
    times = interleaved_medians({"e2e": Case(e2e)}, repeats)
    return {"pass": None, **times, "folded": folded, "version": onnxslim.__version__}


def _onnxoptimizer(net, onnx_bytes, repeats):
    import onnx
    import onnxoptimizer

    proto = onnx.load_from_string(onnx_bytes)
    passes = ["fuse_bn_into_conv"]
    folded = _bn_nodes(proto) - _bn_nodes(onnxoptimizer.optimize(proto, passes))

    def e2e(_):
        return onnxoptimizer.optimize(onnx.load_from_string(onnx_bytes), passes
                                      ).SerializeToString()

    times = interleaved_medians(
        {"pass": Case(lambda _: onnxoptimizer.optimize(proto, passes)), "e2e": Case(e2e)},
        repeats,
    )
    return {**times, "folded": folded, "version": onnxoptimizer.__version__}


def _onnxruntime(net, onnx_bytes, repeats):
    import onnx
    import onnxruntime as ort

    proto = onnx.load_from_string(onnx_bytes)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "optimized.onnx")

        def e2e(_):
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = path
            return ort.InferenceSession(onnx_bytes, options,
                                        providers=["CPUExecutionProvider"])

        e2e(None)
        folded = _bn_nodes(proto) - _bn_nodes(onnx.load(path))
        times = interleaved_medians({"e2e": Case(e2e)}, repeats)
    return {"pass": None, **times, "folded": folded, "version": ort.__version__}


def _onnxscript(net, onnx_bytes, repeats):
    import onnx
    import onnx_ir
    import onnxscript
    from onnxscript import rewriter
    from onnxscript.rewriter.rules import common

    rules = [common.fuse_batchnorm_into_conv_rule, common.fuse_batchnorm_into_gemm_rule,
             common.fuse_batchnorm_into_conv_transpose_rule]
    proto = onnx.load_from_string(onnx_bytes)

    def load(_=None):
        return onnx_ir.serde.deserialize_model(proto)

    def e2e(_):
        model = onnx_ir.serde.deserialize_model(onnx.load_from_string(onnx_bytes))
        return onnx_ir.serde.serialize_model(rewriter.rewrite(model, rules)).SerializeToString()

    out = onnx_ir.serde.serialize_model(rewriter.rewrite(load(), rules))
    folded = _bn_nodes(proto) - _bn_nodes(out)
    del out
    times = interleaved_medians(
        {"pass": Case(lambda model: rewriter.rewrite(model, rules), setup=load),
         "e2e": Case(e2e)},
        repeats,
    )
    return {**times, "folded": folded, "version": onnxscript.__version__}


def _tvm(net, onnx_bytes, repeats):
    import statistics
    import time

    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    def fold(mod):
        return relax.transform.FoldConstant()(relax.transform.FoldBatchnormToConv2D()(mod))

    def bns(mod) -> int:
        return mod.script(show_meta=False).count("R.nn.batch_norm(")

    # FoldConstant builds and runs a TVM kernel per weight shape, so one round is slow; the
    # import and the fold of one round are timed separately instead of importing twice.
    imports, passes, folded = [], [], None
    for round_ in range(1 + repeats):
        start = time.perf_counter()
        mod = from_onnx(onnx.load_from_string(onnx_bytes), keep_params_in_input=False)
        imported = time.perf_counter()
        out = fold(mod)
        done = time.perf_counter()
        if folded is None:
            folded = bns(mod) - bns(out)
        if round_:
            imports.append(imported - start)
            passes.append(done - imported)
        del mod, out
    e2e = [i + p for i, p in zip(imports, passes)]
    return {"pass": statistics.median(passes), "e2e": statistics.median(e2e),
            "folded": folded, "version": tvm.__version__}


PEERS: dict[str, Callable] = {
    "torch.fx": _torch_fx,
    "onnxoptimizer": _onnxoptimizer,
    "onnxruntime": _onnxruntime,
    "onnxscript": _onnxscript,
    "tvm": _tvm,
    "torch": _torch,
    "onnxsim": _onnxsim,
    "onnxslim": _onnxslim,
}
"""Every peer by name, in table order."""


def run_peer(name: str, net, onnx_bytes: bytes | None, repeats: int) -> dict:
    """One peer's times, or {"error": ...} when it is missing or fails."""
    try:
        if onnx_bytes is None and name not in ("torch.fx", "torch"):
            return {"error": "no ONNX model (export failed)"}
        return PEERS[name](net, onnx_bytes, repeats)
    except Exception as error:  # a peer's failure is a result, not a crash of the harness
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
