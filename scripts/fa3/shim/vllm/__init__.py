# flashseek FA3 carry: NOT vLLM. Only vllm.vllm_flash_attn (FA3, Hopper sm_90a) from the PyPI wheel
# vllm==0.26.0 (cp38-abi3-manylinux_2_28_x86_64, Requires-Dist torch==2.11.0, built against CUDA 13),
# plus a minimal vllm.platforms stand-in. The FA2 extension and the cute (FA4) sources are left out.
__version__ = "0.26.0"
FLASHSEEK_CARRY = "vllm-0.26.0 _vllm_fa3_C only"
