"""Modules of a per-channel affine map, a chain of the ops it commutes with, and a linear op
(test_chain_properties.py), written twice: in the element type under test and in float64
with the same values, so that the float64 module is the reference both the original and
the folded module are measured against.

A `Chain` says what to build: the direction (`forward`: map -> ops -> linear op, the map
on the linear op's input; `backward`: linear op -> ops -> map, on its output), the op
kinds (`OPS`), the map's form and the signs of its scale, dead channels (running variance
0) and a huge gamma, the linear op (a convolution, VALID or padded, or a dot_general) and
whether it has a bias add. `Module` puts one or more chains side by side in one `@main`,
each reading its own arguments and giving one result, so that many chains cost one fold
and one compile.

Every value (weights, statistics, bounds, inputs) is drawn in float64 from the chain's
seed and rounded to the element type under test; the float64 module holds those rounded
values exactly, so it differs from the original only in computing in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

OPS = (
    "relu",  # maximum(v, 0)
    "relu6",  # clamp(0, v, 6), scalar bounds
    "relu6_call",  # jax.nn.relu6: call @relu6 of minimum(maximum(v, 0), 6)
    "clamp",  # clamp(lo, v, hi), scalar bounds, lo < hi
    "clamp_inverted",  # clamp(lo, v, hi), scalar bounds, lo > hi: hi everywhere
    "clamp_channels",  # per-channel bounds, one channel inverted
    "leaky_relu",  # jax.nn.leaky_relu: call @leaky_relu, a select
    "max_pool",  # reduce_window maximum, init -inf
    "sum_pool",  # reduce_window add, init 0
    "avg_pool",  # a sum pool and its divide by the window's size
    "pad",  # a zero pad of the spatial dimensions
    "reshape",  # merges the two spatial dimensions (or moves the unit batch)
    "transpose",  # a permutation that moves the channels
    "slice",  # a crop of a spatial dimension or a slice of the channels
    "concatenate",  # along the channels, with another operand (backward, first: a linear op)
)

SIGNS = ("positive", "negative", "mixed")

DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}

_NEG_INF = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"}

HUGE_GAMMA = {"f16": 1e3, "bf16": 1e15, "f32": 1e15}
"""The gamma of a channel with `huge=True`: 1e15 where the type holds its outputs, less in
f16 (largest finite 65504)."""

EPSILON = 1e-5


@dataclass(frozen=True)
class Chain:
    """One map + ops + linear op (see the module docstring)."""

    direction: str  # "forward" or "backward"
    ops: tuple[str, ...]
    signs: str = "positive"  # one of SIGNS
    form: str = "batch_norm"  # "batch_norm" or "multiply_add"
    linear: str = "convolution"  # "convolution" or "dot_general"
    kernel: int = 1  # the convolution's window size
    padded: bool = False  # the convolution pads its input by 1
    bias: bool = True  # the linear op has a bias add
    dead: bool = False  # one channel's running variance is 0
    huge: bool = False  # one channel's gamma is HUGE_GAMMA
    seed: int = 0

    def __str__(self) -> str:
        extra = [
            f"kernel={self.kernel}" if self.linear == "convolution" else "",
            "padded" if self.padded and self.linear == "convolution" else "",
            "bias" if self.bias else "no bias",
            "dead" if self.dead else "",
            "huge" if self.huge else "",
            f"seed={self.seed}",
        ]
        return (
            f"{self.direction} {' -> '.join(self.ops) or '(no op)'}, {self.signs} scales, "
            f"{self.form}, {self.linear} ({', '.join(e for e in extra if e)})"
        )


@dataclass
class _Value:
    """An SSA value of the chain: its name, and per dimension its label (`b`, `0`, `1`,
    `f`) and size."""

    name: str
    labels: list[str]
    sizes: list[int]

    @property
    def feature(self) -> int:
        return self.labels.index("f")

    @property
    def channels(self) -> int:
        return self.sizes[self.feature]


@dataclass
class Module:
    """`@main` with every chain added (`add`), in the element type `element`, values
    rounded to `values` (the type under test; the same as `element` but for the float64
    reference)."""

    element: str
    values: str
    arguments: list[tuple[str, str]] = field(default_factory=list)
    inputs: list[np.ndarray] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    results: list[tuple[str, str]] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    _count: int = 0

    # --- text ------------------------------------------------------------------------------

    def text(self) -> str:
        arguments = ", ".join(f"%{n}: {t}" for n, t in self.arguments)
        types = ", ".join(t for _, t in self.results)
        names = ", ".join(f"%{n}" for n, _ in self.results)
        return "\n".join(
            [f"func.func @main({arguments}) -> ({types}) {{"]
            + self.lines
            + [f"  return {names} : {types}", "}"]
            + self.functions
        ) + "\n"

    def _name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}{self._count}"

    def tensor(self, sizes) -> str:
        return f"tensor<{''.join(f'{s}x' for s in sizes)}{self.element}>"

    def _round(self, values) -> np.ndarray:
        """`values` rounded to the type under test, back in float64."""
        return np.asarray(values, np.float64).astype(DTYPES[self.values]).astype(np.float64)

    def constant(self, values, stem: str = "c") -> str:
        """A constant of `values` rounded to the type under test; its name."""
        values = self._round(values)
        name = self._name(stem)
        body = _nested(values, self.element)
        self.lines.append(f"  %{name} = stablehlo.constant dense<{body}> : {self.tensor(values.shape)}")
        return name

    def vector(self, values, value: _Value, stem: str = "v") -> str:
        """`values` (one per channel) broadcast along `value`'s channels; its name."""
        vector = self.constant(values, stem)
        name = self._name("b")
        self.lines.append(
            f"  %{name} = stablehlo.broadcast_in_dim %{vector}, dims = [{value.feature}] : "
            f"({self.tensor([value.channels])}) -> {self.tensor(value.sizes)}"
        )
        return name

    def scalar_broadcast(self, number: float, sizes) -> str:
        scalar = self.constant(np.float64(number), "s")
        name = self._name("b")
        self.lines.append(
            f"  %{name} = stablehlo.broadcast_in_dim %{scalar}, dims = [] : "
            f"({self.tensor([])}) -> {self.tensor(sizes)}"
        )
        return name

    def argument(self, values: np.ndarray) -> str:
        name = self._name("arg")
        self.arguments.append((name, self.tensor(values.shape)))
        self.inputs.append(self._round(values).astype(DTYPES[self.element]))
        return name

    # --- a chain ---------------------------------------------------------------------------

    def add(self, chain: Chain) -> None:
        """Append `chain`, reading new arguments and giving one more result."""
        rng = np.random.default_rng(chain.seed)
        stats = _statistics(rng, chain, channels=4, values=self.values)
        if chain.direction == "forward":
            # Data with the statistics the map was trained on: a dead channel is 0.
            x = rng.standard_normal((1, 5, 5, 4)) * np.sqrt(stats["variance"]) + stats["mean"]
            value = _Value(self.argument(x), ["b", "0", "1", "f"], [1, 5, 5, 4])
            value = self._affine(value, stats, chain)
            for index, op in enumerate(chain.ops):
                value = self._op(op, value, rng, chain, index)
            value = self._linear(value, rng, chain, outputs=3)
        else:
            x = self.argument(rng.standard_normal((1, 5, 5, 3)))
            source = _Value(x, ["b", "0", "1", "f"], [1, 5, 5, 3])
            value = self._linear(source, rng, chain, outputs=4)
            for index, op in enumerate(chain.ops):
                if op == "concatenate" and index == 0:  # of two linear ops: both take the map
                    other = self._linear(source, rng, chain, outputs=2)
                    value = self._concatenate(value, other.name, other.sizes)
                else:
                    value = self._op(op, value, rng, chain, index)
            stats = _statistics(rng, chain, channels=value.channels, values=self.values)
            value = self._affine(value, stats, chain)
        self.results.append((value.name, self.tensor(value.sizes)))

    def _affine(self, value: _Value, stats: dict[str, np.ndarray], chain: Chain) -> _Value:
        """batch_norm_inference, or x * s + t with s and t computed in float64 and rounded."""
        name = self._name("map")
        t = self.tensor(value.sizes)
        if chain.form == "batch_norm":
            names = [self.constant(stats[k], k[:3]) for k in ("gamma", "beta", "mean", "variance")]
            v = self.tensor([value.channels])
            self.lines.append(
                f'  %{name} = "stablehlo.batch_norm_inference"(%{value.name}, '
                + ", ".join(f"%{n}" for n in names)
                + f") {{epsilon = {EPSILON:e} : f32, feature_index = {value.feature} : i64}} : "
                f"({t}, {v}, {v}, {v}, {v}) -> {t}"
            )
        else:
            scale = stats["gamma"] / np.sqrt(stats["variance"] + EPSILON)
            shift = stats["beta"] - stats["mean"] * scale
            s, b = self.vector(scale, value, "scale"), self.vector(shift, value, "shift")
            product = self._name("mul")
            self.lines.append(f"  %{product} = stablehlo.multiply %{value.name}, %{s} : {t}")
            self.lines.append(f"  %{name} = stablehlo.add %{product}, %{b} : {t}")
        return _Value(name, value.labels, value.sizes)

    def _linear(self, value: _Value, rng, chain: Chain, outputs: int) -> _Value:
        """A convolution (input and output in `value`'s layout, kernel HWIO) or a
        dot_general contracting the channels, and a bias add when `chain.bias`."""
        c = value.channels
        name = self._name("lin")
        if chain.linear == "convolution":
            window = [min(chain.kernel, value.sizes[value.labels.index(s)] + (2 if chain.padded else 0)) for s in "01"]
            kernel = rng.standard_normal(window + [c, outputs]) / np.sqrt(c * np.prod(window))
            k = self.constant(kernel, "kernel")
            pad = 1 if chain.padded else 0
            sizes = [
                n + 2 * pad - window[int(label)] + 1 if label in "01" else (outputs if label == "f" else n)
                for label, n in zip(value.labels, value.sizes)
            ]
            layout = "[" + ", ".join(value.labels) + "]"
            attributes = f"pad = [[{pad}, {pad}], [{pad}, {pad}]]" if pad else ""
            self.lines.append(
                f"  %{name} = stablehlo.convolution(%{value.name}, %{k}) dim_numbers = "
                f"{layout}x[0, 1, i, o]->{layout}, window = {{{attributes}}} "
                "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
                f"({self.tensor(value.sizes)}, {self.tensor(kernel.shape)}) -> {self.tensor(sizes)}"
            )
            result = _Value(name, list(value.labels), sizes)
        else:
            weights = rng.standard_normal((c, outputs)) / np.sqrt(c)
            w = self.constant(weights, "w")
            keep = [i for i in range(len(value.labels)) if i != value.feature]
            labels = [value.labels[i] for i in keep] + ["f"]
            sizes = [value.sizes[i] for i in keep] + [outputs]
            self.lines.append(
                f"  %{name} = stablehlo.dot_general %{value.name}, %{w}, contracting_dims = "
                f"[{value.feature}] x [0] : ({self.tensor(value.sizes)}, {self.tensor(weights.shape)}) "
                f"-> {self.tensor(sizes)}"
            )
            result = _Value(name, labels, sizes)
        if not chain.bias:
            return result
        b = self.vector(rng.normal(0.0, 0.5, outputs), result, "bias")
        added = self._name("biased")
        self.lines.append(f"  %{added} = stablehlo.add %{name}, %{b} : {self.tensor(result.sizes)}")
        return _Value(added, result.labels, result.sizes)

    def _op(self, op: str, value: _Value, rng, chain: Chain, index: int) -> _Value:
        t = self.tensor(value.sizes)
        name = self._name(op.split("_")[0])
        c = value.channels
        if op == "relu":
            zero = self.scalar_broadcast(0.0, value.sizes)
            self.lines.append(f"  %{name} = stablehlo.maximum %{value.name}, %{zero} : {t}")
        elif op in ("relu6", "clamp", "clamp_inverted"):
            lo, hi = {
                "relu6": (0.0, 6.0),
                "clamp": (rng.uniform(-1.5, -0.1), rng.uniform(0.1, 1.5)),
                "clamp_inverted": (rng.uniform(0.1, 1.5), rng.uniform(-1.5, -0.1)),
            }[op]
            a, b, e = self.constant(np.float64(lo), "lo"), self.constant(np.float64(hi), "hi"), self.tensor([])
            self.lines.append(f'  %{name} = "stablehlo.clamp"(%{a}, %{value.name}, %{b}) : ({e}, {t}, {e}) -> {t}')
        elif op == "clamp_channels":
            lo, hi = rng.uniform(-1.5, -0.1, c), rng.uniform(0.1, 1.5, c)
            flipped = rng.integers(c)
            lo[flipped], hi[flipped] = hi[flipped], lo[flipped]
            a, b = self.vector(lo, value, "lo"), self.vector(hi, value, "hi")
            self.lines.append(f'  %{name} = "stablehlo.clamp"(%{a}, %{value.name}, %{b}) : ({t}, {t}, {t}) -> {t}')
        elif op == "relu6_call":
            callee = self._relu6(value.sizes)
            self.lines.append(f"  %{name} = call @{callee}(%{value.name}) : ({t}) -> {t}")
        elif op == "leaky_relu":
            callee = self._leaky_relu(value.sizes)
            self.lines.append(f"  %{name} = call @{callee}(%{value.name}) : ({t}) -> {t}")
        elif op in ("max_pool", "sum_pool", "avg_pool"):
            return self._pool(op, value, name)
        elif op == "pad":
            zero = self.constant(np.float64(0.0), "zero")
            low = [1 if label in "01" else 0 for label in value.labels]
            sizes = [n + 2 * p for n, p in zip(value.sizes, low)]
            self.lines.append(
                f"  %{name} = stablehlo.pad %{value.name}, %{zero}, low = {low}, high = {low}, "
                f"interior = {[0] * len(low)} : ({t}, {self.tensor([])}) -> {self.tensor(sizes)}"
            )
            return _Value(name, value.labels, sizes)
        elif op == "reshape":
            return self._reshape(value, name)
        elif op == "transpose":
            order = list(rng.permutation(len(value.labels)))
            if order.index(value.feature) == value.feature:  # move the channels
                order = order[1:] + order[:1]
            labels = [value.labels[i] for i in order]
            sizes = [value.sizes[i] for i in order]
            self.lines.append(
                f"  %{name} = stablehlo.transpose %{value.name}, dims = {[int(i) for i in order]} : "
                f"({t}) -> {self.tensor(sizes)}"
            )
            return _Value(name, labels, sizes)
        elif op == "slice":
            return self._slice(value, name, channels=bool(rng.integers(2)) and c >= 2)
        elif op == "concatenate":
            sizes = list(value.sizes)
            sizes[value.feature] = 2
            other = self.argument(rng.standard_normal(sizes))
            return self._concatenate(value, other, sizes)
        else:
            raise ValueError(op)
        return _Value(name, value.labels, value.sizes)

    def _concatenate(self, value: _Value, other: str, other_sizes) -> _Value:
        name = self._name("concat")
        sizes = list(value.sizes)
        sizes[value.feature] += other_sizes[value.feature]
        self.lines.append(
            f"  %{name} = stablehlo.concatenate %{value.name}, %{other}, dim = {value.feature} : "
            f"({self.tensor(value.sizes)}, {self.tensor(other_sizes)}) -> {self.tensor(sizes)}"
        )
        return _Value(name, value.labels, sizes)

    def _pool(self, op: str, value: _Value, name: str) -> _Value:
        e = self.tensor([])
        window = [min(2, n) if label in "01" else 1 for label, n in zip(value.labels, value.sizes)]
        sizes = [n - w + 1 for n, w in zip(value.sizes, window)]
        if op == "max_pool":
            init, body = self._name("ninf"), "maximum"
            self.lines.append(f"  %{init} = stablehlo.constant dense<{_NEG_INF[self.element]}> : {e}")
        else:
            init, body = self.constant(np.float64(0.0), "zero"), "add"
        a, b, r = self._name("a"), self._name("b"), self._name("r")
        pooled = name if op != "avg_pool" else self._name("sum")
        window_text = ", ".join(map(str, window))
        self.lines += [
            f'  %{pooled} = "stablehlo.reduce_window"(%{value.name}, %{init}) ({{',
            f"  ^bb0(%{a}: {e}, %{b}: {e}):",
            f"    %{r} = stablehlo.{body} %{a}, %{b} : {e}",
            f"    stablehlo.return %{r} : {e}",
            f"  }}) {{window_dimensions = array<i64: {window_text}>, window_strides = array<i64: "
            f"{', '.join('1' for _ in window)}>}} : ({self.tensor(value.sizes)}, {e}) -> {self.tensor(sizes)}",
        ]
        if op == "avg_pool":
            count = self.scalar_broadcast(float(np.prod(window)), sizes)
            self.lines.append(f"  %{name} = stablehlo.divide %{pooled}, %{count} : {self.tensor(sizes)}")
        return _Value(name, value.labels, sizes)

    def _reshape(self, value: _Value, name: str) -> _Value:
        """Merge spatial `0` and `1` where they are adjacent and in order ([.., H, W, ..]
        -> [.., H*W, 1, ..]); else move the unit batch dimension to the front."""
        labels, sizes = list(value.labels), list(value.sizes)
        i, j = labels.index("0"), labels.index("1")
        if j == i + 1:
            sizes[i], sizes[j] = sizes[i] * sizes[j], 1
        else:
            b = labels.index("b")
            labels.insert(0, labels.pop(b))
            sizes.insert(0, sizes.pop(b))
        self.lines.append(
            f"  %{name} = stablehlo.reshape %{value.name} : ({self.tensor(value.sizes)}) -> {self.tensor(sizes)}"
        )
        return _Value(name, labels, sizes)

    def _slice(self, value: _Value, name: str, channels: bool) -> _Value:
        start = [0] * len(value.sizes)
        limit = list(value.sizes)
        strides = [1] * len(value.sizes)
        if channels:  # every other channel, or all but the last
            if value.channels >= 3:
                strides[value.feature] = 2
            else:
                limit[value.feature] -= 1
        else:
            spatial = value.labels.index("0")
            if value.sizes[spatial] >= 2:
                start[spatial] = 1
        sizes = [-(-(hi - lo) // s) for lo, hi, s in zip(start, limit, strides)]
        array = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"  # noqa: E731
        self.lines.append(
            f'  %{name} = "stablehlo.slice"(%{value.name}) {{start_indices = {array(start)}, '
            f"limit_indices = {array(limit)}, strides = {array(strides)}}} : "
            f"({self.tensor(value.sizes)}) -> {self.tensor(sizes)}"
        )
        return _Value(name, value.labels, sizes)

    def _relu6(self, sizes) -> str:
        callee, t, e = self._name("relu6_"), self.tensor(sizes), self.tensor([])
        self.functions.append(f"""func.func private @{callee}(%arg0: {t}) -> {t} {{
  %cst = stablehlo.constant dense<0.000000e+00> : {e}
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : ({e}) -> {t}
  %1 = stablehlo.maximum %arg0, %0 : {t}
  %cst_0 = stablehlo.constant dense<6.000000e+00> : {e}
  %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : ({e}) -> {t}
  %3 = stablehlo.minimum %1, %2 : {t}
  return %3 : {t}
}}""")
        return callee

    def _leaky_relu(self, sizes) -> str:
        callee, where = self._name("leaky_relu_"), self._name("_where_")
        t, e, i1 = self.tensor(sizes), self.tensor([]), "tensor<" + "".join(f"{s}x" for s in sizes) + "i1>"
        alpha = _number(float(self._round(0.1)), self.element)
        self.functions.append(f"""func.func private @{callee}(%arg0: {t}) -> {t} {{
  %cst = stablehlo.constant dense<0.000000e+00> : {e}
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : ({e}) -> {t}
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : ({t}, {t}) -> {i1}
  %cst_0 = stablehlo.constant dense<{alpha}> : {e}
  %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : ({e}) -> {t}
  %3 = stablehlo.multiply %2, %arg0 : {t}
  %4 = call @{where}(%1, %arg0, %3) : ({i1}, {t}, {t}) -> {t}
  return %4 : {t}
}}
func.func private @{where}(%arg0: {i1}, %arg1: {t}, %arg2: {t}) -> {t} {{
  %0 = stablehlo.select %arg0, %arg1, %arg2 : {i1}, {t}
  return %0 : {t}
}}""")
        return callee


def _nested(values: np.ndarray, element: str) -> str:
    """`values` as a dense attribute's body, nested as the parser wants, each number exact."""
    if values.ndim == 0:
        return _number(float(values), element)
    return "[" + ", ".join(_nested(v, element) for v in values) + "]"


def _number(value: float, element: str) -> str:
    if np.isfinite(value):
        return repr(value)
    return _NEG_INF[element] if value < 0 else "0x" + {"f16": "7C00", "bf16": "7F80", "f32": "7F800000", "f64": "7FF0000000000000"}[element]


def _statistics(rng, chain: Chain, channels: int, values: str) -> dict[str, np.ndarray]:
    """gamma (with the chain's signs), beta, mean and variance for `channels` channels: a
    dead channel has mean and variance 0 (its scale is gamma / sqrt(epsilon), about 316
    gamma), a huge one gamma HUGE_GAMMA."""
    magnitude = rng.uniform(0.5, 1.5, channels)
    sign = {"positive": np.ones(channels), "negative": -np.ones(channels),
            "mixed": np.where(np.arange(channels) % 2 == 0, 1.0, -1.0)}[chain.signs]
    gamma = magnitude * sign
    variance = rng.uniform(0.3, 2.0, channels)
    mean = rng.normal(0.0, 1.0, channels)
    if chain.dead:  # a channel that is always 0 (a dead relu's): mean and variance 0
        variance[0] = mean[0] = 0.0
    if chain.huge:
        gamma[-1] = HUGE_GAMMA[values] * sign[-1]
    return {"gamma": gamma, "beta": rng.normal(0.0, 0.5, channels),
            "mean": mean, "variance": variance}


def build(chains: list[Chain], element: str) -> tuple[str, str, list[np.ndarray]]:
    """The module of `chains` in `element`, the same in float64, and the inputs (in
    `element`)."""
    narrow, wide = Module(element, element), Module("f64", element)
    for chain in chains:
        narrow.add(chain)
        wide.add(chain)
    return narrow.text(), wide.text(), narrow.inputs
