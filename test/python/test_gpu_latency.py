"""benchmarks/gpu_latency.py's reading of XLA's optimized HLO: the kernel counts that
docs/dev/benchmarks.md reports beside the GPU latencies."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

import gpu_latency  # noqa: E402

# The shape of an optimized GPU module: a fused computation before the entry, and an entry
# computation whose instructions launch a cuDNN convolution with its bias and ReLU, a plain
# one, and a loop fusion; parameters, constants, tuples and bitcasts launch nothing.
HLO = """
%fused_computation (param_0: f32[1,7,7,64]) -> f32[1,7,7,64] {
  %param_0 = f32[1,7,7,64]{3,2,1,0} parameter(0)
  ROOT %add.1 = f32[1,7,7,64]{3,2,1,0} add(%param_0, %param_0)
}

ENTRY %main (x: f32[1,7,7,3]) -> f32[1,7,7,64] {
  %x = f32[1,7,7,3]{3,2,1,0} parameter(0)
  %constant.1 = f32[64]{0} constant({...})
  %cudnn-conv-bias-activation.1 = (f32[1,7,7,64]{3,2,1,0}, u8[0]{0}) custom-call(%x, %constant.1), custom_call_target="__cudnn$convBiasActivationForward"
  %get-tuple-element.1 = f32[1,7,7,64]{3,2,1,0} get-tuple-element(%cudnn-conv-bias-activation.1), index=0
  %cudnn-conv.2 = (f32[1,7,7,64]{3,2,1,0}, u8[0]{0}) custom-call(%get-tuple-element.1), custom_call_target="__cudnn$convForward"
  %get-tuple-element.2 = f32[1,7,7,64]{3,2,1,0} get-tuple-element(%cudnn-conv.2), index=0
  %bitcast.1 = f32[1,7,7,64]{3,2,1,0} bitcast(%get-tuple-element.2)
  ROOT %loop_add_fusion = f32[1,7,7,64]{3,2,1,0} fusion(%bitcast.1), kind=kLoop, calls=%fused_computation
}
"""


def test_entry_kernels_counts_what_the_entry_launches_and_the_fused_convolutions():
    assert gpu_latency.entry_kernels(HLO) == {"kernels": 3, "convolutions": 2, "fused_convolutions": 1}


def test_instructions_of_fused_computations_are_not_kernels():
    only_fused = HLO[: HLO.index("ENTRY")]
    assert gpu_latency.entry_kernels(only_fused)["kernels"] == 0
