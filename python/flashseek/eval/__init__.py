"""flashseek-eval: correctness and speed of every grid scenario against baselines, with a roofline measured in the
same run. Entry point: flashseek.eval.cli:main.

cli        options, the run loop, exit codes (2: cannot run here)
runner     one scenario: check on fresh inputs, time ours and the baselines on those same inputs
timing     CUDA events, cold L2, graph replay or eager, host time per call
baselines  cuDNN, FA2, FlexAttention (torch), FA3, vLLM, FlashInfer (when importable)
roofline   measured HBM bandwidth and bf16 tensor rate; per-scenario bytes, FLOPs and floor
stats      geomeans, parity, summaries (pure Python)
report     results.json (results-schema.md), report.md with the question bank's data answers
plots      speedup and roofline-fraction PNGs
"""

# The baselines the evaluator knows (flashseek.eval.baselines implements them); here so that the CLI can validate
# --baselines without importing torch.
BASELINES = ("cudnn", "fa2", "flex", "fa3", "vllm", "flashinfer")
