"""flashseek: Hopper forward attention with the interface of vLLM's FlashAttention-3 operator.

The functions here take the arguments of vLLM's `vllm_flash_attn` wrapper and of upstream FA3
(`flash_attn_varlen_func`, `get_scheduler_metadata`, `flash_attn_with_kvcache`) and vLLM's
`merge_attn_states`. Validation and launch happen in C++ (`flashseek._C`); this layer only maps Python
defaults onto it, so that an eager call costs little host time.
"""

from flashseek.api import (
    flash_attn_varlen_func,
    flash_attn_with_kvcache,
    get_scheduler_metadata,
    merge_attn_states,
    is_available,
    unavailable_reason,
)

__all__ = [
    "flash_attn_varlen_func",
    "flash_attn_with_kvcache",
    "get_scheduler_metadata",
    "merge_attn_states",
    "is_available",
    "unavailable_reason",
]

__version__ = "0.1.0"
