"""`fold_parameters`: weights passed as arguments, folded once instead of on every call.

    prepare, folded = fold_parameters(exported, parameters=0)
    new_params = prepare.call(variables)     # once, when the weights change
    y = folded.call(new_params, x)           # every call

The module is folded as if its weights were constants (`fold-larger-weight-arguments`:
prepare runs once, so no fold costs a call anything), then split (`partition.split`):
prepare computes from the parameters everything the rest reads (the folded kernels `W * s`,
the biases, the weight arithmetic the exporter left: Keras's computed biases,
`transpose(W)`, `convert(W_f32)`), and folded takes those values where the parameters
were. The norms' own parameters (mean, variance, scale, offset) are gone from folded.

The folded parameters are a flat tuple, in the order prepare returns them; each folded
argument keeps the location (the name `jax.export` gave it) and the sharding of the
parameter it is computed from when it has that parameter's type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

__all__ = ["fold_parameters"]


def fold_parameters(exported, parameters: int | Iterable[int] | set[int] = 0, *, options: str = "",
                    trusted: bool | None = None, with_report: bool = False):
    """(prepare, folded): two `jax.export.Exported` such that
    `folded.call(prepare.call(params), *data)` computes what `exported.call(params, *data)`
    does, with every norm folded into the weights by prepare.

    `parameters` is the position of the positional argument that holds the weights
    (`0` for `model.apply(variables, x)`), or a sequence of them (`(0, 1)` for Keras's
    `stateless_call(trainable, non_trainable, x)`): prepare takes those arguments, and
    folded takes `new_params` in place of the first and none of the others. A `set` is
    flat argument indices instead (the leaves of `exported.in_tree`): prepare takes them
    as one tuple, folded `(new_params, *the other leaves)`. With
    `with_report=True`, `(prepare, folded, FoldReport)`. `options` are the pass's
    (docs/passes.md); the fold runs in a child process unless `trusted=True`, as
    `fold_batch_norm`'s does. FoldError when `exported` is no `Exported`, when
    `parameters` names no argument, or when the module has ordered effects (tokens).
    """
    from jax import export

    from . import sandbox
    from .passes import FoldBatchNormPass
    from .report import FoldError

    if not isinstance(exported, export.Exported):
        raise FoldError(f"fold_parameters: expected jax.export.Exported, got {type(exported).__name__}")
    if exported.ordered_effects:
        raise FoldError("fold_parameters: a module with ordered effects (tokens) is not supported")
    FoldBatchNormPass.parse_options(options)
    flat, positional = _flat_parameters(exported, parameters)
    module_parameters = _module_positions(exported, flat)
    work = _Work(exported.mlir_module_serialized, module_parameters, options)
    if trusted:
        import io

        buffer = io.BytesIO()
        (report, cuts, size), data = work(buffer), buffer.getvalue()
    else:
        (report, cuts, size), data = sandbox.run(work, source="<input>", size=len(exported.mlir_module_serialized))
    prepare, folded = _exported_pair(exported, flat, positional, cuts, data[:size], data[size:])
    return (prepare, folded, report) if with_report else (prepare, folded)


def _flat_parameters(exported, parameters) -> tuple[list[int], list[int] | None]:
    """The flat input indices that hold the weights, and the positional arguments they
    are (None for a set of flat indices)."""
    from .report import FoldError

    args_tree, _ = exported.in_tree.children()
    children = args_tree.children()
    if isinstance(parameters, (set, frozenset)):
        flat = sorted(parameters)
        if not flat or any(not isinstance(i, int) or not 0 <= i < len(exported.in_avals) for i in flat):
            raise FoldError(
                f"fold_parameters: parameters {flat} are not among the {len(exported.in_avals)} flat arguments"
            )
        return flat, None
    positions = [parameters] if isinstance(parameters, int) else list(parameters)
    if not positions or any(
        not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(children) for p in positions
    ):
        raise FoldError(
            f"fold_parameters: parameters={parameters!r}, but the function takes "
            f"{len(children)} positional arguments"
        )
    positions = sorted(set(positions))
    starts = np.cumsum([0, *(child.num_leaves for child in children)])
    flat = [i for p in positions for i in range(starts[p], starts[p + 1])]
    if not flat:
        raise FoldError(f"fold_parameters: the positional arguments {positions} hold no arrays")
    return flat, positions


def _module_positions(exported, flat: list[int]) -> set[int]:
    """The positions among the module's `@main` arguments of the flat inputs `flat`:
    `module_kept_var_idx` drops unused ones, and a multi-platform module takes the
    platform index first."""
    leading = 1 if len(exported.platforms) > 1 else 0
    wanted = set(flat)
    return {leading + j for j, i in enumerate(exported.module_kept_var_idx) if i in wanted}


@dataclasses.dataclass(frozen=True)
class _Work:
    """The fold and the split, in whichever process runs them: writes prepare's then
    folded's portable artifact to `output`, returns (report, cuts, prepare's size)."""

    data: bytes
    parameters: set[int]
    options: str

    def __call__(self, output, reading=None):
        from . import io, session

        loaded = session.load(self.data, io.make_context())
        report, prepare, folded, cuts = fold_module(loaded, self.parameters, self.options)
        prepare, folded = io.dump(prepare), io.dump(folded)
        output.write(prepare)
        output.write(folded)
        return report, [(str(c.type), c.source, c.same_type) for c in cuts], len(prepare)


def fold_module(loaded, parameters: set[int], options: str = ""):
    """(report, prepare, folded, cuts) for a loaded module whose `@main` takes the weights at
    the argument positions `parameters`: the fold as if they were constants, then the
    split (`partition.split`); prepare and folded are `io.Loaded` in the input's format.
    The command's `--fold-parameters` and `fold_parameters` both come here."""
    from jaxlib.mlir import ir

    from . import partition, session
    from .passes import ARGUMENT

    context = loaded.module.context
    with context:
        partition.inline_wrapper(loaded.module)
    options = f"fold-larger-weight-arguments=true {options}".strip()
    report = session.run(loaded.module, f"{ARGUMENT}{{{options}}}", source=loaded.source)
    with context, ir.Location.unknown():
        split = partition.split(loaded.module, parameters)
    return (
        report,
        dataclasses.replace(loaded, module=split.prepare),
        dataclasses.replace(loaded, module=split.folded),
        split.cuts,
    )


def _exported_pair(exported, flat, positional, cuts, prepare_bytes, folded_bytes):
    """The two `Exported` around the split modules: their trees, avals and shardings."""
    from jax import tree_util

    leaves = exported.in_avals
    cut_avals = [_aval(type_text) for type_text, _, _ in cuts]
    # A module argument's position -> its flat input: a cut's source is a module position.
    leading = 1 if len(exported.platforms) > 1 else 0
    flat_of = {leading + j: i for j, i in enumerate(exported.module_kept_var_idx)}
    inputs = _shardings(exported, "in")
    cut_shardings = [inputs[flat_of[source]] if same else (None, None) for _, source, same in cuts]
    args, kwargs = tree_util.tree_unflatten(exported.in_tree, range(len(leaves)))
    cut_leaves = tuple(range(len(cuts)))
    if positional is not None:
        prepare_in = tree_util.tree_structure((tuple(args[p] for p in positional), {}))
    else:
        prepare_in = tree_util.tree_structure(((tuple(range(len(flat))),), {}))
    kept = set(exported.module_kept_var_idx)
    prepare = dataclasses.replace(
        exported, fun_name=f"{exported.fun_name}_prepare", in_tree=prepare_in,
        in_avals=tuple(leaves[i] for i in flat), out_tree=tree_util.tree_structure(cut_leaves),
        out_avals=tuple(cut_avals), module_kept_var_idx=tuple(k for k, i in enumerate(flat) if i in kept),
        mlir_module_serialized=prepare_bytes, _get_vjp=None,
        **_with_shardings(exported, [inputs[i] for i in flat], cut_shardings),
    )
    rest = [i for i in range(len(leaves)) if i not in set(flat)]
    order = [*(("kept", i) for i in rest if i < flat[0]), *(("cut", k) for k in range(len(cuts))),
             *(("kept", i) for i in rest if i > flat[0])]
    if positional is not None:
        kept_args = [cut_leaves if p == positional[0] else a for p, a in enumerate(args) if p not in positional[1:]]
        folded_in = tree_util.tree_structure((tuple(kept_args), kwargs))
    else:
        folded_in = tree_util.tree_structure(((cut_leaves, *range(len(rest))), {}))
    folded = dataclasses.replace(
        exported, in_tree=folded_in,
        in_avals=tuple(leaves[i] if kind == "kept" else cut_avals[i] for kind, i in order),
        module_kept_var_idx=tuple(n for n, (kind, i) in enumerate(order) if kind == "cut" or i in kept),
        mlir_module_serialized=folded_bytes, _get_vjp=None,
        **_with_shardings(
            exported, [inputs[i] if kind == "kept" else cut_shardings[i] for kind, i in order],
            _shardings(exported, "out"),
        ),
    )
    return prepare, folded


def _shardings(exported, side: str) -> list[tuple]:
    """(HLO sharding, named sharding) of each flat input or output of `exported`."""
    hlo = getattr(exported, f"{side}_shardings_hlo")
    named = getattr(exported, f"_{side}_named_shardings", None) or (None,) * len(hlo)
    return list(zip(hlo, named))


def _with_shardings(exported, inputs: list[tuple], outputs: list[tuple]) -> dict:
    """The sharding fields of an `Exported` with these inputs' and outputs' shardings
    (the named ones only where this version of jax has them)."""
    fields = {
        "in_shardings_hlo": tuple(h for h, _ in inputs), "out_shardings_hlo": tuple(h for h, _ in outputs),
    }
    if hasattr(exported, "_in_named_shardings"):
        fields["_in_named_shardings"] = tuple(n for _, n in inputs)
        fields["_out_named_shardings"] = tuple(n for _, n in outputs)
    return fields


def _aval(type_text: str):
    """The abstract value of a cut from its MLIR type (static shapes: weights)."""
    import jax
    import ml_dtypes
    from jaxlib.mlir import ir

    from .io import make_context

    with make_context():
        shaped = ir.RankedTensorType(ir.Type.parse(type_text))
        element = str(shaped.element_type)
        shape = tuple(shaped.shape)
    dtype = _DTYPES.get(element) or np.dtype(ml_dtypes.bfloat16 if element == "bf16" else element)
    return jax.core.ShapedArray(shape, dtype)


_DTYPES = {
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16), "ui32": np.dtype(np.uint32), "ui64": np.dtype(np.uint64),
}
"""MLIR element types -> numpy's (bf16 and the fp8 types through ml_dtypes)."""
