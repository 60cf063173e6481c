#!/usr/bin/env bash
# ncu on one prefill launch: speed of light, warp stall reasons, pipe utilisation. Clocks left as found.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/python
ncu --clock-control none -k regex:attention_fwd --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis python3 scripts/profile_prefill.py 2>&1 | grep -vE "^==PROF==|^\s*$" | \
    grep -E "Duration|Throughput|Stall|Issue|Eligible|Active Warps|Pipe|pipe|L2|Shared|Warp Cycles|No Eligible|Busy|Tensor|Executed Ipc" | head -70
