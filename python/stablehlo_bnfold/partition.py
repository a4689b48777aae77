"""Split a function into what its parameters alone compute and the rest.

    main(params, data) = folded(prepare(params), data)

`split` reads `@main`, whose arguments `parameters` (positions) hold the weights, and
gives two modules: **prepare**, whose `@main(params)` returns every value computed from
the parameters (and constants) alone that the rest of the function reads, and
**folded**, whose `@main(cut, data)` takes those values in place of the parameters and
computes what the original did. After the fold with weights as arguments, the values
cut are the folded weights `W * s` and biases `b'`: every linear op of folded reads
`L(x, W') + broadcast_in_dim(b')` with W' and b' arguments, and no weight arithmetic is
left to run on every call.

An op goes to prepare when, in this order: it is pure (no custom call, random numbers,
communication, tokens, control flow, nor a call of a function that has any: `_IMPURE`);
it reads no value computed from the data (an argument that is not a parameter, or an
op that reads one: in its operands and in the values its regions read from outside);
it reads a parameter or a value prepare computes (ops on constants alone stay where
they are read: each module keeps its own copy); and it is no broadcast whose readers
are all in folded (a bias broadcast onto the activation is cut before it, at the bias:
prepare never returns a value larger than it has to).

The wrapper `jax.export` writes around a function with symbolic shapes (`@main`
computing the dimension sizes and calling `@_wrapped_jax_export_main` once) is inlined
first (`inline_wrapper`), so that the parameters and the ops on them are in one block.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from .analysis.passage import pure_callee
from .report import FoldError

__all__ = ["Cut", "Split", "inline_wrapper", "main_function", "split"]


class Side(enum.Enum):
    PARAMETERS = "parameters"
    DATA = "data"
    CONSTANT = "constant"


@dataclass(frozen=True)
class Cut:
    """One value prepare returns and folded takes: its type, and the parameter (a
    position among `@main`'s arguments) it is computed from whose shape it has, else the
    first it is computed from."""

    type: ir.Type
    source: int
    same_type: bool


@dataclass
class Split:
    prepare: ir.Module
    folded: ir.Module
    cuts: list[Cut]


_IMPURE = frozenset({
    "stablehlo.custom_call", "stablehlo.rng", "stablehlo.rng_bit_generator",
    "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv",
    "stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.all_to_all",
    "stablehlo.reduce_scatter", "stablehlo.collective_permute",
    "stablehlo.collective_broadcast", "stablehlo.partition_id", "stablehlo.replica_id",
    "stablehlo.after_all", "stablehlo.create_token", "stablehlo.optimization_barrier",
    "stablehlo.while", "stablehlo.case", "stablehlo.if", "func.return",
})
"""Ops that never go to prepare: side effects, communication, tokens, and control flow
(whose regions may read any value from outside)."""

_BROADCASTS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.dynamic_broadcast_in_dim"})


def main_function(module: ir.Module) -> func.FuncOp:
    """The module's public `@main`; FoldError when there is none."""
    main = _function(module, "main")
    if main is None:
        raise FoldError("the module has no @main function")
    return main


def inline_wrapper(module: ir.Module) -> None:
    """Inline the one call of `@main` to a private function that no other op calls
    (`jax.export`'s `@_wrapped_jax_export_main` with symbolic shapes), in place: its ops
    move into `@main` before the call, its arguments become the call's operands."""
    main = main_function(module)
    calls = [op for op in main.body.blocks[0].operations if isinstance(op, func.CallOp)]
    if len(calls) != 1:
        return
    call = calls[0]
    callee = _function(module, ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    if callee is None or _calls_of(module, callee) != 1:
        return
    block = callee.body.blocks[0]
    for argument, operand in zip(block.arguments, call.operands):
        argument.replace_all_uses_with(operand)
    ops = list(block.operations)
    for op in ops[:-1]:
        op.move_before(call)
    for result, returned in zip(call.results, ops[-1].operands):
        result.replace_all_uses_with(returned)
    call.erase()
    callee.erase()


def _function(module: ir.Module, name: str) -> func.FuncOp | None:
    """The function `@name` of `module`, if it has one."""
    for op in module.body.operations:
        if isinstance(op, func.FuncOp) and ir.StringAttr(op.sym_name).value == name:
            return op
    return None


def _calls_of(module: ir.Module, callee: func.FuncOp) -> int:
    name = ir.StringAttr(callee.sym_name).value
    count = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count
        if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name:
            count += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


def split(module: ir.Module, parameters: set[int]) -> Split:
    """prepare and folded (the module docstring) from `module`, whose `@main` has one
    block and takes the weights at the argument positions `parameters`; `module` is not
    changed."""
    main = main_function(module)
    block = main.body.blocks[0]
    sides = _sides(block, parameters)
    cut_values = _cut_values(block, sides)
    cuts = []
    for value in cut_values:
        source = _source(value, block, parameters)
        cuts.append(Cut(value.type, source, block.arguments[source].type == value.type))
    places = _places(cut_values, block)
    op_sides = [sides[op.operation] for op in block.operations]
    prepare = _copy(module)
    _keep_prepare(main_function(prepare), op_sides, places, cuts, parameters)
    folded = _copy(module)
    _keep_folded(main_function(folded), op_sides, places, cuts, parameters)
    return Split(prepare, folded, cuts)


def _copy(module: ir.Module) -> ir.Module:
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True, binary=True), module.context)


def _keep_prepare(main: func.FuncOp, sides: list[Side], places, cuts: list[Cut], parameters: set[int]) -> None:
    """`main` becomes prepare: the parameters in, the cut values out."""
    block = main.body.blocks[0]
    ops = list(block.operations)
    values = [_at(block, ops, place) for place in places]
    ops[-1].erase()  # the return
    with ir.InsertionPoint(block), main.location:
        func.ReturnOp(values)
    _erase_dead(ops[:-1], [side is Side.DATA for side in sides[:-1]])
    attributes = _argument_attributes(main)
    kept = [i for i in range(len(block.arguments)) if i in parameters or _platform_index(attributes[i])]
    for i in reversed(range(len(block.arguments))):
        if i not in kept:
            block.erase_argument(i)
    inputs = [a.type for a in block.arguments]
    _set_signature(main, inputs, [c.type for c in cuts], [attributes[i] for i in kept],
                   [_cut_attributes(attributes[c.source], c) for c in cuts])


def _platform_index(attributes: ir.Attribute) -> bool:
    """Whether an argument with these attributes is the platform index a multi-platform
    `jax.export` module takes first (prepare takes it too: it runs on the same platforms)."""
    attributes = ir.DictAttr(attributes)
    return "jax.global_constant" in attributes and ir.StringAttr(
        attributes["jax.global_constant"]
    ).value == "_platform_index"


def _keep_folded(main: func.FuncOp, sides: list[Side], places, cuts: list[Cut], parameters: set[int]) -> None:
    """`main` becomes folded: the cut values (where the parameters were) and the data in."""
    block = main.body.blocks[0]
    ops = list(block.operations)
    old = list(block.arguments)
    attributes = _argument_attributes(main)
    first = min(parameters)
    before = [i for i in range(first) if i not in parameters]
    after = [i for i in range(first, len(old)) if i not in parameters]
    order = [*(("kept", i) for i in before), *(("cut", k) for k in range(len(cuts))), *(("kept", i) for i in after)]
    new_attributes = []
    for kind, i in order:
        if kind == "kept":
            argument = block.add_argument(old[i].type, old[i].location)
            old[i].replace_all_uses_with(argument)
            new_attributes.append(attributes[i])
        else:
            cut = cuts[i]
            argument = block.add_argument(cut.type, old[cut.source].location)
            _at(block, ops, places[i]).replace_all_uses_with(argument)
            new_attributes.append(_cut_attributes(attributes[cut.source], cut))
    _erase_dead(ops[:-1], [side is Side.PARAMETERS for side in sides[:-1]])
    for i in reversed(range(len(old))):
        block.erase_argument(i)
    results = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
    _set_signature(main, [a.type for a in block.arguments], results, new_attributes, None)


def _at(block: ir.Block, ops: list, place: tuple[int, int]) -> ir.Value:
    index, number = place
    return block.arguments[number] if index < 0 else ops[index].results[number]


def _erase_dead(ops: list, erase: list[bool]) -> None:
    """Erase the ops marked, then every op on constants nothing reads any more, last
    first."""
    for op, marked in zip(reversed(ops), reversed(erase)):
        if marked or (len(op.results) and all(not list(r.uses) for r in op.results) and op.name not in _IMPURE):
            op.erase()


def _argument_attributes(main: func.FuncOp) -> list[ir.Attribute]:
    count = len(main.body.blocks[0].arguments)
    if "arg_attrs" not in main.attributes:
        return [ir.DictAttr.get({}) for _ in range(count)]
    return list(ir.ArrayAttr(main.attributes["arg_attrs"]))


def _cut_attributes(source: ir.Attribute, cut: Cut) -> ir.Attribute:
    """A cut value's attributes: its source parameter's sharding when it has that
    parameter's type (a folded kernel is laid out as the kernel was)."""
    source = ir.DictAttr(source)
    kept = {name: source[name] for name in _SHARDINGS if cut.same_type and name in source}
    return ir.DictAttr.get(kept)


_SHARDINGS = ("mhlo.sharding", "sdy.sharding")
"""The argument attributes that say how a value is laid out over devices (GSPMD's and
Shardy's)."""


def _set_signature(main: func.FuncOp, inputs, results, arg_attrs, res_attrs) -> None:
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    main.attributes["arg_attrs"] = ir.ArrayAttr.get(list(arg_attrs))
    if res_attrs is not None:
        main.attributes["res_attrs"] = ir.ArrayAttr.get(list(res_attrs))


def _sides(block: ir.Block, parameters: set[int]) -> dict:
    """The side of every argument of `block`, and of each of its ops (and so of their
    results), keyed by value and by operation."""
    sides: dict = {}
    for argument in block.arguments:
        sides[argument] = Side.PARAMETERS if argument.arg_number in parameters else Side.DATA
    ops = [op.operation for op in block.operations]
    for op in ops:
        _set(sides, op, _side(op, sides))
    for op in reversed(ops):  # a broadcast only folded reads goes there
        if op.name in _BROADCASTS and sides[op] is Side.PARAMETERS:
            if all(sides[_top(use.owner, block)] is Side.DATA for use in op.results[0].uses):
                _set(sides, op, Side.DATA)
    return sides


def _set(sides: dict, op: ir.Operation, side: Side) -> None:
    sides[op] = side
    for result in op.results:
        sides[result] = side


def _side(op: ir.Operation, sides: dict) -> Side:
    """Where `op` goes, from its operands' and captured values' sides (the docstring's
    conditions, in order)."""
    if op.name in _IMPURE or (op.name == "func.call" and not pure_callee(op.opview)):
        return Side.DATA
    read = [sides.get(v, Side.DATA) for v in (*op.operands, *_captured(op))]
    if Side.DATA in read:
        return Side.DATA
    return Side.PARAMETERS if Side.PARAMETERS in read else Side.CONSTANT


def _captured(op: ir.Operation) -> list[ir.Value]:
    """The values the regions of `op` read from outside them."""
    if not len(op.regions):
        return []
    inside: set = set()
    nested: list[ir.Operation] = []

    def visit(each: ir.Operation) -> ir.WalkResult:
        for region in each.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        inside.update(each.results)
        nested.append(each)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return [v for each in nested if each != op for v in each.operands if v not in inside]


def _top(op: ir.Operation, block: ir.Block) -> ir.Operation:
    """The op of `block` that `op` is or is nested in."""
    op = op.operation
    while op.block != block:
        op = op.parent
    return op


def _cut_values(block: ir.Block, sides: dict) -> list[ir.Value]:
    """The values prepare computes that an op of folded (or the return) reads, in the
    order they are defined."""
    cut: list[ir.Value] = []
    for value in [*block.arguments, *(r for op in block.operations for r in op.results)]:
        if sides[value] is Side.PARAMETERS and any(
            sides[_top(use.owner, block)] is Side.DATA for use in value.uses
        ):
            cut.append(value)
    return cut


def _source(value: ir.Value, block: ir.Block, parameters: set[int]) -> int:
    """The parameter `value` is computed from that has its type, else the first found,
    reading operands first to last (a folded kernel `K * s` is named after K, a bias
    `b + (0 - mean) * s` after b)."""
    found: list[int] = []
    seen: set = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, ir.BlockArgument) and v.owner == block:
            if v.arg_number in parameters:
                if v.type == value.type:
                    return v.arg_number
                found.append(v.arg_number)
            continue
        stack.extend(reversed(list(v.owner.operands)))
    return (found or [min(parameters)])[0]


def _places(values: list[ir.Value], block: ir.Block) -> list[tuple[int, int]]:
    """Where each of `values` is: (-1, argument position) or (op position, result number),
    from one index of the block's ops (a scan of them per value was O(ops x cuts))."""
    position = {op.operation: i for i, op in enumerate(block.operations)}
    places = []
    for value in values:
        if isinstance(value, ir.BlockArgument):
            places.append((-1, value.arg_number))
        else:
            places.append((position[value.owner.operation], ir.OpResult(value).result_number))
    return places
