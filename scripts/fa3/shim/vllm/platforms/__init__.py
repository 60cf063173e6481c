# Minimal stand-in for vllm.platforms (flashseek FA3 carry): only what
# vllm_flash_attn.flash_attn_interface's is_fa_version_supported() needs.
import torch


class _CudaPlatform:
    @staticmethod
    def _cap(device_id: int = 0):
        if not torch.cuda.is_available():
            return None
        return torch.cuda.get_device_capability(device_id)

    @classmethod
    def get_device_capability(cls, device_id: int = 0):
        return cls._cap(device_id)

    @classmethod
    def has_device_capability(cls, capability, device_id: int = 0) -> bool:
        cap = cls._cap(device_id)
        if cap is None:
            return False
        if isinstance(capability, tuple):
            return cap >= capability
        return cap[0] * 10 + cap[1] >= capability

    @classmethod
    def is_device_capability(cls, capability, device_id: int = 0) -> bool:
        cap = cls._cap(device_id)
        if cap is None:
            return False
        if isinstance(capability, tuple):
            return cap == capability
        return cap[0] * 10 + cap[1] == capability

    @classmethod
    def is_device_capability_family(cls, capability: int, device_id: int = 0) -> bool:
        cap = cls._cap(device_id)
        if cap is None:
            return False
        return cap[0] == capability // 10


current_platform = _CudaPlatform()
