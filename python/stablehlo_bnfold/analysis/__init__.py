"""What the patterns ask of the graph, written once: who reads a value, where a linear op's
feature dimension lives, which values vary only along it, and where a symbolic shape
comes from. Nothing here creates IR.

- `users`: `single_user`, a value read by one op (shape readers that go with it aside);
- `activations`: `activation_sized`, `count_activation_sized` (the ops the data flows
  through at full size, which the report counts before and after a run);
- `shapes`: `broadcasts_onto_own_shape`, `shape_read_from` (symbolic-shape provenance);
- `layouts`: `linear_layout`, `linear_layouts`, `input_layouts` (convolution,
  dot_general and dot);
- `per_channel`: `per_channel_f64`, `per_channel_source`, `per_feature_block_f64`,
  `Narrow` (constants and expressions of them, seen through broadcasts, reshapes and
  converts, in float64);
- `commuting`: `TABLE`, one row per op kind a per-channel map passes (relus, clamps,
  leaky relus, max-pools, sum pools, sums, zero pads, transposes, reshapes, slices,
  concatenates), read by both directions; `passed_by`, `feature_below`, `Passed`;
- `passage`: what the rows name: `called_maximum`, `is_max_pool`, `max_pool_refused`,
  `leaky_relu_data`, `called_relu6`, ... (how an op is each kind, and why one is refused).
- `walk`: `ops_named`, the ops of a few names found in one walk, for the steps after the
  greedy driver (merging branches, evaluating literals, reporting the chains left).

Import from the module that holds a name (`from ..analysis.layouts import linear_layout`);
this package re-exports nothing.
"""
