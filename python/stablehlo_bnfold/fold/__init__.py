"""The fold core the patterns share: why not (`reasons`), what (`affine_map`), how (`plan`),
and the only handle on the IR (`rewriter`)."""
